// bmb-lower-prompts with one verbalizer per mask (`prompt = two -> [first,
// second]`): the plan lists them in mask order.
// RUN: bmb-opt %s --bmb-lower-prompts | FileCheck %s

bmb.model @M layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
}
bmb.template @two "{text_a} It was {mask}, really {mask}."
bmb.verbalizer @first labels ["negative", "positive"] words [["bad"], ["good"]]
bmb.verbalizer @second labels ["negative", "positive"] words [["awful"], ["great"]] {reduce = "max"}
bmb.job @t tune for @M from "m.safetensors" {data = {kind = "jsonl", path = "d.jsonl"}, prompt = {kind = "prompt", template = "two", verbalizers = ["first", "second"]}, seq = 16 : i64}

// CHECK: bmb.prompt = {labels = ["negative", "positive"], masks = 2 : i64,
// CHECK-SAME: {kind = "mask", space = true}, {kind = "text", text = ", really"}, {kind = "mask", space = true}
// CHECK-SAME: verbalizers = [{calibrate = false, name = "first", reduce = "mean", soft = false, words = {{\[\["bad"\], \["good"\]\]}}},
// CHECK-SAME: {calibrate = false, name = "second", reduce = "max", soft = false, words = {{\[\["awful"\], \["great"\]\]}}}]}}
