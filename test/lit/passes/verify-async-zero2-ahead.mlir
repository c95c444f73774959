// bmb-verify-async under zero = 2 with the reduce-scatters one layer ahead:
// layer l's reduce-scatter (bmb_exec.reduce_scatter_ahead) stays in flight
// from slot l % 2 until wait_unit_grads of layer l. The pass follows them
// trip by trip: no write of a slot in flight, no second reduce-scatter from
// it, no read of the partition and no end of the entry while one is.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-verify-async | FileCheck %s

// Accepted and unchanged: what bmb-lower-to-exec emits (a reverse loop over
// 3 layers; layer l first finishes layer l + 2, the last two after the loop).
// CHECK-LABEL: bmb_exec.program @ok
// CHECK: scf.for
// CHECK: bmb_exec.wait_unit_grads [@s] layer
// CHECK: bmb_exec.grad_ref @s[
// CHECK: bmb_exec.reduce_scatter_ahead [@s] layer
// CHECK: bmb_exec.wait_unit_grads [@s] layer %c1
// CHECK: bmb_exec.wait_unit_grads [@s] layer %c0
// CHECK: bmb_exec.reduce_scatter_unit [@e]
bmb_exec.program @ok attributes {train = {zero_stage = 2 : i64}} {
  bmb_exec.param @e : memref<4xf32>
  bmb_exec.param @s stacked : memref<3x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    scf.for %j = %c0 to %c3 step %c1 {
      %l = arith.subi %c2, %j : index
      %p = arith.addi %l, %c2 : index
      bmb_exec.wait_unit_grads [@s] layer %p
      %g = bmb_exec.grad_ref @s[%l] : memref<4xf32>
      bmb_exec.reduce_scatter_ahead [@s] layer %l
    }
    %ge = bmb_exec.grad_ref @e : memref<4xf32>
    bmb_exec.wait_unit_grads [@s] layer %c1
    bmb_exec.wait_unit_grads [@s] layer %c0
    %u = bmb_exec.reduce_scatter_unit [@e]
    bmb_exec.wait %u
    bmb_exec.add_unit_grads [@e]
    return
  }
}

// -----

// Layer l's backward writes slot l % 2 before layer l + 2's reduce-scatter
// from it is finished (the wait comes after the write).
bmb_exec.program @slot_in_flight attributes {train = {zero_stage = 2 : i64}} {
  bmb_exec.param @s stacked : memref<3x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    scf.for %j = %c0 to %c3 step %c1 {
      %l = arith.subi %c2, %j : index
      %p = arith.addi %l, %c2 : index
      // expected-error @below {{bmb-verify-async: writes @s's gradient slot 0 while layer 2's reduce-scatter from it is in flight (finish it first: bmb_exec.wait_unit_grads)}}
      %g = bmb_exec.grad_ref @s[%l] : memref<4xf32>
      bmb_exec.wait_unit_grads [@s] layer %p
      // expected-note @below {{the reduce-scatter, issued here (layer 2)}}
      bmb_exec.reduce_scatter_ahead [@s] layer %l
    }
    bmb_exec.wait_unit_grads [@s] layer %c1
    bmb_exec.wait_unit_grads [@s] layer %c0
    return
  }
}

// -----

// No wait at the start of the iteration: layer 0's reduce-scatter would be
// issued from the slot layer 2's still travels in.
bmb_exec.program @no_release attributes {train = {zero_stage = 2 : i64}} {
  bmb_exec.param @s stacked : memref<3x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    scf.for %j = %c0 to %c3 step %c1 {
      %l = arith.subi %c2, %j : index
      // expected-note @below {{the reduce-scatter, issued here (layer 2)}}
      // expected-error @below {{bmb-verify-async: issues layer 0's reduce-scatter from slot 0 while layer 2's from the same slot is in flight}}
      bmb_exec.reduce_scatter_ahead [@s] layer %l
    }
    return
  }
}

// -----

// The partition is read (the gradient norm) before the last layers'
// reduce-scatters are finished.
bmb_exec.program @partition_early attributes {train = {zero_stage = 2 : i64}} {
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %j = %c0 to %c2 step %c1 {
      %l = arith.subi %c1, %j : index
      %p = arith.addi %l, %c2 : index
      bmb_exec.wait_unit_grads [@s] layer %p
      %g = bmb_exec.grad_ref @s[%l] : memref<4xf32>
      // expected-note @below {{the reduce-scatter, issued here (layer 0)}}
      bmb_exec.reduce_scatter_ahead [@s] layer %l
    }
    bmb_exec.wait_unit_grads [@s] layer %c1
    // expected-error @below {{bmb-verify-async: reads the gradient partition while layer 0's reduce-scatter into it is in flight}}
    %n = bmb_exec.grad_norm : f64
    bmb_exec.wait_unit_grads [@s] layer %c0
    return
  }
}

// -----

// The entry ends with layer 0's reduce-scatter in flight: the optimizer
// step (or the next micro-batch) would read an unfinished partition.
bmb_exec.program @undrained attributes {train = {zero_stage = 2 : i64}} {
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %j = %c0 to %c2 step %c1 {
      %l = arith.subi %c1, %j : index
      %p = arith.addi %l, %c2 : index
      bmb_exec.wait_unit_grads [@s] layer %p
      %g = bmb_exec.grad_ref @s[%l] : memref<4xf32>
      // expected-note @below {{the reduce-scatter, issued here (layer 0)}}
      bmb_exec.reduce_scatter_ahead [@s] layer %l
    }
    bmb_exec.wait_unit_grads [@s] layer %c1
    // expected-error @below {{bmb-verify-async: the entry ends while layer 0's reduce-scatter is in flight (the partition is read after it)}}
    return
  }
}

// -----

// Waiting for the wrong layer of a slot (the runtime's Comm::take would
// fail): slot 1 holds layer 1's reduce-scatter, not layer 3's.
bmb_exec.program @wrong_layer attributes {train = {zero_stage = 2 : i64}} {
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %g = bmb_exec.grad_ref @s[%c1] : memref<4xf32>
    // expected-note @below {{the reduce-scatter, issued here (layer 1)}}
    bmb_exec.reduce_scatter_ahead [@s] layer %c1
    // expected-error @below {{bmb-verify-async: waits for layer 3's reduce-scatter, but slot 1 holds layer 1's}}
    bmb_exec.wait_unit_grads [@s] layer %c3
    return
  }
}

// -----

// The pass follows each trip's layer: an index it cannot write as a * iv + b
// is refused rather than guessed.
bmb_exec.program @unfollowable_layer attributes {train = {zero_stage = 2 : i64}} {
  bmb_exec.param @s stacked : memref<3x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    scf.for %j = %c0 to %c3 step %c1 {
      %l = arith.muli %j, %j : index
      // expected-error @below {{bmb-verify-async: cannot follow this layer index through the loop over the layers (zero = 2's reduce-scatters in flight are checked trip by trip)}}
      bmb_exec.reduce_scatter_ahead [@s] layer %l
    }
    return
  }
}

// -----

// Nor a loop over the layers whose bounds are not constants.
bmb_exec.program @unbounded_loop attributes {train = {zero_stage = 2 : i64}} {
  bmb_exec.param @s stacked : memref<3x4xf32>
  func.func @forward_backward(%n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    // expected-error @below {{bmb-verify-async: zero = 2's reduce-scatters in flight are checked trip by trip; this loop's bounds are not constant}}
    scf.for %j = %c0 to %n step %c1 {
      bmb_exec.reduce_scatter_ahead [@s] layer %j
    }
    return
  }
}
