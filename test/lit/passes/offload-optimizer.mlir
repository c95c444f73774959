// bmb-offload-optimizer: a job with offload = optimizer gets its AdamW
// updates replaced by the offloaded step (copies out, host update, copies
// back, wait); clipping becomes a coefficient. Programs without the setting
// are unchanged.
// RUN: bmb-opt %s -split-input-file --bmb-offload-optimizer | FileCheck %s
// RUN: bmb-opt %s -split-input-file --bmb-offload-optimizer="chunk-elems=4096" | FileCheck %s --check-prefix=CHUNK

// CHECK-LABEL: bmb_exec.program @zero1
// CHECK: func.func @optimizer_step
// CHECK: %[[RS:.*]] = bmb_exec.reduce_scatter_grads
// CHECK-NEXT: bmb_exec.wait %[[RS]]
// CHECK-NEXT: %[[N:.*]] = bmb_exec.grad_norm : f64
// CHECK-NEXT: bmb_exec.set_step_arg "grad_norm" %[[N]]
// CHECK-NEXT: %[[C:.*]] = bmb_exec.clip_coefficient %[[N]] {max_norm = 5.000000e-01 : f64} : f64
// CHECK-NEXT: %[[S:.*]] = bmb_exec.step_arg "step" : i64
// CHECK-NEXT: %[[LR:.*]] = bmb_exec.step_arg "lr" : f64
// CHECK-NEXT: %[[OUT:.*]] = bmb_exec.offload_grads_out {chunk = 65536 : i64}
// CHECK-NEXT: %[[IN:.*]] = bmb_exec.offload_adamw_update %[[OUT]] [@wte.w, @h.fc.w, @h.fc.b] lr %[[LR]] step %[[S]] scale %[[C]] {beta1 = 9.000000e-01 : f64, beta2 = 0.94999999999999996 : f64, eps = 1.000000e-08 : f64, weight_decays = array<f64: 0.000000e+00, 1.000000e-01, 0.000000e+00>}
// CHECK-NEXT: bmb_exec.wait %[[IN]]
// CHECK-NEXT: %[[AG:.*]] = bmb_exec.all_gather_params
// CHECK-NEXT: bmb_exec.wait %[[AG]]
// CHECK-NEXT: bmb_exec.zero_grads
// CHECK-NOT: bmb_exec.adamw_update
// CHECK-NOT: bmb_exec.clip_grads
// CHECK-NOT: bmb_exec.step_arg
// CHECK: return
// CHUNK: bmb_exec.offload_grads_out {chunk = 4096 : i64}
bmb_exec.program @zero1 attributes {settings = {offload = "optimizer", zero = 1 : i64}} {
  bmb_exec.param @wte.w : memref<64x8xf32>
  bmb_exec.param @h.fc.w stacked : memref<2x8x8xf32>
  bmb_exec.param @h.fc.b stacked : memref<2x8xf32>
  func.func @optimizer_step() {
    %0 = bmb_exec.reduce_scatter_grads
    bmb_exec.wait %0
    %1 = bmb_exec.grad_norm : f64
    bmb_exec.set_step_arg "grad_norm" %1 : f64
    bmb_exec.clip_grads %1 {max_norm = 5.000000e-01 : f64}
    %2 = bmb_exec.step_arg "step" : i64
    %3 = bmb_exec.step_arg "lr" : f64
    bmb_exec.adamw_update @wte.w lr %3 step %2 {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
    %4 = bmb_exec.step_arg "step" : i64
    %5 = bmb_exec.step_arg "lr" : f64
    bmb_exec.adamw_update @h.fc.w lr %5 step %4 {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.1 : f64}
    bmb_exec.adamw_update @h.fc.b lr %5 step %4 {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
    %6 = bmb_exec.all_gather_params
    bmb_exec.wait %6
    bmb_exec.zero_grads
    return
  }
}

// -----

// No clipping: no scale operand (the host scales by nothing).
// CHECK-LABEL: bmb_exec.program @noclip
// CHECK: %[[OUT:.*]] = bmb_exec.offload_grads_out
// CHECK-NEXT: %[[IN:.*]] = bmb_exec.offload_adamw_update %[[OUT]] [@w] lr %{{.*}} step %{{.*}} {beta1
// CHECK-NEXT: bmb_exec.wait %[[IN]]
// CHECK-NEXT: bmb_exec.zero_grads
bmb_exec.program @noclip attributes {settings = {offload = "optimizer"}} {
  bmb_exec.param @w : memref<8xf32>
  func.func @optimizer_step() {
    %1 = bmb_exec.grad_norm : f64
    %2 = bmb_exec.step_arg "step" : i64
    %3 = bmb_exec.step_arg "lr" : f64
    bmb_exec.adamw_update @w lr %3 step %2 {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
    bmb_exec.zero_grads
    return
  }
}

// -----

// Without the setting (or offload = none): unchanged.
// CHECK-LABEL: bmb_exec.program @plain
// CHECK: bmb_exec.clip_grads
// CHECK: bmb_exec.adamw_update @w
// CHECK-NOT: offload
// CHECK-LABEL: bmb_exec.program @none
// CHECK: bmb_exec.adamw_update @w
// CHECK-NOT: offload
bmb_exec.program @plain attributes {settings = {zero = 1 : i64}} {
  bmb_exec.param @w : memref<8xf32>
  func.func @optimizer_step() {
    %1 = bmb_exec.grad_norm : f64
    bmb_exec.clip_grads %1 {max_norm = 1.0 : f64}
    %2 = bmb_exec.step_arg "step" : i64
    %3 = bmb_exec.step_arg "lr" : f64
    bmb_exec.adamw_update @w lr %3 step %2 {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
    return
  }
}
bmb_exec.program @none attributes {settings = {offload = "none"}} {
  bmb_exec.param @w : memref<8xf32>
  func.func @optimizer_step() {
    %2 = bmb_exec.step_arg "step" : i64
    %3 = bmb_exec.step_arg "lr" : f64
    bmb_exec.adamw_update @w lr %3 step %2 {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
    return
  }
}
