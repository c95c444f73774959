// bmb-plan-memory on a train program: frozen params first, then the
// trainable group (params and grads alike, 64-byte aligned, layer-major:
// unit 0 = @a, then one unit per layer of @s, so @s's layers are 128 bytes
// apart, its 80-byte slice rounded up to the alignment), opt_slots
// slots of optimizer state over the group, sizes and the group's layout on
// the program; a stacked save written in one loop and read in a later one
// stays live across both.
// RUN: bmb-opt %s --bmb-plan-memory | FileCheck %s

// CHECK-LABEL: bmb_exec.program @t
// CHECK-SAME: grad_bytes = 320 : i64
// CHECK-SAME: group_elems = 80 : i64, group_param_offset = 64 : i64, group_units = array<i64: 0, 16, 48, 80>
// CHECK-SAME: opt_state_bytes = 640 : i64
// CHECK-SAME: param_bytes = 384 : i64, partition_align = 16384 : i64
bmb_exec.program @t attributes {train = {opt_slots = 2 : i64}} {
  // CHECK: bmb_exec.param @a offset 64 grad_offset 0 opt_offset 0 : memref<4xf32>
  bmb_exec.param @a : memref<4xf32>
  // CHECK: bmb_exec.param @f frozen offset 0 : memref<4xf32>
  bmb_exec.param @f frozen : memref<4xf32>
  // CHECK: bmb_exec.param @s stacked offset 128 grad_offset 64 opt_offset 64 layer_stride 128 : memref<2x20xf32>
  bmb_exec.param @s stacked : memref<2x20xf32>
  func.func @forward_backward() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    // CHECK: bmb_exec.alloc offset 0 : memref<2x16xf32>
    %saved = bmb_exec.alloc : memref<2x16xf32>
    scf.for %i = %c0 to %c2 step %c1 {
      %v = bmb_exec.layer_view %saved[%i] : memref<2x16xf32> to memref<16xf32>
      bmb_exec.zero %v : memref<16xf32>
    }
    // A buffer between the loops must not take the save's place.
    // CHECK: bmb_exec.alloc offset 128 : memref<2x16xf32>
    %between = bmb_exec.alloc : memref<2x16xf32>
    bmb_exec.zero %between : memref<2x16xf32>
    scf.for %j = %c0 to %c2 step %c1 {
      %g = bmb_exec.grad_ref @s[%j] : memref<20xf32>
      %v = bmb_exec.layer_view %saved[%j] : memref<2x16xf32> to memref<16xf32>
      bmb_exec.zero %g : memref<20xf32>
    }
    return
  }
}

