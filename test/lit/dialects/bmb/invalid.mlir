// Every verifier message of the bmb dialect, one case each. Shape messages
// come from dialects/Bmb/ShapeRules.cpp, the same text Sema reports.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics

func.func @embedding_float_ids(%ids: tensor<8x256xf32>, %w: tensor<512x768xf32>) {
  // expected-error @+1 {{embedding: ids must have an integer dtype, got f32 (ids f32[8, 256])}}
  %0 = bmb.embedding %ids, %w : (tensor<8x256xf32>, tensor<512x768xf32>) -> tensor<8x256x768xf32>
  return
}

// -----

func.func @embedding_weight_rank(%ids: tensor<8xi32>, %w: tensor<768xf32>) {
  // expected-error @+1 {{embedding: weight must have rank 2 [num, dim], got rank 1 (weight f32[768])}}
  %0 = bmb.embedding %ids, %w : (tensor<8xi32>, tensor<768xf32>) -> tensor<8x768xf32>
  return
}

// -----

func.func @linear_in_dim(%x: tensor<8x256x768xf32>, %w: tensor<2304x512xf32>) {
  // expected-error @+1 {{linear: input's last dimension 768 does not match the weight's in-dimension 512 (input f32[8, 256, 768], weight f32[2304, 512])}}
  %0 = bmb.linear %x, %w : (tensor<8x256x768xf32>, tensor<2304x512xf32>) -> tensor<8x256x2304xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<8x768xf32>, %w: tensor<2304x768xf32>, %b: tensor<100xf32>) {
  // expected-error @+1 {{linear: bias shape [100] does not match the weight's out-dimension 2304 (bias f32[100], weight f32[2304, 768])}}
  %0 = bmb.linear %x, %w, %b : (tensor<8x768xf32>, tensor<2304x768xf32>, tensor<100xf32>) -> tensor<8x2304xf32>
  return
}

// -----

func.func @linear_dtype(%x: tensor<8x768xf32>, %w: tensor<16x768xbf16>) {
  // expected-error @+1 {{linear: weight dtype bf16 does not match the input's f32 (input f32[8, 768], weight bf16[16, 768])}}
  %0 = bmb.linear %x, %w : (tensor<8x768xf32>, tensor<16x768xbf16>) -> tensor<8x16xf32>
  return
}

// -----

func.func @linear_result(%x: tensor<8x768xf32>, %w: tensor<16x768xf32>) {
  // expected-error @+1 {{'bmb.linear' op result #0 has type 'tensor<8x17xf32>', expected 'tensor<8x16xf32>'}}
  %0 = bmb.linear %x, %w : (tensor<8x768xf32>, tensor<16x768xf32>) -> tensor<8x17xf32>
  return
}

// -----

func.func @lm_head_in_dim(%x: tensor<8x64xf32>, %w: tensor<512x32xf32>) {
  // expected-error @+1 {{lm_head: input's last dimension 64 does not match the weight's in-dimension 32 (input f32[8, 64], weight f32[512, 32])}}
  %0 = bmb.lm_head %x, %w : (tensor<8x64xf32>, tensor<512x32xf32>) -> tensor<8x512xf32>
  return
}

// -----

func.func @layernorm_weight(%x: tensor<8x768xf32>, %w: tensor<512xf32>) {
  // expected-error @+1 {{layernorm: weight shape [512] does not match the input's last dimension 768 (input f32[8, 768], weight f32[512])}}
  %0 = bmb.layernorm %x, %w {eps = 1.0e-5 : f64} : (tensor<8x768xf32>, tensor<512xf32>) -> tensor<8x768xf32>
  return
}

// -----

func.func @layernorm_eps(%x: tensor<8x768xf32>, %w: tensor<768xf32>) {
  // expected-error @+1 {{layernorm: eps must be positive and finite, got 0}}
  %0 = bmb.layernorm %x, %w {eps = 0.0 : f64} : (tensor<8x768xf32>, tensor<768xf32>) -> tensor<8x768xf32>
  return
}

// -----

func.func @rmsnorm_weight(%x: tensor<8x64xf32>, %w: tensor<8x64xf32>) {
  // expected-error @+1 {{rmsnorm: weight shape [8, 64] does not match the input's last dimension 64 (input f32[8, 64], weight f32[8, 64])}}
  %0 = bmb.rmsnorm %x, %w {eps = 1.0e-5 : f64} : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  return
}

// -----

