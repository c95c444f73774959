// bmb-attach-loss: the train job's @loss(tokens, targets).
// RUN: bmb-opt %s -split-input-file --bmb-attach-loss -verify-diagnostics | FileCheck %s

// An lm_head at the end of the forward and the loss become one
// fused_classifier; @forward is kept.
// CHECK-LABEL: bmb.model @Head
bmb.model @Head layer "M" {
  bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
  // CHECK: func.func @forward(%{{.*}}: tensor<2x4xi32> {bmb.name = "tokens"}) -> tensor<2x4x16xf32>
  // CHECK:   bmb.lm_head
  // CHECK: func.func @loss(%[[TOK:[a-z0-9#]+]]: tensor<2x4xi32> {bmb.name = "tokens"}, %[[TGT:[a-z0-9#]+]]: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
  // CHECK:   %[[X:[a-z0-9#]+]] = bmb.layer "wte"
  // CHECK:     bmb.yield
  // CHECK:   %[[W:[a-z0-9#]+]] = bmb.param_get @wte.w
  // CHECK-NOT: bmb.lm_head
  // CHECK:   %[[LOSS:[a-z0-9#]+]], %{{.*}} = bmb.fused_classifier %[[X]], %[[W]], %[[TGT]] : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
  // CHECK:   return %[[LOSS]] : tensor<f32>
  func.func @forward(%tokens: tensor<2x4xi32> {bmb.name = "tokens"}) -> tensor<2x4x16xf32> {
    %x = bmb.layer "wte" layer "Embedding" (%tokens) : (tensor<2x4xi32>) -> tensor<2x4x8xf32> {
    ^bb0(%ids: tensor<2x4xi32>):
      %w = bmb.param_get @wte.w : tensor<16x8xf32>
      %e = bmb.embedding %ids, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %e : tensor<2x4x8xf32>
    }
    %w = bmb.param_get @wte.w : tensor<16x8xf32>
    %l = bmb.lm_head %x, %w : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
    return %l : tensor<2x4x16xf32>
  }
}
bmb.job @train train for @Head {batch = 2 : i64, seq = 4 : i64}

// -----

// A Linear layer without bias (Llama's untied head) is the same x . w^T: the
// classifier takes its input and its weight, read outside the layer, and the
// layer goes.
// CHECK-LABEL: bmb.model @Linear
// CHECK: func.func @loss(%{{.*}}: tensor<2x4xi32>, %[[TGT:[a-z0-9#]+]]: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
// CHECK:   %[[X:[a-z0-9#]+]] = bmb.embedding
// CHECK-NOT: bmb.layer "head"
// CHECK:   %[[W:[a-z0-9#]+]] = bmb.param_get @head.w : tensor<16x8xf32>
// CHECK:   %[[LOSS:[a-z0-9#]+]], %{{.*}} = bmb.fused_classifier %[[X]], %[[W]], %[[TGT]]
// CHECK:   return %[[LOSS]]
bmb.model @Linear layer "M" {
  bmb.param @head.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @emb.w : tensor<16x8xf32> init normal(0.02)
  func.func @forward(%tokens: tensor<2x4xi32>) -> tensor<2x4x16xf32> {
    %w0 = bmb.param_get @emb.w : tensor<16x8xf32>
    %x = bmb.embedding %tokens, %w0 : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    %l = bmb.layer "head" layer "Linear" (%x) : (tensor<2x4x8xf32>) -> tensor<2x4x16xf32> {
    ^bb0(%v: tensor<2x4x8xf32>):
      %w = bmb.param_get @head.w : tensor<16x8xf32>
      %r = bmb.linear %v, %w : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
      bmb.yield %r : tensor<2x4x16xf32>
    }
    return %l : tensor<2x4x16xf32>
  }
}
bmb.job @train train for @Linear {batch = 2 : i64, seq = 4 : i64}

// -----

