// Verifier messages of kernel scalar operands, elem_index and the dropout
// element function.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics

bmb_exec.program @p {
  func.func @f() {
    %s = bmb_exec.step_arg "seed" : i64
    %x = bmb_exec.alloc : memref<4xf32>
    // expected-error @+1 {{'bmb_exec.kernel' op body takes 1 scalars for 1 inputs and 1 scalar operands}}
    bmb_exec.kernel @k0 ins(%x : memref<4xf32>) outs(%x : memref<4xf32>) scalars(%s : i64) {
    ^bb0(%a: f32):
      bmb_exec.kernel_yield %a : f32
    }
    return
  }
}

// -----

bmb_exec.program @p {
  func.func @f() {
    %s = bmb_exec.step_arg "seed" : i64
    %x = bmb_exec.alloc : memref<4xf32>
    // expected-error @+1 {{'bmb_exec.kernel' op body argument type 'f32' differs from its scalar operand's}}
    bmb_exec.kernel @k0 ins(%x : memref<4xf32>) outs(%x : memref<4xf32>) scalars(%s : i64) {
    ^bb0(%a: f32, %b: f32):
      bmb_exec.kernel_yield %a : f32
    }
    return
  }
}

// -----

bmb_exec.program @p {
  func.func @f() {
    %x = bmb_exec.alloc : memref<4xf32>
    bmb_exec.kernel @k0 ins(%x : memref<4xf32>) outs(%x : memref<4xf32>) {
    ^bb0(%a: f32):
      %i = bmb_exec.elem_index : i64
      // expected-error @+1 {{'bmb_exec.elem_call' op 'dropout' takes (x, p: f64, seed, step, micro_step, rng_id, layer, index: i64) and returns x's type}}
      %r = bmb_exec.elem_call "dropout"(%a, %i) : (f32, i64) -> f32
      bmb_exec.kernel_yield %r : f32
    }
    return
  }
}

// -----

bmb_exec.program @p {
  func.func @f() {
    // expected-error @+1 {{'bmb_exec.elem_index' op expects parent op 'bmb_exec.kernel'}}
    %i = bmb_exec.elem_index : i64
    return
  }
}