func.func @attention_groups(%q: tensor<2x16x64xf32>) {
  // expected-error @+1 {{attention: heads 4 is not a multiple of kv_heads 3}}
  %0 = bmb.attention %q, %q, %q {heads = 4 : i64, kv_heads = 3 : i64, scale = 0.25 : f64}
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_key(%q: tensor<2x16x64xf32>, %k: tensor<2x16x64xf32>) {
  // expected-error @+1 {{attention: key's last dimension 64 does not match kv_heads * head_dim = 2 * 16 = 32 (query f32[2, 16, 64], key f32[2, 16, 64])}}
  %0 = bmb.attention %q, %k, %k {heads = 4 : i64, kv_heads = 2 : i64, scale = 0.25 : f64}
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_mask(%q: tensor<2x16x64xf32>, %m: tensor<2x8xi32>) {
  // expected-error @+1 {{attention: mask must have shape [B, S] = [2, 16], got [2, 8] (query f32[2, 16, 64], key f32[2, 16, 64], mask i32[2, 8])}}
  %0 = bmb.attention %q, %q, %q, %m {heads = 4 : i64, kv_heads = 4 : i64, scale = 0.25 : f64}
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x8xi32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<2x16x64xf32>) {
  // expected-error @+1 {{attention: scale must be positive and finite, got -1.0}}
  %0 = bmb.attention %q, %q, %q {heads = 4 : i64, kv_heads = 4 : i64, scale = -1.0 : f64}
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @rotary_odd(%x: tensor<2x16x60xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{rotary: head_dim 15 must be even (input f32[2, 16, 60], heads 4)}}
  %0 = bmb.rotary %x, %p {base = 1.0e4 : f64, heads = 4 : i64} : (tensor<2x16x60xf32>, tensor<16xi32>) -> tensor<2x16x60xf32>
  return
}

// -----

func.func @rotary_positions(%x: tensor<2x16x64xf32>, %p: tensor<8xi32>) {
  // expected-error @+1 {{rotary: positions must have shape [T] = [16], got [8] (input f32[2, 16, 64], positions i32[8])}}
  %0 = bmb.rotary %x, %p {base = 1.0e4 : f64, heads = 4 : i64} : (tensor<2x16x64xf32>, tensor<8xi32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @rotary_base(%x: tensor<2x16x64xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{rotary: base must be positive and finite, got 0.0}}
  %0 = bmb.rotary %x, %p {base = 0.0 : f64, heads = 4 : i64} : (tensor<2x16x64xf32>, tensor<16xi32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @gelu_int(%x: tensor<8xi32>) {
  // expected-error @+1 {{gelu: input must have a float dtype, got i32 (input i32[8])}}
  %0 = bmb.gelu %x approximate tanh : tensor<8xi32>
  return
}

// -----

func.func @add_broadcast(%a: tensor<8x256x768xf32>, %b: tensor<256x512xf32>) {
  // expected-error @+1 {{add: lhs dimension 768 does not match rhs dimension 512 and neither is 1 (lhs f32[8, 256, 768], rhs f32[256, 512])}}
  %0 = bmb.add %a, %b : (tensor<8x256x768xf32>, tensor<256x512xf32>) -> tensor<8x256x768xf32>
  return
}

// -----

func.func @mul_dtype(%a: tensor<8xf32>, %b: tensor<8xbf16>) {
  // expected-error @+1 {{mul: operand dtypes differ: f32 and bf16 (lhs f32[8], rhs bf16[8])}}
  %0 = bmb.mul %a, %b : (tensor<8xf32>, tensor<8xbf16>) -> tensor<8xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{softmax: axis 2 is out of range for rank 2 (input f32[8, 16])}}
  %0 = bmb.softmax %x {axis = 2 : i64} : tensor<8x16xf32>
  return
}

// -----

func.func @dropout_p(%x: tensor<8xf32>) {
  // expected-error @+1 {{dropout: p must be in [0, 1), got 1.5}}
  %0 = bmb.dropout %x {p = 1.5 : f64, rng_id = 0 : i64} : tensor<8xf32>
  return
}

// -----

func.func @dropout_rng_id(%x: tensor<8xf32>) {
  // expected-error @+1 {{dropout: rng_id must be >= 0, got -2}}
  %0 = bmb.dropout %x {p = 0.1 : f64, rng_id = -2 : i64} : tensor<8xf32>
  return
}

// -----

func.func @cross_entropy_targets(%l: tensor<8x256x512xf32>, %t: tensor<8x128xi32>) {
  // expected-error @+1 {{cross_entropy: targets shape [8, 128] does not match the logits' leading dimensions [8, 256] (logits f32[8, 256, 512], targets i32[8, 128])}}
  %0 = bmb.cross_entropy %l, %t : (tensor<8x256x512xf32>, tensor<8x128xi32>) -> tensor<f32>
  return
}

// -----

func.func @arange_empty() {
  // expected-error @+1 {{arange: length must be positive, got 0}}
  %0 = bmb.arange 0 : tensor<0xi32>
  return
}

// -----

func.func @take_index(%x: tensor<8x4x16xf32>) {
  // expected-error @+1 {{take: index 4 is out of range for axis 1 of size 4 (input f32[8, 4, 16])}}
  %0 = bmb.take %x {axis = 1 : i64, index = 4 : i64} : (tensor<8x4x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

func.func @split_uneven(%x: tensor<8x10xf32>) {
  // expected-error @+1 {{split: axis 1 of size 10 does not split into 3 equal parts (input f32[8, 10])}}
  %0:3 = bmb.split %x {axis = 1 : i64} : tensor<8x10xf32> -> tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>
  return
}

// -----

func.func @split_result(%x: tensor<8x10xf32>) {
  // expected-error @+1 {{'bmb.split' op result #1 has type 'tensor<8x4xf32>', expected 'tensor<8x5xf32>'}}
  %0:2 = bmb.split %x {axis = 1 : i64} : tensor<8x10xf32> -> tensor<8x5xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<8x256x768xf32>) {
  // expected-error @+1 {{reshape: cannot reshape 1572864 elements into [8, 256, 12, 63] (1548288 elements) (input f32[8, 256, 768])}}
  %0 = bmb.reshape %x : tensor<8x256x768xf32> -> tensor<8x256x12x63xf32>
  return
}

// -----

func.func @reshape_dtype(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.reshape' op result #0 has type 'tensor<8xbf16>', expected 'tensor<8xf32>'}}
  %0 = bmb.reshape %x : tensor<8xf32> -> tensor<8xbf16>
  return
}

// -----

func.func @transpose_perm(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{transpose: perm [0, 0, 1] is not a permutation of [0, 3) (input f32[2, 3, 4])}}
  %0 = bmb.transpose %x perm [0, 0, 1] : (tensor<2x3x4xf32>) -> tensor<2x2x3xf32>
  return
}

// -----

func.func @random_int() {
  // expected-error @+1 {{random: result must have a float dtype, got i32}}
  %0 = bmb.random normal {rng_id = 0 : i64} : tensor<4xi32>
  return
}

// -----

func.func @dynamic_shape(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'bmb.relu' op operand #0 must be statically shaped tensor of}}
  %0 = bmb.relu %x : tensor<?x8xf32>
  return
}

// -----

bmb.model @M layer "M" {
  // expected-error @+1 {{'bmb.param' op stacked 3 must be in [0, 2], the rank of 'tensor<6x8xf32>'}}
  bmb.param @h.w : tensor<6x8xf32> init ones stacked 3
}

// -----

bmb.model @M layer "M" {
  // expected-error @+1 {{'bmb.param' op initializer normal needs a float dtype, got 'i8'}}
  bmb.param @q.w : tensor<8xi8> init normal(0.02)
}

// -----

bmb.model @M layer "M" {
  // expected-error @+1 {{uniform: low 1.0 must be less than high 0.5}}
  bmb.param @w : tensor<8xf32> init uniform(1.0, 0.5)
}

// -----

bmb.model @M layer "M" {
  // expected-error @+1 {{normal: std must be >= 0, got -0.02}}
  bmb.param @w : tensor<8xf32> init normal(-0.02)
}

// -----

bmb.model @M layer "M" {
  // expected-error @+1 {{expected an initializer (zeros, ones, normal, uniform or constant), got 'xavier'}}
  bmb.param @w : tensor<8xf32> init xavier
}

// -----

bmb.model @M layer "M" {
  // expected-error @+1 {{'bmb.template' op is not allowed in a bmb.model, which holds only bmb.param, bmb.checkpoint_map and functions}}
  bmb.template @t "{text_a}"
}

// -----

bmb.model @M layer "M" {
  // expected-note @+1 {{see existing symbol definition here}}
  bmb.param @w : tensor<8xf32> init zeros
  // expected-error @+1 {{redefinition of symbol named 'w'}}
  bmb.param @w : tensor<8xf32> init ones
}

// -----

func.func @outside(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.param' op expects parent op 'bmb.model'}}
  "bmb.param"() <{sym_name = "w", type = tensor<8xf32>, init = #bmb.init<zeros>}> : () -> ()
  return
}

// -----

func.func @param_get_outside() {
  // expected-error @+1 {{'bmb.param_get' op must be nested in a bmb.model}}
  %0 = bmb.param_get @w : tensor<8xf32>
  return
}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<8xf32> init zeros
  func.func @forward() {
    // expected-error @+1 {{'bmb.param_get' op @v does not name a bmb.param of the enclosing model}}
    %0 = bmb.param_get @v : tensor<8xf32>
    return
  }
}

// -----

bmb.model @M layer "M" {
  bmb.param @h.w : tensor<6x8xf32> init zeros stacked 1
  func.func @forward() {
    // expected-error @+1 {{'bmb.param_get' op @h.w is stacked 1 deep, so it takes 1 index(es), got 0}}
    %0 = bmb.param_get @h.w : tensor<6x8xf32>
    return
  }
}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<8xf32> init zeros
  func.func @forward() {
    // expected-error @+1 {{'bmb.param_get' op result type 'tensor<8xbf16>' does not match 'tensor<8xf32>', the type of @w : 'tensor<8xf32>'}}
    %0 = bmb.param_get @w : tensor<8xbf16>
    return
  }
}

// -----

bmb.model @M layer "M" {
  bmb.param @h.w : tensor<6x8xf32> init zeros stacked 1
  func.func @forward(%i: index) {
    // expected-error @+1 {{'bmb.param_get' op index #0 is not the induction variable of an enclosing bmb.repeat}}
    %0 = bmb.param_get @h.w[%i] : tensor<8xf32>
    return
  }
}

// -----

bmb.model @M layer "M" {
  bmb.param @h.w : tensor<6x8xf32> init zeros stacked 1
  func.func @forward(%x: tensor<8xf32>) -> tensor<8xf32> {
    %y = bmb.repeat 4 "h" layer "B" iter(%x) : (tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%i: index, %a: tensor<8xf32>):
      // expected-error @+1 {{'bmb.param_get' op index #0 counts the 4 iterations of bmb.repeat "h", but @h.w stacks 6 along dimension 0}}
      %w = bmb.param_get @h.w[%i] : tensor<8xf32>
      bmb.yield %w : tensor<8xf32>
    }
    return %y : tensor<8xf32>
  }
}

// -----

bmb.model @M layer "M" {
  bmb.param @g.h.w : tensor<3x2x8xf32> init ones stacked 2
  func.func @forward(%x: tensor<8xf32>) -> tensor<8xf32> {
    %y = bmb.repeat 3 "g" layer "G" iter(%x) : (tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%i: index, %a: tensor<8xf32>):
      %z = bmb.repeat 2 "h" layer "B" iter(%a) invariant(%i) : (tensor<8xf32>, index) -> tensor<8xf32> {
      ^bb0(%j: index, %b: tensor<8xf32>, %oi: index):
        // expected-error @+1 {{'bmb.param_get' op index #1 must belong to a bmb.repeat nested in that of index #0}}
        %w = bmb.param_get @g.h.w[%j, %oi] : tensor<8xf32>
        bmb.yield %w : tensor<8xf32>
      }
      bmb.yield %z : tensor<8xf32>
    }
    return %y : tensor<8xf32>
  }
}

// -----

func.func @layer_name(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.layer' op instance name "h.ln1" must be one non-empty path segment}}
  %0 = bmb.layer "h.ln1" layer "LayerNorm" (%x) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    bmb.yield %a : tensor<8xf32>
  }
  return
}

// -----

func.func @layer_yield(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.layer' op yields (tensor<8xf32>) but its results are (tensor<8xbf16>)}}
  %0 = bmb.layer "a" layer "A" (%x) : (tensor<8xf32>) -> tensor<8xbf16> {
  ^bb0(%a: tensor<8xf32>):
    bmb.yield %a : tensor<8xf32>
  }
  return
}

// -----

func.func @layer_args(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.layer' op body has 0 arguments, expected 1 (one per input)}}
  %0 = bmb.layer "a" layer "A" (%x) : (tensor<8xf32>) -> tensor<8xf32> {
    %c = bmb.random normal {rng_id = 0 : i64} : tensor<8xf32>
    bmb.yield %c : tensor<8xf32>
  }
  return
}

// -----

func.func @layer_arg_type(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.layer' op body argument #0 has type 'tensor<4xf32>' but input #0 has type 'tensor<8xf32>'}}
  %0 = bmb.layer "a" layer "A" (%x) : (tensor<8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    bmb.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @layer_terminator(%x: tensor<8xf32>) {
  bmb.layer "a" layer "A" (%x) : (tensor<8xf32>) -> () {
  ^bb0(%a: tensor<8xf32>):
    // expected-error @+1 {{block with no terminator}}
    %c = bmb.relu %a : tensor<8xf32>
  }
  return
}

// -----

func.func @layer_isolated(%x: tensor<8xf32>) {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = bmb.layer "a" layer "A" () : () -> tensor<8xf32> {
    // expected-error @+1 {{using value defined outside the region}}
    bmb.yield %x : tensor<8xf32>
  }
  return
}

// -----

func.func @repeat_yield(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.repeat' op yields (tensor<4xf32>) but the carried types are (tensor<8xf32>)}}
  %0 = bmb.repeat 2 "h" layer "B" iter(%x) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%i: index, %a: tensor<8xf32>):
    %c = bmb.random normal {rng_id = 0 : i64} : tensor<4xf32>
    bmb.yield %c : tensor<4xf32>
  }
  return
}

// -----

func.func @repeat_count(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.repeat' op count must be positive, got 0}}
  %0 = bmb.repeat 0 "h" layer "B" iter(%x) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%i: index, %a: tensor<8xf32>):
    bmb.yield %a : tensor<8xf32>
  }
  return
}

