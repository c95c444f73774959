// bmb-insert-deltas: LoRA, adapters, BitFit and prefixes as rewrites of
// @forward, and freezing by selector.
// RUN: bmb-opt %s -split-input-file --bmb-insert-deltas | FileCheck %s

// LoRA on the Linear "q" inside the rolled repeat "h": two params stacked
// like the layer's own, read with the layer's iteration index; the result
// is W x + b + (alpha/r) B (A x). Every other param is frozen.
// CHECK-LABEL: bmb.model @Lora
// CHECK:      bmb.param @h.q.w : tensor<2x8x8xf32> init normal(0.02) frozen stacked 1
// CHECK-NEXT: bmb.param @h.q.b : tensor<2x8xf32> init zeros frozen stacked 1
// CHECK-NEXT: bmb.param @h.q.lora_a : tensor<2x2x8xf32> init uniform(-0.35355339059327373, 0.35355339059327373) stacked 1 {bmb.delta}
// CHECK-NEXT: bmb.param @h.q.lora_b : tensor<2x8x2xf32> init zeros stacked 1 {bmb.delta}
// CHECK-NEXT: bmb.param @o.w : tensor<8x8xf32> init normal(0.02) frozen
// CHECK:      bmb.layer "q" layer "Linear"
// CHECK:      ^bb0(%[[X:.*]]: tensor<2x4x8xf32>, %[[J:.*]]: index):
// CHECK:        %[[R:.*]] = bmb.linear %[[X]], %{{.*}}, %{{.*}} :
// CHECK-NEXT:   %[[A:.*]] = bmb.param_get @h.q.lora_a[%[[J]]] : tensor<2x8xf32>
// CHECK-NEXT:   %[[B:.*]] = bmb.param_get @h.q.lora_b[%[[J]]] : tensor<8x2xf32>
// CHECK-NEXT:   %[[H:.*]] = bmb.linear %[[X]], %[[A]] : (tensor<2x4x8xf32>, tensor<2x8xf32>) -> tensor<2x4x2xf32>
// CHECK-NEXT:   %[[D:.*]] = bmb.linear %[[H]], %[[B]] : (tensor<2x4x2xf32>, tensor<8x2xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:   %[[S:.*]] = bmb.scale %[[D]] {factor = 2.000000e+00 : f64}
// CHECK-NEXT:   %[[Y:.*]] = bmb.add %[[R]], %[[S]]
// CHECK-NEXT:   bmb.yield %[[Y]]
// The head "o" is not selected ("q" is a suffix of h.q only).
// CHECK:      bmb.layer "o" layer "Linear"
// CHECK-NOT:  lora
// CHECK:      return
bmb.model @Lora layer "M" {
  bmb.param @h.q.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
  bmb.param @h.q.b : tensor<2x8xf32> init zeros stacked 1
  bmb.param @o.w : tensor<8x8xf32> init normal(0.02)
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %y = bmb.repeat 2 "h" layer "Blk" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>):
      %q = bmb.layer "q" layer "Linear" (%a, %i) : (tensor<2x4x8xf32>, index) -> tensor<2x4x8xf32> {
      ^bb0(%v: tensor<2x4x8xf32>, %j: index):
        %w = bmb.param_get @h.q.w[%j] : tensor<8x8xf32>
        %b = bmb.param_get @h.q.b[%j] : tensor<8xf32>
        %r = bmb.linear %v, %w, %b : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
        bmb.yield %r : tensor<2x4x8xf32>
      }
      bmb.yield %q : tensor<2x4x8xf32>
    }
    %o = bmb.layer "o" layer "Linear" (%y) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%v: tensor<2x4x8xf32>):
      %w = bmb.param_get @o.w : tensor<8x8xf32>
      %r = bmb.linear %v, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %r : tensor<2x4x8xf32>
    }
    return %o : tensor<2x4x8xf32>
  }
}
bmb.job @t train for @Lora {batch = 2 : i64, seq = 4 : i64, delta = {kind = "lora", rank = 2 : i64, alpha = 4.0 : f64, on = ["q"]}}

// -----

