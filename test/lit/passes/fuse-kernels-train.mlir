// bmb-fuse-kernels on gradient element-wise ops: an activation derivative
// becomes a call of the runtime's element function inside a generated
// kernel and merges with the ops around it; an in-place accumulate
// into a gradient stays a kernel over its own buffer.
// RUN: bmb-opt %s --bmb-fuse-kernels | FileCheck %s

bmb_exec.program @t {
  bmb_exec.param @b : memref<8xf32>
  // CHECK-LABEL: func.func @f
  func.func @f() {
    %x = bmb_exec.alloc : memref<4x8xf32>
    %dy = bmb_exec.alloc : memref<4x8xf32>
    %r = bmb_exec.alloc : memref<4x8xf32>
    %t = bmb_exec.alloc : memref<4x8xf32>
    %o = bmb_exec.alloc : memref<4x8xf32>
    // The chain gelu' -> add -> silu' is one kernel.
    // CHECK: bmb_exec.kernel @k{{[0-9]+}} ins(%[[XA:.*]], %{{.*}}, %{{.*}}, %[[XA]] : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>) outs(
    // CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[DY:.*]]: f32, %[[R:.*]]: f32, %[[X2:.*]]: f32):
    // CHECK-NEXT: %[[D:.*]] = bmb_exec.elem_call "gelu_tanh_backward"(%[[X]], %[[DY]]) : (f32, f32) -> f32
    // CHECK-NEXT: %[[S:.*]] = arith.addf %[[D]], %[[R]] : f32
    // CHECK-NEXT: %[[E:.*]] = bmb_exec.elem_call "silu_backward"(%[[X2]], %[[S]]) : (f32, f32) -> f32
    // CHECK-NEXT: bmb_exec.kernel_yield %[[E]] : f32
    bmb_exec.ewise "gelu_tanh_grad" ins(%x, %dy : memref<4x8xf32>, memref<4x8xf32>) outs(%t : memref<4x8xf32>)
    bmb_exec.ewise "add" ins(%t, %r : memref<4x8xf32>, memref<4x8xf32>) outs(%o : memref<4x8xf32>)
    %u = bmb_exec.alloc : memref<4x8xf32>
    bmb_exec.ewise "silu_grad" ins(%x, %o : memref<4x8xf32>, memref<4x8xf32>) outs(%u : memref<4x8xf32>)
    // CHECK: %[[G:.*]] = bmb_exec.grad_ref @b : memref<8xf32>
    // CHECK: bmb_exec.kernel @k{{[0-9]+}} ins(%[[G]], %{{.*}} : memref<8xf32>, memref<8xf32>) outs(%[[G]] : memref<8xf32>)
    %g = bmb_exec.grad_ref @b : memref<8xf32>
    %db = bmb_exec.alloc : memref<8xf32>
    bmb_exec.sum_rows %u outs(%db) : memref<4x8xf32> -> memref<8xf32>
    bmb_exec.ewise "add" ins(%g, %db : memref<8xf32>, memref<8xf32>) outs(%g : memref<8xf32>)
    return
  }
}
