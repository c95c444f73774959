// A tune job through bmb-autodiff and bmb-lower-to-exec (train mode,
// LowerTune.cpp): the backward of the verbalizer loss carries its dlogits
// through the head (linear_grad_input), scatters the mask rows back
// (gather_rows_grad) and sends the soft tokens' rows to @prompt.soft's
// gradient (soft_embedding_grad: the frozen table gets none); the
// entries take the prompt's inputs and give `losses`, `scores` and (evaluate
// only) `word_probs`; the program records what TuneInfo holds.
// RUN: bmb-opt %s --bmb-lower-prompts --bmb-insert-deltas --bmb-attach-loss --bmb-autodiff | FileCheck %s --check-prefix=AD
// RUN: bmb-opt %s --bmb-lower-prompts --bmb-insert-deltas --bmb-attach-loss --bmb-autodiff --bmb-insert-optimizer --bmb-lower-to-exec | FileCheck %s

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
bmb.job @t tune for @Enc from "enc.safetensors" {batch = 2 : i64, data = {kind = "tsv", label = 1 : i64, path = "d.tsv", text_a = 0 : i64}, prompt = {kind = "prompt", template = "two", verbalizers = ["a", "b"]}, seq = 16 : i64}

// AD-LABEL: func.func @train_step
// AD: %[[E:.*]] = bmb.soft_embedding %arg0
// AD: %[[R:.*]] = bmb.gather_rows %[[E]], %arg1
// AD: %[[L:.*]], %[[DL:.*]], %{{.*}}, %{{.*}} = bmb.verbalizer_loss %[[R]]
// AD: %[[DR:.*]] = bmb.linear_grad_input %[[DL]], %{{.*}} : (tensor<4x64xf32>, tensor<64x8xf32>) -> tensor<4x8xf32>
// AD: %[[DH:.*]] = bmb.gather_rows_grad %[[DR]], %arg1 : (tensor<4x8xf32>, tensor<2x2xi32>) -> tensor<2x16x8xf32>
// AD: %{{.*}}, %[[DS:.*]] = bmb.soft_embedding_grad %[[DH]], %arg0
// AD: bmb.grad_accumulate @prompt.soft, %[[DS]] : tensor<1x8xf32>
// AD-NOT: grad_accumulate @wte.w
// AD-NOT: grad_accumulate @bias

// CHECK: bmb_exec.program @t attributes
// CHECK-SAME: tune = {data = "{\22kind\22: \22tsv\22, \22label\22: 1, \22path\22: \22d.tsv\22, \22text_a\22: 0}", embedding_param = "wte.w", head_param = "wte.w", label_init_param = "", label_param = "", max_word_tokens = 8 : i64, max_words = 2 : i64, num_labels = 2 : i64, num_masks = 2 : i64, num_soft = 1 : i64, prompt = "{\22labels\22: [\22neg\22, \22pos\22], \22masks\22: 2
// CHECK-SAME: soft_param = "prompt.soft"}
// CHECK-LABEL: func.func @forward_backward
// CHECK-DAG: %[[TOK:.*]] = bmb_exec.input "tokens"
// CHECK-DAG: %[[POS:.*]] = bmb_exec.input "mask_pos" {{.*}} : memref<2x2xi32>
// CHECK-DAG: %[[LAB:.*]] = bmb_exec.input "labels" {{.*}} : memref<2xi32>
// CHECK-DAG: %[[W:.*]] = bmb_exec.input "label_words" {{.*}} : memref<2x2x2x8xi32>
// CHECK-DAG: %[[CAL:.*]] = bmb_exec.input "calibration" {{.*}} : memref<2x2x2xf32>
// CHECK: bmb_exec.soft_embedding %[[TOK]], %{{.*}}, %{{.*}} outs(%[[E:.*]]) : memref<2x16xi32>, memref<64x8xf32>, memref<1x8xf32> -> memref<2x16x8xf32>
// CHECK: bmb_exec.gather_rows %[[E]], %[[POS]] outs(%[[R:.*]]) : memref<2x16x8xf32>, memref<2x2xi32> -> memref<4x8xf32>
// CHECK: bmb_exec.gemm %[[R]], %{{.*}} bias %{{.*}} : memref<64xf32> outs(%[[LOGITS:.*]]) : memref<4x8xf32>, memref<64x8xf32> -> memref<4x64xf32>
// CHECK: %[[S:.*]] = bmb_exec.step_arg "dloss_scale"
// CHECK: bmb_exec.verbalizer_loss %[[LOGITS]], %[[LAB]], %[[W]], %[[CAL]] outs(%[[LOSSES:.*]], %[[SC:.*]], %{{.*}}) dlogits(%[[LOGITS]] : memref<4x64xf32>) scale %[[S]] {ignore_index = -100 : i64, reduce = ["first", "mean"]}
// CHECK: bmb_exec.gather_rows_grad %{{.*}}, %[[POS]] outs(%{{.*}}) : memref<4x8xf32>, memref<2x2xi32> -> memref<2x16x8xf32>
// CHECK: %[[G:.*]] = bmb_exec.grad_ref @prompt.soft : memref<1x8xf32>
// CHECK: bmb_exec.soft_embedding_grad %{{.*}}, %[[TOK]] outs( dsoft %[[G]] : memref<1x8xf32>) {num = 64 : i64}
// CHECK: bmb_exec.output "losses" %[[LOSSES]] rows_dim -1 : memref<2xf32>
// CHECK: bmb_exec.output "scores" %[[SC]] rows_dim -1 : memref<2x2xf32>
// CHECK-NOT: "word_probs"
// CHECK-LABEL: func.func @evaluate
// CHECK: bmb_exec.verbalizer_loss {{.*}} {ignore_index = -100 : i64, reduce = ["first", "mean"]}
// CHECK: bmb_exec.output "losses"
// CHECK: bmb_exec.output "scores"
// CHECK: bmb_exec.output "word_probs" %{{.*}} rows_dim -1 : memref<2x2x2x2xf32>
