// bmb-fuse-kernels with kernels that take scalar operands (dropout's key):
// merging keeps each scalar once, after the buffers, and maps both bodies'
// scalar arguments to it; an ewise consumer merges as it does with any
// generated kernel.
// RUN: bmb-opt %s --bmb-fuse-kernels | FileCheck %s

bmb_exec.program @t {
  // CHECK-LABEL: func.func @f
  func.func @f() {
    %seed = bmb_exec.step_arg "seed" : i64
    %step = bmb_exec.step_arg "step" : i64
    %micro = bmb_exec.step_arg "micro_step" : i64
    %layer = arith.constant 0 : i64
    %x = bmb_exec.alloc : memref<4x8xf32>
    %t = bmb_exec.alloc : memref<4x8xf32>
    %u = bmb_exec.alloc : memref<4x8xf32>
    %r = bmb_exec.alloc : memref<8xf32>
    %o = bmb_exec.alloc : memref<4x8xf32>
    // CHECK: bmb_exec.kernel @k0 ins(%{{.*}}, %{{.*}} : memref<4x8xf32>, memref<8xf32>) outs(%{{.*}} : memref<4x8xf32>) scalars(%[[SEED:.*]], %[[STEP:.*]], %[[MICRO:.*]], %[[LAYER:.*]] : i64, i64, i64, i64) {
    // CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[R:.*]]: f32, %[[A:.*]]: i64, %[[B:.*]]: i64, %[[C:.*]]: i64, %[[D:.*]]: i64):
    // CHECK: %[[I:.*]] = bmb_exec.elem_index : i64
    // CHECK-NEXT: %[[Y0:.*]] = bmb_exec.elem_call "dropout"(%[[X]], %{{.*}}, %[[A]], %[[B]], %[[C]], %{{.*}}, %[[D]], %[[I]])
    // CHECK: %[[I2:.*]] = bmb_exec.elem_index : i64
    // CHECK-NEXT: %[[Y1:.*]] = bmb_exec.elem_call "dropout"(%[[Y0]], %{{.*}}, %[[A]], %[[B]], %[[C]], %{{.*}}, %[[D]], %[[I2]])
    // CHECK-NEXT: %[[S:.*]] = arith.addf %[[Y1]], %[[R]] : f32
    // CHECK-NEXT: bmb_exec.kernel_yield %[[S]] : f32
    // CHECK-NOT: bmb_exec.kernel
    bmb_exec.kernel @dropout0 ins(%x : memref<4x8xf32>) outs(%t : memref<4x8xf32>) scalars(%seed, %step, %micro, %layer : i64, i64, i64, i64) {
    ^bb0(%v: f32, %s0: i64, %s1: i64, %s2: i64, %s3: i64):
      %p = arith.constant 1.000000e-01 : f64
      %id = arith.constant 0 : i64
      %i = bmb_exec.elem_index : i64
      %y = bmb_exec.elem_call "dropout"(%v, %p, %s0, %s1, %s2, %id, %s3, %i) : (f32, f64, i64, i64, i64, i64, i64, i64) -> f32
      bmb_exec.kernel_yield %y : f32
    }
    bmb_exec.kernel @dropout1 ins(%t : memref<4x8xf32>) outs(%u : memref<4x8xf32>) scalars(%seed, %step, %micro, %layer : i64, i64, i64, i64) {
    ^bb0(%v: f32, %s0: i64, %s1: i64, %s2: i64, %s3: i64):
      %p = arith.constant 2.000000e-01 : f64
      %id = arith.constant 1 : i64
      %i = bmb_exec.elem_index : i64
      %y = bmb_exec.elem_call "dropout"(%v, %p, %s0, %s1, %s2, %id, %s3, %i) : (f32, f64, i64, i64, i64, i64, i64, i64) -> f32
      bmb_exec.kernel_yield %y : f32
    }
    bmb_exec.ewise "add" ins(%u, %r : memref<4x8xf32>, memref<8xf32>) outs(%o : memref<4x8xf32>)
    return
  }
}