// LoRA with dropout: the delta's input is dropped out with a fresh rng id
// (after the program's own); `train_only` keeps the head trainable too.
// CHECK-LABEL: bmb.model @LoraDropout
// CHECK:      bmb.param @o.w : tensor<8x8xf32> init normal(0.02){{$}}
// CHECK-NEXT: bmb.param @o.lora_a
// CHECK:      bmb.dropout %{{.*}} {p = 1.000000e-01 : f64, rng_id = 3 : i64}
// CHECK:      bmb.linear %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x4xf32>
bmb.model @LoraDropout layer "M" {
  bmb.param @o.w : tensor<8x8xf32> init normal(0.02)
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %d = bmb.dropout %x {p = 0.5 : f64, rng_id = 2 : i64} : tensor<2x4x8xf32>
    %o = bmb.layer "o" layer "Linear" (%d) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%v: tensor<2x4x8xf32>):
      %w = bmb.param_get @o.w : tensor<8x8xf32>
      %r = bmb.linear %v, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %r : tensor<2x4x8xf32>
    }
    return %o : tensor<2x4x8xf32>
  }
}
bmb.job @t train for @LoraDropout {batch = 2 : i64, seq = 4 : i64, train_only = ["o"], delta = [{kind = "lora", rank = 4 : i64, dropout = 0.1 : f64, on = ["re:o"]}]}

// -----

// A sequential adapter after the layer "mlp" in a repeat: the layer did not
// take the iteration index, so it gets it as a new operand; up(act(down(y)))
// is added to the layer's output. A parallel one reads the layer's input.
// CHECK-LABEL: bmb.model @Adapter
// CHECK:      bmb.param @h.mlp.w : tensor<2x8x8xf32> init normal(0.02) frozen stacked 1
// CHECK-NEXT: bmb.param @h.mlp.adapter.down.w : tensor<2x3x8xf32> init normal(0.01) stacked 1 {bmb.delta}
// CHECK-NEXT: bmb.param @h.mlp.adapter.down.b : tensor<2x3xf32> init zeros stacked 1 {bmb.delta}
// CHECK-NEXT: bmb.param @h.mlp.adapter.up.w : tensor<2x8x3xf32> init zeros stacked 1 {bmb.delta}
// CHECK-NEXT: bmb.param @h.mlp.adapter.up.b : tensor<2x8xf32> init zeros stacked 1 {bmb.delta}
// CHECK:      ^bb0(%[[I:.*]]: index, %[[A:.*]]: tensor<2x4x8xf32>):
// CHECK:      bmb.layer "mlp" layer "Act" (%[[A]], %[[I]]) : (tensor<2x4x8xf32>, index) -> tensor<2x4x8xf32>
// CHECK:      ^bb0(%[[V:.*]]: tensor<2x4x8xf32>, %[[J:.*]]: index):
// CHECK:        %[[R:.*]] = bmb.relu
// CHECK:        %[[DW:.*]] = bmb.param_get @h.mlp.adapter.down.w[%[[J]]]
// CHECK:        %[[DB:.*]] = bmb.param_get @h.mlp.adapter.down.b[%[[J]]]
// CHECK:        %[[UW:.*]] = bmb.param_get @h.mlp.adapter.up.w[%[[J]]]
// CHECK:        %[[UB:.*]] = bmb.param_get @h.mlp.adapter.up.b[%[[J]]]
// CHECK-NEXT:   %[[H:.*]] = bmb.linear %[[R]], %[[DW]], %[[DB]] : (tensor<2x4x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT:   %[[G:.*]] = bmb.relu %[[H]]
// CHECK-NEXT:   %[[U:.*]] = bmb.linear %[[G]], %[[UW]], %[[UB]]
// CHECK-NEXT:   %[[Y:.*]] = bmb.add %[[R]], %[[U]]
// CHECK-NEXT:   bmb.yield %[[Y]]
bmb.model @Adapter layer "M" {
  bmb.param @h.mlp.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %y = bmb.repeat 2 "h" layer "Blk" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>):
      %m = bmb.layer "mlp" layer "Act" (%a) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
      ^bb0(%v: tensor<2x4x8xf32>):
        %r = bmb.relu %v : tensor<2x4x8xf32>
        bmb.yield %r : tensor<2x4x8xf32>
      }
      %w = bmb.param_get @h.mlp.w[%i] : tensor<8x8xf32>
      %l = bmb.linear %m, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %l : tensor<2x4x8xf32>
    }
    return %y : tensor<2x4x8xf32>
  }
}
bmb.job @t train for @Adapter {batch = 2 : i64, seq = 4 : i64, delta = {kind = "adapter", dim = 3 : i64, act = "relu", on = "mlp"}}

