// bmb-fuse-kernels: every bmb_exec.ewise becomes a GEMM epilogue, a GEMM
// residual, a fused residual norm or (part of) a generated kernel.
// RUN: bmb-opt %s --bmb-fuse-kernels | FileCheck %s

// act(x . w^T + b) -> one GEMM with the activation as its epilogue, writing
// the activation's output; the temporary is gone.
// CHECK-LABEL: func.func @bias_gelu(
// CHECK-SAME: %[[X:.*]]: memref<1x8x8xf32>, %[[W:.*]]: memref<32x8xf32>, %[[B:.*]]: memref<32xf32>, %[[R:.*]]: index)
// CHECK-NEXT: %[[Y:.*]] = bmb_exec.alloc : memref<1x8x32xf32>
// CHECK-NEXT: bmb_exec.gemm %[[X]], %[[W]] bias %[[B]] : memref<32xf32> outs(%[[Y]]) rows %[[R]] {act = "gelu_tanh"} : memref<1x8x8xf32>, memref<32x8xf32> -> memref<1x8x32xf32>
// CHECK-NEXT: bmb_exec.output "y" %[[Y]] rows_dim 1
// CHECK-NEXT: return
func.func @bias_gelu(%x: memref<1x8x8xf32>, %w: memref<32x8xf32>, %b: memref<32xf32>, %rows: index) {
  %t = bmb_exec.alloc : memref<1x8x32xf32>
  bmb_exec.gemm %x, %w bias %b : memref<32xf32> outs(%t) rows %rows : memref<1x8x8xf32>, memref<32x8xf32> -> memref<1x8x32xf32>
  %y = bmb_exec.alloc : memref<1x8x32xf32>
  bmb_exec.ewise "gelu_tanh" ins(%t : memref<1x8x32xf32>) outs(%y : memref<1x8x32xf32>) rows %rows
  bmb_exec.output "y" %y rows_dim 1 : memref<1x8x32xf32>
  return
}

// s = a + r; y = layernorm(s) -> one residual layernorm that writes s and y.
// CHECK-LABEL: func.func @residual_layernorm(
// CHECK-SAME: %[[A:.*]]: memref<1x8x8xf32>, %[[R:.*]]: memref<1x8x8xf32>, %[[W:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>, %[[N:.*]]: index)
// CHECK-NEXT: %[[S:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK-NEXT: %[[Y:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.norm "layernorm" %[[A]], %[[W]] bias %[[B]] : memref<8xf32> residual %[[R]] : memref<1x8x8xf32> sum %[[S]] : memref<1x8x8xf32> outs(%[[Y]]) rows %[[N]] {eps = 1.000000e-05 : f64} : memref<1x8x8xf32>, memref<8xf32> -> memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.output "s" %[[S]]
// CHECK-NEXT: bmb_exec.output "y" %[[Y]]
// CHECK-NOT: bmb_exec.ewise
func.func @residual_layernorm(%a: memref<1x8x8xf32>, %r: memref<1x8x8xf32>, %w: memref<8xf32>, %b: memref<8xf32>, %rows: index) {
  %s = bmb_exec.alloc : memref<1x8x8xf32>
  bmb_exec.ewise "add" ins(%a, %r : memref<1x8x8xf32>, memref<1x8x8xf32>) outs(%s : memref<1x8x8xf32>) rows %rows
  %y = bmb_exec.alloc : memref<1x8x8xf32>
  bmb_exec.norm "layernorm" %s, %w bias %b : memref<8xf32> outs(%y) rows %rows {eps = 1.0e-5 : f64} : memref<1x8x8xf32>, memref<8xf32> -> memref<1x8x8xf32>
  bmb_exec.output "s" %s rows_dim 1 : memref<1x8x8xf32>
  bmb_exec.output "y" %y rows_dim 1 : memref<1x8x8xf32>
  return
}