// -----

func.func @repeat_no_carried(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.repeat' op needs at least one carried (iter) value}}
  bmb.repeat 2 "h" layer "B" iter() invariant(%x) : (tensor<8xf32>) -> () {
  ^bb0(%i: index, %a: tensor<8xf32>):
    bmb.yield
  }
  return
}

// -----

func.func @repeat_results(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.repeat' op result types (tensor<4xf32>) must equal the carried types (tensor<8xf32>)}}
  %0 = bmb.repeat 2 "h" layer "B" iter(%x) : (tensor<8xf32>) -> tensor<4xf32> {
  ^bb0(%i: index, %a: tensor<8xf32>):
    bmb.yield %a : tensor<8xf32>
  }
  return
}

// -----

func.func @repeat_iv(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.repeat' op body argument #0 must be the index induction variable, got 'i64'}}
  %0 = bmb.repeat 2 "h" layer "B" iter(%x) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%i: i64, %a: tensor<8xf32>):
    bmb.yield %a : tensor<8xf32>
  }
  return
}

// -----

func.func @repeat_args(%x: tensor<8xf32>, %m: tensor<8xi32>) {
  // expected-error @+1 {{'bmb.repeat' op body has 2 arguments, expected 3 (the index, 1 carried, 1 invariant)}}
  %0 = bmb.repeat 2 "h" layer "B" iter(%x) invariant(%m) : (tensor<8xf32>, tensor<8xi32>) -> tensor<8xf32> {
  ^bb0(%i: index, %a: tensor<8xf32>):
    bmb.yield %a : tensor<8xf32>
  }
  return
}

