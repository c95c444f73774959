// bmb-insert-deltas: each error, at the job (the setting's line in a .bmb
// file: test/lit/lang/delta-errors.bmb).
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-insert-deltas

bmb.model @M layer "M" {
  bmb.param @h.attn.q.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %y = bmb.repeat 2 "h" layer "Blk" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>):
      %t = bmb.layer "attn" layer "Attention" (%a, %i) : (tensor<2x4x8xf32>, index) -> tensor<2x4x8xf32> {
      ^bb0(%u: tensor<2x4x8xf32>, %k: index):
        %q = bmb.layer "q" layer "Linear" (%u, %k) : (tensor<2x4x8xf32>, index) -> tensor<2x4x8xf32> {
        ^bb0(%v: tensor<2x4x8xf32>, %j: index):
          %w = bmb.param_get @h.attn.q.w[%j] : tensor<8x8xf32>
          %r = bmb.linear %v, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
          bmb.yield %r : tensor<2x4x8xf32>
        }
        bmb.yield %q : tensor<2x4x8xf32>
      }
      bmb.yield %t : tensor<2x4x8xf32>
    }
    return %y : tensor<2x4x8xf32>
  }
}
// expected-error @+1 {{lora: 'attn.qq' matches no layer of model 'M' (near misses: 'h.attn.q')}}
bmb.job @t train for @M {batch = 2 : i64, seq = 4 : i64, delta = {kind = "lora", rank = 2 : i64, on = ["attn.qq"]}}

// -----

bmb.model @M layer "M" {
  bmb.param @h.q.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %y = bmb.repeat 2 "h" layer "Blk" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>):
      %q = bmb.layer "q" layer "Linear" (%a, %i) : (tensor<2x4x8xf32>, index) -> tensor<2x4x8xf32> {
      ^bb0(%v: tensor<2x4x8xf32>, %j: index):
        %w = bmb.param_get @h.q.w[%j] : tensor<8x8xf32>
        %r = bmb.linear %v, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
        bmb.yield %r : tensor<2x4x8xf32>
      }
      bmb.yield %q : tensor<2x4x8xf32>
    }
    return %y : tensor<2x4x8xf32>
  }
}
// expected-error @+1 {{lora: 'h.0.q' selects some iterations of a rolled repeat; a delta on some iterations only is not implemented yet (DESIGN decision 2): select every iteration (without the index)}}
bmb.job @t train for @M {batch = 2 : i64, seq = 4 : i64, delta = {kind = "lora", rank = 2 : i64, on = ["h.0.q"]}}

// -----

bmb.model @M layer "M" {
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %m = bmb.layer "act" layer "Act" (%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%v: tensor<2x4x8xf32>):
      %r = bmb.tanh %v : tensor<2x4x8xf32>
      bmb.yield %r : tensor<2x4x8xf32>
    }
    return %m : tensor<2x4x8xf32>
  }
}
// expected-error @+1 {{lora: the selected layers have no linear layer to adapt: act (Act); lora applies to layers whose body is one linear}}
bmb.job @t train for @M {batch = 2 : i64, seq = 4 : i64, delta = {kind = "lora", rank = 2 : i64, on = "act"}}

// -----

bmb.model @M layer "M" {
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    return %x : tensor<2x4x8xf32>
  }
}
// expected-error @+1 {{prefix tuning is not implemented yet: it needs attention over per-layer key/value prefixes (lora, adapter and bitfit are)}}
bmb.job @t train for @M {batch = 2 : i64, seq = 4 : i64, delta = {kind = "prefix", length = 4 : i64}}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<8xf32> init ones
  func.func @forward(%x: tensor<8xf32>) -> tensor<8xf32> {
    %w = bmb.param_get @w : tensor<8xf32>
    %y = bmb.mul %x, %w : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    return %y : tensor<8xf32>
  }
}
// expected-error @+1 {{every param of model 'M' is frozen: nothing to train}}
bmb.job @t train for @M {batch = 2 : i64, seq = 4 : i64, freeze = "w"}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<8xf32> init ones
  func.func @forward(%x: tensor<8xf32>) -> tensor<8xf32> {
    %w = bmb.param_get @w : tensor<8xf32>
    %y = bmb.mul %x, %w : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    return %y : tensor<8xf32>
  }
}
// expected-error @+1 {{freeze: invalid regular expression '(w': parentheses not balanced}}
bmb.job @t train for @M {batch = 2 : i64, seq = 4 : i64, freeze = "re:(w"}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<8xf32> init ones
  func.func @forward(%x: tensor<8xf32>) -> tensor<8xf32> {
    %w = bmb.param_get @w : tensor<8xf32>
    %y = bmb.mul %x, %w : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    return %y : tensor<8xf32>
  }
}
// expected-error @+1 {{bitfit: the selected layers of model 'M' have no biases}}
bmb.job @t train for @M {batch = 2 : i64, seq = 4 : i64, delta = {kind = "bitfit"}}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<8xf32> init ones
  func.func @forward(%x: tensor<8xf32>) -> tensor<8xf32> {
    %w = bmb.param_get @w : tensor<8xf32>
    %y = bmb.mul %x, %w : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    return %y : tensor<8xf32>
  }
  func.func @loss(%x: tensor<8xf32>) -> tensor<8xf32> {
    return %x : tensor<8xf32>
  }
}
// expected-error @+1 {{bmb-insert-deltas: model @M already has @loss; deltas are inserted before bmb-attach-loss}}
bmb.job @t train for @M {batch = 2 : i64, seq = 4 : i64, freeze = "w"}
