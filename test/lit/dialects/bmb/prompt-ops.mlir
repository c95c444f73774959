// The prompt-tuning ops (BmbPromptOps.td) parse, verify and print back.
// RUN: bmb-opt %s | bmb-opt | FileCheck %s

func.func @ops(%ids: tensor<2x16xi32>, %w: tensor<64x8xf32>, %soft: tensor<1x8xf32>,
               %pos: tensor<2x1xi32>, %labels: tensor<2xi32>, %words: tensor<1x2x2x8xi32>,
               %calib: tensor<1x2x2xf32>, %bias: tensor<64xf32>) {
  // CHECK: bmb.soft_embedding %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x16xi32>, tensor<64x8xf32>, tensor<1x8xf32>) -> tensor<2x16x8xf32>
  %e = bmb.soft_embedding %ids, %w, %soft : (tensor<2x16xi32>, tensor<64x8xf32>, tensor<1x8xf32>) -> tensor<2x16x8xf32>
  // CHECK: bmb.soft_embedding_grad %{{.*}}, %{{.*}} : (tensor<2x16x8xf32>, tensor<2x16xi32>) -> (tensor<64x8xf32>, tensor<1x8xf32>)
  %dw, %ds = bmb.soft_embedding_grad %e, %ids : (tensor<2x16x8xf32>, tensor<2x16xi32>) -> (tensor<64x8xf32>, tensor<1x8xf32>)
  // CHECK: bmb.gather_rows %{{.*}}, %{{.*}} : (tensor<2x16x8xf32>, tensor<2x1xi32>) -> tensor<2x8xf32>
  %r = bmb.gather_rows %e, %pos : (tensor<2x16x8xf32>, tensor<2x1xi32>) -> tensor<2x8xf32>
  // CHECK: bmb.gather_rows_grad %{{.*}}, %{{.*}} : (tensor<2x8xf32>, tensor<2x1xi32>) -> tensor<2x16x8xf32>
  %dh = bmb.gather_rows_grad %r, %pos : (tensor<2x8xf32>, tensor<2x1xi32>) -> tensor<2x16x8xf32>
  // CHECK: bmb.verbalizer_loss %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {reduce = ["max"]}
  %l, %dl, %s, %p = bmb.verbalizer_loss %r, %w, %labels, %words, %calib, %bias {reduce = ["max"]}
      : (tensor<2x8xf32>, tensor<64x8xf32>, tensor<2xi32>, tensor<1x2x2x8xi32>, tensor<1x2x2xf32>, tensor<64xf32>)
      -> (tensor<f32>, tensor<2x64xf32>, tensor<2x2xf32>, tensor<2x1x2x2xf32>)
  return
}