// -----

// Parallel adapter: down reads the layer's input %v.
// CHECK-LABEL: bmb.model @Parallel
// CHECK:      ^bb0(%[[V:.*]]: tensor<2x4x8xf32>):
// CHECK:        %[[R:.*]] = bmb.tanh %[[V]]
// CHECK:        bmb.linear %[[V]], %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
// CHECK-NEXT:   bmb.gelu %{{.*}} approximate tanh
bmb.model @Parallel layer "M" {
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %m = bmb.layer "act" layer "Act" (%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%v: tensor<2x4x8xf32>):
      %r = bmb.tanh %v : tensor<2x4x8xf32>
      bmb.yield %r : tensor<2x4x8xf32>
    }
    return %m : tensor<2x4x8xf32>
  }
}
bmb.job @t train for @Parallel {batch = 2 : i64, seq = 4 : i64, delta = {kind = "adapter", dim = 16 : i64, parallel = true, on = "act"}}

// -----

// BitFit: only the biases of linear and layernorm stay trainable; `freeze`
// then freezes the ones it selects (a glob over the param path).
// CHECK-LABEL: bmb.model @Bitfit
// CHECK:      bmb.param @ln.w : tensor<8xf32> init ones frozen
// CHECK-NEXT: bmb.param @ln.b : tensor<8xf32> init zeros{{$}}
// CHECK-NEXT: bmb.param @o.w : tensor<8x8xf32> init normal(0.02) frozen
// CHECK-NEXT: bmb.param @o.b : tensor<8xf32> init zeros frozen
bmb.model @Bitfit layer "M" {
  bmb.param @ln.w : tensor<8xf32> init ones
  bmb.param @ln.b : tensor<8xf32> init zeros
  bmb.param @o.w : tensor<8x8xf32> init normal(0.02)
  bmb.param @o.b : tensor<8xf32> init zeros
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %lw = bmb.param_get @ln.w : tensor<8xf32>
    %lb = bmb.param_get @ln.b : tensor<8xf32>
    %n = bmb.layernorm %x, %lw, %lb {eps = 1.0e-5 : f64} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %w = bmb.param_get @o.w : tensor<8x8xf32>
    %b = bmb.param_get @o.b : tensor<8xf32>
    %r = bmb.linear %n, %w, %b : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    return %r : tensor<2x4x8xf32>
  }
}
bmb.job @t train for @Bitfit {batch = 2 : i64, seq = 4 : i64, freeze = ["o.*"], delta = {kind = "bitfit"}}

// -----

// Without a delta, `freeze` alone freezes what it selects (a layer path
// selects its params); infer jobs get no freezing.
// CHECK-LABEL: bmb.model @Freeze
// CHECK:      bmb.param @a.w : tensor<8xf32> init ones frozen
// CHECK-NEXT: bmb.param @b.w : tensor<8xf32> init ones{{$}}
bmb.model @Freeze layer "M" {
  bmb.param @a.w : tensor<8xf32> init ones
  bmb.param @b.w : tensor<8xf32> init ones
  func.func @forward(%x: tensor<8xf32>) -> tensor<8xf32> {
    %a = bmb.param_get @a.w : tensor<8xf32>
    %b = bmb.param_get @b.w : tensor<8xf32>
    %y = bmb.mul %x, %a : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %z = bmb.mul %y, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    return %z : tensor<8xf32>
  }
}
bmb.job @t train for @Freeze {batch = 2 : i64, seq = 4 : i64, freeze = "a"}

// -----

