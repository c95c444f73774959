// bmb-plan-memory with an offloaded optimizer (bmb-offload-optimizer): the
// optimizer state becomes a host role of four slots over the group (m, v,
// the fp32 master, the gradient staging; bmrt/offload.h), recorded as
// offload_state_bytes beside AdamW's own opt_state_bytes. A program
// without the offloaded step has no such attribute.
// RUN: bmb-opt %s -split-input-file --bmb-plan-memory | FileCheck %s

// 16 + 16 floats (each 64-byte aligned): 128 bytes of grads.
// CHECK-LABEL: bmb_exec.program @off
// CHECK-SAME: grad_bytes = 128 : i64
// CHECK-SAME: offload_state_bytes = 512 : i64
// CHECK-SAME: opt_state_bytes = 256 : i64
bmb_exec.program @off attributes {train = {opt_slots = 2 : i64}} {
  bmb_exec.param @a : memref<16xf32>
  bmb_exec.param @b : memref<16xf32>
  func.func @optimizer_step() {
    %s = bmb_exec.step_arg "step" : i64
    %lr = bmb_exec.step_arg "lr" : f64
    %out = bmb_exec.offload_grads_out {chunk = 8 : i64}
    %in = bmb_exec.offload_adamw_update %out [@a, @b] lr %lr step %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decays = array<f64: 0.0, 0.1>}
    bmb_exec.wait %in
    bmb_exec.zero_grads
    return
  }
}

// -----

// CHECK-LABEL: bmb_exec.program @plain
// CHECK-NOT: offload_state_bytes
// CHECK-SAME: opt_state_bytes = 256 : i64
bmb_exec.program @plain attributes {train = {opt_slots = 2 : i64}} {
  bmb_exec.param @a : memref<16xf32>
  bmb_exec.param @b : memref<16xf32>
  func.func @optimizer_step() {
    %s = bmb_exec.step_arg "step" : i64
    %lr = bmb_exec.step_arg "lr" : f64
    bmb_exec.adamw_update @a lr %lr step %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
    bmb_exec.adamw_update @b lr %lr step %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
    bmb_exec.zero_grads
    return
  }
}
