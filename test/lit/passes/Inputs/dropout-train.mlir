// A train job with dropout, after bmb-autodiff and bmb-insert-optimizer,
// written by hand: a dropout of the embedding (id 0, outside any repeat)
// and one in each of the two repeated blocks x + dropout(linear(x)) (id 1);
// the backward applies each again to the gradient, with the same id.
module attributes {bmb.source = "dropout.bmb"} {
  bmb.model @Drop layer "Drop" {
    bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
    bmb.param @h.fc.w : tensor<2x8x8xf32> init normal(0.02) stacked 1

    func.func @loss(%tok: tensor<2x4xi32> {bmb.name = "tokens"},
                    %tgt: tensor<2x4xi32> {bmb.name = "targets"}) -> tensor<f32> {
      %w = bmb.param_get @wte.w : tensor<16x8xf32>
      %e = bmb.embedding %tok, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      %x = bmb.dropout %e {p = 1.000000e-01 : f64, rng_id = 0 : i64} : tensor<2x4x8xf32>
      %y = bmb.repeat 2 "h" layer "Block" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
      ^bb0(%i: index, %a: tensor<2x4x8xf32>):
        %fw = bmb.param_get @h.fc.w[%i] : tensor<8x8xf32>
        %l = bmb.linear %a, %fw : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
        %d = bmb.dropout %l {p = 1.000000e-01 : f64, rng_id = 1 : i64} : tensor<2x4x8xf32>
        %r = bmb.add %a, %d : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
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
      %x = bmb.dropout %e {p = 1.000000e-01 : f64, rng_id = 0 : i64} : tensor<2x4x8xf32>
      %y, %as = bmb.repeat 2 "h" layer "Block" iter(%x) {num_saved = 1 : i64}
          : (tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4x8xf32>) {
      ^bb0(%i: index, %a: tensor<2x4x8xf32>):
        %fw = bmb.param_get @h.fc.w[%i] : tensor<8x8xf32>
        %l = bmb.linear %a, %fw : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
        %d = bmb.dropout %l {p = 1.000000e-01 : f64, rng_id = 1 : i64} : tensor<2x4x8xf32>
        %r = bmb.add %a, %d : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
        bmb.yield %r, %a : tensor<2x4x8xf32>, tensor<2x4x8xf32>
      }
      %loss, %dl = bmb.fused_classifier %y, %w, %tgt {ignore_index = -100 : i64}
          : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
      %dh = bmb.linear_grad_input %dl, %w : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
      %dwh = bmb.linear_grad_weight %dl, %y : (tensor<2x4x16xf32>, tensor<2x4x8xf32>) -> tensor<16x8xf32>
      bmb.grad_accumulate @wte.w, %dwh : tensor<16x8xf32>
      %dx = bmb.repeat 2 "h" layer "Block" reverse iter(%dh) invariant(%as)
          : (tensor<2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x4x8xf32> {
      ^bb0(%i: index, %dr: tensor<2x4x8xf32>, %as1: tensor<2x2x4x8xf32>):
        %a = bmb.stack_get %as1[%i] : tensor<2x2x4x8xf32> -> tensor<2x4x8xf32>
        %dd = bmb.dropout %dr {p = 1.000000e-01 : f64, rng_id = 1 : i64} : tensor<2x4x8xf32>
        %fw = bmb.param_get @h.fc.w[%i] : tensor<8x8xf32>
        %dfw = bmb.linear_grad_weight %dd, %a : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<8x8xf32>
        bmb.grad_accumulate @h.fc.w[%i], %dfw : tensor<8x8xf32>
        %da2 = bmb.linear_grad_input %dd, %fw : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
        %da = bmb.add %dr, %da2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
        bmb.yield %da : tensor<2x4x8xf32>
      }
      %de0 = bmb.dropout %dx {p = 1.000000e-01 : f64, rng_id = 0 : i64} : tensor<2x4x8xf32>
      %de = bmb.embedding_grad %de0, %tok : (tensor<2x4x8xf32>, tensor<2x4xi32>) -> tensor<16x8xf32>
      bmb.grad_accumulate @wte.w, %de : tensor<16x8xf32>
      return %loss : tensor<f32>
    }

    func.func @optimizer_step() {
      bmb.adamw_update @wte.w {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
      bmb.adamw_update @h.fc.w {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
      return
    }
  }
  bmb.job @pretrain train for @Drop {batch = 2 : i64, seq = 4 : i64, steps = 10 : i64,
      optimizer = {kind = "adamw", lr = 6.0e-04 : f64, betas = [0.9, 0.95]}}
}