// An infer job merges LoRA into the weight at load: the forward entries are
// untouched, the params are declared (the checkpoint holds them) and the
// weight names them with the scale (emitted as bmrt::DeltaMerge). With
// merge = false the delta is computed beside the weight in @prefill and
// @decode (test/e2e/check_delta.py compares the two).
// CHECK-LABEL: bmb.model @Infer
// CHECK:      bmb.param @o.w : tensor<8x8xf32> init normal(0.02) {bmb.lora_merge = {a = "o.lora_a", b = "o.lora_b", scale = 2.000000e+00 : f64}}
// CHECK-NEXT: bmb.param @o.lora_a : tensor<4x8xf32> {{.*}} {bmb.delta}
// CHECK-NEXT: bmb.param @o.lora_b : tensor<8x4xf32> init zeros {bmb.delta}
// CHECK:      func.func @prefill
// CHECK-NOT:  lora
// CHECK:      bmb.job @t infer
bmb.model @Infer layer "M" {
  bmb.param @o.w : tensor<8x8xf32> init normal(0.02)
  func.func @prefill(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
    %o = bmb.layer "o" layer "Linear" (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
    ^bb0(%v: tensor<1x4x8xf32>):
      %w = bmb.param_get @o.w : tensor<8x8xf32>
      %r = bmb.linear %v, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
      bmb.yield %r : tensor<1x4x8xf32>
    }
    return %o : tensor<1x4x8xf32>
  }
}
bmb.job @t infer for @Infer {delta = {kind = "lora", rank = 4 : i64, alpha = 8.0 : f64, on = "o"}}

// -----

// CHECK-LABEL: bmb.model @Unmerged
// CHECK:      bmb.param @o.w : tensor<8x8xf32> init normal(0.02){{$}}
// CHECK:      func.func @prefill
// CHECK:        bmb.param_get @o.lora_a
// CHECK:      func.func @decode
// CHECK:        bmb.param_get @o.lora_a
bmb.model @Unmerged layer "M" {
  bmb.param @o.w : tensor<8x8xf32> init normal(0.02)
  func.func @prefill(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
    %o = bmb.layer "o" layer "Linear" (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
    ^bb0(%v: tensor<1x4x8xf32>):
      %w = bmb.param_get @o.w : tensor<8x8xf32>
      %r = bmb.linear %v, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
      bmb.yield %r : tensor<1x4x8xf32>
    }
    return %o : tensor<1x4x8xf32>
  }
  func.func @decode(%x: tensor<1x1x8xf32>) -> tensor<1x1x8xf32> {
    %o = bmb.layer "o" layer "Linear" (%x) : (tensor<1x1x8xf32>) -> tensor<1x1x8xf32> {
    ^bb0(%v: tensor<1x1x8xf32>):
      %w = bmb.param_get @o.w : tensor<8x8xf32>
      %r = bmb.linear %v, %w : (tensor<1x1x8xf32>, tensor<8x8xf32>) -> tensor<1x1x8xf32>
      bmb.yield %r : tensor<1x1x8xf32>
    }
    return %o : tensor<1x1x8xf32>
  }
}
bmb.job @t infer for @Unmerged {delta = {kind = "lora", rank = 4 : i64, merge = false, on = "o"}}

// -----

// A list of deltas applies in order: LoRA on every layer but "p" (a glob
// and an exclude list), then BitFit over everything: trainable are the
// LoRA factors and the one bias; the delta params follow their layer's.
// CHECK-LABEL: bmb.model @Both
// CHECK:      bmb.param @o.w : tensor<8x8xf32> init normal(0.02) frozen
// CHECK-NEXT: bmb.param @o.b : tensor<8xf32> init zeros{{$}}
// CHECK-NEXT: bmb.param @o.lora_a
// CHECK-NEXT: bmb.param @o.lora_b
// CHECK-NEXT: bmb.param @p.w : tensor<8x8xf32> init normal(0.02) frozen
bmb.model @Both layer "M" {
  bmb.param @o.w : tensor<8x8xf32> init normal(0.02)
  bmb.param @o.b : tensor<8xf32> init zeros
  bmb.param @p.w : tensor<8x8xf32> init normal(0.02)
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %o = bmb.layer "o" layer "Linear" (%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%v: tensor<2x4x8xf32>):
      %w = bmb.param_get @o.w : tensor<8x8xf32>
      %b = bmb.param_get @o.b : tensor<8xf32>
      %r = bmb.linear %v, %w, %b : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %r : tensor<2x4x8xf32>
    }
    %p = bmb.layer "p" layer "Linear" (%o) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%v: tensor<2x4x8xf32>):
      %w = bmb.param_get @p.w : tensor<8x8xf32>
      %r = bmb.linear %v, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %r : tensor<2x4x8xf32>
    }
    return %p : tensor<2x4x8xf32>
  }
}
bmb.job @t train for @Both {batch = 2 : i64, seq = 4 : i64, delta = [{kind = "lora", rank = 2 : i64, on = "*", exclude = "p"}, {kind = "bitfit"}]}

