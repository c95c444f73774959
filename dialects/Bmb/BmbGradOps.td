//===- BmbGradOps.td - Gradients and optimizer updates -----*- tablegen -*-===//
//
// What the training passes add to a model (docs/training-ir.md): the loss
// (`bmb.fused_classifier`), the vector-Jacobian products that bmb-autodiff
// writes for each forward primitive, the stacked saves of a repeat
// (`bmb.stack_get`), gradient accumulation into parameters
// (`bmb.grad_accumulate`) and the optimizer updates that bmb-insert-optimizer
// writes. The gradient ops carry the numerics of their forward op (eps,
// heads, scale, ...) so the backward recomputes exactly what the forward
// computed. Shapes are checked in BmbGradOps.cpp, with ShapeRules' forward
// rules wherever a gradient has its forward's shape.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_GRAD_OPS_TD
#define BMB_GRAD_OPS_TD

include "BmbDialect.td"
include "BmbAttrs.td"
include "BmbModelOps.td"
include "BmbTensorOps.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// The loss
//===----------------------------------------------------------------------===//

def Bmb_FusedClassifierOp : Bmb_RuleOp<"fused_classifier"> {
  let summary = "LM head, softmax, cross-entropy and its gradient in one pass";
  let description = [{
    `logits = input W^T` (`input: [..., dim]`, `weight: [V, dim]`), then the
    mean cross-entropy of the logits against integer `targets: [...]` over
    the targets that are not `ignore_index`, and `dlogits`, the gradient of
    that mean with respect to the logits (softmax minus one-hot, divided by
    the number of counted targets; zero rows where the target is ignored).
    The probabilities are never stored (DESIGN decision 4). The results are
    the f32 scalar loss and `dlogits: [..., V]`.

    The gradient is that of the loss itself: bmb-autodiff uses this op only
    where the loss is the function's result (its incoming gradient is 1).

    ```mlir
    %loss, %dlogits = bmb.fused_classifier %h, %w, %targets {ignore_index = -100 : i64}
        : (tensor<4x64x64xf32>, tensor<512x64xf32>, tensor<4x64xi32>)
        -> (tensor<f32>, tensor<4x64x512xf32>)
    ```
  }];
  let arguments = (ins Bmb_Tensor:$input, Bmb_Tensor:$weight,
                       Bmb_Tensor:$targets,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Bmb_Tensor:$loss, Bmb_Tensor:$dlogits);
  let assemblyFormat = [{
    $input `,` $weight `,` $targets attr-dict `:` functional-type(operands, results)
  }];
}

