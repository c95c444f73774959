// bmb-param-stats reports sizes that overflow int64 instead of printing
// nonsense, and warns about optimizers it does not know.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-param-stats -o /dev/null

bmb.model @Huge layer "Huge" {
  // expected-error @+1 {{bmb-param-stats: the element count of @w : 'tensor<4294967296x4294967296xf32>' overflows int64}}
  bmb.param @w : tensor<4294967296x4294967296xf32> init zeros
}

// -----

bmb.model @Wide layer "Wide" {
  // 2^62 elements fit in int64; their 2^64 bytes do not.
  // expected-error @+1 {{bmb-param-stats: the size in bytes of @w : 'tensor<4611686018427387904xf32>' overflows int64}}
  bmb.param @w : tensor<4611686018427387904xf32> init zeros
}

// -----

bmb.model @Many layer "Many" {
  bmb.param @a.w : tensor<2305843009213693952xf16> init zeros
  // Each is 2^62 bytes; the two make 2^63 > 2^63 - 1.
  // expected-error @+1 {{bmb-param-stats: the parameter bytes of @Many overflow int64 at @b.w}}
  bmb.param @b.w : tensor<2305843009213693952xf16> init zeros
}

// -----

bmb.model @Big layer "Big" {
  bmb.param @w : tensor<1152921504606846976xi8> init zeros
}
// 2^60 trainable elements take 2^60 bytes as i8, but AdamW's 2 x f32 states
// take 2^63.
// expected-error @+1 {{bmb-param-stats: the optimizer state of @pretrain (2 x f32 per trainable element) overflows int64}}
bmb.job @pretrain train for @Big {optimizer = {kind = "adamw"}}

// -----

bmb.model @Tiny layer "Tiny" {
  bmb.param @w : tensor<8xf32> init zeros
}
// expected-warning @+1 {{bmb-param-stats: unknown optimizer 'lion'; counting 2 f32 states per trainable element, as AdamW}}
bmb.job @pretrain train for @Tiny {optimizer = {kind = "lion"}}
