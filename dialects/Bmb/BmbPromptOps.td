//===- BmbPromptOps.td - The ops of prompt tuning ----------*- tablegen -*-===//
//
// What a tune job's model gains (docs/tuning.md, docs/passes.md):
// bmb-lower-prompts makes the token embedding read soft tokens too
// (`bmb.soft_embedding`); bmb-attach-loss (tune mode) gathers the hidden rows
// at the {mask} positions (`bmb.gather_rows`) and ends the loss in
// `bmb.verbalizer_loss`, OpenPrompt's ManualVerbalizer + cross-entropy over
// the classes in one op; bmb-autodiff writes the `*_grad` ops. Shapes are
// checked in BmbPromptOps.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_PROMPT_OPS_TD
#define BMB_PROMPT_OPS_TD

include "BmbDialect.td"
include "BmbModelOps.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Bmb_SoftEmbeddingOp : Bmb_Op<"soft_embedding", [Pure]> {
  let summary = "looks up rows of an embedding table, ids >= num from the soft table";
  let description = [{
    `result[i, :] = weight[ids[i], :]` for `ids[i] < num` (`weight: [num, dim]`),
    `soft[ids[i] - num, :]` otherwise (`soft: [n_soft, dim]`, a tune job's
    `@prompt.soft`): soft token k of a prompt is id `num + k`.

    ```mlir
    %e = bmb.soft_embedding %ids, %w, %soft
        : (tensor<2x16xi32>, tensor<64x8xf32>, tensor<1x8xf32>) -> tensor<2x16x8xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$ids, Bmb_Tensor:$weight, Bmb_Tensor:$soft);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$ids `,` $weight `,` $soft attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Bmb_SoftEmbeddingGradOp : Bmb_Op<"soft_embedding_grad", [Pure]> {
  let summary = "the table gradients of bmb.soft_embedding";
  let description = [{
    `dweight[ids[i], :] += dy[i, :]` for `ids[i] < num`, `dsoft[ids[i] - num, :]
    += dy[i, :]` otherwise, both from zero (result types give `num` and
    `n_soft`). A result without uses is not computed.

    ```mlir
    %dw, %ds = bmb.soft_embedding_grad %dy, %ids
        : (tensor<2x16x8xf32>, tensor<2x16xi32>) -> (tensor<64x8xf32>, tensor<1x8xf32>)
    ```
  }];
  let arguments = (ins Bmb_Tensor:$grad, Bmb_Tensor:$ids);
  let results = (outs Bmb_Tensor:$dweight, Bmb_Tensor:$dsoft);
  let assemblyFormat = "$grad `,` $ids attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Bmb_GatherRowsOp : Bmb_Op<"gather_rows", [Pure]> {
  let summary = "the rows at given positions of each sequence";
  let description = [{
    `result[b * M + m, :] = input[b, positions[b, m], :]` for `input: [B, T, D]`
    and i32 `positions: [B, M]`; the result is `[B * M, D]`. A tune job's
    loss reads the hidden rows at the {mask} positions with it, before the
    vocabulary head, so that only B * M rows of logits are computed.

    ```mlir
    %r = bmb.gather_rows %h, %pos
        : (tensor<2x16x8xf32>, tensor<2x1xi32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$input, Bmb_Tensor:$positions);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$input `,` $positions attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Bmb_GatherRowsGradOp : Bmb_Op<"gather_rows_grad", [Pure]> {
  let summary = "the gradient of bmb.gather_rows: a scatter-add into zeros";
  let description = [{
    `dinput[b, positions[b, m], :] += grad[b * M + m, :]` from zero; the
    result type is the forward's input type.

    ```mlir
    %dh = bmb.gather_rows_grad %dr, %pos
        : (tensor<2x8xf32>, tensor<2x1xi32>) -> tensor<2x16x8xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$grad, Bmb_Tensor:$positions);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$grad `,` $positions attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Bmb_VerbalizerLossOp : Bmb_Op<"verbalizer_loss", [Pure]> {
  let summary = "vocabulary head, manual verbalizer and class cross-entropy in one op";
  let description = [{
    OpenPrompt's ManualVerbalizer and a cross-entropy over the classes.
    `input: [B * M, D]` are the hidden rows at the M {mask} positions of
    each of B examples, `weight: [V, D]` (and `bias: [V]`) the model's
    vocabulary head: `logits = input W^T (+ b)`, `[B * M, V]`. For each mask
    m, with `label_words: i32 [M, C, W, K]` the K token ids of word w of
    class c (-1 pads words and tokens): each word's logit is its tokens'
    logits reduced by `reduce[m]` ("first", "mean" or "max"); a softmax over
    the mask's C * W words (padded words excluded) gives `word_probs`; they
    are divided by `calibration: [M, C, W]` and renormalised, and
    `log(p + 1e-15)` is averaged over each class's words. `scores: [B, C]`
    is the sum over the masks; `loss` the mean over the examples whose
    `labels: i32 [B]` is not `ignore_index` of `-log_softmax(scores)[label]`.
    `dlogits` is d`loss`/d`logits`, computed in the same pass (as
    bmb.fused_classifier's): bmb-autodiff takes the op only as the loss.

    ```mlir
    %loss, %dl, %scores, %wp = bmb.verbalizer_loss %rows, %w, %labels, %words, %calib
        {ignore_index = -100 : i64, reduce = ["first"]}
        : (tensor<2x8xf32>, tensor<64x8xf32>, tensor<2xi32>, tensor<1x2x2x8xi32>,
           tensor<1x2x2xf32>)
        -> (tensor<f32>, tensor<2x64xf32>, tensor<2x2xf32>, tensor<2x1x2x2xf32>)
    ```
  }];
  let arguments = (ins Bmb_Tensor:$input, Bmb_Tensor:$weight, Bmb_Tensor:$labels,
                       Bmb_Tensor:$label_words, Bmb_Tensor:$calibration,
                       Optional<Bmb_Tensor>:$bias, StrArrayAttr:$reduce,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Bmb_Tensor:$loss, Bmb_Tensor:$dlogits, Bmb_Tensor:$scores,
                      Bmb_Tensor:$word_probs);
  let assemblyFormat = [{
    $input `,` $weight `,` $labels `,` $label_words `,` $calibration (`,` $bias^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // BMB_PROMPT_OPS_TD