// -----

func.func @repeat_invariant_type(%x: tensor<8xf32>, %m: tensor<8xi32>) {
  // expected-error @+1 {{'bmb.repeat' op body argument #2 has type 'tensor<8xi64>' but invariant value #0 has type 'tensor<8xi32>'}}
  %0 = bmb.repeat 2 "h" layer "B" iter(%x) invariant(%m) : (tensor<8xf32>, tensor<8xi32>) -> tensor<8xf32> {
  ^bb0(%i: index, %a: tensor<8xf32>, %b: tensor<8xi64>):
    bmb.yield %a : tensor<8xf32>
  }
  return
}

// -----

func.func @yield_parent(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.yield' op expects parent op to be one of 'bmb.layer, bmb.repeat'}}
  bmb.yield %x : tensor<8xf32>
}

// -----

func.func @F() {
  return
}
// expected-error @+1 {{'bmb.job' op model @F is not a bmb.model}}
bmb.job @j train for @F {}

// -----

bmb.model @M layer "M" {
}
// expected-error @+1 {{'bmb.job' op recipe @M is not a bmb.recipe}}
bmb.job @j compress for @M recipe @M {}


// -----

// expected-error @+1 {{'bmb.template' op malformed placeholder at offset 0 of "{text a} It was {mask}."}}
bmb.template @t "{text a} It was {mask}."

