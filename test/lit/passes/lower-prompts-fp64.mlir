// Soft tokens (and a soft verbalizer's rows) have the token embedding's
// element type: f64 in a precision = fp64 program.
// RUN: bmb-opt %s --bmb-lower-prompts | FileCheck %s

bmb.model @Enc layer "Enc" {
  bmb.param @wte.w : tensor<64x8xf64> init normal(0.02)
  func.func @forward(%tokens: tensor<2x16xi32>) -> tensor<2x16x8xf64> {
    %w = bmb.param_get @wte.w : tensor<64x8xf64>
    %e = bmb.embedding %tokens, %w : (tensor<2x16xi32>, tensor<64x8xf64>) -> tensor<2x16x8xf64>
    return %e : tensor<2x16x8xf64>
  }
}
bmb.template @t "{text_a} {soft} It was {mask}."
bmb.verbalizer @v labels ["no", "yes"] words [["no"], ["yes"]] {soft}
bmb.job @j tune for @Enc from "enc.safetensors" {batch = 2 : i64, prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 16 : i64}

// CHECK-DAG: bmb.param @prompt.soft : tensor<1x8xf64> init normal(0.02) {bmb.delta}
// CHECK-DAG: bmb.param @prompt.labels : tensor<2x8xf64> init normal(0.02) {bmb.delta}
// CHECK: bmb.soft_embedding %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x16xi32>, tensor<64x8xf64>, tensor<1x8xf64>) -> tensor<2x16x8xf64>
