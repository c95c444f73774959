// bmb-autocast: a bf16 train job's GEMM-class ops (linear, lm_head, the
// fused classifier's head) get `bmb.autocast = bf16`; norms, activations,
// embeddings and the loss do not. bmb-autodiff gives the gradient GEMMs of a
// marked op the mark, and the lowering puts it on the bmb_exec.gemm /
// bmb_exec.matmul it builds (the emitter then calls gemm_lowp/gemm_ex_lowp).
// RUN: bmb-opt %s -split-input-file --bmb-autocast | FileCheck %s --check-prefix=MARK
// RUN: bmb-opt %s -split-input-file --bmb-autocast --bmb-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: bmb-opt %s -split-input-file --bmb-autocast --bmb-autodiff --bmb-insert-optimizer --bmb-lower-to-exec | FileCheck %s --check-prefix=EXEC
// attention=false (bmbc's choice for --target=cuda): attention stays fp32, the GEMMs are marked.
// RUN: bmb-opt %s -split-input-file '--bmb-autocast=attention=false' | FileCheck %s --check-prefix=NOATT
// NOATT-NOT:  bmb.attention {{.*}}bmb.autocast
// NOATT:      bmb.attention {{.*}} {causal, heads = 2 : i64
// NOATT-NEXT: bmb.fused_classifier {{.*}} {bmb.autocast = bf16
// NOATT-NOT:  bmb.attention {{.*}}bmb.autocast

// MARK-LABEL: func.func @loss
// MARK:         bmb.embedding
// MARK-NOT:     bmb.autocast
// MARK:         bmb.layernorm
// MARK-NOT:     bmb.autocast
// MARK:         bmb.linear {{.*}} {bmb.autocast = bf16}
// MARK:         bmb.gelu
// MARK-NOT:     bmb.autocast
// MARK:         bmb.fused_classifier {{.*}} {bmb.autocast = bf16}
// MARK-NOT:     bmb.autocast
// MARK:         return

// The forward of @train_step is @loss's (marks included); each marked op's
// gradient GEMMs are marked, nothing else in the reverse pass.
// GRAD-LABEL: func.func @train_step
// GRAD:         bmb.linear {{.*}} {bmb.autocast = bf16}
// GRAD:         bmb.fused_classifier {{.*}} {bmb.autocast = bf16}
// GRAD-NEXT:    bmb.linear_grad_weight {{.*}} {bmb.autocast = bf16}
// GRAD-NEXT:    bmb.linear_grad_input {{.*}} {bmb.autocast = bf16}
// GRAD:         bmb.act_grad gelu_tanh
// GRAD-NOT:     autocast
// GRAD-SAME:    tensor<2x4x8xf32>
// GRAD:         bmb.linear_grad_weight {{.*}} {bmb.autocast = bf16}
// GRAD:         bmb.linear_grad_input {{.*}} {bmb.autocast = bf16}
// GRAD:         bmb.layernorm_grad
// GRAD-NOT:     autocast
// GRAD-SAME:    eps