// -----

// expected-error @+1 {{'bmb.template' op malformed placeholder at offset 1 of "a} b"}}
bmb.template @t "a} b"

// -----

// expected-error @+1 {{'bmb.verbalizer' op has 2 labels but 1 word lists}}
bmb.verbalizer @v labels ["negative", "positive"] words [["bad"]]

// -----

// expected-error @+1 {{'bmb.verbalizer' op label "positive" has no words}}
bmb.verbalizer @v labels ["negative", "positive"] words [["bad"], []]

// -----

// expected-error @+1 {{'bmb.verbalizer' op label "a" is empty or repeated}}
bmb.verbalizer @v labels ["a", "a"] words [["x"], ["y"]]

// -----

// expected-error @+1 {{'bmb.recipe' op directive #1 has unknown verb "bake" (expected distill, prune, quantize or moefy)}}
bmb.recipe @r [{verb = "prune"}, {verb = "bake"}]

// -----

// expected-error @+1 {{'bmb.recipe' op directive #0 needs a string `verb`}}
bmb.recipe @r [{pattern = "2:4"}]

// -----

// Checkpoint name maps: a rule by itself (#bmb.name_rule's verifier).
bmb.model @M layer "M" {
  bmb.param @a : tensor<4xf32> init zeros
  // expected-error @+1 {{"": a checkpoint name cannot be empty}}
  bmb.checkpoint_map "hf" ["" = @a]
}

// -----

bmb.model @M layer "M" {
  bmb.param @a : tensor<4xf32> init zeros
  // expected-error @+1 {{"h.{layer}": only {i}, the layer index, may appear in braces in a checkpoint name}}
  bmb.checkpoint_map "hf" ["h.{layer}" = @a]
}

// -----

bmb.model @M layer "M" {
  bmb.param @a : tensor<2x4xf32> init zeros stacked 1
  // expected-error @+1 {{"h.{i}.{i}": '{i}' appears 2 times in a checkpoint name; a name has one layer index}}
  bmb.checkpoint_map "hf" ["h.{i}.{i}" = @a]
}

// -----

bmb.model @M layer "M" {
  bmb.param @a : tensor<4xf32> init zeros
  // expected-error @+1 {{"a": axis 1 must be >= 0, and is only for concat(...) of two or more parameters}}
  bmb.checkpoint_map "hf" ["a" = concat(@a, axis = 1)]
}

// -----

bmb.model @M layer "M" {
  bmb.param @a : tensor<4xf32> init zeros
  bmb.param @b : tensor<4xf32> init zeros
  // expected-error @+1 {{"ab": axis -1 must be >= 0, and is only for concat(...) of two or more parameters}}
  bmb.checkpoint_map "hf" ["ab" = concat(@a, @b, axis = -1)]
}

// -----

