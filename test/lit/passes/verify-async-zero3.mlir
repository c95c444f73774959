// bmb-verify-async under zero = 3: every read of a trainable param (the
// staging its unit is gathered into) follows the wait of its unit's gather,
// at the layer that gather fetched; frozen params are whole and need none.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-verify-async | FileCheck %s

// Accepted and unchanged: unit 0 gathered at the start, each layer at the
// start of its loop iteration.
// CHECK-LABEL: bmb_exec.program @ok
// CHECK: %[[U:.*]] = bmb_exec.gather_unit [@e]{{$}}
// CHECK-NEXT: bmb_exec.wait %[[U]]
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: %[[G:.*]] = bmb_exec.gather_unit [@s] layer %[[I]]
// CHECK-NEXT: bmb_exec.wait %[[G]]
// CHECK-NEXT: bmb_exec.param_ref @s[%[[I]]]
bmb_exec.program @ok attributes {train = {zero_stage = 3 : i64}} {
  bmb_exec.param @e : memref<4xf32>
  bmb_exec.param @f frozen : memref<4xf32>
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %f = bmb_exec.param_ref @f : memref<4xf32>
    %u = bmb_exec.gather_unit [@e]
    bmb_exec.wait %u
    %e = bmb_exec.param_ref @e : memref<4xf32>
    scf.for %i = %c0 to %c2 step %c1 {
      %g = bmb_exec.gather_unit [@s] layer %i
      bmb_exec.wait %g
      %s = bmb_exec.param_ref @s[%i] : memref<4xf32>
    }
    %e2 = bmb_exec.param_ref @e : memref<4xf32>
    return
  }
}

// -----

// A read of a unit that was never gathered.
bmb_exec.program @ungathered attributes {train = {zero_stage = 3 : i64}} {
  bmb_exec.param @e : memref<4xf32>
  func.func @evaluate() {
    // expected-error @below {{bmb-verify-async: reads @e (zero = 3) before its unit's gather has been waited for}}
    %e = bmb_exec.param_ref @e : memref<4xf32>
    return
  }
}

// -----

// A read between the gather and its wait: the collective owns the staging.
bmb_exec.program @inflight attributes {train = {zero_stage = 3 : i64}} {
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %i = %c0 to %c2 step %c1 {
      // expected-note @below {{the collective, issued here}}
      %g = bmb_exec.gather_unit [@s] layer %i
      // expected-error @below {{bmb-verify-async: touches the trainable params while a collective owns them}}
      // expected-error @below {{bmb-verify-async: reads @s (zero = 3) before its unit's gather has been waited for}}
      %s = bmb_exec.param_ref @s[%i] : memref<4xf32>
      // expected-note @below {{its wait}}
      bmb_exec.wait %g
    }
    return
  }
}

// -----

// The reverse loop reads layer %l without gathering it: the staging still
// holds the forward loop's last layer.
bmb_exec.program @stale attributes {train = {zero_stage = 3 : i64}} {
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %i = %c0 to %c2 step %c1 {
      // expected-note @below {{the gather}}
      %g = bmb_exec.gather_unit [@s] layer %i
      bmb_exec.wait %g
      %s = bmb_exec.param_ref @s[%i] : memref<4xf32>
    }
    scf.for %j = %c0 to %c2 step %c1 {
      %l = arith.subi %c1, %j : index
      // expected-error @below {{bmb-verify-async: reads @s (zero = 3) at another layer than its unit's gather}}
      %s = bmb_exec.param_ref @s[%l] : memref<4xf32>
    }
    return
  }
}

// -----

// The look-ahead: each iteration waits for its layer (gathered ahead by the
// previous one) and prefetches the next into the other slot; in reverse the
// next is %l - 1, which canonicalization may fold into %c0 - %j. Accepted.
// CHECK-LABEL: bmb_exec.program @lookahead
// CHECK: bmb_exec.wait_unit [@s] layer
// CHECK: bmb_exec.prefetch_unit [@s] layer {{.*}} of 2
bmb_exec.program @lookahead attributes {train = {zero_stage = 3 : i64}} {
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %i = %c0 to %c2 step %c1 {
      bmb_exec.wait_unit [@s] layer %i
      %n = arith.addi %i, %c1 : index
      bmb_exec.prefetch_unit [@s] layer %n of 2
      %s = bmb_exec.param_ref @s[%i] : memref<4xf32>
    }
    scf.for %j = %c0 to %c2 step %c1 {
      %l = arith.subi %c1, %j : index
      bmb_exec.wait_unit [@s] layer %l
      %p = arith.subi %c0, %j : index
      bmb_exec.prefetch_unit [@s] layer %p of 2
      %s = bmb_exec.param_ref @s[%l] : memref<4xf32>
    }
    return
  }
}

// -----

// A prefetch two layers ahead would fill the slot the iteration reads.
bmb_exec.program @far attributes {train = {zero_stage = 3 : i64}} {
  bmb_exec.param @s stacked : memref<4x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      bmb_exec.wait_unit [@s] layer %i
      %n = arith.addi %i, %c2 : index
      // expected-error @below {{bmb-verify-async: prefetches a layer that is not next to the one its unit's wait_unit fetched (the two slots alternate by layer)}}
      bmb_exec.prefetch_unit [@s] layer %n of 4
      %s = bmb_exec.param_ref @s[%i] : memref<4xf32>
    }
    return
  }
}

// -----

// Reading the prefetched layer before the next iteration's wait_unit.
bmb_exec.program @early attributes {train = {zero_stage = 3 : i64}} {
  bmb_exec.param @s stacked : memref<2x4xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %i = %c0 to %c2 step %c1 {
      // expected-note @below {{the gather}}
      bmb_exec.wait_unit [@s] layer %i
      %n = arith.addi %i, %c1 : index
      bmb_exec.prefetch_unit [@s] layer %n of 2
      // expected-error @below {{bmb-verify-async: reads @s (zero = 3) at another layer than its unit's gather}}
      %s = bmb_exec.param_ref @s[%n] : memref<4xf32>
    }
    return
  }
}