// y = r + x . w^T -> one GEMM with residual r writing y (the residual stream
// after an attention or MLP projection).
// CHECK-LABEL: func.func @gemm_residual(
// CHECK-SAME: %[[X:.*]]: memref<1x8x32xf32>, %[[W:.*]]: memref<8x32xf32>, %[[B:.*]]: memref<8xf32>, %[[R:.*]]: memref<1x8x8xf32>)
// CHECK-NEXT: %[[Y:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.gemm %[[X]], %[[W]] bias %[[B]] : memref<8xf32> residual %[[R]] : memref<1x8x8xf32> outs(%[[Y]]) : memref<1x8x32xf32>, memref<8x32xf32> -> memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.output "y" %[[Y]]
// CHECK-NEXT: return
func.func @gemm_residual(%x: memref<1x8x32xf32>, %w: memref<8x32xf32>, %b: memref<8xf32>, %r: memref<1x8x8xf32>) {
  %t = bmb_exec.alloc : memref<1x8x8xf32>
  bmb_exec.gemm %x, %w bias %b : memref<8xf32> outs(%t) : memref<1x8x32xf32>, memref<8x32xf32> -> memref<1x8x8xf32>
  %y = bmb_exec.alloc : memref<1x8x8xf32>
  bmb_exec.ewise "add" ins(%r, %t : memref<1x8x8xf32>, memref<1x8x8xf32>) outs(%y : memref<1x8x8xf32>)
  bmb_exec.output "y" %y rows_dim -1 : memref<1x8x8xf32>
  return
}

// A chain of element-wise ops whose temporaries only the next op reads: one
// generated kernel over the chain's outer inputs, with the scalar body of
// every step (scale, tanh, the broadcast add of a bias, silu).
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[X:.*]]: memref<1x8x8xf32>, %[[B:.*]]: memref<8xf32>, %[[N:.*]]: index)
// CHECK-NEXT: %[[Y:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.kernel @k{{[0-9]+}} ins(%[[X]], %[[B]] : memref<1x8x8xf32>, memref<8xf32>) outs(%[[Y]] : memref<1x8x8xf32>) rows %[[N]] {
// CHECK-NEXT: ^bb0(%[[A0:.*]]: f32, %[[A1:.*]]: f32):
// CHECK-NEXT: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[SC:.*]] = arith.mulf %[[A0]], %[[HALF]] : f32
// CHECK-NEXT: %[[TH:.*]] = math.tanh %[[SC]] : f32
// CHECK-NEXT: %[[ADD:.*]] = arith.addf %[[TH]], %[[A1]] : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[ADD]] : f32
// CHECK-NEXT: %[[EXP:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[DEN:.*]] = arith.addf %[[ONE]], %[[EXP]] : f32
// CHECK-NEXT: %[[SILU:.*]] = arith.divf %[[ADD]], %[[DEN]] : f32
// CHECK-NEXT: bmb_exec.kernel_yield %[[SILU]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: bmb_exec.output "y" %[[Y]]
// CHECK-NEXT: return
func.func @chain(%x: memref<1x8x8xf32>, %b: memref<8xf32>, %rows: index) {
  %t0 = bmb_exec.alloc : memref<1x8x8xf32>
  bmb_exec.ewise "scale" ins(%x : memref<1x8x8xf32>) outs(%t0 : memref<1x8x8xf32>) rows %rows {factor = 0.5 : f64}
  %t1 = bmb_exec.alloc : memref<1x8x8xf32>
  bmb_exec.ewise "tanh" ins(%t0 : memref<1x8x8xf32>) outs(%t1 : memref<1x8x8xf32>) rows %rows
  %t2 = bmb_exec.alloc : memref<1x8x8xf32>
  bmb_exec.ewise "add" ins(%t1, %b : memref<1x8x8xf32>, memref<8xf32>) outs(%t2 : memref<1x8x8xf32>) rows %rows
  %y = bmb_exec.alloc : memref<1x8x8xf32>
  bmb_exec.ewise "silu" ins(%t2 : memref<1x8x8xf32>) outs(%y : memref<1x8x8xf32>) rows %rows
  bmb_exec.output "y" %y rows_dim 1 : memref<1x8x8xf32>
  return
}

