// bmb-autodiff: @train_step = @loss + its reverse pass (docs/training-ir.md).
// A tiny GPT: tied token embedding (used by the embedding and the head), a
// position embedding broadcast over the batch, a 2-iteration repeat of a
// Block with LayerNorm, a qkv Linear split into attention, and an MLP whose
// nested Linear+GELU layer saves its pre-activation; a frozen ln_f bias.
// RUN: bmb-opt %s --bmb-autodiff | FileCheck %s
// RUN: bmb-opt %s --bmb-autodiff | bmb-opt | FileCheck %s

// @loss stays as it was.
// CHECK-LABEL: func.func @loss
// CHECK-NOT:     num_saved
// CHECK:         return

// CHECK-LABEL: func.func @train_step(%{{.*}}: tensor<2x4xi32> {bmb.name = "tokens"}, %{{.*}}: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32>
// The forward repeat yields, per iteration, what its backward reads; the
// repeat's extra results are those values stacked over the 2 iterations.
// CHECK:         %[[FWD:.*]]:8 = bmb.repeat 2 "h" layer "Block" iter(%{{.*}}) {num_saved = 7 : i64} : (tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4x8xf32>,
// CHECK:         ^bb0(%[[I:[a-z0-9]+]]: index, %[[A:[a-z0-9]+]]: tensor<2x4x8xf32>):
// CHECK:           %[[N:.*]] = bmb.layer "ln" layer "LayerNorm"
// CHECK:           %[[QKV:.*]]:3 = bmb.split
// Nested saves bubble out: fc saves its pre-activation for the GELU's
// gradient, mlp passes it on, the repeat stacks it.
// CHECK:           %[[R1:.*]] = bmb.add %[[A]], %{{.*}}
// CHECK:           %[[M:.*]]:2 = bmb.layer "mlp" layer "MLP" (%[[R1]], %[[I]]) {num_saved = 1 : i64}
// CHECK:             %[[F:.*]]:2 = bmb.layer "fc" layer "Linear" (%{{.*}}, %{{.*}}) {num_saved = 1 : i64}
// CHECK:               %[[H:.*]] = bmb.linear
// CHECK:               %[[G:.*]] = bmb.gelu %[[H]] approximate tanh
// CHECK:               bmb.yield %[[G]], %[[H]] :
// CHECK:             bmb.yield %[[F]]#0, %[[F]]#1 :
// CHECK:           bmb.yield %{{.*}}, %[[M]]#1, %[[R1]], %[[QKV]]#2, %[[QKV]]#1, %[[QKV]]#0, %[[N]], %[[A]] :

// The head's gradient starts from the fused classifier's dlogits.
// CHECK:         %[[LNF:.*]] = bmb.layer "ln_f" layer "LayerNorm" (%[[FWD]]#0)
// CHECK:         %[[WTE:.*]] = bmb.param_get @wte.w
// CHECK:         %[[LOSS:.*]], %[[DL:.*]] = bmb.fused_classifier %[[LNF]], %[[WTE]], %{{.*}}
// CHECK:         %[[DW:.*]] = bmb.linear_grad_weight %[[DL]], %[[LNF]]
// CHECK:         %[[DH:.*]] = bmb.linear_grad_input %[[DL]], %[[WTE]]
// CHECK:         bmb.grad_accumulate @wte.w, %[[DW]] : tensor<16x8xf32>

// Backward layers take their saved values, then the gradients of the
// forward's results. The frozen ln_f bias gets no gradient.
// CHECK:         %[[DLNF:.*]] = bmb.layer "ln_f" layer "LayerNorm" backward (%[[FWD]]#0, %[[DH]])
// CHECK:           %[[LW:.*]] = bmb.param_get @ln_f.w
// CHECK:           %{{.*}}, %[[DLW:.*]], %{{.*}} = bmb.layernorm_grad %{{.*}}, %{{.*}}, %[[LW]] {eps = 1.000000e-05 : f64}
// CHECK-NOT:       @ln_f.b
// CHECK:           bmb.grad_accumulate @ln_f.w, %[[DLW]]

