// bmb-data-parallel: the gradient all-reduce at the start of @optimizer_step,
// in buckets of at most bucket-bytes that follow the units of the layer-major
// trainable group: the params outside repeats, then whole layers of a repeat.
// RUN: bmb-opt %s -split-input-file --bmb-data-parallel | FileCheck %s
// RUN: bmb-opt %s -split-input-file --bmb-data-parallel=bucket-bytes=256 | FileCheck %s --check-prefix=SMALL
// RUN: bmb-opt %s -split-input-file --bmb-data-parallel --bmb-zero | FileCheck %s --check-prefix=ZERO1

// One bucket holds everything by default; the frozen param has no gradient.
// CHECK-LABEL: bmb.model @M
// CHECK:       func.func @optimizer_step() {
// CHECK-NEXT:    bmb.grad_all_reduce [@wte.w]
// CHECK-NEXT:    bmb.grad_all_reduce [@h.fc.w, @h.fc.b] layers [0, 2]
// CHECK-NEXT:    bmb.clip_grad_norm
// 256-byte buckets: a param larger than a bucket is a bucket of its own
// (wte.w, 512 B), and so is a layer (h.fc.w + h.fc.b: 288 B per layer).
// SMALL-LABEL: bmb.model @M
// SMALL:       func.func @optimizer_step() {
// SMALL-NEXT:    bmb.grad_all_reduce [@wte.w]
// SMALL-NEXT:    bmb.grad_all_reduce [@h.fc.w, @h.fc.b] layers [0, 1]
// SMALL-NEXT:    bmb.grad_all_reduce [@h.fc.w, @h.fc.b] layers [1, 2]
// SMALL-NEXT:    bmb.clip_grad_norm
// zero = 1: one reduce-scatter of the group replaces the buckets, and the
// updated partitions are gathered at the end.
// ZERO1-LABEL: bmb.model @M
// ZERO1:       func.func @optimizer_step() {
// ZERO1-NEXT:    bmb.grad_reduce_scatter
// ZERO1-NEXT:    bmb.clip_grad_norm
// ZERO1-NEXT:    bmb.adamw_update @wte.w
// ZERO1-NEXT:    bmb.adamw_update @h.fc.w
// ZERO1-NEXT:    bmb.adamw_update @h.fc.b
// ZERO1-NEXT:    bmb.param_all_gather
// ZERO1-NEXT:    return
bmb.model @M layer "M" {
  bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @h.fc.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
  bmb.param @h.fc.b : tensor<2x8xf32> init zeros stacked 1
  bmb.param @frozen.w : tensor<8x8xf32> init zeros frozen
  func.func @optimizer_step() {
    bmb.clip_grad_norm {max_norm = 1.0 : f64}
    bmb.adamw_update @wte.w {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-8 : f64, weight_decay = 0.0 : f64}
    bmb.adamw_update @h.fc.w {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-8 : f64, weight_decay = 0.1 : f64}
    bmb.adamw_update @h.fc.b {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-8 : f64, weight_decay = 0.0 : f64}
    return
  }
}
bmb.job @train train for @M {zero = 1 : i64}