// The GEMM's output is also returned: it cannot take the GELU as its
// epilogue, and the GELU becomes a generated kernel.
// CHECK-LABEL: func.func @shared_temp(
// CHECK-SAME: %[[X:.*]]: memref<1x8x8xf32>, %[[W:.*]]: memref<32x8xf32>)
// CHECK-NEXT: %[[T:.*]] = bmb_exec.alloc : memref<1x8x32xf32>
// CHECK-NEXT: bmb_exec.gemm %[[X]], %[[W]] outs(%[[T]]) : memref<1x8x8xf32>, memref<32x8xf32> -> memref<1x8x32xf32>
// CHECK-NEXT: %[[Y:.*]] = bmb_exec.alloc : memref<1x8x32xf32>
// CHECK-NEXT: bmb_exec.kernel @k{{[0-9]+}} ins(%[[T]] : memref<1x8x32xf32>) outs(%[[Y]] : memref<1x8x32xf32>) {
// CHECK: math.erf
// CHECK: bmb_exec.kernel_yield
// CHECK-NEXT: }
// CHECK-NEXT: bmb_exec.output "t" %[[T]]
// CHECK-NEXT: bmb_exec.output "y" %[[Y]]
func.func @shared_temp(%x: memref<1x8x8xf32>, %w: memref<32x8xf32>) {
  %t = bmb_exec.alloc : memref<1x8x32xf32>
  bmb_exec.gemm %x, %w outs(%t) : memref<1x8x8xf32>, memref<32x8xf32> -> memref<1x8x32xf32>
  %y = bmb_exec.alloc : memref<1x8x32xf32>
  bmb_exec.ewise "gelu_erf" ins(%t : memref<1x8x32xf32>) outs(%y : memref<1x8x32xf32>)
  bmb_exec.output "t" %t rows_dim -1 : memref<1x8x32xf32>
  bmb_exec.output "y" %y rows_dim -1 : memref<1x8x32xf32>
  return
}

// Two kernels read the first one's output: it stays a kernel of its own
// (merging would compute it twice), and each reader is a kernel too.
// CHECK-LABEL: func.func @two_readers(
// CHECK-SAME: %[[X:.*]]: memref<16xf32>)
// CHECK: %[[T:.*]] = bmb_exec.alloc : memref<16xf32>
// CHECK-NEXT: bmb_exec.kernel @[[K0:k[0-9]+]] ins(%[[X]] : memref<16xf32>) outs(%[[T]] : memref<16xf32>) {
// CHECK: arith.maximumf
// CHECK: bmb_exec.kernel @{{k[0-9]+}} ins(%[[T]] : memref<16xf32>) outs(%{{.*}} : memref<16xf32>) {
// CHECK: math.tanh
// CHECK: bmb_exec.kernel @{{k[0-9]+}} ins(%[[T]], %[[X]] : memref<16xf32>, memref<16xf32>) outs(%{{.*}} : memref<16xf32>) {
// CHECK: arith.mulf
// CHECK-NOT: bmb_exec.ewise
func.func @two_readers(%x: memref<16xf32>) {
  %t = bmb_exec.alloc : memref<16xf32>
  bmb_exec.ewise "relu" ins(%x : memref<16xf32>) outs(%t : memref<16xf32>)
  %a = bmb_exec.alloc : memref<16xf32>
  bmb_exec.ewise "tanh" ins(%t : memref<16xf32>) outs(%a : memref<16xf32>)
  %b = bmb_exec.alloc : memref<16xf32>
  bmb_exec.ewise "mul" ins(%t, %x : memref<16xf32>, memref<16xf32>) outs(%b : memref<16xf32>)
  bmb_exec.output "a" %a rows_dim -1 : memref<16xf32>
  bmb_exec.output "b" %b rows_dim -1 : memref<16xf32>
  return
}

