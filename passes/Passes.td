//===- Passes.td - bmb passes ------------------------------*- tablegen -*-===//
//
// One def per pass, in pipeline order; each is implemented in the .cpp
// named after it and tested in test/lit/passes/<flag without bmb->.mlir.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_PASSES_TD
#define BMB_PASSES_TD

include "mlir/Pass/PassBase.td"

def ParamStatsPass : Pass<"bmb-param-stats", "::mlir::ModuleOp"> {
  let summary = "Prints each model's parameter counts and training memory";
  let description = [{
    An analysis; the IR is unchanged. For every `bmb.model` it prints one row
    per layer instance that owns parameters (a parameter's path without its
    last segment; instances of a `bmb.repeat` show `xN`), with the element
    count and bytes, then a per-dtype summary and the totals. For each
    `bmb.job` of kind `train` on the model it adds the memory of the
    gradients (trainable parameters, in their dtype) and of the optimizer
    state (AdamW: 2 x f32 per trainable element; SGD: 1 x f32 momentum,
    none with `momentum = 0`), for `precision = bf16`/`fp16` the GEMMs'
    reduced-precision weight copy (2 bytes per trainable element), and the
    total.

    `bmbc --stats` prints the same table from the same code
    (`mlir::bmb::computeParamStats` in passes/ParamStats.h). A count or
    size that overflows int64 is an error.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the table ('-' is stdout)">
  ];
}


def InsertDeltasPass : Pass<"bmb-insert-deltas", "::mlir::ModuleOp"> {
  let summary = "Adds the job's deltas (LoRA, adapters, BitFit) and freezes by selector";
  let description = [{
    For the module's job with `delta`, `freeze` or `train_only`, rewrites
    the model's `@forward` (before `bmb-attach-loss` clones it): `lora`
    adds `(alpha/r) B A x` to each selected Linear layer instance,
    `adapter` a bottleneck `up(act(down(y)))` after (or, `parallel`, beside)
    each selected layer, `bitfit` selects the biases; `prefix` is not
    implemented yet (an error). Delta params inside a rolled `bmb.repeat`
    are stacked like the layer's own. Then, with any delta, every other
    param becomes `frozen` (`train_only` keeps more trainable, `freeze`
    freezes more). Selectors (suffix, glob, `re:`) that match nothing are
    errors at the setting with near misses. Infer jobs get the same deltas
    (LoRA merged into the weights at load: `bmb.lora_merge` on the weight,
    unless `merge = false`) and no freezing.
  }];
}

def AttachLossPass : Pass<"bmb-attach-loss", "::mlir::ModuleOp"> {
  let summary = "Adds the train job's loss function @loss(tokens, targets)";
  let description = [{
    For the module's `train` job, clones the model's `@forward` into
    `func.func @loss(%tokens, %targets) -> tensor<f32>`: next-token
    cross-entropy of a causal LM. When the logits are a `bmb.lm_head`
    without bias in the function body, head and loss become one
    `bmb.fused_classifier`; other logits get `bmb.cross_entropy`. The
    forward must take one i32 `[B, T]` input and return `[B, T, vocab]`
    logits: other objectives (masked LM, classification) are errors at the
    job. For a `tune` job (after bmb-lower-prompts), `@loss` takes the
    prompt's inputs (`mask_pos`, `labels`, `label_words`, `calibration`),
    gathers the hidden rows at the masks before the vocabulary head
    (`bmb.gather_rows`) and ends in `bmb.verbalizer_loss` (a soft verbalizer:
    `bmb.linear` by `@prompt.labels`, `bmb.cross_entropy`), returning the
    loss, the class scores and the word probabilities. Modules without a
    train or tune job are unchanged.
  }];
}

def AutocastPass : Pass<"bmb-autocast", "::mlir::ModuleOp"> {
  let summary = "Marks the GEMMs of a bf16 / fp16 train job to compute on reduced inputs";
  let description = [{
    For a train job with `precision = bf16` (or `fp16`), marks the
    GEMM-class ops of `@loss` (`bmb.linear`, `bmb.lm_head`,
    `bmb.fused_classifier`'s head, and `bmb.attention` for its two
    matmuls) with `bmb.autocast = bf16` (`f16`): their inputs are rounded
    to the reduced type, products are accumulated and stored in fp32.
    Norms, softmax (attention's too), the loss and the optimizer stay
    fp32; the params stay fp32 (the master weights). bmb-autodiff gives
    the gradient GEMMs of a marked op (and attention's gradient op) the
    same mark. Runs after bmb-attach-loss, before bmb-autodiff.
  }];
  let options = [
    Option<"attention", "attention", "bool", /*default=*/"true",
           "Mark bmb.attention too (bmbc turns it off for --target=cuda, whose "
           "device attention has no reduced-input variant yet)">,
  ];
}

def AutodiffPass : Pass<"bmb-autodiff", "::mlir::ModuleOp"> {
  let summary = "Adds @train_step: the loss and its reverse pass";
  let description = [{
    Clones `@loss` into `@train_step` and appends the reverse pass
    (docs/training-ir.md): one VJP rule per op (passes/Vjp*.cpp), a
    `bmb.layer ... backward` per forward layer instance, a
    `bmb.repeat ... reverse` per forward repeat reading stacked saves with
    `bmb.stack_get`, values the backward needs saved as extra results of
    the forward layers and repeats (`num_saved`), `bmb.param_get` and
    `bmb.arange` recomputed, and `bmb.grad_accumulate` for every trainable
    param on the loss's path. Frozen params get no gradient. An op on that
    path without a rule is an error at the op.
  }];
}

def CheckpointActivationsPass : Pass<"bmb-checkpoint-activations", "::mlir::ModuleOp"> {
  let summary = "Recomputes the forward of checkpointed layer instances in their backward";
  let description = [{
    For each layer instance named by the train job's `checkpoint` setting
    (dotted paths), after bmb-autodiff: the forward `bmb.layer` saves
    nothing and its backward takes the forward's inputs and recomputes the
    saved values from a clone of the forward body; a forward `bmb.repeat`
    saves only each iteration's carried inputs (stacked) and the reverse
    repeat recomputes iteration i at the start of its reverse iteration i
    (rolled). The clone keeps dropout ids and layers, so gradients are
    bitwise those of the program without checkpointing. A nested instance
    (`bert.enc`, `h.attn`) is saved and captured through its parents. A
    path without a backward (frozen, or not on the loss's path), a repeat
    inside a repeat and a shared instance are errors at the setting.
  }];
}

def InsertOptimizerPass : Pass<"bmb-insert-optimizer", "::mlir::ModuleOp"> {
  let summary = "Adds @optimizer_step from the train job's optimizer settings";
  let description = [{
    `func.func @optimizer_step()` in the trained model: `bmb.clip_grad_norm`
    when the job sets `clip`, then one `bmb.adamw_update` (adamw, adam) or
    `bmb.sgd_update` (sgd) per trainable param in declaration order, with
    torch's defaults for unset hyperparameters. Weight decay is 0 for the
    params matching `no_decay` globs (`*` within a path segment, `**`
    across), by default rank-1 params and params read by `bmb.embedding`.
  }];
}

def DataParallelPass : Pass<"bmb-data-parallel", "::mlir::ModuleOp"> {
  let summary = "Sums the gradients over data-parallel ranks, in buckets";
  let description = [{
    Inserts `bmb.grad_all_reduce` buckets at the start of the train job's
    `@optimizer_step`: the trainable params in declaration order (the flat
    trainable group's order), at most `bucket-bytes` of gradients per
    bucket. One rank makes them no-ops at run time.
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t", /*default=*/"25 << 20",
           "the most gradient bytes of one all-reduce">,
  ];
}

def ZeroPass : Pass<"bmb-zero", "::mlir::ModuleOp"> {
  let summary = "ZeRO stages 1 and 2: partitions the optimizer state (and gradients) over the ranks";
  let description = [{
    For a train job with `zero = 1`, replaces `@optimizer_step`'s gradient
    all-reduce buckets by one `bmb.grad_reduce_scatter` of the flat
    trainable group and ends the step with `bmb.param_all_gather`: each rank
    clips and updates its own partition and keeps only its partition's
    optimizer state. With `zero = 2` the optimizer step has nothing to
    reduce: the backward's per-unit all-reduces (bmb-data-parallel's
    overlap) become `bmb.grad_reduce_scatter_unit`, each rank keeping only
    its partition of the gradients; the step ends with the all-gather as in
    stage 1. `zero = 0` (or none) changes nothing; 3 is an error at the
    setting (not implemented yet), and so is `auto`, which bmbc resolves
    before the pipeline runs.
  }];
}

def LowerPromptsPass : Pass<"bmb-lower-prompts", "::mlir::ModuleOp"> {
  let summary = "Turns a tune job's prompt = TEMPLATE -> VERBALIZER into an explicit plan";
  let description = [{
    For each `tune` job, reads its `bmb.template` and its `bmb.verbalizer`s
    (one per `{mask}`) and sets the job's `bmb.prompt` attribute: the
    template's segments (text, field, meta, mask, soft, each with whether it
    owns the space before it and whether it may be shortened), the
    truncation policy and max length, the soft tokens' init words, the
    labels, and per mask the verbalizer's words, reduction and flags. Soft
    tokens become the model parameter `@prompt.soft : [n_soft, dim]` (a soft
    verbalizer, `@prompt.labels`), and the token embedding reads ids past the
    vocabulary from it (`bmb.soft_embedding`). Errors, at the job: data without fields,
    a template field the job's data does not declare, verbalizer labels that
    differ from the data's or from each other, no `{mask}` or a verbalizer
    count other than the mask count, soft tokens without a token embedding
    or with another reader of the token ids.
  }];
}

def LowerBmbToExecPass : Pass<"bmb-lower-to-exec", "::mlir::ModuleOp"> {
  let summary = "Lowers an infer, train or tune job's model to a bmb_exec program";
  let description = [{
    Turns the `bmb.model` of the module's infer job (entries `@prefill`,
    `@decode`) into a `bmb_exec.program`: tensors become destination buffers
    (`bmb_exec.alloc`), each op a runtime kernel or a named element-wise op,
    `bmb.layer` regions are inlined and `bmb.repeat` becomes an `scf.for`
    over the layer index with stacked params read per layer. Causal
    attention gets a KV cache (`bmb_exec.state`); values with a sequence
    dim take the run-time row count `%rows` in prefill; a causal LM's
    prefill computes the logits of the last row only; dropout is the
    identity; bidirectional attention makes the program an encoder
    (prefill only). The model and the job are replaced by the program.
  }];
  let dependentDialects = ["::mlir::bmb::exec::BmbExecDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

def FuseKernelsPass : Pass<"bmb-fuse-kernels", "::mlir::ModuleOp"> {
  let summary = "Fuses element-wise ops into GEMM epilogues, residual norms and generated kernels";
  let description = [{
    Every `bmb_exec.ewise` becomes a GEMM epilogue (bias + activation), a
    GEMM residual add, a fused residual + layernorm/rmsnorm, or part of a
    generated `bmb_exec.kernel` whose arith/math body computes a whole chain
    of element-wise ops in one pass over memory.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def PlanMemoryPass : Pass<"bmb-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Gives every buffer its offset in its role's allocation";
  let description = [{
    Params and state are laid out in declaration order; each entry
    function's activation buffers are packed by liveness (largest first,
    lowest free offset). Sets `offset` on every param, state, alloc and
    input, `activation_bytes` on each function and `param_bytes`,
    `state_bytes`, `activation_bytes` on the program. Offsets are multiples
    of 64 bytes.
  }];
}

def OffloadOptimizerPass : Pass<"bmb-offload-optimizer", "::mlir::ModuleOp"> {
  let summary = "offload = optimizer: AdamW's state and update of the rank's partition in host memory";
  let description = [{
    For each train program whose job says `offload = optimizer`, rewrites
    `@optimizer_step`'s AdamW updates into the offloaded step
    (docs/distributed.md, "Optimizer offload"; runtime/include/bmrt/offload.h):
    `bmb_exec.clip_grads %n` becomes `%c = bmb_exec.clip_coefficient %n`,
    and the `bmb_exec.adamw_update`s become one
    `%out = bmb_exec.offload_grads_out` (the partition's gradients copied to
    the host in chunks of `chunk-elems`), one
    `%in = bmb_exec.offload_adamw_update %out [params] ... scale %c` (per
    chunk: wait, clip, AdamW on the host's master copy, copy back) and
    `bmb_exec.wait %in`, before the ZeRO all-gather. Programs without the
    setting are unchanged. Refuses SGD updates, an offload setting it does
    not implement, and updates with different betas, eps, lr or step.
  }];
  let options = [
    Option<"chunkElems", "chunk-elems", "int64_t", /*default=*/"65536",
           "elements per copied and updated chunk">,
  ];
}

def VerifyAsyncPass : Pass<"bmb-verify-async", "::mlir::ModuleOp"> {
  let summary = "Checks that no op touches a collective's buffers before its wait";
  let description = [{
    For every `bmb_exec` collective: it is waited on exactly once, later in
    the same block, and no op in between (nested regions included) reads or
    writes the role it owns (the gradients, or the trainable params for the
    all-gather). zero = 2's layer reduce-scatters left in flight across
    iterations (`reduce_scatter_ahead` ... `wait_unit_grads`) are followed
    trip by trip: no write of their slot, no read of the partition and no
    end of the entry while one is in flight. Changes nothing.
  }];
}

def PrepareForEmissionPass : Pass<"bmb-prepare-for-emission", "::mlir::ModuleOp"> {
  let summary = "Checks the plan is complete and adds the kernels' index arithmetic";
  let description = [{
    After this pass the emitter only prints. It fails on anything unplanned
    or unfused, and sets each generated kernel's `inner` and per-input
    `in_div`/`in_mod` broadcast maps.
  }];
}

#endif // BMB_PASSES_TD