// A head with a bias keeps its logits: bmb.cross_entropy on them.
// CHECK-LABEL: bmb.model @Biased
// CHECK: func.func @loss(%{{.*}}: tensor<2x4xi32>, %[[TGT:[a-z0-9#]+]]: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
// CHECK:   %[[L:[a-z0-9#]+]] = bmb.layer "head" layer "Linear"
// CHECK:   %[[LOSS:[a-z0-9#]+]] = bmb.cross_entropy %[[L]], %[[TGT]] : (tensor<2x4x16xf32>, tensor<2x4xi32>) -> tensor<f32>
// CHECK:   return %[[LOSS]]
bmb.model @Biased layer "M" {
  bmb.param @head.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @head.b : tensor<16xf32> init zeros
  bmb.param @emb.w : tensor<16x8xf32> init normal(0.02)
  func.func @forward(%tokens: tensor<2x4xi32>) -> tensor<2x4x16xf32> {
    %w0 = bmb.param_get @emb.w : tensor<16x8xf32>
    %x = bmb.embedding %tokens, %w0 : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    %l = bmb.layer "head" layer "Linear" (%x) : (tensor<2x4x8xf32>) -> tensor<2x4x16xf32> {
    ^bb0(%v: tensor<2x4x8xf32>):
      %w = bmb.param_get @head.w : tensor<16x8xf32>
      %b = bmb.param_get @head.b : tensor<16xf32>
      %r = bmb.linear %v, %w, %b : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
      bmb.yield %r : tensor<2x4x16xf32>
    }
    return %l : tensor<2x4x16xf32>
  }
}
bmb.job @train train for @Biased {batch = 2 : i64, seq = 4 : i64}

// -----

// Without a train job nothing changes.
// CHECK-LABEL: bmb.model @Infer
// CHECK-NOT: @loss
bmb.model @Infer layer "M" {
  func.func @forward(%tokens: tensor<2x4xi32>) -> tensor<2x4xi32> {
    return %tokens : tensor<2x4xi32>
  }
}
bmb.job @chat infer for @Infer {}

// -----

// An encoder (classification logits) is not a causal LM.
bmb.model @Classifier layer "M" {
  bmb.param @w : tensor<3x8xf32> init normal(0.02)
  func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x3xf32> {
    %w = bmb.param_get @w : tensor<3x8xf32>
    %l = bmb.linear %x, %w : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<2x3xf32>
    return %l : tensor<2x3xf32>
  }
}
// expected-error @+1 {{bmb-attach-loss: train job @cls needs a causal LM, whose @forward maps one i32 [B, T] input to [B, T, vocab] logits, but its input is not an i32 [B, T] tensor (an encoder trains with objective = masked_lm(...); classification objectives are not implemented yet)}}
bmb.job @cls train for @Classifier {batch = 2 : i64}

// -----

// An encoder's forward (a second input, the attention mask) under the
// default objective, causal_lm.
bmb.model @MLM layer "M" {
  func.func @forward(%tokens: tensor<2x4xi32>, %mask: tensor<2x4xi32>) -> tensor<2x4x16xf32> {
    %z = bmb.random normal {rng_id = 0 : i64} : tensor<2x4x16xf32>
    return %z : tensor<2x4x16xf32>
  }
}
// expected-error @+1 {{but @forward has 2 inputs and 1 results (an encoder trains with objective = masked_lm(...); classification objectives are not implemented yet)}}
bmb.job @mlm train for @MLM {batch = 2 : i64}

// -----