// A map within its model (bmb.checkpoint_map's verifier).
func.func @outside() {
  // expected-error @+1 {{'bmb.checkpoint_map' op expects parent op 'bmb.model'}}
  bmb.checkpoint_map "hf" []
  return
}

// -----

bmb.model @M layer "M" {
  bmb.param @a : tensor<4xf32> init zeros
  bmb.checkpoint_map "hf" ["a" = @a]
  // expected-error @+1 {{'bmb.checkpoint_map' op name "hf" is already used by another bmb.checkpoint_map of this model}}
  bmb.checkpoint_map "hf" ["a" = @a]
}

// -----

bmb.model @M layer "M" {
  bmb.param @a : tensor<4xf32> init zeros
  // expected-error @+1 {{'bmb.checkpoint_map' op has two rules for "a"}}
  bmb.checkpoint_map "hf" ["a" = @a, "a" = tied(@a)]
}

// -----

// A map against the model's parameters (its symbol uses).
bmb.model @M layer "M" {
  bmb.param @a : tensor<4xf32> init zeros
  // expected-error @+1 {{'bmb.checkpoint_map' op rule "x": @forward does not name a bmb.param of the enclosing model}}
  bmb.checkpoint_map "hf" ["a" = @a, "x" = @forward]
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

bmb.model @M layer "M" {
  bmb.param @a : tensor<4xf32> init zeros
  bmb.param @b : tensor<4xf32> init zeros
  // expected-error @+1 {{'bmb.checkpoint_map' op parameter @a is part of the rules for "a" and "ab"; a parameter is part of one rule that is not tied}}
  bmb.checkpoint_map "hf" ["a" = @a, "copy" = tied(@a), "ab" = concat(@a, @b)]
}

// -----

bmb.model @M layer "M" {
  bmb.param @g.h.w : tensor<3x2x4xf32> init zeros stacked 2
  // expected-error @+1 {{'bmb.checkpoint_map' op rule "g.{i}.h": 'g.h.w' is stacked under 2 nested repeats; a checkpoint name has one layer index {i}, so parameters of nested repeats cannot be mapped yet}}
  bmb.checkpoint_map "hf" ["g.{i}.h" = @g.h.w]
}

// -----

bmb.model @M layer "M" {
  bmb.param @h.w : tensor<2x4xf32> init zeros stacked 1
  bmb.param @w : tensor<4xf32> init zeros
  // expected-error @+1 {{'bmb.checkpoint_map' op rule "h.{i}": the parts of a rule must all be stacked or all unstacked: 'h.w' is stacked (in a repeat), 'w' is not}}
  bmb.checkpoint_map "hf" ["h.{i}" = concat(@h.w, @w)]
}

// -----

bmb.model @M layer "M" {
  bmb.param @h.w : tensor<2x4xf32> init zeros stacked 1
  // expected-error @+1 {{'bmb.checkpoint_map' op rule "h.w": 'h.w' is stacked over the 2 layers of a repeat: the checkpoint name needs '{i}' for the layer index}}
  bmb.checkpoint_map "hf" ["h.w" = @h.w]
}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4xf32> init zeros
  // expected-error @+1 {{'bmb.checkpoint_map' op rule "w.{i}": '{i}' stands for a layer index, but 'w' is not stacked (not in a repeat)}}
  bmb.checkpoint_map "hf" ["w.{i}" = @w]
}

// -----

bmb.model @M layer "M" {
  bmb.param @a : tensor<4xf32> init zeros
  bmb.param @b : tensor<4xf32> init zeros
  // expected-error @+1 {{'bmb.checkpoint_map' op rule "ab": concat axis 1 is out of range for parts of rank 1 ('a' f32[4])}}
  bmb.checkpoint_map "hf" ["ab" = concat(@a, @b, axis = 1)]
}

// -----

bmb.model @M layer "M" {
  bmb.param @h.a : tensor<2x4x8xf32> init zeros stacked 1
  bmb.param @h.b : tensor<2x4x6xbf16> init zeros stacked 1
  // expected-error @+1 {{'bmb.checkpoint_map' op rule "h.{i}": concat along axis 0 needs parts that agree in dtype, layers and every other dimension: 'h.a' f32[4, 8] per layer (2 layers), 'h.b' bf16[4, 6] per layer (2 layers)}}
  bmb.checkpoint_map "hf" ["h.{i}" = concat(@h.a, @h.b)]
}

// -----

bmb.model @M layer "M" {
  bmb.param @h.w : tensor<2x4xf32> init zeros stacked 1
  // expected-error @+1 {{'bmb.checkpoint_map' op rule "h.{i}": transpose needs a 2-D tensor per layer, got 'h.w' f32[4] per layer (2 layers)}}
  bmb.checkpoint_map "hf" ["h.{i}" = transpose(@h.w)]
}

// -----
// The training ops (BmbGradOps.td).