// -----

// Prefix tuning inside the rolled repeat "h": key and value prefixes
// [P, kv width] stacked per iteration, read with the iteration index (threaded
// into the attention's layer) as the attention's prefix operands; everything
// else is frozen.
// CHECK-LABEL: bmb.model @Prefix
// CHECK:      bmb.param @h.o.w : tensor<2x8x8xf32> init normal(0.02) frozen stacked 1
// CHECK-NEXT: bmb.param @h.attn.prefix_key : tensor<2x3x8xf32> init normal(0.02) stacked 1 {bmb.delta}
// CHECK-NEXT: bmb.param @h.attn.prefix_value : tensor<2x3x8xf32> init normal(0.02) stacked 1 {bmb.delta}
// CHECK:      bmb.layer "attn" layer "Attention" (%{{.*}}, %[[I:.*]]) : (tensor<2x4x8xf32>, index) -> tensor<2x4x8xf32> {
// CHECK-NEXT: ^bb0(%[[V:.*]]: tensor<2x4x8xf32>, %[[J:.*]]: index):
// CHECK-NEXT:   %[[PK:.*]] = bmb.param_get @h.attn.prefix_key[%[[J]]] : tensor<3x8xf32>
// CHECK-NEXT:   %[[PV:.*]] = bmb.param_get @h.attn.prefix_value[%[[J]]] : tensor<3x8xf32>
// CHECK-NEXT:   bmb.attention %[[V]], %[[V]], %[[V]] prefix(%[[PK]], %[[PV]]) {causal, heads = 2 : i64, kv_heads = 2 : i64, scale = 5.000000e-01 : f64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<2x4x8xf32>
bmb.model @Prefix layer "M" {
  bmb.param @h.o.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %y = bmb.repeat 2 "h" layer "Blk" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>):
      %t = bmb.layer "attn" layer "Attention" (%a) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
      ^bb0(%v: tensor<2x4x8xf32>):
        %r = bmb.attention %v, %v, %v {causal, heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
        bmb.yield %r : tensor<2x4x8xf32>
      }
      %o = bmb.layer "o" layer "Linear" (%t, %i) : (tensor<2x4x8xf32>, index) -> tensor<2x4x8xf32> {
      ^bb0(%v: tensor<2x4x8xf32>, %j: index):
        %w = bmb.param_get @h.o.w[%j] : tensor<8x8xf32>
        %r = bmb.linear %v, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
        bmb.yield %r : tensor<2x4x8xf32>
      }
      bmb.yield %o : tensor<2x4x8xf32>
    }
    return %y : tensor<2x4x8xf32>
  }
}
bmb.job @t train for @Prefix {batch = 2 : i64, seq = 4 : i64, delta = {kind = "prefix", length = 3 : i64}}

// -----

