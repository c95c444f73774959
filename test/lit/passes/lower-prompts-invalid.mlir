// bmb-lower-prompts refuses a prompt the job cannot feed: each error is at
// the tune job. (From a .bmb file: lower-prompts-bmb.test.)
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-lower-prompts

bmb.model @M layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
}
bmb.template @t "{text_a} It was {mask}."
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
// expected-error @+1 {{bmb-lower-prompts: tune job @j: template 'u' reads {text_b}, but the job's tsv data declares no text_b column (write data = tsv(..., text_b = N))}}
bmb.job @j tune for @M from "m.safetensors" {data = {kind = "tsv", path = "d.tsv", text_a = 0 : i64, label = 1 : i64}, prompt = {kind = "prompt", template = "u", verbalizer = "v"}, seq = 8 : i64}
bmb.template @u "{text_a} {text_b} It was {mask}."

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
}
bmb.template @t "{meta: title} It was {mask}."
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
// expected-error @+1 {{bmb-lower-prompts: tune job @j: template 't' reads {meta: title}, but tsv data has only text_a, text_b and label columns (named fields need jsonl data)}}
bmb.job @j tune for @M from "m.safetensors" {data = {kind = "tsv", path = "d.tsv", text_a = 0 : i64, label = 1 : i64}, prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
}
bmb.template @t "{text_a} It was good."
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
// expected-error @+1 {{bmb-lower-prompts: tune job @j: template 't' has no {mask}: the verbalizer reads the label words' scores there}}
bmb.job @j tune for @M from "m.safetensors" {prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
}
bmb.template @t "{text_a} {mask} and {mask}."
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
// expected-error @+1 {{bmb-lower-prompts: tune job @j: template 't' has 2 {mask}s but the prompt names 1 verbalizer (write prompt = t -> [V1, V2, ...], one per mask)}}
bmb.job @j tune for @M from "m.safetensors" {prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
}
bmb.template @t "{soft} {text_a} {mask}"
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
// expected-error @+1 {{bmb-lower-prompts: tune job @j: soft tokens and soft verbalizers are rows of the token embedding, but model @M has no bmb.embedding}}
bmb.job @j tune for @M from "m.safetensors" {prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @prompt.soft : tensor<64x8xf32> init normal(0.02)
  func.func @forward(%tokens: tensor<2x16xi32>) -> tensor<2x16x8xf32> {
    %w = bmb.param_get @prompt.soft : tensor<64x8xf32>
    %e = bmb.embedding %tokens, %w : (tensor<2x16xi32>, tensor<64x8xf32>) -> tensor<2x16x8xf32>
    return %e : tensor<2x16x8xf32>
  }
}
bmb.template @t "{soft} {text_a} {mask}"
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
// expected-error @+1 {{bmb-lower-prompts: tune job @j: model @M already has a parameter @prompt.soft}}
bmb.job @j tune for @M from "m.safetensors" {prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
}
// expected-error @+1 {{bmb-lower-prompts: tune job @j has no prompt (write prompt = TEMPLATE -> VERBALIZER)}}
bmb.job @j tune for @M from "m.safetensors" {seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
}
bmb.template @t "{text_a} It was {mask}."
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
// expected-error @+1 {{bmb-lower-prompts: tune job @j: verbalizer 'v' has label 'pos', which is not among the data's labels}}
bmb.job @j tune for @M from "m.safetensors" {data = {kind = "jsonl", path = "d.jsonl", labels = ["neg", "positive"]}, prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
}
bmb.template @t "{text_a} It was {mask}."
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
// expected-error @+1 {{bmb-lower-prompts: tune job @j: the data's label 'neutral' has no label words in verbalizer 'v'}}
bmb.job @j tune for @M from "m.safetensors" {data = {kind = "tsv", path = "d.tsv", text_a = 0 : i64, label = 1 : i64, labels = ["neg", "pos", "neutral"]}, prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
}
bmb.template @t "{text_a} It was {mask}."
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
// expected-error @+1 {{bmb-lower-prompts: tune job @j: a prompt fills its template from the fields of each example, but text data has none (use tsv(...) or jsonl(...))}}
bmb.job @j tune for @M from "m.safetensors" {data = {kind = "text", path = "corpus.txt"}, prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
}
bmb.template @t "{text_a} {mask}."
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
// expected-error @+1 {{bmb-lower-prompts: tune job @j: template 't' has 1 {mask} but the prompt names 2 verbalizers (write prompt = t -> [V1, V2, ...], one per mask)}}
bmb.job @j tune for @M from "m.safetensors" {prompt = {kind = "prompt", template = "t", verbalizers = ["v", "v"]}, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
}
bmb.template @t "{text_a} {mask} {mask}."
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
bmb.verbalizer @w labels ["pos", "neg"] words [["good"], ["bad"]]
// expected-error @+1 {{bmb-lower-prompts: tune job @j: verbalizer 'w' must list the labels of 'v' in the same order: every mask scores the same classes}}
bmb.job @j tune for @M from "m.safetensors" {prompt = {kind = "prompt", template = "t", verbalizers = ["v", "w"]}, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
}
bmb.template @t "{text_a} {mask} {mask}."
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]] {soft}
// expected-error @+1 {{bmb-lower-prompts: tune job @j: a soft verbalizer with several masks is not implemented yet}}
bmb.job @j tune for @M from "m.safetensors" {prompt = {kind = "prompt", template = "t", verbalizers = ["v", "v"]}, seq = 8 : i64}

// -----

// Soft tokens are ids past the vocabulary: only the token embedding may read
// the token ids.
bmb.model @M layer "M" {
  bmb.param @wte.w : tensor<16x4xf32> init zeros
  func.func @forward(%tokens: tensor<1x8xi32>) -> (tensor<1x8x4xf32>, tensor<1x8xi32>) {
    %w = bmb.param_get @wte.w : tensor<16x4xf32>
    %e = bmb.embedding %tokens, %w : (tensor<1x8xi32>, tensor<16x4xf32>) -> tensor<1x8x4xf32>
    // expected-note @+1 {{the op reading the token ids}}
    return %e, %tokens : tensor<1x8x4xf32>, tensor<1x8xi32>
  }
}
bmb.template @t "{text_a} {soft} It was {mask}."
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
// expected-error @+1 {{bmb-lower-prompts: tune job @j has soft tokens (ids >= vocab), which only the token embedding may read, but 'func.return' reads the token ids too}}
bmb.job @j tune for @M from "m.safetensors" {prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 8 : i64}