// The reverse repeat: carried gradient, then the stacked saves.
// CHECK:         %[[DX:.*]] = bmb.repeat 2 "h" layer "Block" reverse iter(%[[DLNF]]) invariant(%[[FWD]]#1, %[[FWD]]#2, %[[FWD]]#3, %[[FWD]]#4, %[[FWD]]#5, %[[FWD]]#6, %[[FWD]]#7)
// CHECK:         ^bb0(%[[RI:[a-z0-9]+]]: index, %[[DY:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[S1:[a-z0-9]+]]: tensor<2x2x4x8xf32>, %[[S2:[a-z0-9]+]]: tensor<2x2x4x8xf32>,
// CHECK:           %[[PRE:.*]] = bmb.stack_get %[[S1]][%[[RI]]] : tensor<2x2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK:           %[[MIN:.*]] = bmb.stack_get %[[S2]][%[[RI]]]
// CHECK:           %[[DM:.*]] = bmb.layer "mlp" layer "MLP" backward (%[[PRE]], %[[MIN]], %[[RI]], %[[DY]])
// CHECK:             bmb.layer "fc" layer "Linear" backward
// CHECK:               %[[DG:.*]] = bmb.act_grad gelu_tanh %{{.*}}, %{{.*}} : tensor<2x4x8xf32>
// CHECK:               bmb.reduce_sum %[[DG]] : tensor<2x4x8xf32> -> tensor<8xf32>
// CHECK:               bmb.grad_accumulate @h.mlp.fc.b[%{{.*}}], %{{.*}} : tensor<8xf32>
// CHECK:               bmb.grad_accumulate @h.mlp.fc.w[%{{.*}}], %{{.*}} : tensor<8x8xf32>
// The residual's gradient is the sum of its two uses.
// CHECK:           %[[DR1:.*]] = bmb.add %[[DY]], %[[DM]]
// CHECK:           %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = bmb.attention_grad %[[DR1]], {{.*}} {causal, heads = 2 : i64, kv_heads = 2 : i64, scale = 5.000000e-01 : f64}
// CHECK:           %[[DQKV:.*]] = bmb.concat %[[DQ]], %[[DK]], %[[DV]] {axis = 2 : i64}
// CHECK:           bmb.layer "qkv" layer "Linear" backward (%{{.*}}, %[[RI]], %[[DQKV]])
// CHECK:             bmb.grad_accumulate @h.qkv.w[%{{.*}}]
// CHECK:           bmb.layer "ln" layer "LayerNorm" backward
// CHECK:             bmb.grad_accumulate @h.ln.b[%{{.*}}]
// CHECK:             bmb.grad_accumulate @h.ln.w[%{{.*}}]
// CHECK:           bmb.yield %{{.*}} : tensor<2x4x8xf32>

// wpe(arange(T)) was broadcast over the batch: its gradient is summed down.
// The tied wte.w accumulates a second time, from the embedding.
// CHECK:         %[[DP:.*]] = bmb.reduce_sum %[[DX]] : tensor<2x4x8xf32> -> tensor<4x8xf32>
// CHECK:         bmb.layer "wpe" layer "Embedding" backward (%{{.*}}, %[[DP]]) : (tensor<4xi32>, tensor<4x8xf32>) -> ()
// CHECK:           bmb.embedding_grad
// CHECK:           bmb.grad_accumulate @wpe.w
// CHECK:         bmb.layer "wte" layer "Embedding" backward (%{{.*}}, %[[DX]])
// CHECK:           %[[DE:.*]] = bmb.embedding_grad %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<2x4xi32>) -> tensor<16x8xf32>
// CHECK:           bmb.grad_accumulate @wte.w, %[[DE]]
// CHECK:         return %[[LOSS]] : tensor<f32>

