// bmb-checkpoint-activations: the layer instances the train job names in
// `checkpoint` save nothing but their input; their backward recomputes the
// forward from a clone (docs/training-ir.md, section 2).
// RUN: bmb-opt %s -split-input-file --bmb-autodiff --bmb-checkpoint-activations | FileCheck %s
// RUN: bmb-opt %s -split-input-file --bmb-autodiff --bmb-checkpoint-activations | bmb-opt -split-input-file | FileCheck %s
// Without the setting the pass changes nothing (autodiff.mlir has the
// saves of the same model).
// RUN: bmb-opt %s -split-input-file --bmb-autodiff | FileCheck %s --check-prefix=SAVED

// A repeat (`checkpoint = h`, the tiny GPT of autodiff.mlir): the forward
// saves only each iteration's carried input, stacked (autodiff saved 7
// values per iteration); the nested layers no longer yield their saves.
// SAVED: bmb.repeat 2 "h" layer "Block" iter(%{{.*}}) {num_saved = 7 : i64}
// CHECK-LABEL: func.func @train_step
// CHECK:         %[[FWD:.*]]:2 = bmb.repeat 2 "h" layer "Block" iter(%{{.*}}) {num_saved = 1 : i64} : (tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4x8xf32>) {
// CHECK-NEXT:    ^bb0(%{{.*}}: index, %[[A:[a-z0-9]+]]: tensor<2x4x8xf32>):
// CHECK-NOT:       num_saved
// CHECK:           bmb.yield %{{.*}}, %[[A]] : tensor<2x4x8xf32>, tensor<2x4x8xf32>
// The reverse iteration i reads iteration i's input and recomputes the
// block (rolled: one clone of the body, indexed by the reverse induction
// variable) up to what the backward reads: the residual output and the
// GELU, which only the forward's output needed, are gone.
// CHECK:         bmb.repeat 2 "h" layer "Block" reverse iter(%{{.*}}) invariant(%[[FWD]]#1) : (tensor<2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x4x8xf32> {
// CHECK-NEXT:    ^bb0(%[[RI:[a-z0-9]+]]: index, %[[DY:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[S:[a-z0-9]+]]: tensor<2x2x4x8xf32>):
// CHECK-NEXT:      %[[X:.*]] = bmb.stack_get %[[S]][%[[RI]]] : tensor<2x2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:      %[[N:.*]] = bmb.layer "ln" layer "LayerNorm" (%[[X]], %[[RI]])
// CHECK:           %[[QKV:.*]] = bmb.layer "qkv" layer "Linear" (%[[N]], %[[RI]])
// CHECK:           %[[QS:.*]]:3 = bmb.split %[[QKV]]
// CHECK-NEXT:      %[[ATT:.*]] = bmb.attention %[[QS]]#0, %[[QS]]#1, %[[QS]]#2
// CHECK-NEXT:      %[[R1:.*]] = bmb.add %[[X]], %[[ATT]]
// CHECK-NEXT:      %[[M:.*]] = bmb.layer "mlp" layer "MLP" (%[[R1]], %[[RI]]) {num_saved = 1 : i64} : (tensor<2x4x8xf32>, index) -> tensor<2x4x8xf32> {
// CHECK:             %[[F:.*]] = bmb.layer "fc" layer "Linear" ({{.*}}) {num_saved = 1 : i64} : (tensor<2x4x8xf32>, index) -> tensor<2x4x8xf32> {
// CHECK:               %[[H:.*]] = bmb.linear
// CHECK-NEXT:          bmb.yield %[[H]] : tensor<2x4x8xf32>
// CHECK:             bmb.yield %[[F]] : tensor<2x4x8xf32>
// The backward reads the recomputed values where it read stack_gets.
// CHECK-NEXT:      }
// CHECK-NEXT:      %{{.*}} = bmb.layer "mlp" layer "MLP" backward (%[[M]], %[[R1]], %[[RI]], %[[DY]])
// CHECK:           bmb.attention_grad %{{.*}}, %[[QS]]#0, %[[QS]]#1, %[[QS]]#2
// CHECK:           bmb.layer "qkv" layer "Linear" backward (%[[N]], %[[RI]], %{{.*}})
// CHECK:           bmb.layer "ln" layer "LayerNorm" backward (%[[RI]], %[[X]], %{{.*}})
// CHECK-NOT:       bmb.stack_get
// CHECK:           bmb.yield
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
bmb.job @train train for @Tiny {batch = 2 : i64, checkpoint = "h", seq = 4 : i64}

// -----

