// bmb-insert-optimizer: @optimizer_step from the train job's settings.
// RUN: bmb-opt %s -split-input-file --bmb-insert-optimizer | FileCheck %s

// AdamW with the job's betas and weight decay; the default no-decay group
// (rank-1 params, per iteration for stacked ones, and embedding tables);
// frozen params get no update; clip comes first.
// CHECK-LABEL: bmb.model @M
// CHECK:       func.func @optimizer_step() {
// CHECK-NEXT:    bmb.clip_grad_norm {max_norm = 1.000000e+00 : f64}
// CHECK-NEXT:    bmb.adamw_update @wte.w {beta1 = 9.000000e-01 : f64, beta2 = 0.94999999999999996 : f64, eps = 1.000000e-08 : f64, weight_decay = 0.000000e+00 : f64}
// CHECK-NEXT:    bmb.adamw_update @h.ln.w {{{.*}}weight_decay = 0.000000e+00 : f64}
// CHECK-NEXT:    bmb.adamw_update @h.fc.w {{{.*}}weight_decay = 1.000000e-01 : f64}
// CHECK-NEXT:    bmb.adamw_update @h.fc.b {{{.*}}weight_decay = 0.000000e+00 : f64}
// CHECK-NEXT:    return
bmb.model @M layer "M" {
  bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @h.ln.w : tensor<2x8xf32> init ones stacked 1
  bmb.param @h.fc.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
  bmb.param @h.fc.b : tensor<2x8xf32> init zeros stacked 1
  bmb.param @frozen.w : tensor<8x8xf32> init zeros frozen
  func.func @forward(%t: tensor<2x4xi32>) -> tensor<2x4x8xf32> {
    %w = bmb.param_get @wte.w : tensor<16x8xf32>
    %e = bmb.embedding %t, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    return %e : tensor<2x4x8xf32>
  }
}
bmb.job @train train for @M {clip = 1.0 : f64, optimizer = {kind = "adamw", lr = 6.0e-4 : f64, betas = [0.9, 0.95], weight_decay = 0.1 : f64}}

// -----

// `no_decay` globs replace the default group: `*` stays in one segment,
// `**` crosses segments. torch's defaults (betas, eps, weight_decay 0.01).
// CHECK-LABEL: bmb.model @Globs
// CHECK:       func.func @optimizer_step() {
// CHECK-NEXT:    bmb.adamw_update @wte.w {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, weight_decay = 0.000000e+00 : f64}
// CHECK-NEXT:    bmb.adamw_update @h.ln.w {{{.*}}weight_decay = 1.000000e-02 : f64}
// CHECK-NEXT:    bmb.adamw_update @h.fc.w {{{.*}}weight_decay = 0.000000e+00 : f64}
// CHECK-NEXT:    bmb.adamw_update @h.fc.b {{{.*}}weight_decay = 1.000000e-02 : f64}
// CHECK-NEXT:    return
bmb.model @Globs layer "M" {
  bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @h.ln.w : tensor<2x8xf32> init ones stacked 1
  bmb.param @h.fc.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
  bmb.param @h.fc.b : tensor<2x8xf32> init zeros stacked 1
}
bmb.job @train train for @Globs {optimizer = {kind = "adamw", no_decay = ["wte.*", "**.fc.w", "*.b"]}}

// -----

// SGD; adam is AdamW without weight decay.
// CHECK-LABEL: bmb.model @S
// CHECK:       func.func @optimizer_step() {
// CHECK-NEXT:    bmb.sgd_update @w {momentum = 9.000000e-01 : f64, weight_decay = 5.000000e-04 : f64}
// CHECK-NEXT:    bmb.sgd_update @b {momentum = 9.000000e-01 : f64, weight_decay = 0.000000e+00 : f64}
// CHECK-NOT:     clip_grad_norm
bmb.model @S layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
  bmb.param @b : tensor<4xf32> init zeros
}
bmb.job @train train for @S {optimizer = {kind = "sgd", lr = 0.1 : f64, momentum = 0.9 : f64, weight_decay = 5.0e-4 : f64}}

// -----

// CHECK-LABEL: bmb.model @A
// CHECK:         bmb.adamw_update @w {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 9.9999999999999995E-7 : f64, weight_decay = 0.000000e+00 : f64}
bmb.model @A layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
}
bmb.job @train train for @A {optimizer = {kind = "adam", eps = 1.0e-6 : f64}}