def Bmb_CrossEntropyGradOp : Bmb_RuleOp<"cross_entropy_grad"> {
  let summary = "the gradient of bmb.cross_entropy with respect to the logits";
  let description = [{
    d`cross_entropy(logits, targets)`/d`logits`: per row, softmax minus
    one-hot, divided by the number of targets that are not `ignore_index`;
    rows with an ignored target get 0. The result has the logits' type.

    ```mlir
    %dl = bmb.cross_entropy_grad %logits, %targets {ignore_index = -100 : i64}
        : (tensor<8x2xf32>, tensor<8xi32>) -> tensor<8x2xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$logits, Bmb_Tensor:$targets,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$logits `,` $targets attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Vector-Jacobian products
//===----------------------------------------------------------------------===//

def Bmb_LinearGradInputOp : Bmb_RuleOp<"linear_grad_input"> {
  let summary = "the input gradient of bmb.linear: dy W";
  let description = [{
    For `y = x W^T + b` with `weight: [out, in]`: `dx = dy W`, where
    `dy: [..., out]`; the result is `[..., in]`.

    ```mlir
    %dx = bmb.linear_grad_input %dy, %w
        : (tensor<4x64x256xf32>, tensor<256x64xf32>) -> tensor<4x64x64xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$grad, Bmb_Tensor:$weight);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$grad `,` $weight attr-dict `:` functional-type(operands, results)";
}

def Bmb_LinearGradWeightOp : Bmb_RuleOp<"linear_grad_weight"> {
  let summary = "the weight gradient of bmb.linear: dy^T x";
  let description = [{
    For `y = x W^T + b`: `dW = dy^T x` summed over every leading dimension,
    where `dy: [..., out]` and `input: [..., in]` have the same leading
    dimensions; the result is `[out, in]`, the weight's shape.

    ```mlir
    %dw = bmb.linear_grad_weight %dy, %x
        : (tensor<4x64x256xf32>, tensor<4x64x64xf32>) -> tensor<256x64xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$grad, Bmb_Tensor:$input);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$grad `,` $input attr-dict `:` functional-type(operands, results)";
}

def Bmb_ReduceSumOp : Bmb_Op<"reduce_sum", [Pure]> {
  let summary = "sums a gradient down to the shape of a broadcast operand";
  let description = [{
    The reverse of numpy broadcasting: the result's shape is a shape that
    broadcasts to the input's (aligned from the right, each dimension equal
    or 1, fewer dimensions allowed), and the input is summed over the
    leading dimensions it does not have and over the dimensions where it has
    1. A bias's gradient is the `reduce_sum` of `dy` to `[out]`.

    ```mlir
    %db = bmb.reduce_sum %dy : tensor<4x64x256xf32> -> tensor<256xf32>
    %dp = bmb.reduce_sum %dx : tensor<4x64x64xf32> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$input);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Bmb_ActGradOp : Bmb_RuleOp<"act_grad", [AllTypesMatch<["input", "grad"]>]> {
  let summary = "the gradient of an element-wise activation";
  let description = [{
    `dx = dy * act'(x)` element-wise, where `input` is the activation's
    input (not its output) and `act` names it: `gelu_tanh` and `gelu_erf`
    (`bmb.gelu approximate tanh / none`), `relu`, `silu`, `tanh`.

    ```mlir
    %dx = bmb.act_grad gelu_tanh %x, %dy : tensor<4x64x256xf32>
    ```
  }];
  let arguments = (ins Bmb_ActivationAttr:$act, Bmb_Tensor:$input,
                       Bmb_Tensor:$grad);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "`` $act $input `,` $grad attr-dict `:` type($input)";
}

def Bmb_LayerNormGradOp : Bmb_RuleOp<"layernorm_grad"> {
  let summary = "the gradients of bmb.layernorm";
  let description = [{
    For `y = layernorm(x, w, b) {eps}`: `dx`, `dw` and `db` from `dy`, `x`
    and `w` (the statistics are recomputed from `x` with the same `eps`;
    `b` does not enter the gradients). `db` is `dy` summed over rows; when
    the forward had no bias, bmb-autodiff leaves `db` without uses and the
    lowering does not compute it.

    ```mlir
    %dx, %dw, %db = bmb.layernorm_grad %dy, %x, %w {eps = 1.0e-05 : f64}
        : (tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<64xf32>)
        -> (tensor<4x64x64xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Bmb_Tensor:$grad, Bmb_Tensor:$input,
                       Bmb_Tensor:$weight, F64Attr:$eps);
  let results = (outs Bmb_Tensor:$dinput, Bmb_Tensor:$dweight,
                      Bmb_Tensor:$dbias);
  let assemblyFormat = [{
    $grad `,` $input `,` $weight attr-dict `:` functional-type(operands, results)
  }];
}

def Bmb_RMSNormGradOp : Bmb_RuleOp<"rmsnorm_grad"> {
  let summary = "the gradients of bmb.rmsnorm";
  let description = [{
    For `y = rmsnorm(x, w) {eps}`: `dx` and `dw` from `dy`, `x` and `w`
    (the statistic is recomputed from `x` with the same `eps`).

    ```mlir
    %dx, %dw = bmb.rmsnorm_grad %dy, %x, %w {eps = 1.0e-05 : f64}
        : (tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<64xf32>)
        -> (tensor<4x64x64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Bmb_Tensor:$grad, Bmb_Tensor:$input,
                       Bmb_Tensor:$weight, F64Attr:$eps);
  let results = (outs Bmb_Tensor:$dinput, Bmb_Tensor:$dweight);
  let assemblyFormat = [{
    $grad `,` $input `,` $weight attr-dict `:` functional-type(operands, results)
  }];
}

def Bmb_AttentionGradOp : Bmb_RuleOp<"attention_grad", [AttrSizedOperandSegments]> {
  let summary = "the gradients of bmb.attention";
  let description = [{
    `dq`, `dk`, `dv` of `bmb.attention %q, %k, %v [, %mask]` with the same
    attributes, from the gradient `grad` of its result. The softmax is
    recomputed from `q` and `k` (no `T x T` buffer is saved). With grouped
    queries, a kv head's `dk`/`dv` sum over the heads of its group. With
    `prefix(%pk, %pv)` it also returns the prefixes' gradients (summed over
    the batch).

    ```mlir
    %dq, %dk, %dv = bmb.attention_grad %dy, %q, %k, %v
        {causal, heads = 4 : i64, kv_heads = 2 : i64, scale = 2.500000e-01 : f64}
        : (tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<4x64x32xf32>,
           tensor<4x64x32xf32>)
        -> (tensor<4x64x64xf32>, tensor<4x64x32xf32>, tensor<4x64x32xf32>)
    ```
  }];
  let arguments = (ins Bmb_Tensor:$grad, Bmb_Tensor:$query, Bmb_Tensor:$key,
                       Bmb_Tensor:$value, Optional<Bmb_Tensor>:$mask,
                       Optional<Bmb_Tensor>:$prefix_key,
                       Optional<Bmb_Tensor>:$prefix_value,
                       Optional<Bmb_Tensor>:$prefix_gate,
                       I64Attr:$heads, I64Attr:$kv_heads, UnitAttr:$causal,
                       F64Attr:$scale);
  // dprefix: none, or the gradients of prefix_key and prefix_value.
  let results = (outs Bmb_Tensor:$dquery, Bmb_Tensor:$dkey,
                      Bmb_Tensor:$dvalue, Variadic<Bmb_Tensor>:$dprefix);
  let assemblyFormat = [{
    $grad `,` $query `,` $key `,` $value (`,` $mask^)?
    (`prefix` `(` $prefix_key^ `,` $prefix_value `)`)? (`gate` $prefix_gate^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def Bmb_RotaryGradOp : Bmb_RuleOp<"rotary_grad"> {
  let summary = "the gradient of bmb.rotary: the inverse rotation";
  let description = [{
    Rotates `grad` by the negated angles of `bmb.rotary` with the same
    `positions`, `heads` and `base` (a rotation's transpose is its inverse).

    ```mlir
    %dx = bmb.rotary_grad %dy, %pos {base = 1.0e+04 : f64, heads = 4 : i64}
        : (tensor<4x64x64xf32>, tensor<64xi32>) -> tensor<4x64x64xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$grad, Bmb_Tensor:$positions,
                       I64Attr:$heads, F64Attr:$base);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$grad `,` $positions attr-dict `:` functional-type(operands, results)";
}

def Bmb_SoftmaxGradOp : Bmb_RuleOp<"softmax_grad"> {
  let summary = "the gradient of bmb.softmax, from its output";
  let description = [{
    `dx = y * (dy - sum(dy * y))` along `axis`, where `output` is the
    forward's result `y`.

    ```mlir
    %dx = bmb.softmax_grad %y, %dy {axis = -1 : i64}
        : (tensor<8x256x512xf32>, tensor<8x256x512xf32>) -> tensor<8x256x512xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$output, Bmb_Tensor:$grad, I64Attr:$axis);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$output `,` $grad attr-dict `:` functional-type(operands, results)";
}

def Bmb_EmbeddingGradOp : Bmb_Op<"embedding_grad", [Pure]> {
  let summary = "the table gradient of bmb.embedding";
  let description = [{
    `dW[ids[...], :] += dy[..., :]` into a zero `[num, dim]` table (the
    result type gives `num`); repeated ids add up.

    ```mlir
    %dw = bmb.embedding_grad %dy, %ids
        : (tensor<4x64x64xf32>, tensor<4x64xi32>) -> tensor<512x64xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$grad, Bmb_Tensor:$ids);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$grad `,` $ids attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Bmb_TakeGradOp : Bmb_Op<"take_grad", [Pure]> {
  let summary = "the gradient of bmb.take: zeros with one entry filled in";
  let description = [{
    The result has `bmb.take`'s input type (given by the result type): zero
    everywhere except entry `index` along `axis`, which is `grad`.

    ```mlir
    %dx = bmb.take_grad %dcls {axis = 1 : i64, index = 0 : i64}
        : (tensor<8x768xf32>) -> tensor<8x128x768xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$grad, I64Attr:$index, I64Attr:$axis);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Bmb_ConcatOp : Bmb_RuleOp<"concat"> {
  let summary = "joins tensors along an axis";
  let description = [{
    The inputs have one dtype and rank and agree on every dimension but
    `axis` (negative counts from the end); the result's `axis` is their sum.
    It is the gradient of `bmb.split`.

    ```mlir
    %qkv = bmb.concat %dq, %dk, %dv {axis = 2 : i64}
        : (tensor<8x256x192xf32>, tensor<8x256x192xf32>, tensor<8x256x192xf32>)
        -> tensor<8x256x576xf32>
    ```
  }];
  let arguments = (ins Variadic<Bmb_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Saves and gradient accumulation
//===----------------------------------------------------------------------===//

def Bmb_StackGetOp : Bmb_Op<"stack_get", [Pure]> {
  let summary = "one iteration's slice of a repeat's stacked save";
  let description = [{
    `stack[index]`: a forward `bmb.repeat` with `num_saved` yields, per
    iteration, values the backward needs, stacked as
    `tensor<count x ...>`; the reverse repeat reads iteration `index`'s value
    with this op.

    ```mlir
    %x = bmb.stack_get %xs[%i] : tensor<2x4x64x64xf32> -> tensor<4x64x64xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$stack, Index:$index);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = [{
    $stack `[` $index `]` attr-dict `:` type($stack) `->` type($result)
  }];
  let builders = [
    /// The result type is the stack's without its first dimension.
    OpBuilder<(ins "::mlir::Value":$stack, "::mlir::Value":$index)>
  ];
  let hasVerifier = 1;
}

def Bmb_GradAccumulateOp : Bmb_Op<"grad_accumulate", [
    MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "adds a gradient into a parameter's gradient buffer";
  let description = [{
    `grad(@param)[indices] += value`. `value` has the type of what
    `bmb.param_get` with the same indices reads (one iteration's slice of a
    stacked parameter). The param must be trainable: a frozen param has no
    gradient buffer. Gradients add up over the uses of a param (tied
    weights) and over micro-batches; the runtime zeroes them after each
    optimizer step.

    ```mlir
    bmb.grad_accumulate @wte.w, %dw : tensor<512x64xf32>
    bmb.grad_accumulate @h.attn.q.w[%i], %dq : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, Variadic<Index>:$indices,
                       Bmb_Tensor:$value);
  let assemblyFormat = [{
    $param (`[` $indices^ `]`)? `,` $value attr-dict `:` type($value)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

def Bmb_ClipGradNormOp : Bmb_Op<"clip_grad_norm", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "scales every gradient so their global 2-norm is at most max_norm";
  let description = [{
    `torch.nn.utils.clip_grad_norm_` over the gradients of all trainable
    params: with `n` the 2-norm of all of them together, each gradient is
    multiplied by `min(1, max_norm / (n + 1e-6))`. It runs before the
    updates in `@optimizer_step`.

    ```mlir
    bmb.clip_grad_norm {max_norm = 1.000000e+00 : f64}
    ```
  }];
  let arguments = (ins F64Attr:$max_norm);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Bmb_AdamWUpdateOp : Bmb_Op<"adamw_update", [
    MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "one AdamW step on a parameter";
  let description = [{
    `torch.optim.AdamW`'s update of `@param` from its gradient and its two
    moment buffers (`exp_avg`, `exp_avg_sq`, in the param's dtype): decoupled weight decay
    `p -= lr * weight_decay * p`, then the bias-corrected Adam step. The
    learning rate and the step number are run-time values, not attributes.
    Adam is AdamW with `weight_decay = 0`.

    ```mlir
    bmb.adamw_update @h.attn.q.w {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64,
                                  eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, F64Attr:$beta1, F64Attr:$beta2,
                       F64Attr:$eps, F64Attr:$weight_decay);
  let assemblyFormat = "$param attr-dict";
  let hasVerifier = 1;
}

def Bmb_SGDUpdateOp : Bmb_Op<"sgd_update", [
    MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "one SGD step on a parameter";
  let description = [{
    `torch.optim.SGD`'s update of `@param`: `g = grad + weight_decay * p`;
    with `momentum` > 0 the momentum buffer becomes `momentum * buf + g`
    (just `g` at the first step) and is used as `g`; then `p -= lr * g`.
    The learning rate is a run-time value.

    ```mlir
    bmb.sgd_update @w {momentum = 9.000000e-01 : f64, weight_decay = 0.000000e+00 : f64}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, F64Attr:$momentum,
                       F64Attr:$weight_decay);
  let assemblyFormat = "$param attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data parallelism and ZeRO (docs/distributed.md)
//===----------------------------------------------------------------------===//

def Bmb_GradAllReduceOp : Bmb_Op<"grad_all_reduce", [
    MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "sums one bucket of gradients over the data-parallel ranks";
  let description = [{
    Inserted by `bmb-data-parallel` at the start of `@optimizer_step`: the
    gradients of `params` (trainable, in the order of the flat trainable
    group, so the bucket is one contiguous range of the gradients) are
    replaced on every rank by their sum over the ranks. Each rank's loss was
    already divided by the target count of the whole global batch, so the
    sum is the gradient of the global mean loss.

    With `layers [a, b)` the bucket is layers a .. b - 1 of stacked params
    (all of them stacked by the same repeat): units a .. b - 1 of the
    layer-major group, one contiguous range again.

    Overlapped with the backward (outside `@optimizer_step`, in
    `@train_step`): `bmb-data-parallel` also puts one at the end of each
    reverse repeat's body, `layer %i` naming the layer whose gradients that
    iteration finished (one unit of the group), and one per bucket of the
    params outside repeats before `@train_step` returns. When the app runs
    a step's last micro-batch with `StepArgs::overlapGrads`, those go out
    during the backward and `@optimizer_step` waits for them instead of
    issuing its buckets (docs/distributed.md).

    ```mlir
    bmb.grad_all_reduce [@wte.w, @wpe.w]
    bmb.grad_all_reduce [@h.q.w, @h.ln1.w] layers [0, 2]
    bmb.grad_all_reduce [@h.q.w, @h.ln1.w] layer %i
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params,
                       OptionalAttr<DenseI64ArrayAttr>:$layers,
                       Optional<Index>:$layer);
  let assemblyFormat = "$params (`layers` $layers^)? (`layer` $layer^)? attr-dict";
  let hasVerifier = 1;
}

def Bmb_GradReduceScatterOp : Bmb_Op<"grad_reduce_scatter", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "ZeRO: each rank gets the sum over ranks of its gradient partition";
  let description = [{
    The flat trainable group is split into one rank-contiguous partition per
    rank (bmrt::Partition); afterwards each rank's own partition of the
    gradients holds the sum over the ranks, and the rest of its gradients
    are unspecified. What follows in `@optimizer_step` (clipping, the
    updates) then works on the rank's partition only: its norm is summed
    over the ranks, and only the partition's optimizer state exists.

    ```mlir
    bmb.grad_reduce_scatter
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Bmb_GradReduceScatterUnitOp : Bmb_Op<"grad_reduce_scatter_unit", [
    MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "ZeRO-2: one unit's gradients, summed over ranks, into each rank's partition";
  let description = [{
    Inserted by `bmb-zero` (zero = 2) where `bmb-data-parallel` put the
    backward's per-unit all-reduces: at the end of each reverse repeat
    iteration (`layer %i`: the unit of the layer-major group that iteration
    finished) and before `@train_step` returns (the params outside repeats,
    unit 0). The backward writes a unit's gradients into a staging buffer
    of one unit; this reduce-scatters it with per-rank counts (the unit
    meets each rank's partition in a piece, possibly empty), adds the
    rank's piece into its partition of the gradients, and zeroes the
    staging for the next unit. The gradients allocation holds only the
    rank's partition.

    ```mlir
    bmb.grad_reduce_scatter_unit [@h.q.w, @h.ln1.w] layer %i
    bmb.grad_reduce_scatter_unit [@wte.w, @ln_f.w]
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params, Optional<Index>:$layer);
  let assemblyFormat = "$params (`layer` $layer^)? attr-dict";
  let hasVerifier = 1;
}

def Bmb_ParamGatherUnitOp : Bmb_Op<"param_gather_unit", [
    MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "ZeRO-3: one unit's params, from every rank's partition, for the reads that follow";
  let description = [{
    Inserted by `bmb-zero` (zero = 3), where each rank holds only its
    partition of the trainable params: at the start of `@train_step` and
    `@loss` for the params outside repeats (unit 0, kept for the whole
    entry), and at the start of each iteration of every repeat, forward and
    reverse, for that layer (`layer %i`), so the backward's reads and an
    activation-checkpointed recomputation see the gathered layer. The
    lowering all-gathers the unit's pieces (each rank's intersection with
    its partition) into a staging buffer, where the forward and the
    backward read every trainable param: unit 0's place, and two slots per
    repeat that its layers alternate between, so a layer's gather is
    issued by the iteration before (bmb_exec.wait_unit, prefetch_unit).
    There is no release op: the gather of layer i + 2 reuses layer i's slot
    once layer i's iteration is over.

    `low bf16` (or `f16`; bmb-zero, for a `precision = bf16`/`fp16` job):
    the autocast GEMMs read their weights in that type, so the gathered unit
    is also rounded into a reduced-precision staging of the same layout
    (bmb_exec.round_unit), which they read instead of a copy of the whole
    group.

    ```mlir
    bmb.param_gather_unit [@wte.w]
    bmb.param_gather_unit [@h.ln.w, @h.fc.w] layer %i
    bmb.param_gather_unit [@h.ln.w, @h.fc.w] layer %i low bf16
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params, Optional<Index>:$layer,
                       OptionalAttr<TypeAttr>:$low);
  let assemblyFormat = "$params (`layer` $layer^)? (`low` $low^)? attr-dict";
  let hasVerifier = 1;
}

def Bmb_ParamAllGatherOp : Bmb_Op<"param_all_gather", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "ZeRO: every rank's updated parameter partition to every rank";
  let description = [{
    After the updates of a partitioned step, each rank has updated only its
    partition of the flat trainable group; this makes every rank's params
    whole again.

    ```mlir
    bmb.param_all_gather
    ```
  }];
  let assemblyFormat = "attr-dict";
}

#endif // BMB_GRAD_OPS_TD