bmb.model @Tiny layer "Tiny" {
  bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @wpe.w : tensor<4x8xf32> init normal(0.02)
  bmb.param @h.ln.w : tensor<2x8xf32> init ones stacked 1
  bmb.param @h.ln.b : tensor<2x8xf32> init zeros stacked 1
  bmb.param @h.qkv.w : tensor<2x24x8xf32> init normal(0.02) stacked 1
  bmb.param @h.mlp.fc.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
  bmb.param @h.mlp.fc.b : tensor<2x8xf32> init zeros stacked 1
  bmb.param @ln_f.w : tensor<8xf32> init ones
  bmb.param @ln_f.b : tensor<8xf32> init zeros frozen

  func.func @loss(%tokens: tensor<2x4xi32> {bmb.name = "tokens"}, %targets: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
    %x = bmb.layer "wte" layer "Embedding" (%tokens) : (tensor<2x4xi32>) -> tensor<2x4x8xf32> {
    ^bb0(%ids: tensor<2x4xi32>):
      %w = bmb.param_get @wte.w : tensor<16x8xf32>
      %e = bmb.embedding %ids, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %e : tensor<2x4x8xf32>
    }
    %pos = bmb.arange 4 : tensor<4xi32>
    %p = bmb.layer "wpe" layer "Embedding" (%pos) : (tensor<4xi32>) -> tensor<4x8xf32> {
    ^bb0(%ids: tensor<4xi32>):
      %w = bmb.param_get @wpe.w : tensor<4x8xf32>
      %e = bmb.embedding %ids, %w : (tensor<4xi32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      bmb.yield %e : tensor<4x8xf32>
    }
    %x1 = bmb.add %x, %p : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
    %y = bmb.repeat 2 "h" layer "Block" iter(%x1) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>):
      %n = bmb.layer "ln" layer "LayerNorm" (%a, %i) : (tensor<2x4x8xf32>, index) -> tensor<2x4x8xf32> {
      ^bb0(%v: tensor<2x4x8xf32>, %j: index):
        %w = bmb.param_get @h.ln.w[%j] : tensor<8xf32>
        %b = bmb.param_get @h.ln.b[%j] : tensor<8xf32>
        %r = bmb.layernorm %v, %w, %b {eps = 1.0e-5 : f64} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
        bmb.yield %r : tensor<2x4x8xf32>
      }
      %qkv = bmb.layer "qkv" layer "Linear" (%n, %i) : (tensor<2x4x8xf32>, index) -> tensor<2x4x24xf32> {
      ^bb0(%v: tensor<2x4x8xf32>, %j: index):
        %w = bmb.param_get @h.qkv.w[%j] : tensor<24x8xf32>
        %r = bmb.linear %v, %w : (tensor<2x4x8xf32>, tensor<24x8xf32>) -> tensor<2x4x24xf32>
        bmb.yield %r : tensor<2x4x24xf32>
      }
      %q, %k, %v = bmb.split %qkv {axis = 2 : i64} : tensor<2x4x24xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
      %att = bmb.attention %q, %k, %v {causal, heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64}
          : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      %r1 = bmb.add %a, %att : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      %m = bmb.layer "mlp" layer "MLP" (%r1, %i) : (tensor<2x4x8xf32>, index) -> tensor<2x4x8xf32> {
      ^bb0(%u: tensor<2x4x8xf32>, %j: index):
        %f = bmb.layer "fc" layer "Linear" (%u, %j) : (tensor<2x4x8xf32>, index) -> tensor<2x4x8xf32> {
        ^bb0(%t: tensor<2x4x8xf32>, %l: index):
          %w = bmb.param_get @h.mlp.fc.w[%l] : tensor<8x8xf32>
          %b = bmb.param_get @h.mlp.fc.b[%l] : tensor<8xf32>
          %h = bmb.linear %t, %w, %b : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
          %g = bmb.gelu %h approximate tanh : tensor<2x4x8xf32>
          bmb.yield %g : tensor<2x4x8xf32>
        }
        bmb.yield %f : tensor<2x4x8xf32>
      }
      %o = bmb.add %r1, %m : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %o : tensor<2x4x8xf32>
    }
    %z = bmb.layer "ln_f" layer "LayerNorm" (%y) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%v: tensor<2x4x8xf32>):
      %w = bmb.param_get @ln_f.w : tensor<8xf32>
      %b = bmb.param_get @ln_f.b : tensor<8xf32>
      %r = bmb.layernorm %v, %w, %b {eps = 1.0e-5 : f64} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %r : tensor<2x4x8xf32>
    }
    %wte = bmb.param_get @wte.w : tensor<16x8xf32>
    %loss, %dlogits = bmb.fused_classifier %z, %wte, %targets
        : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
    return %loss : tensor<f32>
  }
}
