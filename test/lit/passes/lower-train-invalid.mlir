// What the train lowering refuses, each at the op's location.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-lower-to-exec

module {
  bmb.model @M layer "M" {
    bmb.param @w : tensor<16x8xf32> init normal(0.02)
    func.func @loss(%tok: tensor<2x4xi32> {bmb.name = "tokens"}, %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
      %w = bmb.param_get @w : tensor<16x8xf32>
      %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      %loss, %dl = bmb.fused_classifier %e, %w, %tgt {ignore_index = -100 : i64}
          : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
      return %loss : tensor<f32>
    }
    func.func @train_step(%tok: tensor<2x4xi32> {bmb.name = "tokens"}, %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
      %w = bmb.param_get @w : tensor<16x8xf32>
      %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      // The mask's key holds 15 bits of rng_id (runtime/include/bmrt/dropout.h).
      // expected-error @+1 {{dropout rng_id 32768 is outside [0, 2^15) (the mask's key)}}
      %d = bmb.dropout %e {p = 1.000000e-01 : f64, rng_id = 32768 : i64} : tensor<2x4x8xf32>
      %loss, %dl = bmb.fused_classifier %d, %w, %tgt {ignore_index = -100 : i64}
          : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
      return %loss : tensor<f32>
    }
    func.func @optimizer_step() {
      return
    }
  }
  bmb.job @pretrain train for @M {batch = 2 : i64, seq = 4 : i64}
}

// -----

module {
  bmb.model @M layer "M" {
    bmb.param @w : tensor<16x8xf32> init normal(0.02)
    func.func @loss(%tok: tensor<2x4xi32> {bmb.name = "tokens"}) -> tensor<f32> {
      %c = arith.constant dense<0.0> : tensor<f32>
      return %c : tensor<f32>
    }
    func.func @train_step(%tok: tensor<2x4xi32> {bmb.name = "tokens"}) -> tensor<f32> {
      %c = arith.constant dense<0.0> : tensor<f32>
      return %c : tensor<f32>
    }
    func.func @optimizer_step() {
      return
    }
  }
  // expected-error @+1 {{offload = params is not implemented yet (offload = optimizer is: AdamW's state and update in host memory; docs/distributed.md)}}
  bmb.job @pretrain train for @M {batch = 2 : i64, seq = 4 : i64, offload = "params"}
}

// -----

// offload = optimizer with SGD.
module {
  bmb.model @M layer "M" {
    bmb.param @w : tensor<16x8xf32> init normal(0.02)
    func.func @loss(%tok: tensor<2x4xi32> {bmb.name = "tokens"}) -> tensor<f32> {
      %c = arith.constant dense<0.0> : tensor<f32>
      return %c : tensor<f32>
    }
    func.func @train_step(%tok: tensor<2x4xi32> {bmb.name = "tokens"}) -> tensor<f32> {
      %c = arith.constant dense<0.0> : tensor<f32>
      return %c : tensor<f32>
    }
    func.func @optimizer_step() {
      return
    }
  }
  // expected-error @+1 {{offload = optimizer updates AdamW (adamw, adam) on the host; SGD is not implemented there yet}}
  bmb.job @pretrain train for @M {batch = 2 : i64, seq = 4 : i64, offload = "optimizer", optimizer = {kind = "sgd"}}
}

// -----

// Inputs other than tokens and targets.
module {
  bmb.model @M layer "M" {
    bmb.param @w : tensor<16x8xf32> init normal(0.02)
    // expected-error @+1 {{input 'pixels': a train program is fed `tokens`, `targets`, `token_types` and `mask` only}}
    func.func @train_step(%x: tensor<2x4xi32> {bmb.name = "pixels"}) -> tensor<f32> {
      %c = arith.constant dense<0.0> : tensor<f32>
      return %c : tensor<f32>
    }
    func.func @loss(%x: tensor<2x4xi32> {bmb.name = "pixels"}) -> tensor<f32> {
      %c = arith.constant dense<0.0> : tensor<f32>
      return %c : tensor<f32>
    }
    func.func @optimizer_step() {
      return
    }
  }
  bmb.job @pretrain train for @M {batch = 2 : i64, seq = 4 : i64}
}

// -----

