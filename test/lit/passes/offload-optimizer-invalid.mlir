// What bmb-offload-optimizer refuses.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-offload-optimizer

// SGD has no host step.
bmb_exec.program @sgd attributes {settings = {offload = "optimizer"}} {
  bmb_exec.param @w : memref<8xf32>
  func.func @optimizer_step() {
    %2 = bmb_exec.step_arg "step" : i64
    %3 = bmb_exec.step_arg "lr" : f64
    // expected-error @+1 {{bmb-offload-optimizer: offload = optimizer updates AdamW (adamw, adam); an SGD step on the host is not implemented}}
    bmb_exec.sgd_update @w lr %3 step %2 {momentum = 0.9 : f64, weight_decay = 0.0 : f64}
    return
  }
}

// -----

// offload = params is not this pass's.
// expected-error @+1 {{bmb-offload-optimizer: offload = params is not implemented (offload = optimizer is)}}
bmb_exec.program @params attributes {settings = {offload = "params"}} {
  func.func @optimizer_step() {
    return
  }
}

// -----

// Nothing to offload.
bmb_exec.program @empty attributes {settings = {offload = "optimizer"}} {
  // expected-error @+1 {{bmb-offload-optimizer: @optimizer_step has no bmb_exec.adamw_update to offload}}
  func.func @optimizer_step() {
    return
  }
}

// -----

// Not a train program.
// expected-error @+1 {{bmb-offload-optimizer: offload = optimizer needs the program's @optimizer_step (a train program)}}
bmb_exec.program @infer attributes {settings = {offload = "optimizer"}} {
  func.func @prefill() {
    return
  }
}

// -----

// One host call updates every param: betas must agree.
bmb_exec.program @betas attributes {settings = {offload = "optimizer"}} {
  bmb_exec.param @a : memref<8xf32>
  bmb_exec.param @b : memref<8xf32>
  func.func @optimizer_step() {
    %2 = bmb_exec.step_arg "step" : i64
    %3 = bmb_exec.step_arg "lr" : f64
    // expected-note @+1 {{the first}}
    bmb_exec.adamw_update @a lr %3 step %2 {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
    // expected-error @+1 {{bmb-offload-optimizer: the offloaded step updates every param with one lr, step, betas and eps; this update differs from the first}}
    bmb_exec.adamw_update @b lr %3 step %2 {beta1 = 0.8 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
    return
  }
}

// -----

// Clipping after the updates would not clip them.
bmb_exec.program @lateclip attributes {settings = {offload = "optimizer"}} {
  bmb_exec.param @a : memref<8xf32>
  func.func @optimizer_step() {
    %1 = bmb_exec.grad_norm : f64
    %2 = bmb_exec.step_arg "step" : i64
    %3 = bmb_exec.step_arg "lr" : f64
    bmb_exec.adamw_update @a lr %3 step %2 {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
    // expected-error @+1 {{bmb-offload-optimizer: clipping after the updates}}
    bmb_exec.clip_grads %1 {max_norm = 1.0 : f64}
    return
  }
}

// -----

// One clipping coefficient scales every chunk: two clip_grads are refused.
bmb_exec.program @twoclips attributes {settings = {offload = "optimizer"}} {
  bmb_exec.param @a : memref<8xf32>
  func.func @optimizer_step() {
    %1 = bmb_exec.grad_norm : f64
    %2 = bmb_exec.step_arg "step" : i64
    %3 = bmb_exec.step_arg "lr" : f64
    bmb_exec.clip_grads %1 {max_norm = 1.0 : f64}
    // expected-error @+1 {{bmb-offload-optimizer: more than one bmb_exec.clip_grads}}
    bmb_exec.clip_grads %1 {max_norm = 2.0 : f64}
    bmb_exec.adamw_update @a lr %3 step %2 {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
    return
  }
}