// A layer (`checkpoint = ["mlp", "mlp"]`: named twice is once): the
// forward saves nothing (autodiff
// saved the GELU's pre-activation); the backward takes the forward's input
// instead and recomputes the pre-activation first.
// SAVED: bmb.layer "mlp" layer "MLP" (%{{.*}}) {num_saved = 1 : i64}
// SAVED: bmb.layer "mlp" layer "MLP" backward (%{{.*}}#1, %{{.*}}, %{{.*}})
// CHECK-LABEL: func.func @train_step
// CHECK:         %[[X:.*]] = bmb.layer "wte" layer "Embedding"
// CHECK:         %[[M:.*]] = bmb.layer "mlp" layer "MLP" (%[[X]]) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
// CHECK:           %[[O:.*]] = bmb.add
// CHECK-NEXT:      bmb.yield %[[O]] : tensor<2x4x8xf32>
// CHECK:         %[[DM:.*]] = bmb.linear_grad_input
// CHECK:         bmb.layer "mlp" layer "MLP" backward (%[[X]], %[[DM]]) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
// CHECK-NEXT:    ^bb0(%[[U:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[DY:[a-z0-9]+]]: tensor<2x4x8xf32>):
// CHECK-NEXT:      %[[W:.*]] = bmb.param_get @mlp.fc.w : tensor<8x8xf32>
// CHECK-NEXT:      %[[H:.*]] = bmb.linear %[[U]], %[[W]]
// CHECK-NEXT:      %[[DH:.*]] = bmb.act_grad gelu_tanh %[[H]], %[[DY]]
// CHECK-NEXT:      bmb.linear_grad_weight %[[DH]], %[[U]]
bmb.model @Plain layer "Plain" {
  bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @mlp.fc.w : tensor<8x8xf32> init normal(0.02)

  func.func @loss(%tokens: tensor<2x4xi32> {bmb.name = "tokens"}, %targets: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
    %x = bmb.layer "wte" layer "Embedding" (%tokens) : (tensor<2x4xi32>) -> tensor<2x4x8xf32> {
    ^bb0(%ids: tensor<2x4xi32>):
      %w = bmb.param_get @wte.w : tensor<16x8xf32>
      %e = bmb.embedding %ids, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %e : tensor<2x4x8xf32>
    }
    %m = bmb.layer "mlp" layer "MLP" (%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%u: tensor<2x4x8xf32>):
      %w = bmb.param_get @mlp.fc.w : tensor<8x8xf32>
      %h = bmb.linear %u, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      %g = bmb.gelu %h approximate tanh : tensor<2x4x8xf32>
      %o = bmb.add %u, %g : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %o : tensor<2x4x8xf32>
    }
    %wte = bmb.param_get @wte.w : tensor<16x8xf32>
    %loss, %dlogits = bmb.fused_classifier %m, %wte, %targets
        : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
    return %loss : tensor<f32>
  }
}
bmb.job @train train for @Plain {batch = 2 : i64, checkpoint = ["mlp", "mlp"], seq = 4 : i64}

// -----

// A nested instance (`checkpoint = "mlp.fc"`): fc saves nothing and its
// backward recomputes the GELU's pre-activation from its input, which the
// parent mlp saves (it did already) and its backward captures; mlp no
// longer saves fc's pre-activation, nor its backward captures it.
// SAVED: bmb.layer "mlp" layer "MLP" (%{{.*}}) {num_saved = 2 : i64}
// SAVED: bmb.layer "fc" layer "Linear" (%{{.*}}) {num_saved = 1 : i64}
// SAVED: bmb.layer "mlp" layer "MLP" backward (%{{.*}}#1, %{{.*}}#2, %{{.*}}, %{{.*}})
// CHECK-LABEL: func.func @train_step
// CHECK:         %[[M:.*]]:2 = bmb.layer "mlp" layer "MLP" (%{{.*}}) {num_saved = 1 : i64}
// CHECK:           %[[N:.*]] = bmb.tanh
// CHECK-NEXT:      %{{.*}} = bmb.layer "fc" layer "Linear" (%[[N]]) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
// CHECK:           bmb.yield %{{.*}}, %[[N]] : tensor<2x4x8xf32>, tensor<2x4x8xf32>
// CHECK:         bmb.layer "mlp" layer "MLP" backward (%[[M]]#1, %{{.*}}, %{{.*}}) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
// CHECK-NEXT:    ^bb0(%[[NB:[a-z0-9]+]]: tensor<2x4x8xf32>, %{{.*}}: tensor<2x4x8xf32>, %[[DY:[a-z0-9]+]]: tensor<2x4x8xf32>):
// CHECK-NEXT:      bmb.layer "fc" layer "Linear" backward (%[[NB]], %[[DY]]) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
// CHECK-NEXT:      ^bb0(%[[V:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[G:[a-z0-9]+]]: tensor<2x4x8xf32>):
// CHECK-NEXT:        %[[W:.*]] = bmb.param_get @mlp.fc.w
// CHECK-NEXT:        %[[H:.*]] = bmb.linear %[[V]], %[[W]]
// CHECK-NEXT:        bmb.act_grad gelu_tanh %[[H]], %[[G]]
bmb.model @Nested layer "Nested" {
  bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @mlp.fc.w : tensor<8x8xf32> init normal(0.02)

  func.func @loss(%tokens: tensor<2x4xi32> {bmb.name = "tokens"}, %targets: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
    %x = bmb.layer "wte" layer "Embedding" (%tokens) : (tensor<2x4xi32>) -> tensor<2x4x8xf32> {
    ^bb0(%ids: tensor<2x4xi32>):
      %w = bmb.param_get @wte.w : tensor<16x8xf32>
      %e = bmb.embedding %ids, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %e : tensor<2x4x8xf32>
    }
    %m = bmb.layer "mlp" layer "MLP" (%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%u: tensor<2x4x8xf32>):
      %n = bmb.tanh %u : tensor<2x4x8xf32>
      %f = bmb.layer "fc" layer "Linear" (%n) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
      ^bb0(%v: tensor<2x4x8xf32>):
        %w = bmb.param_get @mlp.fc.w : tensor<8x8xf32>
        %h = bmb.linear %v, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
        %g = bmb.gelu %h approximate tanh : tensor<2x4x8xf32>
        bmb.yield %g : tensor<2x4x8xf32>
      }
      %o = bmb.add %u, %f : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %o : tensor<2x4x8xf32>
    }
    %wte = bmb.param_get @wte.w : tensor<16x8xf32>
    %loss, %dlogits = bmb.fused_classifier %m, %wte, %targets
        : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
    return %loss : tensor<f32>
  }
}
bmb.job @train train for @Nested {batch = 2 : i64, checkpoint = "mlp.fc", seq = 4 : i64}

