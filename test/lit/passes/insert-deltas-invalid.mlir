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
// An iteration index past the repeat's count.
// expected-error @+1 {{lora: 'h.{0,2}.q': iteration 2 is out of range for repeat 'h' of 2 iterations}}
bmb.job @t train for @M {batch = 2 : i64, seq = 4 : i64, delta = {kind = "lora", rank = 2 : i64, on = ["h.{0,2}.q"]}}

// -----

bmb.model @M layer "M" {
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
// expected-error @+1 {{lora: 'h.{1-x}.q': malformed iteration index '1-x' (a number or a range A-B)}}
bmb.job @t train for @M {batch = 2 : i64, seq = 4 : i64, delta = {kind = "lora", rank = 2 : i64, on = ["h.{1-x}.q"]}}

// -----

bmb.model @M layer "M" {
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
// expected-error @+1 {{bitfit: 'h.q' is selected on some iterations of repeat 'h' only; BitFit trains whole bias params (stacked over every iteration); select every iteration}}
bmb.job @t train for @M {batch = 2 : i64, seq = 4 : i64, delta = {kind = "bitfit", on = ["h.1.q"]}}

// -----

bmb.model @M layer "M" {
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
// expected-error @+1 {{lora: 'h.q' is selected on some iterations of repeat 'h' only; merging it into the weights at load is not implemented yet (use merge = false)}}
bmb.job @t infer for @M {delta = {kind = "lora", rank = 2 : i64, on = ["h.1.q"]}}

// -----

bmb.model @M layer "M" {
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
// expected-error @+1 {{freeze: 'h.0.q' selects some iterations of a rolled repeat; freeze selects whole params (every iteration): iteration indices are for a delta's `on` and `exclude`}}
bmb.job @t train for @M {batch = 2 : i64, seq = 4 : i64, freeze = ["h.0.q"]}

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
// expected-error @+1 {{prefix: model 'M' has no attention}}
bmb.job @t train for @M {batch = 2 : i64, seq = 4 : i64, delta = {kind = "prefix", length = 4 : i64}}

// -----

// A prefix on a layer without attention.
bmb.model @M layer "M" {
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %m = bmb.layer "act" layer "Act" (%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%v: tensor<2x4x8xf32>):
      %r = bmb.tanh %v : tensor<2x4x8xf32>
      bmb.yield %r : tensor<2x4x8xf32>
    }
    %a = bmb.layer "attn" layer "Attention" (%m) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%v: tensor<2x4x8xf32>):
      %r = bmb.attention %v, %v, %v {causal, heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %r : tensor<2x4x8xf32>
    }
    return %a : tensor<2x4x8xf32>
  }
}
// expected-error @+1 {{prefix: the selected layers have no attention: act (Act); prefix applies to layers with an attention}}
bmb.job @t train for @M {batch = 2 : i64, seq = 4 : i64, delta = {kind = "prefix", length = 4 : i64, on = ["act"]}}

// -----

// OpenDelta's reparameterisation is refused, not ignored.
bmb.model @M layer "M" {
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %a = bmb.layer "attn" layer "Attention" (%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%v: tensor<2x4x8xf32>):
      %r = bmb.attention %v, %v, %v {causal, heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %r : tensor<2x4x8xf32>
    }
    return %a : tensor<2x4x8xf32>
  }
}
// expected-error @+1 {{prefix: reparameterize = true (OpenDelta's Embedding -> Linear -> tanh -> Linear) is not implemented yet; the prefixes are trained directly}}
bmb.job @t train for @M {batch = 2 : i64, seq = 4 : i64, delta = {kind = "prefix", length = 4 : i64, reparameterize = true}}

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
