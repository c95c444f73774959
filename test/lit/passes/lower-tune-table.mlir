// With soft tokens and `train_only` naming the token embedding, the soft
// embedding's gradient goes to both tables: ids below the vocabulary into
// the embedding's gradient, the soft tokens' into @prompt.soft's (one
// bmb_exec.soft_embedding_grad writing both). Neither table is decayed.
// RUN: bmb-opt %s --bmb-lower-prompts --bmb-insert-deltas --bmb-attach-loss --bmb-autodiff --bmb-insert-optimizer --bmb-lower-to-exec | FileCheck %s

bmb.model @Enc layer "Enc" {
  bmb.param @wte.w : tensor<64x8xf32> init normal(0.02)
  bmb.param @head.w : tensor<64x8xf32> init normal(0.02)
  func.func @forward(%tokens: tensor<2x16xi32> {bmb.name = "tokens"}) -> tensor<2x16x64xf32> {
    %w = bmb.param_get @wte.w : tensor<64x8xf32>
    %e = bmb.embedding %tokens, %w : (tensor<2x16xi32>, tensor<64x8xf32>) -> tensor<2x16x8xf32>
    %h = bmb.param_get @head.w : tensor<64x8xf32>
    %l = bmb.lm_head %e, %h : (tensor<2x16x8xf32>, tensor<64x8xf32>) -> tensor<2x16x64xf32>
    return %l : tensor<2x16x64xf32>
  }
}
bmb.template @t "{text_a} {soft} was {mask}"
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
bmb.job @j tune for @Enc from "enc.safetensors" {batch = 2 : i64, prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 16 : i64, train_only = ["wte"]}

// Both tables are embeddings: no weight decay by default (bmb-insert-optimizer).
// CHECK: bmb_exec.param @prompt.soft : memref<1x8xf32>
// CHECK: bmb_exec.param @wte.w : memref<64x8xf32>
// CHECK: bmb_exec.param @head.w frozen
// CHECK-LABEL: func.func @forward_backward
// CHECK-DAG: %[[DT:.*]] = bmb_exec.grad_ref @wte.w : memref<64x8xf32>
// CHECK-DAG: %[[DS:.*]] = bmb_exec.grad_ref @prompt.soft : memref<1x8xf32>
// CHECK: bmb_exec.soft_embedding_grad %{{.*}}, %{{.*}} outs(dtable %[[DT]] : memref<64x8xf32> dsoft %[[DS]] : memref<1x8xf32>) {num = 64 : i64}
