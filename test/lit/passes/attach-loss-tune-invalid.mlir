// bmb-attach-loss (tune mode) and bmb-insert-deltas refuse what a tune job
// cannot train, and a calibrated soft verbalizer; each error is at the job.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-lower-prompts --bmb-insert-deltas --bmb-attach-loss

bmb.model @Enc layer "Enc" {
  bmb.param @wte.w : tensor<64x8xf32> init normal(0.02)
  func.func @forward(%tokens: tensor<2x16xi32>) -> tensor<2x16x64xf32> {
    %w = bmb.param_get @wte.w : tensor<64x8xf32>
    %e = bmb.embedding %tokens, %w : (tensor<2x16xi32>, tensor<64x8xf32>) -> tensor<2x16x8xf32>
    %l = bmb.lm_head %e, %w : (tensor<2x16x8xf32>, tensor<64x8xf32>) -> tensor<2x16x64xf32>
    return %l : tensor<2x16x64xf32>
  }
}
bmb.template @t "{text_a} It was {mask}."
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
// expected-error @+1 {{bmb-insert-deltas: tune job @j trains nothing: its backbone is frozen; add a delta (delta = lora(...)), a soft token ({soft} in the template), a soft verbalizer (soft = true) or train_only = [...]}}
bmb.job @j tune for @Enc from "m.safetensors" {batch = 2 : i64, prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 16 : i64}

// -----

bmb.model @Enc layer "Enc" {
  bmb.param @wte.w : tensor<64x8xf32> init normal(0.02)
  func.func @forward(%tokens: tensor<2x16xi32>) -> tensor<2x16x64xf32> {
    %w = bmb.param_get @wte.w : tensor<64x8xf32>
    %e = bmb.embedding %tokens, %w : (tensor<2x16xi32>, tensor<64x8xf32>) -> tensor<2x16x8xf32>
    %l = bmb.lm_head %e, %w : (tensor<2x16x8xf32>, tensor<64x8xf32>) -> tensor<2x16x64xf32>
    return %l : tensor<2x16x64xf32>
  }
}
bmb.template @t "{text_a} It was {mask}."
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]] {soft, calibrate}
// expected-error @+1 {{bmb-attach-loss: tune job @j: the soft verbalizer 'v' has calibrate = true, but calibration divides label-word probabilities and a soft verbalizer has none (remove calibrate)}}
bmb.job @j tune for @Enc from "m.safetensors" {batch = 2 : i64, prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 16 : i64}

// -----

// The logits must come from a vocabulary head (here a bare bmb.linear,
// not a layer): [B, T, 64] is not the embedding's width, so it is not
// taken for hidden states either.
bmb.model @Enc layer "Enc" {
  bmb.param @wte.w : tensor<64x8xf32> init normal(0.02)
  bmb.param @out.w : tensor<64x8xf32> init normal(0.02)
  func.func @forward(%tokens: tensor<2x16xi32>) -> tensor<2x16x64xf32> {
    %w = bmb.param_get @wte.w : tensor<64x8xf32>
    %e = bmb.embedding %tokens, %w : (tensor<2x16xi32>, tensor<64x8xf32>) -> tensor<2x16x8xf32>
    %o = bmb.param_get @out.w : tensor<64x8xf32>
    %l = bmb.linear %e, %o : (tensor<2x16x8xf32>, tensor<64x8xf32>) -> tensor<2x16x64xf32>
    return %l : tensor<2x16x64xf32>
  }
}
bmb.template @t "{text_a} {soft} It was {mask}."
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
// expected-error @+1 {{bmb-attach-loss: tune job @j: the logits of @Enc must come from a vocabulary head (lm_head, or a Linear layer) at the end of @forward: the verbalizer reads the head's rows of the label words}}
bmb.job @j tune for @Enc from "m.safetensors" {batch = 2 : i64, prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 16 : i64}

// -----

// A headless encoder (its first result is [B, T, D] hidden states, D the
// token embedding's width) has no label-word logits: a manual verbalizer
// is refused, naming the soft one.
bmb.model @Enc layer "Enc" {
  bmb.param @wte.w : tensor<64x8xf32> init normal(0.02)
  func.func @forward(%tokens: tensor<2x16xi32>) -> (tensor<2x16x8xf32>, tensor<2x8xf32>) {
    %w = bmb.param_get @wte.w : tensor<64x8xf32>
    %e = bmb.embedding %tokens, %w : (tensor<2x16xi32>, tensor<64x8xf32>) -> tensor<2x16x8xf32>
    %p = bmb.take %e {axis = 1 : i64, index = 0 : i64} : (tensor<2x16x8xf32>) -> tensor<2x8xf32>
    return %e, %p : tensor<2x16x8xf32>, tensor<2x8xf32>
  }
}
bmb.template @t "{text_a} {soft} It was {mask}."
bmb.verbalizer @v labels ["neg", "pos"] words [["bad"], ["good"]]
// expected-error @+1 {{bmb-attach-loss: tune job @j: model @Enc has no vocabulary head (its @forward returns [B, T, 8] hidden states first), so verbalizer 'v' has no label-word logits to read: a manual verbalizer needs a masked or causal LM; give this encoder a soft verbalizer (soft = true), which scores the classes from the {mask} row's hidden state}}
bmb.job @j tune for @Enc from "m.safetensors" {batch = 2 : i64, prompt = {kind = "prompt", template = "t", verbalizer = "v"}, seq = 16 : i64}
