// Round trip of a generated kernel with scalar operands, the element index
// and the runtime's dropout element function: custom form, generic form and
// bytecode.
// RUN: bmb-opt %s | bmb-opt | FileCheck %s
// RUN: bmb-opt %s --mlir-print-op-generic | bmb-opt | FileCheck %s
// RUN: bmb-opt %s --emit-bytecode | bmb-opt | FileCheck %s

bmb_exec.program @t {
  // CHECK-LABEL: func.func @f
  func.func @f() {
    %seed = bmb_exec.step_arg "seed" : i64
    %step = bmb_exec.step_arg "step" : i64
    %micro = bmb_exec.step_arg "micro_step" : i64
    %layer = arith.constant 1 : i64
    %x = bmb_exec.alloc : memref<4x8xf32>
    %y = bmb_exec.alloc : memref<4x8xf32>
    // CHECK: bmb_exec.kernel @dropout0 ins(%{{.*}} : memref<4x8xf32>) outs(%{{.*}} : memref<4x8xf32>) scalars(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : i64, i64, i64, i64) {
    // CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[A:.*]]: i64, %[[B:.*]]: i64, %[[C:.*]]: i64, %[[D:.*]]: i64):
    // CHECK: %[[I:.*]] = bmb_exec.elem_index : i64
    // CHECK-NEXT: bmb_exec.elem_call "dropout"(%[[V]], %{{.*}}, %[[A]], %[[B]], %[[C]], %{{.*}}, %[[D]], %[[I]]) : (f32, f64, i64, i64, i64, i64, i64, i64) -> f32
    bmb_exec.kernel @dropout0 ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) scalars(%seed, %step, %micro, %layer : i64, i64, i64, i64) {
    ^bb0(%v: f32, %s0: i64, %s1: i64, %s2: i64, %s3: i64):
      %p = arith.constant 1.000000e-01 : f64
      %id = arith.constant 3 : i64
      %i = bmb_exec.elem_index : i64
      %r = bmb_exec.elem_call "dropout"(%v, %p, %s0, %s1, %s2, %id, %s3, %i) : (f32, f64, i64, i64, i64, i64, i64, i64) -> f32
      bmb_exec.kernel_yield %r : f32
    }
    // A kernel without scalars prints as before.
    // CHECK: bmb_exec.kernel @k1 ins(%{{.*}} : memref<4x8xf32>) outs(%{{.*}} : memref<4x8xf32>) {
    bmb_exec.kernel @k1 ins(%y : memref<4x8xf32>) outs(%x : memref<4x8xf32>) {
    ^bb0(%v: f32):
      bmb_exec.kernel_yield %v : f32
    }
    return
  }
}
