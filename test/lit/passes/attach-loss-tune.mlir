// bmb-attach-loss, tune mode: the job's @forward ends in a vocabulary head;
// @loss takes the prompt's inputs (mask_pos, labels, label_words,
// calibration), gathers the hidden rows at the masks BEFORE the head
// (B*M rows, never B*T logits) and ends in bmb.verbalizer_loss, which also
// returns the class scores and the word probabilities. The plan's
// verbalizers give M (2), C (2), W (the most words of a label: 2) and each
// mask's reduce; K is 8. bmb-insert-deltas freezes the backbone of a tune
// job: only the prompt's @prompt.soft is trained.
// RUN: bmb-opt %s --bmb-lower-prompts --bmb-insert-deltas --bmb-attach-loss | FileCheck %s

bmb.model @Enc layer "Enc" {
  bmb.param @wte.w : tensor<64x8xf32> init normal(0.02)
  bmb.param @bias : tensor<64xf32> init zeros
  func.func @forward(%tokens: tensor<2x16xi32> {bmb.name = "tokens"}) -> tensor<2x16x64xf32> {
    %w = bmb.param_get @wte.w : tensor<64x8xf32>
    %e = bmb.embedding %tokens, %w : (tensor<2x16xi32>, tensor<64x8xf32>) -> tensor<2x16x8xf32>
    %b = bmb.param_get @bias : tensor<64xf32>
    %l = bmb.lm_head %e, %w, %b : (tensor<2x16x8xf32>, tensor<64x8xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
    return %l : tensor<2x16x64xf32>
  }
}
bmb.template @two "{text_a} {soft: \22so\22} was {mask} and {mask}"
bmb.verbalizer @a labels ["neg", "pos"] words [["bad", "dull"], ["good"]] {reduce = "first"}
bmb.verbalizer @b labels ["neg", "pos"] words [["no"], ["yes"]] {calibrate}
bmb.job @t tune for @Enc from "enc.safetensors" {batch = 2 : i64, prompt = {kind = "prompt", template = "two", verbalizers = ["a", "b"]}, seq = 16 : i64}

// CHECK-LABEL: bmb.model @Enc
// CHECK: bmb.param @wte.w : tensor<64x8xf32> init normal(0.02) frozen
// CHECK: bmb.param @bias : tensor<64xf32> init zeros frozen
// CHECK: func.func @loss(%[[TOK:.*]]: tensor<2x16xi32> {bmb.name = "tokens"}, %[[POS:.*]]: tensor<2x2xi32> {bmb.name = "mask_pos"}, %[[LAB:.*]]: tensor<2xi32> {bmb.name = "labels"}, %[[WORDS:.*]]: tensor<2x2x2x8xi32> {bmb.name = "label_words"}, %[[CAL:.*]]: tensor<2x2x2xf32> {bmb.name = "calibration"}) -> (tensor<f32>, tensor<2x2xf32>, tensor<2x2x2x2xf32>)
// CHECK: %[[E:.*]] = bmb.soft_embedding %[[TOK]]
// CHECK: %[[B:.*]] = bmb.param_get @bias
// CHECK: %[[ROWS:.*]] = bmb.gather_rows %[[E]], %[[POS]] : (tensor<2x16x8xf32>, tensor<2x2xi32>) -> tensor<4x8xf32>
// CHECK: %[[LOSS:.*]], %{{.*}}, %[[SC:.*]], %[[WP:.*]] = bmb.verbalizer_loss %[[ROWS]], %{{.*}}, %[[LAB]], %[[WORDS]], %[[CAL]], %[[B]] {reduce = ["first", "mean"]}
// CHECK-SAME: -> (tensor<f32>, tensor<4x64xf32>, tensor<2x2xf32>, tensor<2x2x2x2xf32>)
// CHECK-NOT: bmb.lm_head
// CHECK: return %[[LOSS]], %[[SC]], %[[WP]]
