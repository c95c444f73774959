// bmb-verify-async: collectives own their buffers until their wait.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-verify-async | FileCheck %s

// Accepted and unchanged: every bucket issued before the first wait, the
// gradients read after the waits, the params gathered at the end.
// CHECK-LABEL: bmb_exec.program @ok
// CHECK: %[[A:.*]] = bmb_exec.all_reduce_grads [@a]
// CHECK: %[[B:.*]] = bmb_exec.all_reduce_grads [@b]
// CHECK: bmb_exec.wait %[[A]]
// CHECK: bmb_exec.wait %[[B]]
// CHECK: bmb_exec.grad_norm
bmb_exec.program @ok {
  bmb_exec.param @a : memref<4xf32>
  bmb_exec.param @b : memref<4xf32>
  func.func @optimizer_step() {
    %a = bmb_exec.all_reduce_grads [@a]
    %b = bmb_exec.all_reduce_grads [@b]
    bmb_exec.wait %a
    bmb_exec.wait %b
    %n = bmb_exec.grad_norm : f64
    %g = bmb_exec.all_gather_params
    bmb_exec.wait %g
    bmb_exec.zero_grads
    return
  }
}

// -----

// Reading the gradients while the reduce-scatter owns them.
bmb_exec.program @early {
  bmb_exec.param @a : memref<4xf32>
  func.func @optimizer_step() {
    // expected-note @below {{the collective, issued here}}
    %r = bmb_exec.reduce_scatter_grads
    // expected-error @below {{bmb-verify-async: touches the gradients while a collective owns them}}
    %n = bmb_exec.grad_norm : f64
    // expected-note @below {{its wait}}
    bmb_exec.wait %r
    return
  }
}

// -----

// A param read inside a loop while the all-gather owns the params.
bmb_exec.program @loop {
  bmb_exec.param @a : memref<4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    // expected-note @below {{the collective, issued here}}
    %r = bmb_exec.all_gather_params
    scf.for %i = %c0 to %c1 step %c1 {
      // expected-error @below {{bmb-verify-async: touches the trainable params while a collective owns them}}
      %p = bmb_exec.param_ref @a : memref<4xf32>
    }
    // expected-note @below {{its wait}}
    bmb_exec.wait %r
    return
  }
}

// -----

bmb_exec.program @never {
  bmb_exec.param @a : memref<4xf32>
  func.func @optimizer_step() {
    // expected-error @below {{bmb-verify-async: this collective is never waited on}}
    %r = bmb_exec.all_reduce_grads [@a]
    return
  }
}

// -----

bmb_exec.program @twice {
  bmb_exec.param @a : memref<4xf32>
  func.func @optimizer_step() {
    %r = bmb_exec.all_reduce_grads [@a]
    // expected-error @below {{'bmb_exec.wait' op a request is waited on exactly once, this one has 2 uses}}
    bmb_exec.wait %r
    bmb_exec.wait %r
    return
  }
}

// -----

bmb_exec.program @frozen {
  bmb_exec.param @a frozen : memref<4xf32>
  func.func @optimizer_step() {
    // expected-error @below {{'bmb_exec.all_reduce_grads' op refers to the frozen param @a, which has no gradient}}
    %r = bmb_exec.all_reduce_grads [@a]
    bmb_exec.wait %r
    return
  }
}

// -----

bmb_exec.program @elsewhere {
  bmb_exec.param @a : memref<4xf32>
  func.func @optimizer_step() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    // expected-error @below {{bmb-verify-async: the wait of this collective must follow it in the same block}}
    %r = bmb_exec.all_reduce_grads [@a]
    scf.for %i = %c0 to %c1 step %c1 {
      bmb_exec.wait %r
    }
    return
  }
}

// -----

bmb_exec.program @stray {
  func.func @optimizer_step(%r: !bmb_exec.request) {
    // expected-error @below {{'bmb_exec.wait' op waits on a value that no collective or offloaded update of this function issued}}
    bmb_exec.wait %r
    return
  }
}

// -----

bmb_exec.program @layers {
  bmb_exec.param @a : memref<4xf32>
  func.func @optimizer_step() {
    // expected-error @below {{'bmb_exec.all_reduce_grads' op layers [0, 2) of @a, which is not stacked over at least 2 layers}}
    %r = bmb_exec.all_reduce_grads [@a] layers [0, 2]
    bmb_exec.wait %r
    return
  }
}

// -----

// zero = 2: a staged unit's piece taken into the partition before the
// unit's reduce-scatter is done.
bmb_exec.program @unit {
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %i = %c0 to %c2 step %c1 {
      %g = bmb_exec.grad_ref @s[%i] : memref<4xf32>
      bmb_exec.zero %g : memref<4xf32>
      // expected-note @below {{the collective, issued here}}
      %r = bmb_exec.reduce_scatter_unit [@s] layer %i
      // expected-error @below {{bmb-verify-async: touches the gradients while a collective owns them}}
      bmb_exec.add_unit_grads [@s] layer %i
      // expected-note @below {{its wait}}
      bmb_exec.wait %r
    }
    return
  }
}

// -----

