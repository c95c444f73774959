// Round trip of the training ops (BmbGradOps.td) and of the training forms
// of bmb.layer (num_saved, backward) and bmb.repeat (num_saved, reverse):
// custom form, generic form and bytecode.
// RUN: bmb-opt %s | bmb-opt | FileCheck %s
// RUN: bmb-opt %s --mlir-print-op-generic | bmb-opt | FileCheck %s
// RUN: bmb-opt %s --emit-bytecode | bmb-opt | FileCheck %s

// CHECK-LABEL: bmb.model @Nano layer "GPT2" {
bmb.model @Nano layer "GPT2" {
  bmb.param @wte.w : tensor<512x64xf32> init normal(0.02)
  bmb.param @h.w : tensor<2x64x64xf32> init normal(0.02) stacked 1
  bmb.param @h.ln.w : tensor<2x64xf32> init ones stacked 1
  bmb.param @ln.w : tensor<64xf32> init ones frozen

  // CHECK-LABEL: func.func @loss
  func.func @loss(%h: tensor<4x64x64xf32>, %t: tensor<4x64xi32>) -> tensor<f32> {
    %w = bmb.param_get @wte.w : tensor<512x64xf32>
    // CHECK: bmb.fused_classifier %{{.*}}, %{{.*}}, %{{.*}} {ignore_index = -1 : i64} : (tensor<4x64x64xf32>, tensor<512x64xf32>, tensor<4x64xi32>) -> (tensor<f32>, tensor<4x64x512xf32>)
    %loss, %dl = bmb.fused_classifier %h, %w, %t {ignore_index = -1 : i64}
        : (tensor<4x64x64xf32>, tensor<512x64xf32>, tensor<4x64xi32>) -> (tensor<f32>, tensor<4x64x512xf32>)
    // CHECK: bmb.fused_classifier %{{.*}}, %{{.*}}, %{{.*}} : (
    %l2, %d2 = bmb.fused_classifier %h, %w, %t
        : (tensor<4x64x64xf32>, tensor<512x64xf32>, tensor<4x64xi32>) -> (tensor<f32>, tensor<4x64x512xf32>)
    return %loss : tensor<f32>
  }

  // CHECK-LABEL: func.func @grads
  func.func @grads(%x: tensor<4x64x64xf32>, %dy: tensor<4x64x64xf32>, %t: tensor<4x64xi32>,
                   %kv: tensor<4x64x32xf32>, %mask: tensor<4x64xi32>, %pos: tensor<64xi32>,
                   %logits: tensor<8x2xf32>, %labels: tensor<8xi32>, %cls: tensor<4x64xf32>) {
    %w = bmb.param_get @wte.w : tensor<512x64xf32>
    // CHECK: bmb.cross_entropy_grad %{{.*}}, %{{.*}} : (tensor<8x2xf32>, tensor<8xi32>) -> tensor<8x2xf32>
    %0 = bmb.cross_entropy_grad %logits, %labels : (tensor<8x2xf32>, tensor<8xi32>) -> tensor<8x2xf32>
    // CHECK: bmb.linear_grad_input %{{.*}}, %{{.*}} : (tensor<4x64x512xf32>, tensor<512x64xf32>) -> tensor<4x64x64xf32>
    %dl = bmb.linear %x, %w : (tensor<4x64x64xf32>, tensor<512x64xf32>) -> tensor<4x64x512xf32>
    %1 = bmb.linear_grad_input %dl, %w : (tensor<4x64x512xf32>, tensor<512x64xf32>) -> tensor<4x64x64xf32>
    // CHECK: bmb.linear_grad_weight %{{.*}}, %{{.*}} : (tensor<4x64x512xf32>, tensor<4x64x64xf32>) -> tensor<512x64xf32>
    %2 = bmb.linear_grad_weight %dl, %x : (tensor<4x64x512xf32>, tensor<4x64x64xf32>) -> tensor<512x64xf32>
    // CHECK: bmb.reduce_sum %{{.*}} : tensor<4x64x512xf32> -> tensor<512xf32>
    %3 = bmb.reduce_sum %dl : tensor<4x64x512xf32> -> tensor<512xf32>
    // CHECK: bmb.reduce_sum %{{.*}} : tensor<4x64x64xf32> -> tensor<1x64xf32>
    %4 = bmb.reduce_sum %dy : tensor<4x64x64xf32> -> tensor<1x64xf32>
    // CHECK: bmb.act_grad gelu_tanh %{{.*}}, %{{.*}} : tensor<4x64x64xf32>
    %5 = bmb.act_grad gelu_tanh %x, %dy : tensor<4x64x64xf32>
    // CHECK: bmb.act_grad gelu_erf
    %6 = bmb.act_grad gelu_erf %x, %dy : tensor<4x64x64xf32>
    // CHECK: bmb.act_grad relu
    %7 = bmb.act_grad relu %x, %dy : tensor<4x64x64xf32>
    // CHECK: bmb.act_grad silu
    %8 = bmb.act_grad silu %x, %dy : tensor<4x64x64xf32>
    // CHECK: bmb.act_grad tanh
    %9 = bmb.act_grad tanh %x, %dy : tensor<4x64x64xf32>
    %lw = bmb.param_get @ln.w : tensor<64xf32>
    // CHECK: bmb.layernorm_grad %{{.*}}, %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64} : (tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<64xf32>) -> (tensor<4x64x64xf32>, tensor<64xf32>, tensor<64xf32>)
    %10:3 = bmb.layernorm_grad %dy, %x, %lw {eps = 1.0e-5 : f64}
        : (tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<64xf32>) -> (tensor<4x64x64xf32>, tensor<64xf32>, tensor<64xf32>)
    // CHECK: bmb.rmsnorm_grad %{{.*}}, %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64} : (tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<64xf32>) -> (tensor<4x64x64xf32>, tensor<64xf32>)
    %11:2 = bmb.rmsnorm_grad %dy, %x, %lw {eps = 1.0e-5 : f64}
        : (tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<64xf32>) -> (tensor<4x64x64xf32>, tensor<64xf32>)
    // CHECK: bmb.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal, heads = 4 : i64, kv_heads = 2 : i64, scale = 2.500000e-01 : f64} : (tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<4x64x32xf32>, tensor<4x64x32xf32>, tensor<4x64xi32>) -> (tensor<4x64x64xf32>, tensor<4x64x32xf32>, tensor<4x64x32xf32>)
    %12:3 = bmb.attention_grad %dy, %x, %kv, %kv, %mask {causal, heads = 4 : i64, kv_heads = 2 : i64, scale = 0.25 : f64}
        : (tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<4x64x32xf32>, tensor<4x64x32xf32>, tensor<4x64xi32>)
        -> (tensor<4x64x64xf32>, tensor<4x64x32xf32>, tensor<4x64x32xf32>)
    // CHECK: bmb.rotary_grad %{{.*}}, %{{.*}} {base = 1.000000e+04 : f64, heads = 4 : i64} : (tensor<4x64x64xf32>, tensor<64xi32>) -> tensor<4x64x64xf32>
    %13 = bmb.rotary_grad %dy, %pos {base = 1.0e4 : f64, heads = 4 : i64} : (tensor<4x64x64xf32>, tensor<64xi32>) -> tensor<4x64x64xf32>
    // CHECK: bmb.softmax_grad %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<4x64x64xf32>, tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
    %14 = bmb.softmax_grad %x, %dy {axis = -1 : i64} : (tensor<4x64x64xf32>, tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
    // CHECK: bmb.embedding_grad %{{.*}}, %{{.*}} : (tensor<4x64x64xf32>, tensor<4x64xi32>) -> tensor<512x64xf32>
    %15 = bmb.embedding_grad %dy, %t : (tensor<4x64x64xf32>, tensor<4x64xi32>) -> tensor<512x64xf32>
    // CHECK: bmb.take_grad %{{.*}} {axis = 1 : i64, index = 0 : i64} : (tensor<4x64xf32>) -> tensor<4x64x64xf32>
    %16 = bmb.take_grad %cls {axis = 1 : i64, index = 0 : i64} : (tensor<4x64xf32>) -> tensor<4x64x64xf32>
    // CHECK: bmb.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<4x64x64xf32>, tensor<4x64x32xf32>, tensor<4x64x32xf32>) -> tensor<4x64x128xf32>
    %17 = bmb.concat %x, %kv, %kv {axis = 2 : i64} : (tensor<4x64x64xf32>, tensor<4x64x32xf32>, tensor<4x64x32xf32>) -> tensor<4x64x128xf32>
    // CHECK: bmb.grad_accumulate @wte.w, %{{.*}} : tensor<512x64xf32>
    bmb.grad_accumulate @wte.w, %15 : tensor<512x64xf32>
    return
  }

  // CHECK-LABEL: func.func @train_step
  func.func @train_step(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
    // CHECK: bmb.repeat 2 "h" layer "Block" iter(%{{.*}}) {num_saved = 1 : i64} : (tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<2x4x64xf32>) {
    %y, %xs = bmb.repeat 2 "h" layer "Block" iter(%x) {num_saved = 1 : i64}
        : (tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<2x4x64xf32>) {
    ^bb0(%i: index, %a: tensor<4x64xf32>):
      // CHECK: bmb.layer "lin" layer "Linear" (%{{.*}}, %{{.*}}) {num_saved = 1 : i64} : (tensor<4x64xf32>, index) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
      %r, %s = bmb.layer "lin" layer "Linear" (%a, %i) {num_saved = 1 : i64}
          : (tensor<4x64xf32>, index) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
      ^bb0(%v: tensor<4x64xf32>, %j: index):
        %w = bmb.param_get @h.w[%j] : tensor<64x64xf32>
        %o = bmb.linear %v, %w : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
        bmb.yield %o, %v : tensor<4x64xf32>, tensor<4x64xf32>
      }
      // CHECK: bmb.yield %{{.*}}, %{{.*}} : tensor<4x64xf32>, tensor<4x64xf32>
      bmb.yield %r, %s : tensor<4x64xf32>, tensor<4x64xf32>
    }
    // CHECK: bmb.repeat 2 "h" layer "Block" reverse iter(%{{.*}}) invariant(%{{.*}}) : (tensor<4x64xf32>, tensor<2x4x64xf32>) -> tensor<4x64xf32> {
    %dx = bmb.repeat 2 "h" layer "Block" reverse iter(%y) invariant(%xs)
        : (tensor<4x64xf32>, tensor<2x4x64xf32>) -> tensor<4x64xf32> {
    ^bb0(%i: index, %g: tensor<4x64xf32>, %stack: tensor<2x4x64xf32>):
      // CHECK: bmb.stack_get %{{.*}}[%{{.*}}] : tensor<2x4x64xf32> -> tensor<4x64xf32>
      %a = bmb.stack_get %stack[%i] : tensor<2x4x64xf32> -> tensor<4x64xf32>
      // CHECK: bmb.layer "lin" layer "Linear" backward (%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x64xf32>, index, tensor<4x64xf32>) -> tensor<4x64xf32> {
      %d = bmb.layer "lin" layer "Linear" backward (%a, %i, %g)
          : (tensor<4x64xf32>, index, tensor<4x64xf32>) -> tensor<4x64xf32> {
      ^bb0(%v: tensor<4x64xf32>, %j: index, %dy: tensor<4x64xf32>):
        %w = bmb.param_get @h.w[%j] : tensor<64x64xf32>
        %dw = bmb.linear_grad_weight %dy, %v : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<64x64xf32>
        // CHECK: bmb.grad_accumulate @h.w[%{{.*}}], %{{.*}} : tensor<64x64xf32>
        bmb.grad_accumulate @h.w[%j], %dw : tensor<64x64xf32>
        %dv = bmb.linear_grad_input %dy, %w : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
        bmb.yield %dv : tensor<4x64xf32>
      }
      bmb.yield %d : tensor<4x64xf32>
    }
    return %dx : tensor<4x64xf32>
  }

  // CHECK-LABEL: func.func @optimizer_step
  func.func @optimizer_step() {
    // CHECK: bmb.clip_grad_norm {max_norm = 1.000000e+00 : f64}
    bmb.clip_grad_norm {max_norm = 1.0 : f64}
    // CHECK: bmb.adamw_update @wte.w {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, weight_decay = 0.000000e+00 : f64}
    bmb.adamw_update @wte.w {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-8 : f64, weight_decay = 0.0 : f64}
    // CHECK: bmb.sgd_update @h.w {momentum = 9.000000e-01 : f64, weight_decay = 1.000000e-02 : f64}
    bmb.sgd_update @h.w {momentum = 0.9 : f64, weight_decay = 0.01 : f64}
    return
  }
}
