// bmb-lower-to-exec on a train job with dropout (DESIGN decision 6): in
// forward_backward every bmb.dropout is a generated kernel calling the
// runtime's bmrt::dropout with the mask's key -- StepArgs' seed, step and
// micro-step and the repeat's layer as scalar operands, the op's rng_id as a
// constant, the element's index. The backward's dropout of the gradient has
// the forward's id and layer (count-1-j in the reverse loop), so it draws
// the same mask. evaluate runs without dropout.
// RUN: bmb-opt %S/Inputs/dropout-train.mlir --bmb-lower-to-exec | FileCheck %s
// RUN: bmb-opt %S/Inputs/dropout-train.mlir --bmb-lower-to-exec --bmb-fuse-kernels | FileCheck %s --check-prefix=FUSE

// CHECK-LABEL: func.func @forward_backward() {
// Outside a repeat: layer 0.
// CHECK: bmb_exec.embedding %{{.*}} outs(%[[E:.*]]) :
// CHECK: %[[L0:.*]] = arith.constant 0 : i64
// CHECK: %[[SEED:.*]] = bmb_exec.step_arg "seed" : i64
// CHECK: %[[STEP:.*]] = bmb_exec.step_arg "step" : i64
// CHECK: %[[MICRO:.*]] = bmb_exec.step_arg "micro_step" : i64
// CHECK: %[[X:.*]] = bmb_exec.alloc : memref<2x4x8xf32>
// CHECK: bmb_exec.kernel @dropout0 ins(%[[E]] : memref<2x4x8xf32>) outs(%[[X]] : memref<2x4x8xf32>) scalars(%[[SEED]], %[[STEP]], %[[MICRO]], %[[L0]] : i64, i64, i64, i64) {
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[S0:.*]]: i64, %[[S1:.*]]: i64, %[[S2:.*]]: i64, %[[S3:.*]]: i64):
// CHECK-NEXT: %[[P:.*]] = arith.constant 1.000000e-01 : f64
// CHECK-NEXT: %[[ID:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[I:.*]] = bmb_exec.elem_index : i64
// CHECK-NEXT: %[[Y:.*]] = bmb_exec.elem_call "dropout"(%[[V]], %[[P]], %[[S0]], %[[S1]], %[[S2]], %[[ID]], %[[S3]], %[[I]]) : (f32, f64, i64, i64, i64, i64, i64, i64) -> f32
// CHECK-NEXT: bmb_exec.kernel_yield %[[Y]] : f32
// Inside the forward loop: the layer is the induction variable.
// CHECK: scf.for %[[F:.*]] = %{{.*}} to %{{.*}} step
// CHECK: bmb_exec.gemm
// CHECK: %[[LF:.*]] = arith.index_cast %[[F]] : index to i64
// CHECK: bmb_exec.kernel @dropout1 ins({{.*}}) outs({{.*}}) scalars(%{{.*}}, %{{.*}}, %{{.*}}, %[[LF]] : i64, i64, i64, i64)
// CHECK: arith.constant 1 : i64
// CHECK: bmb_exec.elem_call "dropout"
// The backward loop counts down: the layer is 1 - j, the id the forward's.
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[R:.*]] = arith.subi %{{.*}}, %[[J]] : index
// CHECK: %[[LB:.*]] = arith.index_cast %[[R]] : index to i64
// CHECK: bmb_exec.kernel @dropout2 ins({{.*}}) outs({{.*}}) scalars(%{{.*}}, %{{.*}}, %{{.*}}, %[[LB]] : i64, i64, i64, i64)
// CHECK: arith.constant 1 : i64
// CHECK: bmb_exec.elem_call "dropout"
// CHECK: }
// The embedding's dropout of the gradient, before its table gradient.
// CHECK: bmb_exec.kernel @dropout3 ins({{.*}}) outs(%[[DE:.*]] : memref<2x4x8xf32>) scalars(
// CHECK: arith.constant 0 : i64
// CHECK: bmb_exec.embedding_grad %[[DE]]

// CHECK-LABEL: func.func @optimizer_step() {
// CHECK-NOT: dropout

// No dropout when evaluating.
// CHECK-LABEL: func.func @evaluate() {
// CHECK-NOT: bmb_exec.kernel
// CHECK-NOT: elem_call
// CHECK: bmb_exec.classifier

// Fusion: the block's dropout merges with the residual add after it into
// one kernel that keeps the scalar operands after the buffers.
// FUSE-LABEL: func.func @forward_backward() {
// FUSE: scf.for
// FUSE: bmb_exec.kernel @k{{[0-9]+}} ins(%{{.*}}, %{{.*}} : memref<2x4x8xf32>, memref<2x4x8xf32>) outs(%{{.*}} : memref<2x4x8xf32>) scalars(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : i64, i64, i64, i64) {
// FUSE-NEXT: ^bb0(%[[G:.*]]: f32, %[[A:.*]]: f32, %[[S0:.*]]: i64, %[[S1:.*]]: i64, %[[S2:.*]]: i64, %[[S3:.*]]: i64):
// FUSE: %[[D:.*]] = bmb_exec.elem_call "dropout"(%[[G]], %{{.*}}, %[[S0]], %[[S1]], %[[S2]], %{{.*}}, %[[S3]], %{{.*}})
// FUSE-NEXT: %[[SUM:.*]] = arith.addf %[[A]], %[[D]] : f32
// FUSE-NEXT: bmb_exec.kernel_yield %[[SUM]] : f32
// FUSE-LABEL: func.func @optimizer_step() {
