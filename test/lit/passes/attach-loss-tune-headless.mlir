// bmb-attach-loss, tune mode on a headless encoder (BERT's BertModel): the
// first result of @forward is the [B, T, D] hidden states (D the token
// embedding's width), the second the pooled row. A soft verbalizer scores
// the classes as the hidden state at the mask times @prompt.labels [C, D];
// the pooled output and what computes it (take, the pooler's linear, tanh)
// leave @loss. No head: bmb.tune records head = "" and the token embedding
// as the table the label rows start from (label_init, TuneInfo's
// labelInitParam: the mean word-embedding row of each class's first word).
// RUN: bmb-opt %s --bmb-lower-prompts --bmb-insert-deltas --bmb-attach-loss | FileCheck %s
// RUN: bmb-opt %s --bmb-lower-prompts --bmb-insert-deltas --bmb-attach-loss --bmb-autodiff --bmb-insert-optimizer --bmb-lower-to-exec | FileCheck %s --check-prefix=EXEC

bmb.model @Enc layer "Enc" {
  bmb.param @word.w : tensor<64x8xf32> init normal(0.02)
  bmb.param @pool.w : tensor<8x8xf32> init normal(0.02)
  func.func @forward(%tokens: tensor<2x16xi32> {bmb.name = "tokens"}) -> (tensor<2x16x8xf32>, tensor<2x8xf32>) {
    %e = bmb.layer "word" layer "Embedding" (%tokens) : (tensor<2x16xi32>) -> tensor<2x16x8xf32> {
    ^bb0(%ids: tensor<2x16xi32>):
      %w = bmb.param_get @word.w : tensor<64x8xf32>
      %r = bmb.embedding %ids, %w : (tensor<2x16xi32>, tensor<64x8xf32>) -> tensor<2x16x8xf32>
      bmb.yield %r : tensor<2x16x8xf32>
    }
    %h = bmb.gelu %e approximate none : tensor<2x16x8xf32>
    %cls = bmb.take %h {axis = 1 : i64, index = 0 : i64} : (tensor<2x16x8xf32>) -> tensor<2x8xf32>
    %pw = bmb.param_get @pool.w : tensor<8x8xf32>
    %pl = bmb.linear %cls, %pw : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %p = bmb.tanh %pl : tensor<2x8xf32>
    return %h, %p : tensor<2x16x8xf32>, tensor<2x8xf32>
  }
}
bmb.template @t "{text_a} was {mask}"
bmb.verbalizer @v labels ["neg", "pos", "mixed"] words [["bad"], ["good", "fine"], ["so"]] {soft}
bmb.job @j tune for @Enc from "enc.safetensors" {batch = 2 : i64, prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 16 : i64}

// CHECK: bmb.param @prompt.labels : tensor<3x8xf32> init normal(0.02) {bmb.delta}
// CHECK: bmb.param @pool.w : tensor<8x8xf32> init normal(0.02) frozen
// CHECK: func.func @forward
// CHECK: func.func @loss(%[[TOK:.*]]: tensor<2x16xi32> {bmb.name = "tokens"}, %[[POS:.*]]: tensor<2x1xi32> {bmb.name = "mask_pos"}, %[[LAB:.*]]: tensor<2xi32> {bmb.name = "labels"}) -> (tensor<f32>, tensor<2x3xf32>)
// CHECK: %[[H:.*]] = bmb.gelu
// CHECK-NOT: bmb.take
// CHECK-NOT: @pool.w
// CHECK-NOT: bmb.tanh
// CHECK: %[[R:.*]] = bmb.gather_rows %[[H]], %[[POS]] : (tensor<2x16x8xf32>, tensor<2x1xi32>) -> tensor<2x8xf32>
// CHECK: %[[L:.*]] = bmb.param_get @prompt.labels : tensor<3x8xf32>
// CHECK: %[[S:.*]] = bmb.linear %[[R]], %[[L]] : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<2x3xf32>
// CHECK: %[[LOSS:.*]] = bmb.cross_entropy %[[S]], %[[LAB]]
// CHECK: return %[[LOSS]], %[[S]] : tensor<f32>, tensor<2x3xf32>
// CHECK: bmb.job @j tune {{.*}}bmb.tune = {head = "", label_init = "word.w", labels = 3 : i64, masks = 1 : i64, word_tokens = 8 : i64, words = 2 : i64}

// EXEC: tune = {{{.*}}head_param = "", label_init_param = "word.w", label_param = "prompt.labels"
// EXEC-LABEL: func.func @forward_backward
// EXEC-NOT: bmb_exec.param_ref @pool.w
// EXEC: bmb_exec.gather_rows
// EXEC: bmb_exec.classifier
// EXEC: bmb_exec.grad_ref @prompt.labels : memref<3x8xf32>
// EXEC-LABEL: func.func @evaluate
// EXEC-NOT: bmb_exec.param_ref @pool.w
// EXEC: bmb_exec.output "scores"
