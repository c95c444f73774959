//===- BmbExecTrainOps.td - Ops of training programs -------*- tablegen -*-===//
//
// What a train job's program adds to the execution plan (docs/training-ir.md,
// section 4): views of gradients and of one layer of a stacked activation,
// the backward kernels of runtime/include/bmrt/kernels_backward.h, the
// fused classifier and the optimizer of runtime/include/bmrt/training.h,
// and the run-time values of bmrt::StepArgs.
//
// Every backward kernel ACCUMULATES into its gradient outputs (the
// runtime's rule, as in llm.c): a fresh gradient buffer is zeroed with
// `bmb_exec.zero` before its first contribution, and a parameter's gradient
// (`bmb_exec.grad_ref`) is written by accumulation only.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_EXEC_TRAIN_OPS_TD
#define BMB_EXEC_TRAIN_OPS_TD

//===----------------------------------------------------------------------===//
// Views and run-time values
//===----------------------------------------------------------------------===//

def BmbExec_GradRefOp : BmbExec_Op<"grad_ref", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a view of a parameter's gradient (of layer %layer's slice if stacked)";
  let description = [{
    The gradient of a trainable param, in the grads allocation at the
    param's `grad_offset`. Kernels only accumulate into it: the runtime
    zeroes the grads at start and `bmb_exec.zero_grads` after each update.

    ```mlir
    %dw = bmb_exec.grad_ref @h.ln1.w[%i] : memref<64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, Optional<Index>:$layer);
  let results = (outs BmbExec_Buffer:$result);
  let assemblyFormat = "$param (`[` $layer^ `]`)? attr-dict `:` type($result)";
}

def BmbExec_LayerViewOp : BmbExec_Op<"layer_view", [Pure]> {
  let summary = "layer %layer's slice of a stacked buffer";
  let description = [{
    A saved activation of a repeat body is one `[count, ...]` buffer: the
    forward loop writes slice i, the backward loop reads it.

    ```mlir
    %x = bmb_exec.layer_view %saved[%i] : memref<2x4x64xf32> to memref<4x64xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$source, Index:$layer);
  let results = (outs BmbExec_Buffer:$result);
  let assemblyFormat = [{
    $source `[` $layer `]` attr-dict `:` type($source) `to` type($result)
  }];
  let hasVerifier = 1;
}