// -----

// An instance inside a repeat (`checkpoint = "h.fc"`: selective
// checkpointing): the repeat no longer stacks fc's pre-activation (2 stacked
// saves -> 1, the iteration's input, which fc's backward reads), and fc's
// backward recomputes it in each reverse iteration.
// SAVED: bmb.repeat 2 "h" layer "Block" iter(%{{.*}}) {num_saved = 2 : i64}
// CHECK-LABEL: func.func @train_step
// CHECK:         %[[FWD:.*]]:2 = bmb.repeat 2 "h" layer "Block" iter(%{{.*}}) {num_saved = 1 : i64}
// CHECK:           bmb.layer "fc" layer "Linear" (%{{.*}}, %{{.*}}) : (tensor<2x4x8xf32>, index) -> tensor<2x4x8xf32> {
// CHECK:         bmb.repeat 2 "h" layer "Block" reverse iter(%{{.*}}) invariant(%[[FWD]]#1) : (tensor<2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x4x8xf32> {
// CHECK-NEXT:    ^bb0(%[[RI:[a-z0-9]+]]: index, %{{.*}}: tensor<2x4x8xf32>, %[[S:[a-z0-9]+]]: tensor<2x2x4x8xf32>):
// CHECK-NEXT:      %[[X:.*]] = bmb.stack_get %[[S]][%[[RI]]]
// CHECK-NEXT:      bmb.layer "fc" layer "Linear" backward (%[[X]], %[[RI]], %{{.*}})
// CHECK-NEXT:      ^bb0(%[[V:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[J:[a-z0-9]+]]: index, %[[G:[a-z0-9]+]]: tensor<2x4x8xf32>):
// CHECK-NEXT:        %[[W:.*]] = bmb.param_get @h.fc.w[%[[J]]]
// CHECK-NEXT:        %[[H:.*]] = bmb.linear %[[V]], %[[W]]
// CHECK-NEXT:        bmb.act_grad gelu_tanh %[[H]], %[[G]]
bmb.model @Stack layer "Stack" {
  bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @h.fc.w : tensor<2x8x8xf32> init normal(0.02) stacked 1

  func.func @loss(%tokens: tensor<2x4xi32> {bmb.name = "tokens"}, %targets: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
    %wte = bmb.param_get @wte.w : tensor<16x8xf32>
    %x = bmb.embedding %tokens, %wte : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    %y = bmb.repeat 2 "h" layer "Block" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>):
      %f = bmb.layer "fc" layer "Linear" (%a, %i) : (tensor<2x4x8xf32>, index) -> tensor<2x4x8xf32> {
      ^bb0(%v: tensor<2x4x8xf32>, %j: index):
        %w = bmb.param_get @h.fc.w[%j] : tensor<8x8xf32>
        %h = bmb.linear %v, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
        %g = bmb.gelu %h approximate tanh : tensor<2x4x8xf32>
        bmb.yield %g : tensor<2x4x8xf32>
      }
      bmb.yield %f : tensor<2x4x8xf32>
    }
    %loss, %dlogits = bmb.fused_classifier %y, %wte, %targets
        : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
    return %loss : tensor<f32>
  }
}
bmb.job @train train for @Stack {batch = 2 : i64, checkpoint = "h.fc", seq = 4 : i64}

