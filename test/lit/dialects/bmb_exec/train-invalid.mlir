// Verifier messages of the training ops (BmbExecTrainOps.cpp).
// RUN: bmb-opt %s -split-input-file -verify-diagnostics

bmb_exec.program @p {
  // expected-error @+1 {{'bmb_exec.param' op is frozen: it has no gradient, optimizer state or weight decay}}
  bmb_exec.param @w frozen grad_offset 0 : memref<4xf32>
}

// -----

bmb_exec.program @p {
  bmb_exec.param @w frozen : memref<4xf32>
  func.func @f() {
    // expected-error @+1 {{'bmb_exec.grad_ref' op refers to the frozen param 'w', which has no gradient}}
    %g = bmb_exec.grad_ref @w : memref<4xf32>
    return
  }
}

// -----

bmb_exec.program @p {
  func.func @f() {
    %a = bmb_exec.alloc : memref<4x8xf32>
    %b = bmb_exec.alloc : memref<4x6xf32>
    %c = bmb_exec.alloc : memref<8x6xf32>
    %d = bmb_exec.alloc : memref<6x8xf32>
    // expected-error @+1 {{'bmb_exec.matmul' op c must be [8, 6], got 'memref<6x8xf32>'}}
    bmb_exec.matmul %a, %b outs(%d) {trans_a} : memref<4x8xf32>, memref<4x6xf32> -> memref<6x8xf32>
    return
  }
}

// -----

bmb_exec.program @p {
  func.func @f() {
    %a = bmb_exec.alloc : memref<4x8xf32>
    %b = bmb_exec.alloc : memref<6x8xf32>
    %c = bmb_exec.alloc : memref<4x6xf32>
    // expected-error @+1 {{'bmb_exec.matmul' op op(a) is [4, 8] but op(b) is [6, 8]}}
    bmb_exec.matmul %a, %b outs(%c) : memref<4x8xf32>, memref<6x8xf32> -> memref<4x6xf32>
    return
  }
}

// -----

bmb_exec.program @p {
  func.func @f() {
    // expected-error @+1 {{'bmb_exec.step_arg' op unknown field 'momentum' (step, lr, dloss_scale, seed, micro_step)}}
    %m = bmb_exec.step_arg "momentum" : f64
    return
  }
}

// -----

bmb_exec.program @p {
  func.func @f() {
    // expected-error @+1 {{'bmb_exec.step_arg' op field 'lr' is 'f64'}}
    %m = bmb_exec.step_arg "lr" : i64
    return
  }
}

// -----

bmb_exec.program @p {
  func.func @f() {
    %x = bmb_exec.alloc : memref<2x4x8xf32>
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'bmb_exec.layer_view' op result 'memref<4x4x8xf32>' is not one slice of 'memref<2x4x8xf32>'}}
    %v = bmb_exec.layer_view %x[%c0] : memref<2x4x8xf32> to memref<4x4x8xf32>
    return
  }
}

// -----

bmb_exec.program @p {
  func.func @f() {
    %l = bmb_exec.alloc : memref<8x16xf32>
    %t = bmb_exec.alloc : memref<8xi32>
    %s = bmb_exec.alloc : memref<8xf32>
    // expected-error @+1 {{'bmb_exec.classifier' op dlogits and scale go together}}
    bmb_exec.classifier %l, %t outs(%s) dlogits(%l : memref<8x16xf32>) {ignore_index = -100 : i64} : memref<8x16xf32>, memref<8xi32> -> memref<8xf32>
    return
  }
}

// -----

bmb_exec.program @p {
  func.func @f() {
    %x = bmb_exec.alloc : memref<4x8xf32>
    %w = bmb_exec.alloc : memref<8xf32>
    // expected-error @+1 {{'bmb_exec.norm_grad' op computes no gradient}}
    bmb_exec.norm_grad "layernorm" %x, %x, %w {eps = 1.0e-05 : f64} : memref<4x8xf32>, memref<4x8xf32>, memref<8xf32>
    return
  }
}

// -----

bmb_exec.program @p {
  func.func @f() {
    %x = bmb_exec.alloc : memref<4xf32>
    bmb_exec.kernel @k0 ins(%x : memref<4xf32>) outs(%x : memref<4xf32>) {
    ^bb0(%a: f32):
      // expected-error @+1 {{'bmb_exec.elem_call' op unknown runtime function 'exp'}}
      %r = bmb_exec.elem_call "exp"(%a, %a) : (f32, f32) -> f32
      bmb_exec.kernel_yield %r : f32
    }
    return
  }
}