def BmbExec_StepArgOp : BmbExec_Op<"step_arg", [Pure]> {
  let summary = "a field of the entry's bmrt::StepArgs";
  let description = [{
    `field`: "step" (i64, the 1-based optimizer update), "lr" (f64, the
    schedule already applied), "dloss_scale" (f64, 1 / counted targets of
    the global batch), "seed" (i64), "micro_step" (i64).

    ```mlir
    %lr = bmb_exec.step_arg "lr" : f64
    ```
  }];
  let arguments = (ins StrAttr:$field);
  let results = (outs AnyTypeOf<[F64, I64]>:$result);
  let assemblyFormat = "$field attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def BmbExec_SetStepArgOp : BmbExec_Op<"set_step_arg"> {
  let summary = "reports a value to the app through bmrt::StepArgs";
  let description = [{
    `field`: "grad_norm" (f64).

    ```mlir
    bmb_exec.set_step_arg "grad_norm" %n : f64
    ```
  }];
  let arguments = (ins StrAttr:$field, F64:$value);
  let assemblyFormat = "$field $value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def BmbExec_ZeroOp : BmbExec_Op<"zero"> {
  let summary = "sets every element of a buffer to 0 (bmrt::fill_zero)";
  let description = [{
    Zeroes a gradient buffer before the first kernel accumulates into it.

    ```mlir
    bmb_exec.zero %dx : memref<4x64xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$out);
  let assemblyFormat = "$out attr-dict `:` type($out)";
}

//===----------------------------------------------------------------------===//
// Backward kernels (runtime/include/bmrt/kernels_backward.h)
//===----------------------------------------------------------------------===//

def BmbExec_MatmulOp : BmbExec_Op<"matmul"> {
  let summary = "c = op(a) . op(b) (+ c) (bmrt::gemm_ex)";
  let description = [{
    a, b and c are seen as matrices [leading dims, last dim]. `trans_a`:
    a is [k, m]; `trans_b`: b is [n, k] (our weights). With `accumulate`
    the product is added to c. The backward of a linear layer:
    dx += dy . w (no transposes), dw += dy^T . x (`trans_a`).

    ```mlir
    bmb_exec.matmul %dy, %x outs(%dw) {trans_a, accumulate}
        : memref<4x16x256xf32>, memref<4x16x64xf32> -> memref<256x64xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$a, BmbExec_Buffer:$b, BmbExec_Buffer:$c,
                       UnitAttr:$trans_a, UnitAttr:$trans_b, UnitAttr:$accumulate);
  let assemblyFormat = [{
    $a `,` $b `outs` `(` $c `)` attr-dict `:` type($a) `,` type($b) `->` type($c)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The product's dimensions: c[m, n] = op(a)[m, k] . op(b)[k, n].
    int64_t getM();
    int64_t getN();
    int64_t getK();
  }];
}

def BmbExec_SumRowsOp : BmbExec_Op<"sum_rows"> {
  let summary = "out[C] += sum over rows of x[rows, C] (bmrt::sum_rows)";
  let description = [{
    The gradient of a broadcast operand (a bias): x is seen as
    [leading dims, C] with C = out's element count.

    ```mlir
    bmb_exec.sum_rows %dy outs(%db) : memref<4x16x64xf32> -> memref<64xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$x, BmbExec_Buffer:$out);
  let assemblyFormat = "$x `outs` `(` $out `)` attr-dict `:` type($x) `->` type($out)";
  let hasVerifier = 1;
}

def BmbExec_NormGradOp : BmbExec_Op<"norm_grad", [AttrSizedOperandSegments]> {
  let summary = "layernorm / rmsnorm backward (bmrt::*norm_backward)";
  let description = [{
    Accumulates dx, dw and db (layernorm only) from dy and the forward's x
    and w. The statistics are recomputed from x and `eps`. Any of the
    gradients may be left out (not needed), not all.

    ```mlir
    bmb_exec.norm_grad "layernorm" %dy, %x, %w dx(%dx : memref<4x16x64xf32>) dw(%dw : memref<64xf32>)
        db(%db : memref<64xf32>) {eps = 1.0e-05 : f64}
        : memref<4x16x64xf32>, memref<4x16x64xf32>, memref<64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$kind, BmbExec_Buffer:$dy, BmbExec_Buffer:$x, BmbExec_Buffer:$w,
                       Optional<BmbExec_Buffer>:$dx, Optional<BmbExec_Buffer>:$dw,
                       Optional<BmbExec_Buffer>:$db, F64Attr:$eps);
  let assemblyFormat = [{
    $kind $dy `,` $x `,` $w (`dx` `(` $dx^ `:` type($dx) `)`)? (`dw` `(` $dw^ `:` type($dw) `)`)?
    (`db` `(` $db^ `:` type($db) `)`)? attr-dict `:` type($dy) `,` type($x) `,` type($w)
  }];
  let hasVerifier = 1;
}

def BmbExec_AttentionGradOp : BmbExec_Op<"attention_grad", [AttrSizedOperandSegments]> {
  let summary = "attention backward at training shapes (bmrt::attention_backward)";
  let description = [{
    The backward of `bmb_exec.attention` with start 0 and k/v the
    projections themselves (no cache): q, k, v, dy are [batch, rows, ...].
    Accumulates dq, dk, dv; the softmax is recomputed. With
    `prefix %pk, %pv grads %dpk, %dpv` (prefix tuning) the keys are
    `[pk; k]` per sequence (bmrt::attention_prefix_backward) and the
    prefixes' gradients, summed over the batch, accumulate into dpk, dpv.

    ```mlir
    bmb_exec.attention_grad %dy, %q, %k, %v outs(%dq, %dk, %dv)
        {causal, heads = 4 : i64, kv_heads = 4 : i64, head_dim = 16 : i64, scale = 2.5e-01 : f64}
        : memref<4x16x64xf32>, memref<4x16x64xf32>, memref<4x16x64xf32>, memref<4x16x64xf32>
        -> memref<4x16x64xf32>, memref<4x16x64xf32>, memref<4x16x64xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$dy, BmbExec_Buffer:$q, BmbExec_Buffer:$k,
                       BmbExec_Buffer:$v, Optional<BmbExec_Buffer>:$mask,
                       Optional<BmbExec_Buffer>:$prefix_k, Optional<BmbExec_Buffer>:$prefix_v,
                       Optional<BmbExec_Buffer>:$dprefix_k, Optional<BmbExec_Buffer>:$dprefix_v,
                       Optional<BmbExec_Buffer>:$prefix_gate,
                       BmbExec_Buffer:$dq, BmbExec_Buffer:$dk, BmbExec_Buffer:$dv,
                       UnitAttr:$causal, I64Attr:$heads, I64Attr:$kv_heads, I64Attr:$head_dim,
                       F64Attr:$scale);
  let assemblyFormat = [{
    $dy `,` $q `,` $k `,` $v (`mask` $mask^ `:` type($mask))?
    (`prefix` $prefix_k^ `,` $prefix_v `grads` $dprefix_k `,` $dprefix_v `:` type($prefix_k) `,`
     type($prefix_v) `,` type($dprefix_k) `,` type($dprefix_v))?
    (`gate` $prefix_gate^ `:` type($prefix_gate))?
    `outs` `(` $dq `,` $dk `,` $dv `)`
    attr-dict `:` type($dy) `,` type($q) `,` type($k) `,` type($v) `->` type($dq) `,`
    type($dk) `,` type($dv)
  }];
  let hasVerifier = 1;
}

def BmbExec_RotaryGradOp : BmbExec_Op<"rotary_grad"> {
  let summary = "rotary backward: dx += the inverse rotation of dy (bmrt::rotary_backward)";
  let description = [{
    ```mlir
    bmb_exec.rotary_grad %dy, %pos outs(%dx) {heads = 4 : i64, head_dim = 16 : i64, base = 1.0e+04 : f64}
        : memref<4x16x64xf32>, memref<16xi32> -> memref<4x16x64xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$dy, BmbExec_Buffer:$positions, BmbExec_Buffer:$dx,
                       I64Attr:$heads, I64Attr:$head_dim, F64Attr:$base);
  let assemblyFormat = [{
    $dy `,` $positions `outs` `(` $dx `)` attr-dict `:` type($dy) `,` type($positions)
    `->` type($dx)
  }];
  let hasVerifier = 1;
}

def BmbExec_SoftmaxGradOp : BmbExec_Op<"softmax_grad"> {
  let summary = "softmax backward from the forward's output (bmrt::softmax_backward)";
  let description = [{
    dx += y * (dy - sum(dy * y)) per row of the last dim.

    ```mlir
    bmb_exec.softmax_grad %y, %dy outs(%dx) : memref<4x8xf32>, memref<4x8xf32> -> memref<4x8xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$y, BmbExec_Buffer:$dy, BmbExec_Buffer:$dx);
  let assemblyFormat = [{
    $y `,` $dy `outs` `(` $dx `)` attr-dict `:` type($y) `,` type($dy) `->` type($dx)
  }];
  let hasVerifier = 1;
}

def BmbExec_EmbeddingGradOp : BmbExec_Op<"embedding_grad"> {
  let summary = "dtable[ids[r]] += dy[r] (bmrt::embedding_backward)";
  let description = [{
    ```mlir
    bmb_exec.embedding_grad %dy, %ids outs(%dw) : memref<4x16x64xf32>, memref<4x16xi32> -> memref<512x64xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$dy, BmbExec_Buffer:$ids, BmbExec_Buffer:$dtable);
  let assemblyFormat = [{
    $dy `,` $ids `outs` `(` $dtable `)` attr-dict `:` type($dy) `,` type($ids) `->` type($dtable)
  }];
  let hasVerifier = 1;
}

def BmbExec_TakeGradOp : BmbExec_Op<"take_grad"> {
  let summary = "backward of take: dx[o, index, :] += dy[o, :] (bmrt::copy_strided_backward)";
  let description = [{
    ```mlir
    bmb_exec.take_grad %dy outs(%dx) {axis = 1 : i64, index = 0 : i64} : memref<4x64xf32> -> memref<4x16x64xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$dy, BmbExec_Buffer:$dx, I64Attr:$axis, I64Attr:$index);
  let assemblyFormat = "$dy `outs` `(` $dx `)` attr-dict `:` type($dy) `->` type($dx)";
  let hasVerifier = 1;
}

def BmbExec_ClassifierOp : BmbExec_Op<"classifier", [AttrSizedOperandSegments]> {
  let summary = "softmax cross-entropy per row, and its gradient (bmrt::fused_classifier_forward_backward)";
  let description = [{
    losses[r] = -log softmax(logits[r])[targets[r]] (0 where the target is
    `ignore_index`); with `dlogits`, dlogits[r] = (softmax - onehot) *
    `%scale` (overwritten, not accumulated; it may be the logits buffer
    itself). Without `dlogits`: the loss only (evaluation).

    ```mlir
    bmb_exec.classifier %logits, %targets outs(%losses) dlogits(%logits) scale %s
        {ignore_index = -100 : i64} : memref<4x16x512xf32>, memref<4x16xi32> -> memref<64xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$logits, BmbExec_Buffer:$targets, BmbExec_Buffer:$losses,
                       Optional<BmbExec_Buffer>:$dlogits, Optional<F64>:$scale,
                       I64Attr:$ignore_index);
  let assemblyFormat = [{
    $logits `,` $targets `outs` `(` $losses `)` (`dlogits` `(` $dlogits^ `:` type($dlogits) `)`)?
    (`scale` $scale^)? attr-dict `:` type($logits) `,` type($targets) `->` type($losses)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizer (runtime/include/bmrt/training.h)
//===----------------------------------------------------------------------===//

def BmbExec_GradNormOp : BmbExec_Op<"grad_norm"> {
  let summary = "the 2-norm of every gradient (the whole grads allocation)";
  let description = [{
    Padding between gradients is zero (the runtime zeroes the allocation,
    kernels never write it), so one pass over the allocation is the norm
    over all trainable params.

    ```mlir
    %n = bmb_exec.grad_norm : f64
    ```
  }];
  let results = (outs F64:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def BmbExec_ClipGradsOp : BmbExec_Op<"clip_grads"> {
  let summary = "scales every gradient so that their norm is at most max_norm";
  let description = [{
    torch.nn.utils.clip_grad_norm_: the factor is
    min(1, max_norm / (%norm + 1e-6)) (bmrt::clip_coefficient).

    ```mlir
    bmb_exec.clip_grads %n {max_norm = 1.0 : f64}
    ```
  }];
  let arguments = (ins F64:$norm, F64Attr:$max_norm);
  let assemblyFormat = "$norm attr-dict";
}

def BmbExec_AdamWUpdateOp : BmbExec_Op<"adamw_update", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "one AdamW update of a param from its gradient (bmrt::adamw_update)";
  let description = [{
    Reads the param's gradient and updates its two optimizer-state slots
    (exp_avg, exp_avg_sq) and the param, as torch.optim.AdamW.

    ```mlir
    bmb_exec.adamw_update @wte.w lr %lr step %step
        {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.1 : f64}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, F64:$lr, I64:$step, F64Attr:$beta1,
                       F64Attr:$beta2, F64Attr:$eps, F64Attr:$weight_decay);
  let assemblyFormat = "$param `lr` $lr `step` $step attr-dict";
}

def BmbExec_SGDUpdateOp : BmbExec_Op<"sgd_update", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "one SGD update of a param from its gradient (bmrt::sgd_update)";
  let description = [{
    With momentum != 0 the param's one optimizer-state slot is the momentum
    buffer.

    ```mlir
    bmb_exec.sgd_update @w lr %lr step %step {momentum = 0.9 : f64, weight_decay = 0.0 : f64}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, F64:$lr, I64:$step, F64Attr:$momentum,
                       F64Attr:$weight_decay);
  let assemblyFormat = "$param `lr` $lr `step` $step attr-dict";
}

def BmbExec_ZeroGradsOp : BmbExec_Op<"zero_grads"> {
  let summary = "zeroes the whole grads allocation (after the update)";
  let description = [{
    ```mlir
    bmb_exec.zero_grads
    ```
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Scalar functions of generated kernels
//===----------------------------------------------------------------------===//

def BmbExec_ElemCallOp : BmbExec_Op<"elem_call", [Pure]> {
  let summary = "a __host__ __device__ scalar function of the runtime, in a kernel body";
  let description = [{
    The element derivatives of runtime/include/bmrt/kernels_backward.h:
    `callee` is gelu_tanh_backward, gelu_erf_backward, relu_backward,
    silu_backward or tanh_backward, called with (x, dy). Calling the
    runtime's own function keeps a generated backward kernel bit-identical
    to the tested derivative.

    `dropout` (runtime/include/bmrt/dropout.h) is called with (x, p: f64,
    seed, step, micro_step, rng_id, layer, index: i64): x scaled by
    1 / (1 - p) or zeroed, by the counter-based mask of that key.

    ```mlir
    %dx = bmb_exec.elem_call "gelu_tanh_backward"(%x, %dy) : (f32, f32) -> f32
    %y = bmb_exec.elem_call "dropout"(%x, %p, %seed, %step, %micro, %id, %layer, %i)
        : (f32, f64, i64, i64, i64, i64, i64, i64) -> f32
    ```
  }];
  let arguments = (ins StrAttr:$callee, Variadic<AnyTypeOf<[AnyFloat, I64]>>:$args);
  let results = (outs AnyFloat:$result);
  let assemblyFormat = "$callee `(` $args `)` attr-dict `:` functional-type($args, $result)";
  let hasVerifier = 1;
}


//===----------------------------------------------------------------------===//
// Prompt tuning (docs/tuning.md; runtime/include/bmrt/tuning.h)
//===----------------------------------------------------------------------===//

def BmbExec_SoftEmbeddingOp : BmbExec_Op<"soft_embedding"> {
  let summary = "out[r] = ids[r] < num ? table[ids[r]] : soft[ids[r] - num] (bmrt::soft_embedding_forward)";
  let description = [{
    ```mlir
    bmb_exec.soft_embedding %ids, %table, %soft outs(%x) : memref<2x16xi32>, memref<64x8xf32>, memref<1x8xf32> -> memref<2x16x8xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$ids, BmbExec_Buffer:$table, BmbExec_Buffer:$soft,
                       BmbExec_Buffer:$out);
  let assemblyFormat = [{
    $ids `,` $table `,` $soft `outs` `(` $out `)` attr-dict `:` type($ids) `,` type($table) `,`
    type($soft) `->` type($out)
  }];
}

def BmbExec_SoftEmbeddingGradOp : BmbExec_Op<"soft_embedding_grad", [AttrSizedOperandSegments]> {
  let summary = "dtable/dsoft[ids[r]] += dy[r] (bmrt::soft_embedding_backward)";
  let description = [{
    Ids below `num` (the table's rows) add into `dtable`, the others into
    row `id - num` of `dsoft`; either may be absent (not trained).

    ```mlir
    bmb_exec.soft_embedding_grad %dy, %ids outs(dsoft %ds : memref<1x8xf32>) {num = 64 : i64}
        : memref<2x16x8xf32>, memref<2x16xi32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$dy, BmbExec_Buffer:$ids,
                       Optional<BmbExec_Buffer>:$dtable, Optional<BmbExec_Buffer>:$dsoft,
                       I64Attr:$num);
  let assemblyFormat = [{
    $dy `,` $ids `outs` `(` (`dtable` $dtable^ `:` type($dtable))? (`dsoft` $dsoft^ `:` type($dsoft))? `)`
    attr-dict `:` type($dy) `,` type($ids)
  }];
}

def BmbExec_GatherRowsOp : BmbExec_Op<"gather_rows"> {
  let summary = "out[b*M + m] = x[b, pos[b, m]] (bmrt::gather_rows_forward)";
  let description = [{
    ```mlir
    bmb_exec.gather_rows %h, %pos outs(%r) : memref<2x16x8xf32>, memref<2x1xi32> -> memref<2x8xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$x, BmbExec_Buffer:$positions, BmbExec_Buffer:$out);
  let assemblyFormat = [{
    $x `,` $positions `outs` `(` $out `)` attr-dict `:` type($x) `,` type($positions) `->` type($out)
  }];
}

def BmbExec_GatherRowsGradOp : BmbExec_Op<"gather_rows_grad"> {
  let summary = "dx[b, pos[b, m]] += dy[b*M + m] (bmrt::gather_rows_backward)";
  let description = [{
    ```mlir
    bmb_exec.gather_rows_grad %dr, %pos outs(%dh) : memref<2x8xf32>, memref<2x1xi32> -> memref<2x16x8xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$dy, BmbExec_Buffer:$positions, BmbExec_Buffer:$dx);
  let assemblyFormat = [{
    $dy `,` $positions `outs` `(` $dx `)` attr-dict `:` type($dy) `,` type($positions) `->` type($dx)
  }];
}

def BmbExec_VerbalizerLossOp : BmbExec_Op<"verbalizer_loss", [AttrSizedOperandSegments]> {
  let summary = "manual verbalizer and class cross-entropy per example, and d(logits) (bmrt::verbalizer_loss_forward_backward)";
  let description = [{
    bmb.verbalizer_loss after its head GEMM: from `logits` [B*M, V] writes
    the per-example `losses` [B] (0 for ignored labels), `scores` [B, C],
    `word_probs` [B, M, C, W] and, with `dlogits`, d(mean loss)/d(logits)
    times `%scale` (overwritten; it may be the logits buffer itself).

    ```mlir
    bmb_exec.verbalizer_loss %logits, %labels, %words, %calib outs(%losses, %scores, %wp)
        dlogits(%logits : memref<2x64xf32>) scale %s {ignore_index = -100 : i64, reduce = ["first"]}
        : memref<2x64xf32>, memref<2xi32>, memref<1x2x2x8xi32>, memref<1x2x2xf32>
        -> memref<2xf32>, memref<2x2xf32>, memref<2x1x2x2xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$logits, BmbExec_Buffer:$labels, BmbExec_Buffer:$label_words,
                       BmbExec_Buffer:$calibration, BmbExec_Buffer:$losses,
                       BmbExec_Buffer:$scores, BmbExec_Buffer:$word_probs,
                       Optional<BmbExec_Buffer>:$dlogits, Optional<F64>:$scale,
                       StrArrayAttr:$reduce, I64Attr:$ignore_index);
  let assemblyFormat = [{
    $logits `,` $labels `,` $label_words `,` $calibration `outs` `(` $losses `,` $scores `,` $word_probs `)`
    (`dlogits` `(` $dlogits^ `:` type($dlogits) `)`)? (`scale` $scale^)? attr-dict
    `:` type($logits) `,` type($labels) `,` type($label_words) `,` type($calibration)
    `->` type($losses) `,` type($scores) `,` type($word_probs)
  }];
}

#endif // BMB_EXEC_TRAIN_OPS_TD
