// bmb-zero and bmb-data-parallel refusals.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-data-parallel --bmb-zero
// RUN: not bmb-opt %s -split-input-file --bmb-data-parallel=bucket-bytes=0 2>&1 | FileCheck %s --check-prefix=BUCKET
// BUCKET: error: bmb-data-parallel: bucket-bytes must be positive, got 0

// ZeRO stages 2 and 3 are not implemented yet: an error, not a silent stage 1.
bmb.model @M layer "M" {
  bmb.param @w : tensor<8x8xf32> init zeros
  func.func @optimizer_step() {
    bmb.adamw_update @w {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-8 : f64, weight_decay = 0.0 : f64}
    return
  }
}
// expected-error @below {{zero = 2 is not implemented yet (zero = 0 and 1 are)}}
bmb.job @train train for @M {zero = 2 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<8x8xf32> init zeros
  func.func @optimizer_step() {
    bmb.adamw_update @w {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-8 : f64, weight_decay = 0.0 : f64}
    return
  }
}
// expected-error @below {{zero = auto is chosen by bmbc, which compiles each candidate plan (compiler/ZeroAuto.cpp); without bmbc set zero = 0 or 1}}
bmb.job @train train for @M {zero = "auto"}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<8x8xf32> init zeros
}
// expected-error @below {{bmb-data-parallel: model @M has no @optimizer_step (run bmb-insert-optimizer first)}}
bmb.job @train train for @M {}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<8x8xf32> init zeros
  // expected-error @below {{bmb-data-parallel: @optimizer_step already reduces its gradients}}
  func.func @optimizer_step() {
    bmb.grad_all_reduce [@w]
    return
  }
}
bmb.job @train train for @M {}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<8x8xf32> init zeros frozen
  func.func @optimizer_step() {
    // expected-error @below {{'bmb.grad_all_reduce' op @w is frozen: it has no gradient and no optimizer state}}
    bmb.grad_all_reduce [@w]
    return
  }
}

// -----

// Nothing to partition: every param is frozen, so there is no bucket.
bmb.model @M layer "M" {
  bmb.param @w : tensor<8x8xf32> init zeros frozen
  func.func @optimizer_step() {
    return
  }
}
// expected-error @below {{bmb-zero: @optimizer_step has no gradient all-reduce to partition (run bmb-data-parallel first)}}
bmb.job @train train for @M {zero = 1 : i64}

// -----

// A stage that is neither a number nor auto (only IR can say it; Sema checks .bmb).
bmb.model @M layer "M" {
  bmb.param @w : tensor<8x8xf32> init zeros
  func.func @optimizer_step() {
    return
  }
}
// expected-error @below {{zero = "two" is not implemented yet (zero = 0 and 1 are)}}
bmb.job @train train for @M {zero = "two"}
