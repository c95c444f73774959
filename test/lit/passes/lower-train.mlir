// bmb-lower-to-exec on a train job (docs/training-ir.md, section 4): three
// entries with no arguments; the forward loop writes the saves into slices
// of [count, ...] buffers, the backward loop counts down and reads them;
// weight, bias, norm and embedding gradients accumulate straight into
// bmb_exec.grad_ref; other backward kernels get a zeroed buffer.
// RUN: bmb-opt %S/Inputs/tiny-train.mlir --bmb-lower-to-exec | FileCheck %s

// CHECK-LABEL: bmb_exec.program @pretrain
// CHECK-SAME: train = {accumulate = 1 : i64, batch = 2 : i64, beta1 = 9.000000e-01 : f64
// CHECK-SAME: clip = 1.000000e+00 : f64, data = "corpus.txt", data_tokenizer = "byte"
// CHECK-SAME: eval_every = 0 : i64, log_every = 0 : i64
// CHECK-SAME: opt_slots = 2 : i64, optimizer = "adamw", save_every = 0 : i64, schedule = "cosine", seq = 4 : i64, steps = 10 : i64, warmup = 2 : i64
// CHECK: bmb_exec.param @wpe.w frozen : memref<4x8xf32>
// The one param AdamW decays.
// CHECK: bmb_exec.param @h.fc.w stacked decay : memref<2x8x8xf32>

// CHECK-LABEL: func.func @forward_backward() {
// CHECK: %[[TOK:.*]] = bmb_exec.input "tokens" kind "tokens" rows_dim -1 : memref<2x4xi32>
// CHECK: %[[TGT:.*]] = bmb_exec.input "targets" kind "targets" rows_dim -1 : memref<2x4xi32>
// Three saves of the two layers.
// CHECK: %[[AS:.*]] = bmb_exec.alloc : memref<2x2x4x8xf32>
// CHECK: %[[NS:.*]] = bmb_exec.alloc : memref<2x2x4x8xf32>
// CHECK: %[[LS:.*]] = bmb_exec.alloc : memref<2x2x4x8xf32>
// CHECK: scf.for %[[I:.*]] =
// The layernorm's output is the save: written in its slice.
// CHECK: %[[N:.*]] = bmb_exec.layer_view %[[NS]][%[[I]]] : memref<2x2x4x8xf32> to memref<2x4x8xf32>
// CHECK: bmb_exec.norm "layernorm" %{{.*}} outs(%[[N]])
// CHECK: %[[L:.*]] = bmb_exec.layer_view %[[LS]][%[[I]]]
// CHECK: bmb_exec.gemm %[[N]], %{{.*}} outs(%[[L]])
// The iteration's input is carried: copied into its slice.
// CHECK: %[[A:.*]] = bmb_exec.layer_view %[[AS]][%[[I]]]
// CHECK: bmb_exec.ewise "copy" ins(%{{.*}}) outs(%[[A]] : memref<2x4x8xf32>)
// CHECK: }
// The head and the loss: dlogits overwrite the logits, scaled by StepArgs.
// CHECK: %[[LOGITS:.*]] = bmb_exec.alloc : memref<2x4x16xf32>
// CHECK: bmb_exec.gemm %{{.*}} outs(%[[LOGITS]])
// CHECK: %[[LOSSES:.*]] = bmb_exec.alloc : memref<8xf32>
// CHECK: %[[S:.*]] = bmb_exec.step_arg "dloss_scale" : f64
// CHECK: bmb_exec.classifier %[[LOGITS]], %[[TGT]] outs(%[[LOSSES]]) dlogits(%[[LOGITS]] : memref<2x4x16xf32>) scale %[[S]]
// CHECK: %[[DH:.*]] = bmb_exec.alloc : memref<2x4x8xf32>
// CHECK: bmb_exec.matmul %[[LOGITS]], %{{.*}} outs(%[[DH]]) : memref<2x4x16xf32>, memref<16x8xf32> -> memref<2x4x8xf32>
// CHECK: %[[GW:.*]] = bmb_exec.grad_ref @wte.w : memref<16x8xf32>
// CHECK: bmb_exec.matmul %[[LOGITS]], %{{.*}} outs(%[[GW]]) {accumulate, trans_a}
// The reverse repeat: layer 1 - j.
// CHECK: scf.for %[[J:.*]] =
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[R:.*]] = arith.subi %[[C1]], %[[J]] : index
// CHECK: bmb_exec.layer_view %[[AS]][%[[R]]]
// CHECK: bmb_exec.ewise "gelu_tanh_grad" ins(%{{.*}}, %[[DH]] : memref<2x4x8xf32>, memref<2x4x8xf32>)
// CHECK: %[[GFW:.*]] = bmb_exec.grad_ref @h.fc.w[%[[R]]] : memref<8x8xf32>
// CHECK: bmb_exec.matmul %{{.*}} outs(%[[GFW]]) {accumulate, trans_a}
// CHECK: %[[GFB:.*]] = bmb_exec.grad_ref @h.fc.b[%[[R]]] : memref<8xf32>
// CHECK: bmb_exec.sum_rows %{{.*}} outs(%[[GFB]])
// CHECK: bmb_exec.param_ref @h.ln.w
// CHECK-NEXT: %[[DX:.*]] = bmb_exec.alloc : memref<2x4x8xf32>
// CHECK-NEXT: bmb_exec.zero %[[DX]]
// CHECK: bmb_exec.norm_grad "layernorm" {{.*}} dx(%[[DX]] : memref<2x4x8xf32>) dw(%{{.*}} : memref<8xf32>) db(%{{.*}} : memref<8xf32>)
// CHECK: }
// The frozen positional embedding gets nothing; the token table does.
// CHECK-NOT: grad_ref @wpe.w
// CHECK: %[[GE:.*]] = bmb_exec.grad_ref @wte.w
// CHECK: bmb_exec.embedding_grad %[[DH]], %[[TOK]] outs(%[[GE]])
// CHECK: bmb_exec.output "losses" %[[LOSSES]] rows_dim -1 : memref<8xf32>

// CHECK-LABEL: func.func @optimizer_step() {
// CHECK: %[[NORM:.*]] = bmb_exec.grad_norm : f64
// CHECK: bmb_exec.set_step_arg "grad_norm" %[[NORM]] : f64
// CHECK: bmb_exec.clip_grads %[[NORM]] {max_norm = 1.000000e+00 : f64}
// CHECK: %[[STEP:.*]] = bmb_exec.step_arg "step" : i64
// CHECK: %[[LR:.*]] = bmb_exec.step_arg "lr" : f64
// CHECK: bmb_exec.adamw_update @wte.w lr %[[LR]] step %[[STEP]]
// CHECK: bmb_exec.adamw_update @h.fc.w lr
// CHECK-SAME: weight_decay = 1.000000e-01 : f64
// CHECK: bmb_exec.zero_grads
// CHECK-NEXT: return

// Evaluation: the loss only, no saves, no gradients.
// CHECK-LABEL: func.func @evaluate() {
// CHECK-NOT: layer_view
// CHECK-NOT: grad_ref
// CHECK: bmb_exec.classifier %{{.*}}, %{{.*}} outs(%[[EL:.*]]) {ignore_index = -100 : i64}
// CHECK: bmb_exec.output "losses" %[[EL]]
