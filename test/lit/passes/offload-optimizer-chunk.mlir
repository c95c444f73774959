// bmb-offload-optimizer's chunk-elems option must be positive.
// RUN: bmb-opt %s -verify-diagnostics --bmb-offload-optimizer="chunk-elems=0"

// expected-error @+1 {{bmb-offload-optimizer: chunk-elems must be at least 1, got 0}}
bmb_exec.program @zero attributes {settings = {offload = "optimizer"}} {
  bmb_exec.param @a : memref<8xf32>
  func.func @optimizer_step() {
    %2 = bmb_exec.step_arg "step" : i64
    %3 = bmb_exec.step_arg "lr" : f64
    bmb_exec.adamw_update @a lr %3 step %2 {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
    return
  }
}