// Masked LM (objective = masked_lm): @loss(tokens, targets, token_types,
// mask); a head with a bias (BertForMaskedLM's decoder) keeps its logits.
// CHECK-LABEL: bmb.model @Encoder
// CHECK: func.func @loss(%{{.*}}: tensor<2x4xi32> {bmb.name = "tokens"}, %[[TGT:[a-z0-9#]+]]: tensor<2x4xi32> {bmb.name = "targets"}, %{{.*}}: tensor<2x4xi32> {bmb.name = "token_types"}, %{{.*}}: tensor<2x4xi32> {bmb.name = "mask"}) -> tensor<f32> {
// CHECK:   %[[L:[a-z0-9#]+]] = bmb.lm_head
// CHECK:   %[[LOSS:[a-z0-9#]+]] = bmb.cross_entropy %[[L]], %[[TGT]]
// CHECK:   return %[[LOSS]]
bmb.model @Encoder layer "M" {
  bmb.param @w : tensor<16x8xf32> init normal(0.02)
  bmb.param @t : tensor<2x8xf32> init normal(0.02)
  bmb.param @b : tensor<16xf32> init zeros
  func.func @forward(%tokens: tensor<2x4xi32> {bmb.name = "tokens"},
                     %types: tensor<2x4xi32> {bmb.name = "token_types"},
                     %mask: tensor<2x4xi32> {bmb.name = "mask"}) -> tensor<2x4x16xf32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %t = bmb.param_get @t : tensor<2x8xf32>
    %e = bmb.embedding %tokens, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    %s = bmb.embedding %types, %t : (tensor<2x4xi32>, tensor<2x8xf32>) -> tensor<2x4x8xf32>
    %x = bmb.add %e, %s : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %a = bmb.attention %x, %x, %x, %mask {heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64}
        : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4xi32>) -> tensor<2x4x8xf32>
    %b = bmb.param_get @b : tensor<16xf32>
    %l = bmb.lm_head %a, %w, %b : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
    return %l : tensor<2x4x16xf32>
  }
}
bmb.job @mlm train for @Encoder {batch = 2 : i64, seq = 4 : i64, objective = {kind = "masked_lm", prob = 0.15 : f64, mask_id = 3 : i64}}

// -----

// masked_lm on a model whose attention is causal.
bmb.model @Decoder layer "M" {
  bmb.param @w : tensor<16x8xf32> init normal(0.02)
  func.func @forward(%tokens: tensor<2x4xi32> {bmb.name = "tokens"}) -> tensor<2x4x16xf32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %e = bmb.embedding %tokens, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    %a = bmb.attention %e, %e, %e {causal, heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64}
        : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %l = bmb.lm_head %a, %w : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
    return %l : tensor<2x4x16xf32>
  }
}
// expected-error @+1 {{bmb-attach-loss: train job @mlm has objective masked_lm, whose @forward maps i32 [B, T] tokens (and token_types, mask) to [B, T, vocab] logits of a bidirectional encoder, but its attention is causal (train it with objective = causal_lm)}}
bmb.job @mlm train for @Decoder {batch = 2 : i64, seq = 4 : i64, objective = {kind = "masked_lm", mask_id = 3 : i64}}

// -----

// masked_lm without a [MASK] id.
bmb.model @NoMaskId layer "M" {
  func.func @forward(%tokens: tensor<2x4xi32> {bmb.name = "tokens"}) -> tensor<2x4x16xf32> {
    %z = bmb.random normal {rng_id = 0 : i64} : tensor<2x4x16xf32>
    return %z : tensor<2x4x16xf32>
  }
}
// expected-error @+1 {{bmb-attach-loss: objective masked_lm of train job @mlm needs mask_id = N, the [MASK] token id (it is not read from a tokenizer yet)}}
bmb.job @mlm train for @NoMaskId {batch = 2 : i64, objective = {kind = "masked_lm", prob = 0.15 : f64}}

// -----

// masked_lm with an input the runtime cannot fill.
bmb.model @Pixels layer "M" {
  func.func @forward(%tokens: tensor<2x4xi32> {bmb.name = "tokens"}, %p: tensor<2x4xi32> {bmb.name = "pixels"}) -> tensor<2x4x16xf32> {
    %z = bmb.random normal {rng_id = 0 : i64} : tensor<2x4x16xf32>
    return %z : tensor<2x4x16xf32>
  }
}
// expected-error @+1 {{but its input 1 (pixels) is not i32 [B, T] `token_types` or `mask`}}
bmb.job @mlm train for @Pixels {batch = 2 : i64, objective = {kind = "masked_lm", mask_id = 3 : i64}}

// -----

// An objective Sema does not know (hand-written IR).
bmb.model @Unknown layer "M" {
  func.func @forward(%tokens: tensor<2x4xi32>) -> tensor<2x4x16xf32> {
    %z = bmb.random normal {rng_id = 0 : i64} : tensor<2x4x16xf32>
    return %z : tensor<2x4x16xf32>
  }
}
// expected-error @+1 {{bmb-attach-loss: unknown objective 'contrastive' of train job @c (causal_lm or masked_lm)}}
bmb.job @c train for @Unknown {batch = 2 : i64, objective = {kind = "contrastive"}}
