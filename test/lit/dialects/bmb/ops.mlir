// Round trip of every bmb op: custom form, generic form and bytecode.
// RUN: bmb-opt %s | bmb-opt | FileCheck %s
// RUN: bmb-opt %s --mlir-print-op-generic | bmb-opt | FileCheck %s
// RUN: bmb-opt %s --emit-bytecode | bmb-opt | FileCheck %s

// CHECK-LABEL: bmb.model @Nano layer "GPT2" {
bmb.model @Nano layer "GPT2" {
  // CHECK: bmb.param @wte.w : tensor<512x64xf32> init normal(0.02)
  bmb.param @wte.w : tensor<512x64xf32> init normal(0.02)
  // CHECK: bmb.param @wpe.w : tensor<64x64xf32> init uniform(-0.1, 1.0e-05) frozen
  bmb.param @wpe.w : tensor<64x64xf32> init uniform(-0.1, 1.0e-5) frozen
  // CHECK: bmb.param @h.ln1.w : tensor<2x64xf32> init ones stacked 1
  bmb.param @h.ln1.w : tensor<2x64xf32> init ones stacked 1
  // CHECK: bmb.param @h.ln1.b : tensor<2x64xf32> init zeros stacked 1
  bmb.param @h.ln1.b : tensor<2x64xf32> init zeros stacked 1
  // CHECK: bmb.param @h.scale : tensor<2xf32> init constant(0.5) stacked 1
  bmb.param @h.scale : tensor<2xf32> init constant(5.0e-1) stacked 1
  // CHECK: bmb.param @g.h.w : tensor<3x2x64xbf16> init zeros frozen stacked 2
  bmb.param @g.h.w : tensor<3x2x64xbf16> init zeros frozen stacked 2
  // CHECK: bmb.param @bias : tensor<512xf32> init zeros{{$}}
  bmb.param @bias : tensor<512xf32> init zeros

  // CHECK: func.func @forward(%[[TOK:.*]]: tensor<4x64xi32>)
  func.func @forward(%tokens: tensor<4x64xi32>) -> tensor<4x64x512xf32> {
    // CHECK: bmb.layer "wte" layer "Embedding" (%[[TOK]]) : (tensor<4x64xi32>) -> tensor<4x64x64xf32> {
    // CHECK-NEXT: ^bb0(%[[IDS:.*]]: tensor<4x64xi32>):
    // CHECK-NEXT: %[[W:.*]] = bmb.param_get @wte.w : tensor<512x64xf32>
    // CHECK-NEXT: %[[E:.*]] = bmb.embedding %[[IDS]], %[[W]] : (tensor<4x64xi32>, tensor<512x64xf32>) -> tensor<4x64x64xf32>
    // CHECK-NEXT: bmb.yield %[[E]] : tensor<4x64x64xf32>
    %x = bmb.layer "wte" layer "Embedding" (%tokens) : (tensor<4x64xi32>) -> tensor<4x64x64xf32> {
    ^bb0(%ids: tensor<4x64xi32>):
      %w = bmb.param_get @wte.w : tensor<512x64xf32>
      %e = bmb.embedding %ids, %w : (tensor<4x64xi32>, tensor<512x64xf32>) -> tensor<4x64x64xf32>
      bmb.yield %e : tensor<4x64x64xf32>
    }
    // CHECK: bmb.arange 64 : tensor<64xi32>
    %pos = bmb.arange 64 : tensor<64xi32>
    // CHECK: bmb.add %{{.*}}, %{{.*}} : (tensor<4x64x64xf32>, tensor<64x64xf32>) -> tensor<4x64x64xf32>
    %wp = bmb.param_get @wpe.w : tensor<64x64xf32>
    %x1 = bmb.add %x, %wp : (tensor<4x64x64xf32>, tensor<64x64xf32>) -> tensor<4x64x64xf32>
    %mask = bmb.random uniform {rng_id = 9 : i64} : tensor<4x64xf32>

    // CHECK: bmb.repeat 2 "h" layer "Block" iter(%{{.*}}) invariant(%{{.*}}) : (tensor<4x64x64xf32>, tensor<64xi32>) -> tensor<4x64x64xf32> {
    // CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[A:.*]]: tensor<4x64x64xf32>, %[[P:.*]]: tensor<64xi32>):
    %y = bmb.repeat 2 "h" layer "Block" iter(%x1) invariant(%pos)
        : (tensor<4x64x64xf32>, tensor<64xi32>) -> tensor<4x64x64xf32> {
    ^bb0(%i: index, %a: tensor<4x64x64xf32>, %p: tensor<64xi32>):
      // CHECK: bmb.layer "ln1" layer "LayerNorm" (%[[I]], %[[A]]) : (index, tensor<4x64x64xf32>) -> tensor<4x64x64xf32> {
      %n = bmb.layer "ln1" layer "LayerNorm" (%i, %a) : (index, tensor<4x64x64xf32>) -> tensor<4x64x64xf32> {
      ^bb0(%j: index, %v: tensor<4x64x64xf32>):
        // CHECK: bmb.param_get @h.ln1.w[%{{.*}}] : tensor<64xf32>
        %w = bmb.param_get @h.ln1.w[%j] : tensor<64xf32>
        %b = bmb.param_get @h.ln1.b[%j] : tensor<64xf32>
        // CHECK: bmb.layernorm %{{.*}}, %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64} : (tensor<4x64x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x64x64xf32>
        %r = bmb.layernorm %v, %w, %b {eps = 1.0e-5 : f64} : (tensor<4x64x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x64x64xf32>
        bmb.yield %r : tensor<4x64x64xf32>
      }
      // CHECK: bmb.rmsnorm %{{.*}}, %{{.*}} {eps = 9.9999999999999995E-7 : f64} : (tensor<4x64x64xf32>, tensor<64xf32>) -> tensor<4x64x64xf32>
      %w2 = bmb.param_get @h.ln1.w[%i] : tensor<64xf32>
      %rn = bmb.rmsnorm %n, %w2 {eps = 1.0e-6 : f64} : (tensor<4x64x64xf32>, tensor<64xf32>) -> tensor<4x64x64xf32>
      // CHECK: bmb.rotary %{{.*}}, %{{.*}} {base = 1.000000e+04 : f64, heads = 4 : i64} : (tensor<4x64x64xf32>, tensor<64xi32>) -> tensor<4x64x64xf32>
      %q = bmb.rotary %rn, %p {base = 1.0e4 : f64, heads = 4 : i64} : (tensor<4x64x64xf32>, tensor<64xi32>) -> tensor<4x64x64xf32>
      // CHECK: bmb.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, heads = 4 : i64, kv_heads = 2 : i64, scale = 2.500000e-01 : f64} : (tensor<4x64x64xf32>, tensor<4x64x32xf32>, tensor<4x64x32xf32>) -> tensor<4x64x64xf32>
      %kv = bmb.take %n {axis = 2 : i64, index = 0 : i64} : (tensor<4x64x64xf32>) -> tensor<4x64xf32>
      %k2 = bmb.reshape %n : tensor<4x64x64xf32> -> tensor<4x64x2x32xf32>
      %k, %v2 = bmb.split %k2 {axis = 2 : i64} : tensor<4x64x2x32xf32> -> tensor<4x64x1x32xf32>, tensor<4x64x1x32xf32>
      %kr = bmb.reshape %k : tensor<4x64x1x32xf32> -> tensor<4x64x32xf32>
      %vr = bmb.reshape %v2 : tensor<4x64x1x32xf32> -> tensor<4x64x32xf32>
      %att = bmb.attention %q, %kr, %vr {causal, heads = 4 : i64, kv_heads = 2 : i64, scale = 0.25 : f64}
          : (tensor<4x64x64xf32>, tensor<4x64x32xf32>, tensor<4x64x32xf32>) -> tensor<4x64x64xf32>
      // CHECK: bmb.gelu %{{.*}} approximate tanh : tensor<4x64x64xf32>
      %g = bmb.gelu %att approximate tanh : tensor<4x64x64xf32>
      // CHECK: bmb.gelu %{{.*}} approximate none : tensor<4x64x64xf32>
      %g2 = bmb.gelu %g approximate none : tensor<4x64x64xf32>
      // CHECK: bmb.relu %{{.*}} : tensor<4x64x64xf32>
      %re = bmb.relu %g2 : tensor<4x64x64xf32>
      // CHECK: bmb.silu %{{.*}} : tensor<4x64x64xf32>
      %si = bmb.silu %re : tensor<4x64x64xf32>
      // CHECK: bmb.tanh %{{.*}} : tensor<4x64x64xf32>
      %th = bmb.tanh %si : tensor<4x64x64xf32>
      // CHECK: bmb.sub %{{.*}}, %{{.*}} : (tensor<4x64x64xf32>, tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
      %sb = bmb.sub %th, %a : (tensor<4x64x64xf32>, tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
      // CHECK: bmb.mul %{{.*}}, %{{.*}} : (tensor<4x64x64xf32>, tensor<64xf32>) -> tensor<4x64x64xf32>
      %ml = bmb.mul %sb, %w2 : (tensor<4x64x64xf32>, tensor<64xf32>) -> tensor<4x64x64xf32>
      // CHECK: bmb.scale %{{.*}} {factor = 1.250000e-01 : f64} : tensor<4x64x64xf32>
      %sc = bmb.scale %ml {factor = 0.125 : f64} : tensor<4x64x64xf32>
      // CHECK: bmb.softmax %{{.*}} {axis = -1 : i64} : tensor<4x64x64xf32>
      %sm = bmb.softmax %sc {axis = -1 : i64} : tensor<4x64x64xf32>
      // CHECK: bmb.dropout %{{.*}} {p = 1.000000e-01 : f64, rng_id = 3 : i64} : tensor<4x64x64xf32>
      %dr = bmb.dropout %sm {p = 0.1 : f64, rng_id = 3 : i64} : tensor<4x64x64xf32>
      // CHECK: bmb.transpose %{{.*}} perm [0, 2, 1] : (tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
      %tr = bmb.transpose %dr perm [0, 2, 1] : (tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
      // CHECK: bmb.yield %{{.*}} : tensor<4x64x64xf32>
      bmb.yield %tr : tensor<4x64x64xf32>
    }
    // CHECK: bmb.lm_head %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x64x64xf32>, tensor<512x64xf32>, tensor<512xf32>) -> tensor<4x64x512xf32>
    %wte = bmb.param_get @wte.w : tensor<512x64xf32>
    %bias = bmb.param_get @bias : tensor<512xf32>
    %logits = bmb.lm_head %y, %wte, %bias : (tensor<4x64x64xf32>, tensor<512x64xf32>, tensor<512xf32>) -> tensor<4x64x512xf32>
    // CHECK: bmb.linear %{{.*}}, %{{.*}} : (tensor<4x64x64xf32>, tensor<64x64xf32>) -> tensor<4x64x64xf32>
    %lin = bmb.linear %y, %wp : (tensor<4x64x64xf32>, tensor<64x64xf32>) -> tensor<4x64x64xf32>
    return %logits : tensor<4x64x512xf32>
  }

  // CHECK-LABEL: func.func @loss
  func.func @loss(%logits: tensor<4x64x512xf32>, %targets: tensor<4x64xi32>, %m: tensor<4x64xi32>,
                  %x: tensor<4x64x64xf32>) -> tensor<f32> {
    // CHECK: bmb.cross_entropy %{{.*}}, %{{.*}} : (tensor<4x64x512xf32>, tensor<4x64xi32>) -> tensor<f32>
    %l = bmb.cross_entropy %logits, %targets : (tensor<4x64x512xf32>, tensor<4x64xi32>) -> tensor<f32>
    // CHECK: bmb.cross_entropy %{{.*}}, %{{.*}} {ignore_index = 0 : i64}
    %l2 = bmb.cross_entropy %logits, %targets {ignore_index = 0 : i64} : (tensor<4x64x512xf32>, tensor<4x64xi32>) -> tensor<f32>
    // CHECK: bmb.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {heads = 2 : i64, kv_heads = 2 : i64, scale = 0.17677669529663687 : f64}
    %a = bmb.attention %x, %x, %x, %m {heads = 2 : i64, kv_heads = 2 : i64, scale = 0.17677669529663687 : f64}
        : (tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<4x64xi32>) -> tensor<4x64x64xf32>
    // CHECK: bmb.random normal {rng_id = 0 : i64} : tensor<2x3xbf16>
    %r = bmb.random normal {rng_id = 0 : i64} : tensor<2x3xbf16>
    return %l : tensor<f32>
  }
}

// CHECK-LABEL: bmb.model @Outer layer "Outer"
// Nested repeats: a doubly stacked parameter takes both induction variables,
// the outer one passed into the inner repeat as an invariant.
bmb.model @Outer layer "Outer" {
  bmb.param @g.h.w : tensor<3x2x8xf32> init ones stacked 2
  func.func @forward(%x: tensor<8xf32>) -> tensor<8xf32> {
    %y = bmb.repeat 3 "g" layer "Group" iter(%x) : (tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%i: index, %a: tensor<8xf32>):
      %z = bmb.repeat 2 "h" layer "Block" iter(%a) invariant(%i) : (tensor<8xf32>, index) -> tensor<8xf32> {
      ^bb0(%j: index, %b: tensor<8xf32>, %oi: index):
        // CHECK: bmb.param_get @g.h.w[%{{.*}}, %{{.*}}] : tensor<8xf32>
        %w = bmb.param_get @g.h.w[%oi, %j] : tensor<8xf32>
        %s = bmb.mul %b, %w : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
        bmb.yield %s : tensor<8xf32>
      }
      bmb.yield %z : tensor<8xf32>
    }
    return %y : tensor<8xf32>
  }
}

// CHECK-LABEL: bmb.model @Mapped layer "M" {
bmb.model @Mapped layer "M" {
  bmb.param @emb.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @h.q.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
  bmb.param @h.k.w : tensor<2x4x8xf32> init normal(0.02) stacked 1
  bmb.param @h.q.b : tensor<2x8xf32> init zeros stacked 1
  bmb.param @h.k.b : tensor<2x4xf32> init zeros stacked 1
  bmb.param @a.w : tensor<4x3xf32> init zeros
  bmb.param @b.w : tensor<4x5xf32> init zeros
  // CHECK: bmb.checkpoint_map "hf" [
  // CHECK-NEXT: "emb.weight" = @emb.w,
  // CHECK-NEXT: "h.{i}.qk.weight" = transpose(concat(@h.q.w, @h.k.w)),
  // CHECK-NEXT: "h.{i}.qk.bias" = concat(@h.q.b, @h.k.b),
  // CHECK-NEXT: "ab" = transpose(concat(@a.w, @b.w, axis = 1)),
  // CHECK-NEXT: "head \22tied\22" = tied(@emb.w)
  // CHECK-NEXT: ]
  bmb.checkpoint_map "hf" [
    "emb.weight" = @emb.w,
    "h.{i}.qk.weight" = transpose(concat(@h.q.w, @h.k.w, axis = 0)),
    "h.{i}.qk.bias" = concat(@h.q.b, @h.k.b),
    "ab" = transpose(concat(@a.w, @b.w, axis = 1)),
    "head \"tied\"" = tied(@emb.w)
  ]
  // CHECK: bmb.checkpoint_map "empty" []
  bmb.checkpoint_map "empty" []
}

// CHECK: bmb.job @pretrain train for @Nano {batch = 4 : i64, optimizer = {kind = "adamw", lr = 6.000000e-04 : f64}, seq = 64 : i64}
bmb.job @pretrain train for @Nano {batch = 4 : i64, seq = 64 : i64, optimizer = {kind = "adamw", lr = 6.0e-4 : f64}}
// CHECK: bmb.job @chat infer for @Nano from "ckpt/" {}
bmb.job @chat infer for @Nano from "ckpt/" {}
// CHECK: bmb.job @small compress for @Nano recipe @cook {steps = 2000 : i64}
bmb.job @small compress for @Nano recipe @cook {steps = 2000 : i64}
// CHECK: bmb.job @sst2 tune for @Nano from "bert.safetensors" {prompt = [@sentiment, @polarity]}
bmb.job @sst2 tune for @Nano from "bert.safetensors" {prompt = [@sentiment, @polarity]}
// CHECK: bmb.template @sentiment "{text_a} It was {mask}. {{[{][{]literal[}][}]}}"
bmb.template @sentiment "{text_a} It was {mask}. {{literal}}"
// CHECK: bmb.verbalizer @polarity labels ["negative", "positive"] words {{\[\["bad"\], \["good", "wonderful", "great"\]\]}}
bmb.verbalizer @polarity labels ["negative", "positive"] words [["bad"], ["good", "wonderful", "great"]]
// CHECK: bmb.template @nli "{text_a: fixed} {soft: 'so'} {meta: title, shortenable} {mask} {mask}"
bmb.template @nli "{text_a: fixed} {soft: 'so'} {meta: title, shortenable} {mask} {mask}"
// CHECK: bmb.verbalizer @yn labels ["no", "yes"] words {{\[\["no"\], \["yes"\]\]}} {calibrate, reduce = "max", soft}
bmb.verbalizer @yn labels ["no", "yes"] words [["no"], ["yes"]] {reduce = "max", soft, calibrate}
// CHECK: bmb.recipe @cook [{on = ["*.mlp.*.w"], pattern = "2:4", verb = "prune"}, {qat = true, to = "int8", verb = "quantize"}]
bmb.recipe @cook [{verb = "prune", pattern = "2:4", on = ["*.mlp.*.w"]}, {verb = "quantize", to = "int8", qat = true}]

// Prefix tuning's attention operands and a per-iteration delta's slot and
// gate (bmb-insert-deltas).
// CHECK-LABEL: bmb.model @Deltas layer "D"
bmb.model @Deltas layer "D" {
  bmb.param @h.attn.prefix_key : tensor<1x3x8xf32> init normal(0.02) stacked 1
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %y = bmb.repeat 2 "h" layer "Blk" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>):
      // CHECK: %[[S:.*]] = bmb.iteration_slot %{{.*}} [-1, 0]
      %s = bmb.iteration_slot %i [-1, 0]
      // CHECK: %[[G:.*]] = bmb.iteration_gate %{{.*}} [-1, 0] : tensor<1xf32>
      %g = bmb.iteration_gate %i [-1, 0] : tensor<1xf32>
      // CHECK: bmb.param_get @h.attn.prefix_key[%[[S]]] : tensor<3x8xf32>
      %pk = bmb.param_get @h.attn.prefix_key[%s] : tensor<3x8xf32>
      // CHECK: bmb.attention %{{.*}}, %{{.*}}, %{{.*}} prefix(%{{.*}}, %{{.*}}) gate %[[G]] {causal
      %r = bmb.attention %a, %a, %a prefix(%pk, %pk) gate %g {causal, heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64}
          : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<1xf32>) -> tensor<2x4x8xf32>
      // CHECK: bmb.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} prefix(%{{.*}}, %{{.*}}) {causal
      %dq, %dk, %dv, %dpk, %dpv = bmb.attention_grad %r, %a, %a, %a prefix(%pk, %pk) {causal, heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64}
          : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>)
          -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>)
      bmb.yield %r : tensor<2x4x8xf32>
    }
    return %y : tensor<2x4x8xf32>
  }
}