func.func @linear_grad_input_out(%dy: tensor<8x16xf32>, %w: tensor<32x64xf32>) {
  // expected-error @+1 {{linear_grad_input: grad f32[8, 16] does not match the forward result f32[8, 32]}}
  %0 = bmb.linear_grad_input %dy, %w : (tensor<8x16xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  return
}

// -----

func.func @linear_grad_weight_rows(%dy: tensor<8x16xf32>, %x: tensor<4x64xf32>) {
  // expected-error @+1 {{linear_grad_weight: grad f32[8, 16] does not match the forward result f32[4, 16]}}
  %0 = bmb.linear_grad_weight %dy, %x : (tensor<8x16xf32>, tensor<4x64xf32>) -> tensor<16x64xf32>
  return
}

// -----

func.func @reduce_sum_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{reduce_sum: result f32[3] does not broadcast to the input f32[4, 8]}}
  %0 = bmb.reduce_sum %x : tensor<4x8xf32> -> tensor<3xf32>
  return
}

// -----

func.func @layernorm_grad_weight(%dy: tensor<4x64xf32>, %x: tensor<4x64xf32>, %w: tensor<32xf32>) {
  // expected-error @+1 {{layernorm_grad: weight shape [32] does not match the input's last dimension 64 (input f32[4, 64], weight f32[32])}}
  %0:3 = bmb.layernorm_grad %dy, %x, %w {eps = 1.0e-5 : f64}
      : (tensor<4x64xf32>, tensor<4x64xf32>, tensor<32xf32>) -> (tensor<4x64xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

func.func @embedding_grad_dim(%dy: tensor<4x32xf32>, %ids: tensor<4xi32>) {
  // expected-error @+1 {{embedding_grad: grad f32[4, 32] does not match the forward result f32[4, 64]}}
  %0 = bmb.embedding_grad %dy, %ids : (tensor<4x32xf32>, tensor<4xi32>) -> tensor<512x64xf32>
  return
}

// -----

func.func @concat_mismatch(%a: tensor<4x8xf32>, %b: tensor<5x8xf32>) {
  // expected-error @+1 {{concat: input #1 f32[5, 8] does not match input #0 f32[4, 8] outside axis 1}}
  %0 = bmb.concat %a, %b {axis = 1 : i64} : (tensor<4x8xf32>, tensor<5x8xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @stack_get_slice(%s: tensor<2x4xf32>, %i: index) {
  // expected-error @+1 {{'bmb.stack_get' op result type 'tensor<2xf32>' is not one slice of 'tensor<2x4xf32>'}}
  %0 = bmb.stack_get %s[%i] : tensor<2x4xf32> -> tensor<2xf32>
  return
}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4xf32> init zeros frozen
  func.func @f(%g: tensor<4xf32>) {
    // expected-error @+1 {{'bmb.grad_accumulate' op @w is frozen: it has no gradient and no optimizer state}}
    bmb.grad_accumulate @w, %g : tensor<4xf32>
    return
  }
}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4xf32> init zeros
  func.func @f(%g: tensor<8xf32>) {
    // expected-error @+1 {{'bmb.grad_accumulate' op value type 'tensor<8xf32>' does not match 'tensor<4xf32>', what bmb.param_get of @w reads}}
    bmb.grad_accumulate @w, %g : tensor<8xf32>
    return
  }
}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4xf32> init zeros
  func.func @optimizer_step() {
    // expected-error @+1 {{'bmb.adamw_update' op beta2 must be in [0, 1), got 1}}
    bmb.adamw_update @w {beta1 = 0.9 : f64, beta2 = 1.0 : f64, eps = 1.0e-8 : f64, weight_decay = 0.0 : f64}
    return
  }
}

// -----

func.func @clip_norm() {
  // expected-error @+1 {{'bmb.clip_grad_norm' op max_norm must be positive and finite, got 0}}
  bmb.clip_grad_norm {max_norm = 0.0 : f64}
  return
}

// -----

func.func @repeat_stacked_count(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.repeat' op stacked save 'tensor<3x8xf32>' must have a leading dimension of count 2}}
  %0, %1 = bmb.repeat 2 "h" layer "B" iter(%x) {num_saved = 1 : i64} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<3x8xf32>) {
  ^bb0(%i: index, %a: tensor<8xf32>):
    bmb.yield %a, %a : tensor<8xf32>, tensor<8xf32>
  }
  return
}

// -----

func.func @repeat_saved_yield(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.repeat' op yields (tensor<8xf32>) but expected (tensor<8xf32>, tensor<8xf32>) (the carried types, then one slice per stacked save)}}
  %0, %1 = bmb.repeat 2 "h" layer "B" iter(%x) {num_saved = 1 : i64} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<2x8xf32>) {
  ^bb0(%i: index, %a: tensor<8xf32>):
    bmb.yield %a : tensor<8xf32>
  }
  return
}

// -----

func.func @layer_num_saved(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.layer' op num_saved 2 must be in [0, 1], the number of results}}
  %0 = bmb.layer "a" layer "A" (%x) {num_saved = 2 : i64} : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%v: tensor<8xf32>):
    bmb.yield %v : tensor<8xf32>
  }
  return
}

