// Verifier messages of the collectives and the offloaded optimizer step
// (BmbExecCommOps.cpp, BmbExecOffloadOps.cpp).
// RUN: bmb-opt %s -split-input-file -verify-diagnostics

bmb_exec.program @p {
  func.func @f() {
    // expected-error @+1 {{'bmb_exec.all_reduce_grads' op needs at least one param}}
    %r = bmb_exec.all_reduce_grads []
    return
  }
}

// -----

bmb_exec.program @p {
  func.func @f() {
    // expected-error @+1 {{'bmb_exec.offload_grads_out' op chunk must be at least 1 element, got 0}}
    %out = bmb_exec.offload_grads_out {chunk = 0 : i64}
    return
  }
}

// -----

bmb_exec.program @p {
  bmb_exec.param @a : memref<4xf32>
  func.func @f() {
    %s = bmb_exec.step_arg "step" : i64
    %lr = bmb_exec.step_arg "lr" : f64
    %out = bmb_exec.offload_grads_out {chunk = 4 : i64}
    // expected-error @+1 {{'bmb_exec.offload_adamw_update' op the gradients' copy is consumed exactly once, this one has 2 uses}}
    %in = bmb_exec.offload_adamw_update %out [@a] lr %lr step %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decays = array<f64: 0.0>}
    %in2 = bmb_exec.offload_adamw_update %out [@a] lr %lr step %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decays = array<f64: 0.0>}
    return
  }
}

// -----

bmb_exec.program @p {
  func.func @f() {
    %s = bmb_exec.step_arg "step" : i64
    %lr = bmb_exec.step_arg "lr" : f64
    %out = bmb_exec.offload_grads_out {chunk = 4 : i64}
    // expected-error @+1 {{'bmb_exec.offload_adamw_update' op needs at least one param}}
    %in = bmb_exec.offload_adamw_update %out [] lr %lr step %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decays = array<f64>}
    return
  }
}

// -----

// ZeRO-3's rounding of a gathered unit goes to the autocast GEMMs' type.
bmb_exec.program @p {
  bmb_exec.param @a : memref<4xf32>
  func.func @f() {
    // expected-error @+1 {{'bmb_exec.round_unit' op rounds to bf16 or f16 (the reduced type of the autocast GEMMs), not 'f32'}}
    bmb_exec.round_unit [@a] to f32
    return
  }
}
