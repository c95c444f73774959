// bmb-verify-async under zero = 3 with precision = bf16/fp16: the autocast
// GEMMs read the reduced staging that bmb_exec.round_unit fills from a
// gathered unit, so every read of a trainable param follows its unit's
// round_unit, and a round_unit follows its unit's wait at the same layer.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-verify-async | FileCheck %s

// Accepted and unchanged: unit 0 rounded after its wait, each layer after
// its wait_unit and the prefetch of the next.
// CHECK-LABEL: bmb_exec.program @ok
// CHECK: %[[U:.*]] = bmb_exec.gather_unit [@e]{{$}}
// CHECK-NEXT: bmb_exec.wait %[[U]]
// CHECK-NEXT: bmb_exec.round_unit [@e] to bf16
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: bmb_exec.wait_unit [@s] layer %[[I]]
// CHECK-NEXT: %[[N:.*]] = arith.addi
// CHECK-NEXT: bmb_exec.prefetch_unit [@s] layer %[[N]] of 2
// CHECK-NEXT: bmb_exec.round_unit [@s] layer %[[I]] to bf16
// CHECK-NEXT: bmb_exec.param_ref @s[%[[I]]]
bmb_exec.program @ok attributes {precision = "bf16", train = {zero_stage = 3 : i64}} {
  bmb_exec.param @e : memref<4xf32>
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %u = bmb_exec.gather_unit [@e]
    bmb_exec.wait %u
    bmb_exec.round_unit [@e] to bf16
    %e = bmb_exec.param_ref @e : memref<4xf32>
    scf.for %i = %c0 to %c2 step %c1 {
      bmb_exec.wait_unit [@s] layer %i
      %n = arith.addi %i, %c1 : index
      bmb_exec.prefetch_unit [@s] layer %n of 2
      bmb_exec.round_unit [@s] layer %i to bf16
      %s = bmb_exec.param_ref @s[%i] : memref<4xf32>
    }
    return
  }
}

// -----

// Gathered but not rounded: the GEMMs would read the previous unit's bits.
bmb_exec.program @unrounded attributes {precision = "fp16", train = {zero_stage = 3 : i64}} {
  bmb_exec.param @e : memref<4xf32>
  func.func @evaluate() {
    %u = bmb_exec.gather_unit [@e]
    bmb_exec.wait %u
    // expected-error @below {{bmb-verify-async: reads @e (zero = 3) before its unit has been rounded to the GEMMs' reduced type}}
    %e = bmb_exec.param_ref @e : memref<4xf32>
    return
  }
}

// -----

// Rounded before the gather arrived.
bmb_exec.program @early attributes {precision = "bf16", train = {zero_stage = 3 : i64}} {
  bmb_exec.param @e : memref<4xf32>
  func.func @evaluate() {
    // expected-error @below {{bmb-verify-async: rounds @e (zero = 3) before its unit's gather at this layer has been waited for}}
    bmb_exec.round_unit [@e] to bf16
    %u = bmb_exec.gather_unit [@e]
    bmb_exec.wait %u
    return
  }
}

// -----

// Rounding another layer than the one waited for.
bmb_exec.program @otherlayer attributes {precision = "bf16", train = {zero_stage = 3 : i64}} {
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %i = %c0 to %c2 step %c1 {
      bmb_exec.wait_unit [@s] layer %i
      %n = arith.addi %i, %c1 : index
      // expected-error @below {{bmb-verify-async: rounds @s (zero = 3) before its unit's gather at this layer has been waited for}}
      bmb_exec.round_unit [@s] layer %n to bf16
    }
    return
  }
}

// -----

// A later gather of the unit (the backward's) makes the forward's rounding
// stale: the backward's reads need their own round_unit.
bmb_exec.program @stale attributes {precision = "bf16", train = {zero_stage = 3 : i64}} {
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %i = %c0 to %c2 step %c1 {
      bmb_exec.wait_unit [@s] layer %i
      bmb_exec.round_unit [@s] layer %i to bf16
      %s = bmb_exec.param_ref @s[%i] : memref<4xf32>
    }
    scf.for %j = %c0 to %c2 step %c1 {
      %l = arith.subi %c1, %j : index
      bmb_exec.wait_unit [@s] layer %l
      // expected-error @below {{bmb-verify-async: reads @s (zero = 3) before its unit has been rounded to the GEMMs' reduced type}}
      %s = bmb_exec.param_ref @s[%l] : memref<4xf32>
    }
    return
  }
}
