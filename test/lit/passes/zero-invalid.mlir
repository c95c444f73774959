// bmb-zero and bmb-data-parallel refusals.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-data-parallel --bmb-zero
// RUN: not bmb-opt %s -split-input-file --bmb-data-parallel=bucket-bytes=0 2>&1 | FileCheck %s --check-prefix=BUCKET
// BUCKET: error: bmb-data-parallel: bucket-bytes must be positive, got 0

// There is no ZeRO stage 4: an error, not a silent stage 3.
bmb.model @M layer "M" {
  bmb.param @w : tensor<8x8xf32> init zeros
  func.func @optimizer_step() {
    bmb.adamw_update @w {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-8 : f64, weight_decay = 0.0 : f64}
    return
  }
}
// expected-error @below {{zero = 4 is not implemented yet (zero = 0, 1, 2 and 3 are)}}
bmb.job @train train for @M {zero = 4 : i64}

// -----

// zero = 3 needs the same per-unit backward as zero = 2.
bmb.model @M layer "M" {
  bmb.param @w : tensor<8x8xf32> init zeros
  func.func @optimizer_step() {
    bmb.adamw_update @w {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-8 : f64, weight_decay = 0.0 : f64}
    return
  }
}
// expected-error @below {{zero = 3 needs a backward that finishes the gradients one unit at a time (each repeat's params all stacked alike, no repeat run twice); bmb-data-parallel found none here, so use zero = 1}}
bmb.job @train train for @M {zero = 3 : i64}

// -----

// Tune jobs do not partition their params yet.
bmb.model @M layer "M" {
  bmb.param @w : tensor<8x8xf32> init zeros
  func.func @optimizer_step() {
    bmb.adamw_update @w {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-8 : f64, weight_decay = 0.0 : f64}
    return
  }
}
// expected-error @below {{zero = 3 is not implemented for tune jobs yet (use zero = 0, 1 or 2)}}
bmb.job @j tune for @M from "m.safetensors" {batch = 2 : i64, prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 16 : i64, zero = 3 : i64}

// -----

// zero = 2 needs the backward's per-unit collectives (bmb-data-parallel
// puts them into @train_step); without a backward there are none.
bmb.model @M layer "M" {
  bmb.param @w : tensor<8x8xf32> init zeros
  func.func @optimizer_step() {
    bmb.adamw_update @w {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-8 : f64, weight_decay = 0.0 : f64}
    return
  }
}
// expected-error @below {{zero = 2 needs a backward that finishes the gradients one unit at a time (each repeat's params all stacked alike, no repeat run twice); bmb-data-parallel found none here, so use zero = 1}}
bmb.job @train train for @M {zero = 2 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<8x8xf32> init zeros
  func.func @optimizer_step() {
    bmb.adamw_update @w {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-8 : f64, weight_decay = 0.0 : f64}
    return
  }
}
// expected-error @below {{zero = auto is chosen by bmbc, which compiles each candidate plan (compiler/ZeroAuto.cpp); without bmbc set zero = 0, 1, 2 or 3}}
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
// expected-error @below {{zero = "two" is not implemented yet (zero = 0, 1, 2 and 3 are)}}
bmb.job @train train for @M {zero = "two"}
