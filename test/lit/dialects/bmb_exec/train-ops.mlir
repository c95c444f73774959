// Round trip of the training ops of bmb_exec: custom form, generic form and bytecode.
// RUN: bmb-opt %s | bmb-opt | FileCheck %s
// RUN: bmb-opt %s --mlir-print-op-generic | bmb-opt | FileCheck %s
// RUN: bmb-opt %s --emit-bytecode | bmb-opt | FileCheck %s

// CHECK-LABEL: bmb_exec.program @t
bmb_exec.program @t attributes {train = {opt_slots = 2 : i64}} {
  // CHECK: bmb_exec.param @w stacked decay offset 0 grad_offset 0 opt_offset 0 : memref<2x8x8xf32>
  bmb_exec.param @w stacked decay offset 0 grad_offset 0 opt_offset 0 : memref<2x8x8xf32>
  // CHECK: bmb_exec.param @e : memref<16x8xf32>
  bmb_exec.param @e : memref<16x8xf32>
  // CHECK: bmb_exec.param @n : memref<8xf32>
  bmb_exec.param @n : memref<8xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %ids = bmb_exec.alloc : memref<2x4xi32>
    %x = bmb_exec.alloc : memref<2x4x8xf32>
    %dy = bmb_exec.alloc : memref<2x4x8xf32>
    %dx = bmb_exec.alloc : memref<2x4x8xf32>
    %saved = bmb_exec.alloc : memref<2x2x4x8xf32>
    // CHECK: bmb_exec.grad_ref @w[%{{.*}}] : memref<8x8xf32>
    %gw = bmb_exec.grad_ref @w[%c0] : memref<8x8xf32>
    // CHECK: bmb_exec.layer_view %{{.*}}[%{{.*}}] : memref<2x2x4x8xf32> to memref<2x4x8xf32>
    %s = bmb_exec.layer_view %saved[%c0] : memref<2x2x4x8xf32> to memref<2x4x8xf32>
    // CHECK: bmb_exec.zero %{{.*}} : memref<2x4x8xf32>
    bmb_exec.zero %dx : memref<2x4x8xf32>
    // CHECK: bmb_exec.matmul %{{.*}}, %{{.*}} outs(%{{.*}}) {accumulate, trans_a} : memref<2x4x8xf32>, memref<2x4x8xf32> -> memref<8x8xf32>
    bmb_exec.matmul %dy, %s outs(%gw) {trans_a, accumulate} : memref<2x4x8xf32>, memref<2x4x8xf32> -> memref<8x8xf32>
    %gn = bmb_exec.grad_ref @n : memref<8xf32>
    %n = bmb_exec.param_ref @n : memref<8xf32>
    // CHECK: bmb_exec.sum_rows %{{.*}} outs(%{{.*}}) : memref<2x4x8xf32> -> memref<8xf32>
    bmb_exec.sum_rows %dy outs(%gn) : memref<2x4x8xf32> -> memref<8xf32>
    // CHECK: bmb_exec.norm_grad "rmsnorm" %{{.*}}, %{{.*}}, %{{.*}} dx(%{{.*}} : memref<2x4x8xf32>) dw(%{{.*}} : memref<8xf32>) {eps = 1.000000e-05 : f64}
    bmb_exec.norm_grad "rmsnorm" %dy, %x, %n dx(%dx : memref<2x4x8xf32>) dw(%gn : memref<8xf32>) {eps = 1.0e-05 : f64} : memref<2x4x8xf32>, memref<2x4x8xf32>, memref<8xf32>
    %dq = bmb_exec.alloc : memref<2x4x8xf32>
    %dk = bmb_exec.alloc : memref<2x4x8xf32>
    %dv = bmb_exec.alloc : memref<2x4x8xf32>
    // CHECK: bmb_exec.attention_grad {{.*}} outs({{.*}}) {causal, head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, scale = 5.000000e-01 : f64}
    bmb_exec.attention_grad %dy, %x, %x, %x outs(%dq, %dk, %dv) {causal, heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64}
        : memref<2x4x8xf32>, memref<2x4x8xf32>, memref<2x4x8xf32>, memref<2x4x8xf32> -> memref<2x4x8xf32>, memref<2x4x8xf32>, memref<2x4x8xf32>
    // Prefix tuning: the prefixes' gradients too.
    %pk = bmb_exec.alloc : memref<3x8xf32>
    %dpk = bmb_exec.alloc : memref<3x8xf32>
    // CHECK: bmb_exec.attention_grad {{.*}} prefix %{{.*}}, %{{.*}} grads %{{.*}}, %{{.*}} : memref<3x8xf32>, memref<3x8xf32>, memref<3x8xf32>, memref<3x8xf32> outs(
    bmb_exec.attention_grad %dy, %x, %x, %x prefix %pk, %pk grads %dpk, %dpk : memref<3x8xf32>, memref<3x8xf32>, memref<3x8xf32>, memref<3x8xf32> outs(%dq, %dk, %dv) {causal, heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64}
        : memref<2x4x8xf32>, memref<2x4x8xf32>, memref<2x4x8xf32>, memref<2x4x8xf32> -> memref<2x4x8xf32>, memref<2x4x8xf32>, memref<2x4x8xf32>
    %pos = bmb_exec.alloc : memref<4xi32>
    // CHECK: bmb_exec.rotary_grad
    bmb_exec.rotary_grad %dy, %pos outs(%dx) {heads = 2 : i64, head_dim = 4 : i64, base = 1.0e+04 : f64} : memref<2x4x8xf32>, memref<4xi32> -> memref<2x4x8xf32>
    // CHECK: bmb_exec.softmax_grad
    bmb_exec.softmax_grad %x, %dy outs(%dx) : memref<2x4x8xf32>, memref<2x4x8xf32> -> memref<2x4x8xf32>
    %ge = bmb_exec.grad_ref @e : memref<16x8xf32>
    // CHECK: bmb_exec.embedding_grad
    bmb_exec.embedding_grad %dy, %ids outs(%ge) : memref<2x4x8xf32>, memref<2x4xi32> -> memref<16x8xf32>
    %t = bmb_exec.alloc : memref<2x8xf32>
    // CHECK: bmb_exec.take_grad %{{.*}} outs(%{{.*}}) {axis = 1 : i64, index = 0 : i64} : memref<2x8xf32> -> memref<2x4x8xf32>
    bmb_exec.take_grad %t outs(%dx) {axis = 1 : i64, index = 0 : i64} : memref<2x8xf32> -> memref<2x4x8xf32>
    %logits = bmb_exec.alloc : memref<2x4x16xf32>
    %losses = bmb_exec.alloc : memref<8xf32>
    // CHECK: %[[S:.*]] = bmb_exec.step_arg "dloss_scale" : f64
    %scale = bmb_exec.step_arg "dloss_scale" : f64
    // CHECK: bmb_exec.classifier %{{.*}}, %{{.*}} outs(%{{.*}}) dlogits(%{{.*}} : memref<2x4x16xf32>) scale %[[S]] {ignore_index = -100 : i64}
    bmb_exec.classifier %logits, %ids outs(%losses) dlogits(%logits : memref<2x4x16xf32>) scale %scale {ignore_index = -100 : i64} : memref<2x4x16xf32>, memref<2x4xi32> -> memref<8xf32>
    // CHECK: bmb_exec.kernel @k0
    // CHECK: bmb_exec.elem_call "relu_backward"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
    bmb_exec.kernel @k0 ins(%x, %dy : memref<2x4x8xf32>, memref<2x4x8xf32>) outs(%dx : memref<2x4x8xf32>) {
    ^bb0(%a: f32, %b: f32):
      %r = bmb_exec.elem_call "relu_backward"(%a, %b) : (f32, f32) -> f32
      bmb_exec.kernel_yield %r : f32
    }
    return
  }
  func.func @optimizer_step() {
    // CHECK: %[[N:.*]] = bmb_exec.grad_norm : f64
    %n = bmb_exec.grad_norm : f64
    // CHECK: bmb_exec.set_step_arg "grad_norm" %[[N]] : f64
    bmb_exec.set_step_arg "grad_norm" %n : f64
    // CHECK: bmb_exec.clip_grads %[[N]] {max_norm = 1.000000e+00 : f64}
    bmb_exec.clip_grads %n {max_norm = 1.0 : f64}
    %lr = bmb_exec.step_arg "lr" : f64
    %step = bmb_exec.step_arg "step" : i64
    // CHECK: bmb_exec.adamw_update @w lr %{{.*}} step %{{.*}} {beta1 = 9.000000e-01 : f64
    bmb_exec.adamw_update @w lr %lr step %step {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.1 : f64}
    // CHECK: bmb_exec.sgd_update @e lr %{{.*}} step %{{.*}} {momentum = 0.000000e+00 : f64, weight_decay = 0.000000e+00 : f64}
    bmb_exec.sgd_update @e lr %lr step %step {momentum = 0.0 : f64, weight_decay = 0.0 : f64}
    // CHECK: bmb_exec.zero_grads
    bmb_exec.zero_grads
    return
  }
}
