// bmb-param-stats: per-instance, per-dtype and total parameter counts, and the
// training memory of train jobs. The IR is unchanged.
// RUN: bmb-opt %s --bmb-param-stats -o /dev/null | FileCheck %s
// RUN: bmb-opt %s --bmb-param-stats=output=%t | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s < %t

// GPT2Nano (vocab 512, ctx 64, dim 64, 2 layers, 4 heads): the repeated
// Block's parameters are stacked [2, ...].
// CHECK-LABEL: model @GPT2Nano (GPT2)
// CHECK-NEXT:  instance        repeat       parameters       bytes
// CHECK-NEXT:  wte                            32,768   128.0 KiB
// CHECK-NEXT:  wpe                             4,096    16.0 KiB
// CHECK-NEXT:  h.ln1               x2            256     1.0 KiB
// CHECK-NEXT:  h.attn.q            x2          8,320    32.5 KiB
// CHECK-NEXT:  h.attn.k            x2          8,320    32.5 KiB
// CHECK-NEXT:  h.attn.v            x2          8,320    32.5 KiB
// CHECK-NEXT:  h.attn.o            x2          8,320    32.5 KiB
// CHECK-NEXT:  h.ln2               x2            256     1.0 KiB
// CHECK-NEXT:  h.mlp.up            x2         33,280   130.0 KiB
// CHECK-NEXT:  h.mlp.down          x2         32,896   128.5 KiB
// CHECK-NEXT:  ln_f                              128       512 B
// CHECK-NEXT: {{^  -+$}}
// CHECK-NEXT:  dtype f32                     136,960   535.0 KiB
// CHECK-NEXT:  total                         136,960   535.0 KiB
// CHECK-NEXT: train job @pretrain (adamw)
// CHECK-NEXT:   parameters                         535.0 KiB
// CHECK-NEXT:   gradients                          535.0 KiB
// CHECK-NEXT:   optimizer state (2 x f32)            1.0 MiB
// CHECK-NEXT:   total                                2.1 MiB
// IR: bmb.model @GPT2Nano layer "GPT2"
// IR: bmb.param @h.mlp.down.b : tensor<2x64xf32> init zeros stacked 1
// IR: bmb.job @pretrain train for @GPT2Nano
bmb.model @GPT2Nano layer "GPT2" {
  bmb.param @wte.w : tensor<512x64xf32> init normal(0.02)
  bmb.param @wpe.w : tensor<64x64xf32> init normal(0.02)
  bmb.param @h.ln1.w : tensor<2x64xf32> init ones stacked 1
  bmb.param @h.ln1.b : tensor<2x64xf32> init zeros stacked 1
  bmb.param @h.attn.q.w : tensor<2x64x64xf32> init normal(0.02) stacked 1
  bmb.param @h.attn.q.b : tensor<2x64xf32> init zeros stacked 1
  bmb.param @h.attn.k.w : tensor<2x64x64xf32> init normal(0.02) stacked 1
  bmb.param @h.attn.k.b : tensor<2x64xf32> init zeros stacked 1
  bmb.param @h.attn.v.w : tensor<2x64x64xf32> init normal(0.02) stacked 1
  bmb.param @h.attn.v.b : tensor<2x64xf32> init zeros stacked 1
  bmb.param @h.attn.o.w : tensor<2x64x64xf32> init normal(0.02) stacked 1
  bmb.param @h.attn.o.b : tensor<2x64xf32> init zeros stacked 1
  bmb.param @h.ln2.w : tensor<2x64xf32> init ones stacked 1
  bmb.param @h.ln2.b : tensor<2x64xf32> init zeros stacked 1
  bmb.param @h.mlp.up.w : tensor<2x256x64xf32> init normal(0.02) stacked 1
  bmb.param @h.mlp.up.b : tensor<2x256xf32> init zeros stacked 1
  bmb.param @h.mlp.down.w : tensor<2x64x256xf32> init normal(0.02) stacked 1
  bmb.param @h.mlp.down.b : tensor<2x64xf32> init zeros stacked 1
  bmb.param @ln_f.w : tensor<64xf32> init ones
  bmb.param @ln_f.b : tensor<64xf32> init zeros
}
bmb.job @pretrain train for @GPT2Nano {batch = 4 : i64, seq = 64 : i64,
    optimizer = {kind = "adamw", lr = 1.0e-3 : f64}}
bmb.job @chat infer for @GPT2Nano from "ckpt/" {}

// Mixed dtypes, a frozen parameter, the model's own parameter, a doubly
// stacked one, and two train jobs: SGD with momentum (1 state) and without.
// CHECK-LABEL: model @Mixed (Mixed)
// CHECK-NEXT:  instance        repeat       parameters       bytes
// CHECK-NEXT:  emb                            10,000    19.5 KiB
// CHECK-NEXT:  g.h                 x6          3,072    12.0 KiB
// CHECK-NEXT:  (model)                         1,000     3.9 KiB
// CHECK-NEXT: {{^  -+$}}
// CHECK-NEXT:  dtype bf16                     10,000    19.5 KiB
// CHECK-NEXT:  dtype f32                       4,072    15.9 KiB
// CHECK-NEXT:  total                          14,072    35.4 KiB
// CHECK-NEXT:  trainable                       4,072    15.9 KiB
// CHECK-NEXT: train job @sgd_momentum (sgd)
// CHECK-NEXT:   parameters                          35.4 KiB
// CHECK-NEXT:   gradients                           15.9 KiB
// CHECK-NEXT:   optimizer state (1 x f32)           15.9 KiB
// CHECK-NEXT:   total                               67.2 KiB
// CHECK-NEXT: train job @sgd_plain (sgd)
// CHECK-NEXT:   parameters                          35.4 KiB
// CHECK-NEXT:   gradients                           15.9 KiB
// CHECK-NEXT:   optimizer state (0 x f32)              0 B
// CHECK-NEXT:   total                               51.3 KiB
// CHECK-NOT: train job
bmb.model @Mixed layer "Mixed" {
  bmb.param @emb.w : tensor<1000x10xbf16> init normal(0.02) frozen
  bmb.param @g.h.w : tensor<3x2x512xf32> init ones stacked 2
  bmb.param @bias : tensor<1000xf32> init zeros
}
bmb.job @sgd_momentum train for @Mixed {optimizer = {kind = "sgd", lr = 0.1 : f64, momentum = 0.9 : f64}}
bmb.job @sgd_plain train for @Mixed {optimizer = {kind = "sgd", lr = 0.1 : f64, momentum = 0.0 : f64}}
bmb.job @tune_it tune for @Mixed {}