// LoRA on iteration 1 of 2 only (and an adapter on iterations {0}): params
// stacked over the selected iterations, read at the iteration's slot, the
// delta's output gated to 0 on the other iterations; the loop stays rolled.
// CHECK-LABEL: bmb.model @PerIteration
// CHECK:      bmb.param @h.q.lora_a : tensor<1x2x8xf32> {{.*}} stacked 1 {bmb.delta}
// CHECK-NEXT: bmb.param @h.q.lora_b : tensor<1x8x2xf32> init zeros stacked 1 {bmb.delta}
// CHECK-NEXT: bmb.param @h.q.adapter.down.w : tensor<1x2x8xf32>
// CHECK:      bmb.repeat 2 "h"
// CHECK:      ^bb0(%[[X:.*]]: tensor<2x4x8xf32>, %[[J:.*]]: index):
// CHECK:        %[[R:.*]] = bmb.linear %[[X]], %{{.*}}, %{{.*}} :
// CHECK-NEXT:   %[[S:.*]] = bmb.iteration_slot %[[J]] [-1, 0]
// CHECK-NEXT:   %[[A:.*]] = bmb.param_get @h.q.lora_a[%[[S]]] : tensor<2x8xf32>
// CHECK-NEXT:   %[[B:.*]] = bmb.param_get @h.q.lora_b[%[[S]]] : tensor<8x2xf32>
// CHECK-NEXT:   %[[H:.*]] = bmb.linear %[[X]], %[[A]]
// CHECK-NEXT:   %[[D:.*]] = bmb.linear %[[H]], %[[B]]
// CHECK-NEXT:   %[[SC:.*]] = bmb.scale %[[D]] {factor = 2.000000e+00 : f64}
// CHECK-NEXT:   %[[G:.*]] = bmb.iteration_gate %[[J]] [-1, 0] : tensor<1xf32>
// CHECK-NEXT:   %[[DG:.*]] = bmb.mul %[[SC]], %[[G]] : (tensor<2x4x8xf32>, tensor<1xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:   %[[Y:.*]] = bmb.add %[[R]], %[[DG]]
// The adapter after the layer: slot and gate [0, -1].
// CHECK:        bmb.iteration_slot %[[J]] [0, -1]
// CHECK:        bmb.iteration_gate %[[J]] [0, -1] : tensor<1xf32>
// CHECK:      return
bmb.model @PerIteration layer "M" {
  bmb.param @h.q.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
  bmb.param @h.q.b : tensor<2x8xf32> init zeros stacked 1
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %y = bmb.repeat 2 "h" layer "Blk" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>):
      %q = bmb.layer "q" layer "Linear" (%a, %i) : (tensor<2x4x8xf32>, index) -> tensor<2x4x8xf32> {
      ^bb0(%v: tensor<2x4x8xf32>, %j: index):
        %w = bmb.param_get @h.q.w[%j] : tensor<8x8xf32>
        %b = bmb.param_get @h.q.b[%j] : tensor<8xf32>
        %r = bmb.linear %v, %w, %b : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
        bmb.yield %r : tensor<2x4x8xf32>
      }
      bmb.yield %q : tensor<2x4x8xf32>
    }
    return %y : tensor<2x4x8xf32>
  }
}
bmb.job @t train for @PerIteration {batch = 2 : i64, seq = 4 : i64, delta = [{kind = "lora", rank = 2 : i64, alpha = 4.0 : f64, on = ["h.1.q"]}, {kind = "adapter", dim = 2 : i64, on = ["h.q"], exclude = ["h.1.q"]}]}

// -----

// A prefix on iteration 0 of 2: stacked over that iteration only, read at its
// slot, and gated (masked out on iteration 1).
// CHECK-LABEL: bmb.model @PrefixSome
// CHECK:      bmb.param @h.attn.prefix_key : tensor<1x3x8xf32> init normal(0.02) stacked 1 {bmb.delta}
// CHECK:      ^bb0(%[[V:.*]]: tensor<2x4x8xf32>, %[[J:.*]]: index):
// CHECK-NEXT:   %[[S:.*]] = bmb.iteration_slot %[[J]] [0, -1]
// CHECK-NEXT:   %[[G:.*]] = bmb.iteration_gate %[[J]] [0, -1] : tensor<1xf32>
// CHECK-NEXT:   %[[PK:.*]] = bmb.param_get @h.attn.prefix_key[%[[S]]] : tensor<3x8xf32>
// CHECK-NEXT:   %[[PV:.*]] = bmb.param_get @h.attn.prefix_value[%[[S]]] : tensor<3x8xf32>
// CHECK-NEXT:   bmb.attention %[[V]], %[[V]], %[[V]] prefix(%[[PK]], %[[PV]]) gate %[[G]] {causal
bmb.model @PrefixSome layer "M" {
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %y = bmb.repeat 2 "h" layer "Blk" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>):
      %t = bmb.layer "attn" layer "Attention" (%a) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
      ^bb0(%v: tensor<2x4x8xf32>):
        %r = bmb.attention %v, %v, %v {causal, heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
        bmb.yield %r : tensor<2x4x8xf32>
      }
      bmb.yield %t : tensor<2x4x8xf32>
    }
    return %y : tensor<2x4x8xf32>
  }
}
bmb.job @t train for @PrefixSome {batch = 2 : i64, seq = 4 : i64, delta = {kind = "prefix", length = 3 : i64, on = ["h.0.attn"]}}
