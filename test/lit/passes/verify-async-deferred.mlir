// bmb-verify-async on deferred collectives: the backward's per-layer
// gradient all-reduces (bmb_exec.defer_all_reduce_grads, issued in
// @forward_backward) are waited by @optimizer_step's bmb_exec.wait_deferred.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-verify-async | FileCheck %s

// Accepted and unchanged: each iteration reads only its own layer's
// gradient and hands that layer over at its end; the unstacked @a goes out
// after its last use; the optimizer step waits before it reads anything.
// CHECK-LABEL: bmb_exec.program @ok
// CHECK: bmb_exec.defer_all_reduce_grads [@s] layer
// CHECK: bmb_exec.defer_all_reduce_grads [@a]
// CHECK: bmb_exec.wait_deferred
// CHECK-NEXT: bmb_exec.grad_norm
bmb_exec.program @ok {
  bmb_exec.param @a : memref<4xf32>
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %j = %c0 to %c2 step %c1 {
      %i = arith.subi %c1, %j : index
      %g = bmb_exec.grad_ref @s[%i] : memref<4xf32>
      bmb_exec.zero %g : memref<4xf32>
      bmb_exec.defer_all_reduce_grads [@s] layer %i
    }
    %ga = bmb_exec.grad_ref @a : memref<4xf32>
    bmb_exec.zero %ga : memref<4xf32>
    bmb_exec.defer_all_reduce_grads [@a]
    return
  }
  func.func @optimizer_step() {
    bmb_exec.wait_deferred
    %n = bmb_exec.grad_norm : f64
    return
  }
}

// -----

// A gradient written after its layer went out, in the same iteration.
bmb_exec.program @after {
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %i = %c0 to %c2 step %c1 {
      // expected-note @below {{the deferred collective, issued here}}
      bmb_exec.defer_all_reduce_grads [@s] layer %i
      // expected-error @below {{bmb-verify-async: touches the gradients after they were handed to a deferred collective}}
      %g = bmb_exec.grad_ref @s[%i] : memref<4xf32>
    }
    return
  }
  func.func @optimizer_step() {
    bmb_exec.wait_deferred
    return
  }
}

// -----

// An iteration that writes another layer than the one it hands over: a
// later iteration could write a layer already in flight.
bmb_exec.program @otherlayer {
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %j = %c0 to %c2 step %c1 {
      %i = arith.subi %c1, %j : index
      // expected-error @below {{bmb-verify-async: reads another layer's gradient than the one this iteration hands to its deferred collective}}
      %g = bmb_exec.grad_ref @s[%j] : memref<4xf32>
      bmb_exec.zero %g : memref<4xf32>
      // expected-note @below {{the deferred collective, issued here}}
      bmb_exec.defer_all_reduce_grads [@s] layer %i
    }
    return
  }
  func.func @optimizer_step() {
    bmb_exec.wait_deferred
    return
  }
}

// -----

// The unstacked gradient touched after it went out.
bmb_exec.program @unit0 {
  bmb_exec.param @a : memref<4xf32>
  func.func @forward_backward() {
    // expected-note @below {{the deferred collective, issued here}}
    bmb_exec.defer_all_reduce_grads [@a]
    // expected-error @below {{bmb-verify-async: touches the gradients after they were handed to a deferred collective}}
    %ga = bmb_exec.grad_ref @a : memref<4xf32>
    return
  }
  func.func @optimizer_step() {
    bmb_exec.wait_deferred
    return
  }
}

// -----

// Use before wait: the optimizer step reads the gradients while the
// backward's collectives may still be in flight.
bmb_exec.program @early {
  bmb_exec.param @a : memref<4xf32>
  func.func @forward_backward() {
    bmb_exec.defer_all_reduce_grads [@a]
    return
  }
  func.func @optimizer_step() {
    // expected-error @below {{bmb-verify-async: touches the gradients before the deferred collectives are waited for}}
    %n = bmb_exec.grad_norm : f64
    // expected-note @below {{the wait}}
    bmb_exec.wait_deferred
    return
  }
}

// -----

bmb_exec.program @unwaited {
  bmb_exec.param @a : memref<4xf32>
  func.func @forward_backward() {
    // expected-error @below {{bmb-verify-async: this deferred collective is never waited on (@optimizer_step has no bmb_exec.wait_deferred)}}
    bmb_exec.defer_all_reduce_grads [@a]
    return
  }
  func.func @optimizer_step() {
    %n = bmb_exec.grad_norm : f64
    return
  }
}

// -----

bmb_exec.program @unstacked {
  bmb_exec.param @a : memref<4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    // expected-error @below {{'bmb_exec.defer_all_reduce_grads' op takes a layer index, but @a is not stacked}}
    bmb_exec.defer_all_reduce_grads [@a] layer %c0
    return
  }
}

// -----

bmb_exec.program @stackedwhole {
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    // expected-error @below {{'bmb_exec.defer_all_reduce_grads' op needs a layer index of the stacked @s}}
    bmb_exec.defer_all_reduce_grads [@s]
    return
  }
}

// -----

// A layer handed over outside the loop over the layers.
bmb_exec.program @noloop {
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c1 = arith.constant 1 : index
    // expected-error @below {{bmb-verify-async: a deferred layer collective must be in a loop's body (the loop over the layers)}}
    bmb_exec.defer_all_reduce_grads [@s] layer %c1
    return
  }
  func.func @optimizer_step() {
    bmb_exec.wait_deferred
    return
  }
}

// -----

// A repeat of one layer: its one-trip loop is gone, the layer index is a
// constant, and the rest of the backward may go on with other params'
// gradients (here the unstacked @a's) after the layer went out.
// CHECK-LABEL: bmb_exec.program @onelayer
// CHECK: bmb_exec.defer_all_reduce_grads [@s] layer
// CHECK: bmb_exec.grad_ref @a
bmb_exec.program @onelayer {
  bmb_exec.param @a : memref<4xf32>
  bmb_exec.param @s stacked : memref<1x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %g = bmb_exec.grad_ref @s[%c0] : memref<4xf32>
    bmb_exec.zero %g : memref<4xf32>
    bmb_exec.defer_all_reduce_grads [@s] layer %c0
    %ga = bmb_exec.grad_ref @a : memref<4xf32>
    bmb_exec.zero %ga : memref<4xf32>
    bmb_exec.defer_all_reduce_grads [@a]
    return
  }
  func.func @optimizer_step() {
    bmb_exec.wait_deferred
    return
  }
}

// -----

// ... but not with the layer's own gradient.
bmb_exec.program @onelayerafter {
  bmb_exec.param @s stacked : memref<1x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    // expected-note @below {{the deferred collective, issued here}}
    bmb_exec.defer_all_reduce_grads [@s] layer %c0
    // expected-error @below {{bmb-verify-async: touches the gradients after they were handed to a deferred collective}}
    %g = bmb_exec.grad_ref @s[%c0] : memref<4xf32>
    return
  }
  func.func @optimizer_step() {
    bmb_exec.wait_deferred
    return
  }
}

// -----

// Layer 0 of params of two layers, outside a loop: not a repeat of one layer.
bmb_exec.program @notonlylayer {
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    // expected-error @below {{bmb-verify-async: a deferred layer collective must be in a loop's body (the loop over the layers)}}
    bmb_exec.defer_all_reduce_grads [@s] layer %c0
    return
  }
  func.func @optimizer_step() {
    bmb_exec.wait_deferred
    return
  }
}
