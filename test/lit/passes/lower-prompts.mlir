// bmb-lower-prompts: the template's segments, the verbalizer and the job's
// truncate/seq become the job's bmb.prompt plan; soft tokens and a soft
// verbalizer become parameters of the model, as wide as its token embedding.
// RUN: bmb-opt %s --bmb-lower-prompts | FileCheck %s

bmb.model @Enc layer "Enc" {
  bmb.param @wte.w : tensor<64x8xf32> init normal(0.02)
  func.func @forward(%tokens: tensor<2x16xi32>) -> tensor<2x16x8xf32> {
    %w = bmb.param_get @wte.w : tensor<64x8xf32>
    %e = bmb.embedding %tokens, %w : (tensor<2x16xi32>, tensor<64x8xf32>) -> tensor<2x16x8xf32>
    return %e : tensor<2x16x8xf32>
  }
}
bmb.template @nli "{text_a} {soft: \22so\22}{soft} Question: {text_b: fixed}? {mask}. {{x}}"
bmb.verbalizer @yn labels ["no", "yes"] words [["no"], ["yes", "right"]] {reduce = "max", soft, calibrate}
bmb.job @t tune for @Enc from "enc.safetensors" {batch = 2 : i64, data = {kind = "tsv", label = 2 : i64, path = "d.tsv", text_a = 0 : i64, text_b = 1 : i64}, prompt = {kind = "prompt", template = "nli", verbalizer = "yn"}, seq = 16 : i64, truncate = "head"}
// A job of another kind is left alone.
bmb.job @other train for @Enc {batch = 2 : i64, seq = 16 : i64}

// CHECK-LABEL: bmb.model @Enc
// CHECK-DAG: bmb.param @prompt.labels : tensor<2x8xf32> init normal(0.02) {bmb.delta}
// CHECK-DAG: bmb.param @prompt.soft : tensor<2x8xf32> init normal(0.02) {bmb.delta}
// The token embedding reads soft token k (id 64 + k) from @prompt.soft.
// CHECK: func.func @forward(%[[TOK:.*]]: tensor<2x16xi32>)
// CHECK: %[[W:.*]] = bmb.param_get @wte.w
// CHECK: %[[S:.*]] = bmb.param_get @prompt.soft : tensor<2x8xf32>
// CHECK: bmb.soft_embedding %[[TOK]], %[[W]], %[[S]] : (tensor<2x16xi32>, tensor<64x8xf32>, tensor<2x8xf32>) -> tensor<2x16x8xf32>
// CHECK-NOT: bmb.embedding
// CHECK: bmb.job @t tune
// CHECK-SAME: attributes {bmb.prompt = {labels = ["no", "yes"], masks = 1 : i64, max_len = 16 : i64,
// CHECK-SAME: segments = [{kind = "field", name = "text_a", shortenable = true, space = false},
// CHECK-SAME: {index = 0 : i64, init = "so", kind = "soft", space = true},
// CHECK-SAME: {index = 1 : i64, init = "", kind = "soft", space = false},
// CHECK-SAME: {kind = "text", text = " Question:"},
// CHECK-SAME: {kind = "field", name = "text_b", shortenable = false, space = true},
// CHECK-SAME: {kind = "text", text = "?"},
// CHECK-SAME: {kind = "mask", space = true},
// CHECK-SAME: {kind = "text", text = ". {x}"}],
// CHECK-SAME: soft = ["so", ""], template = "nli", truncate = "head",
// CHECK-SAME: verbalizers = [{calibrate = true, name = "yn", reduce = "max", soft = true, words = {{\[\["no"\], \["yes", "right"\]\]}}}]}}
// CHECK: bmb.job @other train for @Enc {batch = 2 : i64, seq = 16 : i64}{{$}}

