// The train lowering of bmb.cross_entropy (logits the fused classifier could
// not take over), of rotary over [B, T, D] rows (one call per batch row,
// since the kernels read one position per row) and of a masked LM's inputs,
// from a forward through bmb-attach-loss, bmb-autodiff and
// bmb-insert-optimizer.
// RUN: bmb-opt %s -split-input-file --bmb-attach-loss --bmb-autodiff --bmb-insert-optimizer --bmb-lower-to-exec | FileCheck %s

// A head with a bias: the classifier kernel on the GEMM's logits; its
// dlogits overwrite them (nothing else reads the logits), and the backward
// (bmb.cross_entropy_grad) reads that buffer.
// CHECK-LABEL: func.func @forward_backward() {
// CHECK: %[[TGT:.*]] = bmb_exec.input "targets"
// CHECK: %[[L:.*]] = bmb_exec.alloc : memref<2x4x16xf32>
// CHECK: bmb_exec.gemm %{{.*}}, %{{.*}} bias %{{.*}} : memref<16xf32> outs(%[[L]])
// CHECK: %[[LOSSES:.*]] = bmb_exec.alloc : memref<8xf32>
// CHECK: %[[S:.*]] = bmb_exec.step_arg "dloss_scale" : f64
// CHECK: bmb_exec.classifier %[[L]], %[[TGT]] outs(%[[LOSSES]]) dlogits(%[[L]] : memref<2x4x16xf32>) scale %[[S]] {ignore_index = -100 : i64}
// CHECK: bmb_exec.matmul %[[L]], %{{.*}} outs(%{{.*}}) {accumulate, trans_a}
// CHECK: bmb_exec.sum_rows %[[L]]
// CHECK: bmb_exec.output "losses" %[[LOSSES]]
// Evaluation: the loss only.
// CHECK-LABEL: func.func @evaluate() {
// CHECK: bmb_exec.classifier %{{.*}}, %{{.*}} outs(%{{.*}}) {ignore_index = -100 : i64} :
bmb.model @Biased layer "M" {
  bmb.param @emb.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @head.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @head.b : tensor<16xf32> init zeros
  func.func @forward(%tokens: tensor<2x4xi32> {bmb.name = "tokens"}) -> tensor<2x4x16xf32> {
    %w0 = bmb.param_get @emb.w : tensor<16x8xf32>
    %x = bmb.embedding %tokens, %w0 : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    %w = bmb.param_get @head.w : tensor<16x8xf32>
    %b = bmb.param_get @head.b : tensor<16xf32>
    %l = bmb.linear %x, %w, %b : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
    return %l : tensor<2x4x16xf32>
  }
}
bmb.job @train train for @Biased {batch = 2 : i64, seq = 4 : i64}

// -----

