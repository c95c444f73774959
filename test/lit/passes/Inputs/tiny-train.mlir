// A train job after bmb-attach-loss, bmb-autodiff and bmb-insert-optimizer,
// written by hand as docs/training-ir.md fixes it: an embedding (trainable,
// also the tied head), a frozen positional embedding, a repeat of two
// blocks x + gelu(linear(layernorm(x))) saving three values per layer, the
// fused classifier, the reverse repeat, and AdamW with clipping.
module attributes {bmb.source = "tiny.bmb"} {
  bmb.model @Tiny layer "Tiny" {
    bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
    bmb.param @wpe.w : tensor<4x8xf32> init normal(0.02) frozen
    bmb.param @h.ln.w : tensor<2x8xf32> init ones stacked 1
    bmb.param @h.ln.b : tensor<2x8xf32> init zeros stacked 1
    bmb.param @h.fc.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
    bmb.param @h.fc.b : tensor<2x8xf32> init zeros stacked 1

    func.func @loss(%tok: tensor<2x4xi32> {bmb.name = "tokens"},
                    %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
      %w = bmb.param_get @wte.w : tensor<16x8xf32>
      %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      %p = bmb.arange 4 : tensor<4xi32>
      %pw = bmb.param_get @wpe.w : tensor<4x8xf32>
      %pe = bmb.embedding %p, %pw : (tensor<4xi32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      %x = bmb.add %e, %pe : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
      %y = bmb.repeat 2 "h" layer "Block" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
      ^bb0(%i: index, %a: tensor<2x4x8xf32>):
        %lw = bmb.param_get @h.ln.w[%i] : tensor<8xf32>
        %lb = bmb.param_get @h.ln.b[%i] : tensor<8xf32>
        %n = bmb.layernorm %a, %lw, %lb {eps = 1.0e-05 : f64}
            : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
        %fw = bmb.param_get @h.fc.w[%i] : tensor<8x8xf32>
        %fb = bmb.param_get @h.fc.b[%i] : tensor<8xf32>
        %l = bmb.linear %n, %fw, %fb
            : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
        %g = bmb.gelu %l approximate tanh : tensor<2x4x8xf32>
        %r = bmb.add %a, %g : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
        bmb.yield %r : tensor<2x4x8xf32>
      }
      %loss, %dl = bmb.fused_classifier %y, %w, %tgt {ignore_index = -100 : i64}
          : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
      return %loss : tensor<f32>
    }

    func.func @train_step(%tok: tensor<2x4xi32> {bmb.name = "tokens"},
                          %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
      %w = bmb.param_get @wte.w : tensor<16x8xf32>
      %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      %p = bmb.arange 4 : tensor<4xi32>
      %pw = bmb.param_get @wpe.w : tensor<4x8xf32>
      %pe = bmb.embedding %p, %pw : (tensor<4xi32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      %x = bmb.add %e, %pe : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
      %y, %as, %ns, %ls = bmb.repeat 2 "h" layer "Block" iter(%x) {num_saved = 3 : i64}
          : (tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) {
      ^bb0(%i: index, %a: tensor<2x4x8xf32>):
        %lw = bmb.param_get @h.ln.w[%i] : tensor<8xf32>
        %lb = bmb.param_get @h.ln.b[%i] : tensor<8xf32>
        %n = bmb.layernorm %a, %lw, %lb {eps = 1.0e-05 : f64}
            : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
        %fw = bmb.param_get @h.fc.w[%i] : tensor<8x8xf32>
        %fb = bmb.param_get @h.fc.b[%i] : tensor<8xf32>
        %l = bmb.linear %n, %fw, %fb
            : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
        %g = bmb.gelu %l approximate tanh : tensor<2x4x8xf32>
        %r = bmb.add %a, %g : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
        bmb.yield %r, %a, %n, %l : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
      }
      %loss, %dl = bmb.fused_classifier %y, %w, %tgt {ignore_index = -100 : i64}
          : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
      %dh = bmb.linear_grad_input %dl, %w : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      %dwh = bmb.linear_grad_weight %dl, %y : (tensor<2x4x16xf32>, tensor<2x4x8xf32>) -> tensor<16x8xf32>
      bmb.grad_accumulate @wte.w, %dwh : tensor<16x8xf32>
      %dx = bmb.repeat 2 "h" layer "Block" reverse iter(%dh) invariant(%as, %ns, %ls)
          : (tensor<2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x4x8xf32> {
      ^bb0(%i: index, %dr: tensor<2x4x8xf32>, %as1: tensor<2x2x4x8xf32>, %ns1: tensor<2x2x4x8xf32>, %ls1: tensor<2x2x4x8xf32>):
        %a = bmb.stack_get %as1[%i] : tensor<2x2x4x8xf32> -> tensor<2x4x8xf32>
        %n = bmb.stack_get %ns1[%i] : tensor<2x2x4x8xf32> -> tensor<2x4x8xf32>
        %l = bmb.stack_get %ls1[%i] : tensor<2x2x4x8xf32> -> tensor<2x4x8xf32>
        %dg = bmb.act_grad gelu_tanh %l, %dr : tensor<2x4x8xf32>
        %fw = bmb.param_get @h.fc.w[%i] : tensor<8x8xf32>
        %dfw = bmb.linear_grad_weight %dg, %n : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<8x8xf32>
        bmb.grad_accumulate @h.fc.w[%i], %dfw : tensor<8x8xf32>
        %dfb = bmb.reduce_sum %dg : tensor<2x4x8xf32> -> tensor<8xf32>
        bmb.grad_accumulate @h.fc.b[%i], %dfb : tensor<8xf32>
        %dn = bmb.linear_grad_input %dg, %fw : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
        %lw = bmb.param_get @h.ln.w[%i] : tensor<8xf32>
        %da2, %dlw, %dlb = bmb.layernorm_grad %dn, %a, %lw {eps = 1.0e-05 : f64}
            : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>)
        bmb.grad_accumulate @h.ln.w[%i], %dlw : tensor<8xf32>
        bmb.grad_accumulate @h.ln.b[%i], %dlb : tensor<8xf32>
        %da = bmb.add %dr, %da2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
        bmb.yield %da : tensor<2x4x8xf32>
      }
      %de = bmb.embedding_grad %dx, %tok : (tensor<2x4x8xf32>, tensor<2x4xi32>) -> tensor<16x8xf32>
      bmb.grad_accumulate @wte.w, %de : tensor<16x8xf32>
      return %loss : tensor<f32>
    }

    func.func @optimizer_step() {
      bmb.clip_grad_norm {max_norm = 1.0 : f64}
      bmb.adamw_update @wte.w {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
      bmb.adamw_update @h.ln.w {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
      bmb.adamw_update @h.ln.b {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
      bmb.adamw_update @h.fc.w {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.1 : f64}
      bmb.adamw_update @h.fc.b {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
      return
    }
  }
  bmb.job @pretrain train for @Tiny {batch = 2 : i64, seq = 4 : i64, steps = 10 : i64, clip = 1.0 : f64,
      data = {kind = "text", path = "corpus.txt", tokenizer = "byte"},
      optimizer = {kind = "adamw", lr = 6.0e-04 : f64, betas = [0.9, 0.95]},
      schedule = {kind = "cosine", warmup = 2 : i64}}
}