// A floor (min_lr) above the optimizer's lr (here the default 1e-3).
module {
  bmb.model @M layer "M" {
    bmb.param @w : tensor<16x8xf32> init normal(0.02)
    func.func @loss(%tok: tensor<2x4xi32> {bmb.name = "tokens"}, %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
      %w = bmb.param_get @w : tensor<16x8xf32>
      %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      %loss, %dl = bmb.fused_classifier %e, %w, %tgt {ignore_index = -100 : i64}
          : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
      return %loss : tensor<f32>
    }
    func.func @train_step(%tok: tensor<2x4xi32> {bmb.name = "tokens"}, %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
      %w = bmb.param_get @w : tensor<16x8xf32>
      %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      %loss, %dl = bmb.fused_classifier %e, %w, %tgt {ignore_index = -100 : i64}
          : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
      return %loss : tensor<f32>
    }
    func.func @optimizer_step() {
      return
    }
  }
  // expected-error @+1 {{schedule min_lr = 0.01 must be between 0 and the optimizer's lr (0.001): the schedule decays from lr to min_lr}}
  bmb.job @pretrain train for @M {batch = 2 : i64, seq = 4 : i64, schedule = {kind = "cosine", warmup = 1 : i64, min_lr = 1.0e-2 : f64}}
}

// -----

// The gradients' collectives come before anything reads the gradients.
module {
  bmb.model @M layer "M" {
    bmb.param @w : tensor<16x8xf32> init normal(0.02)
    func.func @loss(%tok: tensor<2x4xi32> {bmb.name = "tokens"}, %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
      %w = bmb.param_get @w : tensor<16x8xf32>
      %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      %loss, %dl = bmb.fused_classifier %e, %w, %tgt {ignore_index = -100 : i64}
          : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
      return %loss : tensor<f32>
    }
    func.func @train_step(%tok: tensor<2x4xi32> {bmb.name = "tokens"}, %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
      %w = bmb.param_get @w : tensor<16x8xf32>
      %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      %loss, %dl = bmb.fused_classifier %e, %w, %tgt {ignore_index = -100 : i64}
          : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
      return %loss : tensor<f32>
    }
    func.func @optimizer_step() {
      bmb.clip_grad_norm {max_norm = 1.0 : f64}
      // expected-error @+1 {{gradient all-reduce after the gradients were read}}
      bmb.grad_all_reduce [@w]
      return
    }
  }
  bmb.job @pretrain train for @M {batch = 2 : i64, seq = 4 : i64}
}

// -----

module {
  bmb.model @M layer "M" {
    bmb.param @w : tensor<16x8xf32> init normal(0.02)
    func.func @loss(%tok: tensor<2x4xi32> {bmb.name = "tokens"}, %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
      %w = bmb.param_get @w : tensor<16x8xf32>
      %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      %loss, %dl = bmb.fused_classifier %e, %w, %tgt {ignore_index = -100 : i64}
          : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
      return %loss : tensor<f32>
    }
    func.func @train_step(%tok: tensor<2x4xi32> {bmb.name = "tokens"}, %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
      %w = bmb.param_get @w : tensor<16x8xf32>
      %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      %loss, %dl = bmb.fused_classifier %e, %w, %tgt {ignore_index = -100 : i64}
          : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
      return %loss : tensor<f32>
    }
    func.func @optimizer_step() {
      bmb.adamw_update @w {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-8 : f64, weight_decay = 0.0 : f64}
      // expected-error @+1 {{gradient reduce-scatter after the gradients were read}}
      bmb.grad_reduce_scatter
      return
    }
  }
  bmb.job @pretrain train for @M {batch = 2 : i64, seq = 4 : i64}
}

// -----

// A precision the lowering does not know (only IR can say it; Sema checks .bmb).
module {
  bmb.model @M layer "M" {
    bmb.param @w : tensor<16x8xf32> init normal(0.02)
    func.func @loss(%tok: tensor<2x4xi32> {bmb.name = "tokens"}, %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
      %w = bmb.param_get @w : tensor<16x8xf32>
      %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      %loss, %dl = bmb.fused_classifier %e, %w, %tgt {ignore_index = -100 : i64}
          : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
      return %loss : tensor<f32>
    }
    func.func @train_step(%tok: tensor<2x4xi32> {bmb.name = "tokens"}, %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
      %w = bmb.param_get @w : tensor<16x8xf32>
      %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      %loss, %dl = bmb.fused_classifier %e, %w, %tgt {ignore_index = -100 : i64}
          : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
      return %loss : tensor<f32>
    }
    func.func @optimizer_step() {
      return
    }
  }
  // expected-error @+1 {{precision = fp8 is not implemented (fp32, fp64, bf16 and fp16 are)}}
  bmb.job @pretrain train for @M {batch = 2 : i64, seq = 4 : i64, precision = "fp8"}
}
