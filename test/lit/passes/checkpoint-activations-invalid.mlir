// What bmb-checkpoint-activations refuses, at the job's `checkpoint` setting
// (here the job: these jobs have no source locations;
// checkpoint-activations-bmb.test shows the user's line).
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-autodiff --bmb-checkpoint-activations

// A path that names no layer instance of @train_step (Sema catches this in
// a .bmb file; the IR may still say it).
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
// expected-error @+1 {{checkpoint: 'nope' is not a layer instance that the loss is computed through (bmb-checkpoint-activations found no 'nope' in @train_step)}}
bmb.job @train train for @Plain {batch = 2 : i64, checkpoint = "nope", seq = 4 : i64}

// -----

// A frozen layer that no gradient flows through has no backward: nothing
// to recompute.
bmb.model @Plain layer "Plain" {
  bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @emb.w : tensor<16x8xf32> init normal(0.02) frozen
  bmb.param @mlp.fc.w : tensor<8x8xf32> init normal(0.02)

  func.func @loss(%tokens: tensor<2x4xi32> {bmb.name = "tokens"}, %targets: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
    %x = bmb.layer "emb" layer "Embedding" (%tokens) : (tensor<2x4xi32>) -> tensor<2x4x8xf32> {
    ^bb0(%ids: tensor<2x4xi32>):
      %w = bmb.param_get @emb.w : tensor<16x8xf32>
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
// expected-error @+1 {{checkpoint: 'emb' has no backward: no gradient flows through it (its parameters are frozen or do not reach the loss), so it saves nothing to recompute}}
bmb.job @train train for @Plain {batch = 2 : i64, checkpoint = ["mlp", "emb"], seq = 4 : i64}

// -----

// A repeat inside a repeat (training refuses nested repeats anyway).
bmb.model @Stack layer "Stack" {
  bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @h.fc.w : tensor<2x8x8xf32> init normal(0.02) stacked 1

  func.func @loss(%tokens: tensor<2x4xi32> {bmb.name = "tokens"}, %targets: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
    %wte = bmb.param_get @wte.w : tensor<16x8xf32>
    %x = bmb.embedding %tokens, %wte : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    %y = bmb.repeat 2 "h" layer "Block" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>):
      %f = bmb.repeat 2 "r" layer "Inner" iter(%a) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
      ^bb0(%j: index, %v: tensor<2x4x8xf32>):
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
// expected-error @+1 {{checkpoint: 'h.r' is a repeat inside a repeat; nested repeats are not supported by training yet}}
bmb.job @train train for @Stack {batch = 2 : i64, checkpoint = "h.r", seq = 4 : i64}


// -----

// The setting holds layer paths.
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
// expected-error @+1 {{checkpoint must name layer instances: `checkpoint = h` or `checkpoint = ["h", "enc.layers"]`}}
bmb.job @train train for @Plain {batch = 2 : i64, checkpoint = 3 : i64, seq = 4 : i64}

// -----

// Checkpointing runs after bmb-autodiff.
bmb.model @Plain layer "Plain" {
}
// expected-error @+1 {{bmb-checkpoint-activations rewrites @train_step: run bmb-autodiff first}}
bmb.job @train train for @Plain {batch = 2 : i64, checkpoint = "mlp", seq = 4 : i64}
