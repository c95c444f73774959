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
    // expected-error @below {{'bmb_exec.wait' op waits on a value that no collective of this function issued}}
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
