// bmb-attach-loss, tune mode with a soft verbalizer (OpenPrompt's
// SoftVerbalizer): the vocabulary head is replaced by the trained
// @prompt.labels [C, D] (bias-free): the class scores are the mask rows
// times its rows, and the loss their cross-entropy at the labels. @loss
// takes no label words or calibration and returns (loss, scores); the
// head's weight is recorded for the tune program (TuneInfo::labelInitParam:
// the label rows start from its rows), with the shape of the label words.
// RUN: bmb-opt %s --bmb-lower-prompts --bmb-insert-deltas --bmb-attach-loss | FileCheck %s
// RUN: bmb-opt %s --bmb-lower-prompts --bmb-insert-deltas --bmb-attach-loss --bmb-autodiff --bmb-insert-optimizer --bmb-lower-to-exec | FileCheck %s --check-prefix=EXEC

bmb.model @Enc layer "Enc" {
  bmb.param @wte.w : tensor<64x8xf32> init normal(0.02)
  func.func @forward(%tokens: tensor<2x16xi32> {bmb.name = "tokens"}) -> tensor<2x16x64xf32> {
    %w = bmb.param_get @wte.w : tensor<64x8xf32>
    %e = bmb.embedding %tokens, %w : (tensor<2x16xi32>, tensor<64x8xf32>) -> tensor<2x16x8xf32>
    %l = bmb.lm_head %e, %w : (tensor<2x16x8xf32>, tensor<64x8xf32>) -> tensor<2x16x64xf32>
    return %l : tensor<2x16x64xf32>
  }
}
bmb.template @t "{text_a} was {mask}"
bmb.verbalizer @v labels ["neg", "pos", "mixed"] words [["bad"], ["good", "fine"], ["so"]] {soft}
bmb.job @j tune for @Enc from "enc.safetensors" {batch = 2 : i64, prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 16 : i64}

// CHECK: bmb.param @prompt.labels : tensor<3x8xf32> init normal(0.02) {bmb.delta}
// CHECK: bmb.param @wte.w : tensor<64x8xf32> init normal(0.02) frozen
// CHECK: func.func @loss(%[[TOK:.*]]: tensor<2x16xi32> {bmb.name = "tokens"}, %[[POS:.*]]: tensor<2x1xi32> {bmb.name = "mask_pos"}, %[[LAB:.*]]: tensor<2xi32> {bmb.name = "labels"}) -> (tensor<f32>, tensor<2x3xf32>)
// CHECK: %[[E:.*]] = bmb.embedding %[[TOK]]
// CHECK: %[[R:.*]] = bmb.gather_rows %[[E]], %[[POS]] : (tensor<2x16x8xf32>, tensor<2x1xi32>) -> tensor<2x8xf32>
// CHECK: %[[L:.*]] = bmb.param_get @prompt.labels : tensor<3x8xf32>
// CHECK: %[[S:.*]] = bmb.linear %[[R]], %[[L]] : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<2x3xf32>
// CHECK: %[[LOSS:.*]] = bmb.cross_entropy %[[S]], %[[LAB]]
// CHECK-NOT: bmb.lm_head
// CHECK: return %[[LOSS]], %[[S]] : tensor<f32>, tensor<2x3xf32>
// CHECK: bmb.job @j tune {{.*}}bmb.tune = {head = "wte.w", label_init = "wte.w", labels = 3 : i64, masks = 1 : i64, word_tokens = 8 : i64, words = 2 : i64}

// EXEC: tune = {{{.*}}head_param = "wte.w", label_init_param = "wte.w", label_param = "prompt.labels", max_word_tokens = 8 : i64, max_words = 2 : i64, num_labels = 3 : i64, num_masks = 1 : i64, num_soft = 0 : i64
// EXEC-LABEL: func.func @forward_backward
// EXEC: bmb_exec.gather_rows
// EXEC: bmb_exec.classifier %[[S:.*]], %{{.*}} outs(%[[LOSSES:.*]]) dlogits(%[[D:.*]] : memref<2x3xf32>) scale
// EXEC: %[[G:.*]] = bmb_exec.grad_ref @prompt.labels : memref<3x8xf32>
// EXEC: bmb_exec.matmul %[[D]], %{{.*}} outs(%[[G]]) {accumulate, trans_a}
// EXEC: bmb_exec.output "losses" %[[LOSSES]] rows_dim -1 : memref<2xf32>
// EXEC: bmb_exec.output "scores" %[[S]] rows_dim -1 : memref<2x3xf32>
// EXEC-LABEL: func.func @evaluate
// EXEC-NOT: "word_probs"
// EXEC: bmb_exec.output "scores"