// Logits the backward reads (softmax_grad reads the softmax's output): the
// dlogits get their own buffer. Rotary of [2, 4, 8] rows with [4] positions:
// one call per batch row, forward and backward.
// CHECK-LABEL: func.func @forward_backward() {
// CHECK: %[[POS:.*]] = bmb_exec.alloc : memref<4xi32>
// CHECK: bmb_exec.positions outs(%[[POS]])
// CHECK: %[[R:.*]] = bmb_exec.alloc : memref<2x4x8xf32>
// CHECK: %[[O0:.*]] = bmb_exec.layer_view %[[R]][%{{.*}}] : memref<2x4x8xf32> to memref<4x8xf32>
// CHECK: %[[X0:.*]] = bmb_exec.layer_view %{{.*}}[%{{.*}}] : memref<2x4x8xf32> to memref<4x8xf32>
// CHECK: bmb_exec.rotary %[[X0]], %[[POS]] outs(%[[O0]]) {{.*}} : memref<4x8xf32>, memref<4xi32> -> memref<4x8xf32>
// CHECK: bmb_exec.rotary %{{.*}}, %[[POS]] outs(%{{.*}}) {{.*}} : memref<4x8xf32>, memref<4xi32> -> memref<4x8xf32>
// CHECK-NOT: bmb_exec.rotary
// CHECK: %[[P:.*]] = bmb_exec.alloc : memref<2x4x8xf32>
// CHECK: bmb_exec.softmax %[[R]] outs(%[[P]])
// CHECK: %[[D:.*]] = bmb_exec.alloc : memref<2x4x8xf32>
// CHECK: bmb_exec.classifier %[[P]], %{{.*}} outs(%{{.*}}) dlogits(%[[D]] : memref<2x4x8xf32>)
// CHECK: bmb_exec.softmax_grad %[[P]], %[[D]]
// CHECK: bmb_exec.rotary_grad %{{.*}}, %[[POS]] outs(%{{.*}}) {{.*}} : memref<4x8xf32>, memref<4xi32> -> memref<4x8xf32>
// CHECK: bmb_exec.rotary_grad %{{.*}}, %[[POS]] outs(%{{.*}}) {{.*}} : memref<4x8xf32>, memref<4xi32> -> memref<4x8xf32>
// CHECK-NOT: bmb_exec.rotary_grad
// CHECK: bmb_exec.output "losses"
bmb.model @Rotary layer "M" {
  bmb.param @emb.w : tensor<16x8xf32> init normal(0.02)
  func.func @forward(%tokens: tensor<2x4xi32> {bmb.name = "tokens"}) -> tensor<2x4x8xf32> {
    %w0 = bmb.param_get @emb.w : tensor<16x8xf32>
    %x = bmb.embedding %tokens, %w0 : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    %p = bmb.arange 4 : tensor<4xi32>
    %r = bmb.rotary %x, %p {base = 1.0e+04 : f64, heads = 2 : i64} : (tensor<2x4x8xf32>, tensor<4xi32>) -> tensor<2x4x8xf32>
    %s = bmb.softmax %r {axis = 2 : i64} : tensor<2x4x8xf32>
    return %s : tensor<2x4x8xf32>
  }
}
bmb.job @train train for @Rotary {batch = 2 : i64, seq = 4 : i64}

// -----

// A masked LM: inputs token_types and mask besides tokens and targets (the
// app fills them), and the objective in the program's train settings.
// CHECK-LABEL: bmb_exec.program @mlm
// CHECK-SAME: mask_id = 3 : i64, mask_prob = 1.500000e-01 : f64
// CHECK-SAME: objective = "masked_lm"
// CHECK-LABEL: func.func @forward_backward() {
// CHECK-DAG: bmb_exec.input "tokens" kind "tokens" rows_dim -1 : memref<2x4xi32>
// CHECK-DAG: bmb_exec.input "targets" kind "targets" rows_dim -1 : memref<2x4xi32>
// CHECK-DAG: bmb_exec.input "token_types" kind "token_types" rows_dim -1 : memref<2x4xi32>
// CHECK-DAG: %[[M:.*]] = bmb_exec.input "mask" kind "mask" rows_dim -1 : memref<2x4xi32>
// CHECK: bmb_exec.attention {{.*}} mask %[[M]]
// CHECK: bmb_exec.classifier
bmb.model @Encoder layer "M" {
  bmb.param @w : tensor<16x8xf32> init normal(0.02)
  bmb.param @t : tensor<2x8xf32> init normal(0.02)
  bmb.param @b : tensor<16xf32> init zeros
  func.func @forward(%tokens: tensor<2x4xi32> {bmb.name = "tokens"},
                     %types: tensor<2x4xi32> {bmb.name = "token_types"},
                     %mask: tensor<2x4xi32> {bmb.name = "mask"}) -> tensor<2x4x16xf32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %t = bmb.param_get @t : tensor<2x8xf32>
    %e = bmb.embedding %tokens, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    %s = bmb.embedding %types, %t : (tensor<2x4xi32>, tensor<2x8xf32>) -> tensor<2x4x8xf32>
    %x = bmb.add %e, %s : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %a = bmb.attention %x, %x, %x, %mask {heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64}
        : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4xi32>) -> tensor<2x4x8xf32>
    %b = bmb.param_get @b : tensor<16xf32>
    %l = bmb.lm_head %a, %w, %b : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
    return %l : tensor<2x4x16xf32>
  }
}
bmb.job @mlm train for @Encoder {batch = 2 : i64, seq = 4 : i64, objective = {kind = "masked_lm", prob = 0.15 : f64, mask_id = 3 : i64}}