// The offloaded optimizer step (bmb-offload-optimizer): accepted as is.
// CHECK-LABEL: bmb_exec.program @offload_ok
// CHECK: %[[OUT:.*]] = bmb_exec.offload_grads_out
// CHECK: %[[IN:.*]] = bmb_exec.offload_adamw_update %[[OUT]]
// CHECK: bmb_exec.wait %[[IN]]
// CHECK: bmb_exec.all_gather_params
bmb_exec.program @offload_ok {
  bmb_exec.param @a : memref<4xf32>
  func.func @optimizer_step() {
    %n = bmb_exec.grad_norm : f64
    %c = bmb_exec.clip_coefficient %n {max_norm = 1.0 : f64} : f64
    %s = bmb_exec.step_arg "step" : i64
    %lr = bmb_exec.step_arg "lr" : f64
    %out = bmb_exec.offload_grads_out {chunk = 1024 : i64}
    %in = bmb_exec.offload_adamw_update %out [@a] lr %lr step %s scale %c {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decays = array<f64: 0.0>}
    bmb_exec.wait %in
    %g = bmb_exec.all_gather_params
    bmb_exec.wait %g
    bmb_exec.zero_grads
    return
  }
}

// -----

// The all-gather reads the params while the offloaded update's copies into
// them may still be in flight.
bmb_exec.program @offload_gather_early {
  bmb_exec.param @a : memref<4xf32>
  func.func @optimizer_step() {
    %s = bmb_exec.step_arg "step" : i64
    %lr = bmb_exec.step_arg "lr" : f64
    %out = bmb_exec.offload_grads_out {chunk = 1024 : i64}
    // expected-note @below {{the copies, issued here}}
    %in = bmb_exec.offload_adamw_update %out [@a] lr %lr step %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decays = array<f64: 0.0>}
    // expected-error @below {{bmb-verify-async: touches the trainable params before the offloaded update's copies into them are waited for}}
    %g = bmb_exec.all_gather_params
    bmb_exec.wait %g
    // expected-note @below {{its wait}}
    bmb_exec.wait %in
    return
  }
}

// -----

// A param read before the wait.
bmb_exec.program @offload_read_early {
  bmb_exec.param @a : memref<4xf32>
  func.func @optimizer_step() {
    %s = bmb_exec.step_arg "step" : i64
    %lr = bmb_exec.step_arg "lr" : f64
    %out = bmb_exec.offload_grads_out {chunk = 1024 : i64}
    // expected-note @below {{the copies, issued here}}
    %in = bmb_exec.offload_adamw_update %out [@a] lr %lr step %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decays = array<f64: 0.0>}
    // expected-error @below {{bmb-verify-async: touches the trainable params before the offloaded update's copies into them are waited for}}
    %p = bmb_exec.param_ref @a : memref<4xf32>
    // expected-note @below {{its wait}}
    bmb_exec.wait %in
    return
  }
}

// -----

// The gradients zeroed while they are being copied out.
bmb_exec.program @offload_zero_early {
  bmb_exec.param @a : memref<4xf32>
  func.func @optimizer_step() {
    %s = bmb_exec.step_arg "step" : i64
    %lr = bmb_exec.step_arg "lr" : f64
    // expected-note @below {{the copies, issued here}}
    %out = bmb_exec.offload_grads_out {chunk = 1024 : i64}
    // expected-error @below {{bmb-verify-async: touches the gradients while the offloaded step copies them out}}
    bmb_exec.zero_grads
    // expected-note @below {{the update that waits for them}}
    %in = bmb_exec.offload_adamw_update %out [@a] lr %lr step %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decays = array<f64: 0.0>}
    bmb_exec.wait %in
    return
  }
}

// -----

// A reduce-scatter of the gradients racing the copies out.
bmb_exec.program @offload_collective_race {
  bmb_exec.param @a : memref<4xf32>
  func.func @optimizer_step() {
    %s = bmb_exec.step_arg "step" : i64
    %lr = bmb_exec.step_arg "lr" : f64
    // expected-note @below {{the copies, issued here}}
    %out = bmb_exec.offload_grads_out {chunk = 1024 : i64}
    // expected-error @below {{bmb-verify-async: touches the gradients while the offloaded step copies them out}}
    %r = bmb_exec.reduce_scatter_grads
    bmb_exec.wait %r
    // expected-note @below {{the update that waits for them}}
    %in = bmb_exec.offload_adamw_update %out [@a] lr %lr step %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decays = array<f64: 0.0>}
    bmb_exec.wait %in
    return
  }
}

// -----

// The op verifiers: the update reads a copy of the gradients, once.
bmb_exec.program @offload_bad_operand {
  bmb_exec.param @a : memref<4xf32>
  func.func @optimizer_step() {
    %s = bmb_exec.step_arg "step" : i64
    %lr = bmb_exec.step_arg "lr" : f64
    %r = bmb_exec.reduce_scatter_grads
    // expected-error @below {{'bmb_exec.offload_adamw_update' op updates from the gradients a bmb_exec.offload_grads_out copied out; this operand is not one}}
    %in = bmb_exec.offload_adamw_update %r [@a] lr %lr step %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decays = array<f64: 0.0>}
    return
  }
}

// -----

bmb_exec.program @offload_decays {
  bmb_exec.param @a : memref<4xf32>
  func.func @optimizer_step() {
    %s = bmb_exec.step_arg "step" : i64
    %lr = bmb_exec.step_arg "lr" : f64
    %out = bmb_exec.offload_grads_out {chunk = 1024 : i64}
    // expected-error @below {{'bmb_exec.offload_adamw_update' op has 1 params but 2 weight decays}}
    %in = bmb_exec.offload_adamw_update %out [@a] lr %lr step %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decays = array<f64: 0.0, 0.1>}
    return
  }
}