// -----

func.func @backward_layer_saves(%x: tensor<8xf32>) {
  // expected-error @+1 {{'bmb.layer' op is a backward layer, which saves nothing, but has num_saved 1}}
  %0 = bmb.layer "a" layer "A" backward (%x) {num_saved = 1 : i64} : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%v: tensor<8xf32>):
    bmb.yield %v : tensor<8xf32>
  }
  return
}

// -----

// expected-error @+1 {{'bmb.template' op malformed placeholder at offset 9 of "{text_a} {soft: good}": '{soft: good}': write {soft} or {soft: "word"}}}
bmb.template @t "{text_a} {soft: good}"

// -----

// expected-error @+1 {{'bmb.verbalizer' op reduce is mean, first or max, got "sum"}}
bmb.verbalizer @v labels ["negative"] words [["bad"]] {reduce = "sum"}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<2x4xf32> init zeros stacked 1
  func.func @f(%i: index) {
    // expected-error @+1 {{'bmb.grad_all_reduce' op layer is not the induction variable of an enclosing bmb.repeat}}
    bmb.grad_all_reduce [@w] layer %i
    return
  }
}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4xf32> init zeros
  func.func @f() {
    // expected-error @+1 {{'bmb.grad_all_reduce' op layers [0, 2) of @w, which is not stacked by one repeat of at least 2 layers}}
    bmb.grad_all_reduce [@w] layers [0, 2]
    return
  }
}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<2x4xf32> init zeros stacked 1
  func.func @f(%x: tensor<2x4xf32>) {
    %y = bmb.repeat 2 "h" layer "Block" iter(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32> {
    ^bb0(%i: index, %a: tensor<2x4xf32>):
      // expected-error @+1 {{'bmb.grad_all_reduce' op takes a layer range or a layer index, not both}}
      bmb.grad_all_reduce [@w] layers [0, 2] layer %i
      bmb.yield %a : tensor<2x4xf32>
    }
    return
  }
}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<4xf32> init zeros
  func.func @f(%x: tensor<2x4xf32>) {
    %y = bmb.repeat 2 "h" layer "Block" iter(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32> {
    ^bb0(%i: index, %a: tensor<2x4xf32>):
      // expected-error @+1 {{'bmb.grad_all_reduce' op layer of @w, which is not stacked by one repeat}}
      bmb.grad_all_reduce [@w] layer %i
      bmb.yield %a : tensor<2x4xf32>
    }
    return
  }
}

// -----

func.func @attention_prefix_shape(%x: tensor<2x4x8xf32>, %p: tensor<3x4xf32>) {
  // expected-error @+1 {{attention: the prefixes must be [P, 8] of the key's dtype, got f32[3, 4] and f32[3, 4]}}
  %r = bmb.attention %x, %x, %x prefix(%p, %p) {causal, heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64}
      : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

bmb.model @M layer "M" {
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %y = bmb.repeat 2 "h" layer "Blk" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>):
      // expected-error @+1 {{'bmb.iteration_slot' op has 3 slots for the 2 iterations of bmb.repeat 'h'}}
      %s = bmb.iteration_slot %i [0, -1, 1]
      bmb.yield %a : tensor<2x4x8xf32>
    }
    return %y : tensor<2x4x8xf32>
  }
}

// -----

bmb.model @M layer "M" {
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %y = bmb.repeat 2 "h" layer "Blk" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>):
      // expected-error @+1 {{'bmb.iteration_gate' op slots must be -1 or the next entry of the stack (0, 1, ...), got 1}}
      %g = bmb.iteration_gate %i [1, -1] : tensor<1xf32>
      bmb.yield %a : tensor<2x4x8xf32>
    }
    return %y : tensor<2x4x8xf32>
  }
}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<2x8xf32> init ones stacked 1
  func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %y = bmb.repeat 2 "h" layer "Blk" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>):
      %s = bmb.iteration_slot %i [-1, 0]
      // expected-error @+1 {{'bmb.param_get' op index #0 is a slot of a stack of 1 entries, but @w stacks 2 along dimension 0}}
      %w = bmb.param_get @w[%s] : tensor<8xf32>
      bmb.yield %a : tensor<2x4x8xf32>
    }
    return %y : tensor<2x4x8xf32>
  }
}

// -----

bmb.model @M layer "M" {
  func.func @f() {
    // expected-error @+1 {{'bmb.grad_reduce_scatter_unit' op needs at least one param}}
    bmb.grad_reduce_scatter_unit []
    return
  }
}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<2x4xf32> init zeros stacked 1
  func.func @f() {
    // expected-error @+1 {{'bmb.param_gather_unit' op the unit outside repeats holds @w, a stacked param}}
    bmb.param_gather_unit [@w]
    return
  }
}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<2x4xf32> init zeros
  func.func @f() {
    // expected-error @+1 {{'bmb.param_gather_unit' op low must be bf16 or f16 (the reduced type of the autocast GEMMs), got 'f32'}}
    bmb.param_gather_unit [@w] low f32
    return
  }
}