// In a repeat body, an activation written straight into the carried buffer
// %h fuses into the GEMM when the GEMM does not read %h; %h's alloc stays
// outside the loop.
// CHECK-LABEL: func.func @carried_epilogue(
// CHECK-SAME: %[[X:.*]]: memref<1x8x8xf32>, %[[W:.*]]: memref<8x8xf32>, %[[LW:.*]]: memref<8xf32>)
// CHECK: %[[H:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK: scf.for
// CHECK-NEXT: %[[N:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.norm "rmsnorm" %[[H]], %[[LW]] outs(%[[N]])
// CHECK-NEXT: bmb_exec.gemm %[[N]], %[[W]] outs(%[[H]]) {act = "relu"} : memref<1x8x8xf32>, memref<8x8xf32> -> memref<1x8x8xf32>
// CHECK-NEXT: }
func.func @carried_epilogue(%x: memref<1x8x8xf32>, %w: memref<8x8xf32>, %lw: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %h = bmb_exec.alloc : memref<1x8x8xf32>
  bmb_exec.ewise "copy" ins(%x : memref<1x8x8xf32>) outs(%h : memref<1x8x8xf32>)
  scf.for %i = %c0 to %c2 step %c1 {
    %n = bmb_exec.alloc : memref<1x8x8xf32>
    bmb_exec.norm "rmsnorm" %h, %lw outs(%n) {eps = 1.0e-6 : f64} : memref<1x8x8xf32>, memref<8xf32> -> memref<1x8x8xf32>
    %t = bmb_exec.alloc : memref<1x8x8xf32>
    bmb_exec.gemm %n, %w outs(%t) : memref<1x8x8xf32>, memref<8x8xf32> -> memref<1x8x8xf32>
    bmb_exec.ewise "relu" ins(%t : memref<1x8x8xf32>) outs(%h : memref<1x8x8xf32>)
  }
  bmb_exec.output "h" %h rows_dim -1 : memref<1x8x8xf32>
  return
}

// relu(linear(h)) written into %h itself: the GEMM reads %h, so it must not
// write it (BLAS forbids c aliasing a). The GEMM keeps its temporary and the
// ReLU is a generated kernel.
// CHECK-LABEL: func.func @carried_reads_out(
// CHECK-SAME: %[[X:.*]]: memref<1x8x8xf32>, %[[W:.*]]: memref<8x8xf32>)
// CHECK: %[[H:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK: scf.for
// CHECK-NEXT: %[[T:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.gemm %[[H]], %[[W]] outs(%[[T]]) : memref<1x8x8xf32>, memref<8x8xf32> -> memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.kernel @{{k[0-9]+}} ins(%[[T]] : memref<1x8x8xf32>) outs(%[[H]] : memref<1x8x8xf32>) {
// CHECK: arith.maximumf
// The residual add into %h: a GEMM residual would write %h while reading it.
// CHECK: %[[T2:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.gemm %[[H]], %[[W]] outs(%[[T2]]) : memref<1x8x8xf32>, memref<8x8xf32> -> memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.kernel @{{k[0-9]+}} ins(%[[X]], %[[T2]] : memref<1x8x8xf32>, memref<1x8x8xf32>) outs(%[[H]] : memref<1x8x8xf32>) {
// CHECK: arith.addf
func.func @carried_reads_out(%x: memref<1x8x8xf32>, %w: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %h = bmb_exec.alloc : memref<1x8x8xf32>
  bmb_exec.ewise "copy" ins(%x : memref<1x8x8xf32>) outs(%h : memref<1x8x8xf32>)
  scf.for %i = %c0 to %c2 step %c1 {
    %t = bmb_exec.alloc : memref<1x8x8xf32>
    bmb_exec.gemm %h, %w outs(%t) : memref<1x8x8xf32>, memref<8x8xf32> -> memref<1x8x8xf32>
    bmb_exec.ewise "relu" ins(%t : memref<1x8x8xf32>) outs(%h : memref<1x8x8xf32>)
    %t2 = bmb_exec.alloc : memref<1x8x8xf32>
    bmb_exec.gemm %h, %w outs(%t2) : memref<1x8x8xf32>, memref<8x8xf32> -> memref<1x8x8xf32>
    bmb_exec.ewise "add" ins(%x, %t2 : memref<1x8x8xf32>, memref<1x8x8xf32>) outs(%h : memref<1x8x8xf32>)
  }
  bmb_exec.output "h" %h rows_dim -1 : memref<1x8x8xf32>
  return
}