// EXEC-LABEL: func.func @forward_backward
// EXEC:         bmb_exec.norm "layernorm"
// EXEC-NOT:     autocast
// EXEC-SAME:    eps
// EXEC:         bmb_exec.gemm {{.*}} {bmb.autocast = bf16}
// EXEC:         bmb_exec.gemm {{.*}} {bmb.autocast = bf16}
// EXEC:         bmb_exec.classifier
// EXEC:         bmb_exec.matmul {{.*}} {accumulate, bmb.autocast = bf16, trans_a}
// EXEC:         bmb_exec.matmul {{.*}} {bmb.autocast = bf16}
// EXEC-LABEL: func.func @evaluate
// EXEC:         bmb_exec.gemm {{.*}} {bmb.autocast = bf16}
// EXEC:         bmb_exec.gemm {{.*}} {bmb.autocast = bf16}
bmb.model @Tiny layer "Tiny" {
  bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @ln.w : tensor<8xf32> init ones
  bmb.param @ln.b : tensor<8xf32> init zeros
  bmb.param @fc.w : tensor<8x8xf32> init normal(0.02)
  bmb.param @fc.b : tensor<8xf32> init zeros
  func.func @loss(%tok: tensor<2x4xi32> {bmb.name = "tokens"},
                  %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
    %w = bmb.param_get @wte.w : tensor<16x8xf32>
    %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    %lw = bmb.param_get @ln.w : tensor<8xf32>
    %lb = bmb.param_get @ln.b : tensor<8xf32>
    %n = bmb.layernorm %e, %lw, %lb {eps = 1.0e-05 : f64}
        : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %fw = bmb.param_get @fc.w : tensor<8x8xf32>
    %fb = bmb.param_get @fc.b : tensor<8xf32>
    %l = bmb.linear %n, %fw, %fb
        : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %g = bmb.gelu %l approximate tanh : tensor<2x4x8xf32>
    %loss, %dl = bmb.fused_classifier %g, %w, %tgt {ignore_index = -100 : i64}
        : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
    return %loss : tensor<f32>
  }
}
bmb.job @train train for @Tiny {batch = 2 : i64, seq = 4 : i64, precision = "bf16"}

// -----

// Attention's two matmuls are autocast: bmb.attention is marked, its
// gradient op too, and both lowered ops; softmax inside them stays fp32
// (the kernels round only the matmuls' inputs).
// MARK-LABEL: func.func @loss
// MARK:         bmb.attention {{.*}} {bmb.autocast = bf16, causal, heads = 2 : i64
// MARK:         bmb.fused_classifier {{.*}} {bmb.autocast = bf16

// GRAD-LABEL: func.func @train_step
// GRAD:         bmb.attention {{.*}} {bmb.autocast = bf16, causal
// GRAD:         bmb.fused_classifier {{.*}} {bmb.autocast = bf16
// GRAD:         bmb.attention_grad {{.*}} {bmb.autocast = bf16, causal

// EXEC-LABEL: func.func @forward_backward
// EXEC:         bmb_exec.attention {{.*}} {bmb.autocast = bf16, capacity = 4 : i64, causal
// EXEC:         bmb_exec.attention_grad {{.*}} {bmb.autocast = bf16, causal
// EXEC-LABEL: func.func @evaluate
// EXEC:         bmb_exec.attention {{.*}} {bmb.autocast = bf16
bmb.model @Attn layer "Attn" {
  bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
  func.func @loss(%tok: tensor<2x4xi32> {bmb.name = "tokens"},
                  %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
    %w = bmb.param_get @wte.w : tensor<16x8xf32>
    %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    %a = bmb.attention %e, %e, %e {causal, heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64}
        : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %loss, %dl = bmb.fused_classifier %a, %w, %tgt {ignore_index = -100 : i64}
        : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
    return %loss : tensor<f32>
  }
}
bmb.job @train train for @Attn {batch = 2 : i64, seq = 4 : i64, precision = "bf16"}

// -----

// fp32 (and fp64, or no setting): nothing is marked, attention included.
// MARK-LABEL: func.func @loss
// MARK-NOT:     autocast
// MARK:         return
bmb.model @Plain layer "Plain" {
  bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @fc.w : tensor<8x8xf32> init normal(0.02)
  func.func @loss(%tok: tensor<2x4xi32> {bmb.name = "tokens"},
                  %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
    %w = bmb.param_get @wte.w : tensor<16x8xf32>
    %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    %a = bmb.attention %e, %e, %e {causal, heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64}
        : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %fw = bmb.param_get @fc.w : tensor<8x8xf32>
    %l = bmb.linear %a, %fw : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
    %loss, %dl = bmb.fused_classifier %l, %w, %tgt {ignore_index = -100 : i64}
        : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
    return %loss : tensor<f32>
  }
}
bmb.job @train train for @Plain {batch = 2 : i64, seq = 4 : i64, precision = "fp32"}
