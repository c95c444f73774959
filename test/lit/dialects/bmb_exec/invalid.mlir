// Every verifier message of the bmb_exec dialect (BmbExecOps.cpp), one case
// each, plus the static-shape constraint of every buffer operand.
// --allow-unregistered-dialect: the kernel-body cases need an op of no
// dialect (the registered terminators all check their parent first).
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect

bmb_exec.program @p {
  // expected-error @+1 {{'bmb_exec.alloc' op cannot appear in a bmb_exec.program (params, state, name maps and entry functions only)}}
  %b = bmb_exec.alloc : memref<4xf32>
}

// -----

bmb_exec.program @p {
  bmb_exec.param @w : memref<4xf32>
  // expected-error @+1 {{'bmb_exec.name_map' op rule 0 needs external, parts, axis, transpose and tied}}
  bmb_exec.name_map @hf [{external = "w", parts = [@w], axis = 0 : i64, transpose = false}]
}

// -----

bmb_exec.program @p {
  bmb_exec.param @w : memref<4xf32>
  // expected-error @+1 {{'bmb_exec.name_map' op rule 0 needs external, parts, axis, transpose and tied}}
  bmb_exec.name_map @hf [{external = "w", parts = [], axis = 0 : i64, transpose = false, tied = false}]
}

// -----

bmb_exec.program @p {
  bmb_exec.param @w : memref<4xf32>
  // expected-error @+1 {{'bmb_exec.name_map' op rule 'lm_head.weight' names @v, which is not a param of the program}}
  bmb_exec.name_map @hf [{external = "lm_head.weight", parts = [@w, @v], axis = 0 : i64, transpose = false, tied = false}]
}

// -----

// A state is a symbol of the program but not a param.
bmb_exec.program @p {
  bmb_exec.state @kv : memref<4xf32>
  // expected-error @+1 {{'bmb_exec.name_map' op rule 'kv' names @kv, which is not a param of the program}}
  bmb_exec.name_map @hf [{external = "kv", parts = [@kv], axis = 0 : i64, transpose = false, tied = false}]
}

// -----

bmb_exec.program @p {
  bmb_exec.state @kv : memref<4xf32>
  func.func @decode(%start: index, %rows: index) {
    // expected-error @+1 {{'bmb_exec.param_ref' op refers to 'kv', which is not a bmb_exec.param}}
    %w = bmb_exec.param_ref @kv : memref<4xf32>
    return
  }
}

// -----

bmb_exec.program @p {
  bmb_exec.param @h.w stacked : memref<2x4xf32>
  func.func @decode(%start: index, %rows: index) {
    // expected-error @+1 {{'bmb_exec.param_ref' op of a stacked symbol needs a layer index}}
    %w = bmb_exec.param_ref @h.w : memref<4xf32>
    return
  }
}

// -----

bmb_exec.program @p {
  bmb_exec.param @w : memref<4xf32>
  func.func @decode(%start: index, %rows: index) {
    // expected-error @+1 {{'bmb_exec.param_ref' op of an unstacked symbol takes no layer index}}
    %w = bmb_exec.param_ref @w[%start] : memref<4xf32>
    return
  }
}

// -----

bmb_exec.program @p {
  bmb_exec.param @h.w stacked : memref<2x4xf32>
  func.func @decode(%start: index, %rows: index) {
    // expected-error @+1 {{'bmb_exec.param_ref' op type 'memref<2x4xf32>' does not match the declaration 'memref<2x4xf32>' (one layer's slice)}}
    %w = bmb_exec.param_ref @h.w[%start] : memref<2x4xf32>
    return
  }
}

// -----

bmb_exec.program @p {
  bmb_exec.param @w : memref<4xf32>
  func.func @decode(%start: index, %rows: index) {
    // expected-error @+1 {{'bmb_exec.param_ref' op type 'memref<4xi32>' does not match the declaration 'memref<4xf32>'}}
    %w = bmb_exec.param_ref @w : memref<4xi32>
    return
  }
}

// -----

bmb_exec.program @p {
  bmb_exec.param @w : memref<4xf32>
  func.func @decode(%start: index, %rows: index) {
    // expected-error @+1 {{'bmb_exec.state_ref' op refers to 'w', which is not a bmb_exec.state}}
    %s = bmb_exec.state_ref @w : memref<4xf32>
    return
  }
}

// -----

bmb_exec.program @p {
  bmb_exec.state @kv stacked : memref<2x1x8x4xf32>
  func.func @decode(%start: index, %rows: index) {
    // expected-error @+1 {{'bmb_exec.state_ref' op of a stacked symbol needs a layer index}}
    %s = bmb_exec.state_ref @kv : memref<1x8x4xf32>
    return
  }
}

// -----

bmb_exec.program @p {
  bmb_exec.state @kv : memref<1x8x4xf32>
  func.func @decode(%start: index, %rows: index) {
    // expected-error @+1 {{'bmb_exec.state_ref' op of an unstacked symbol takes no layer index}}
    %s = bmb_exec.state_ref @kv[%start] : memref<1x8x4xf32>
    return
  }
}

// -----

bmb_exec.program @p {
  bmb_exec.state @kv stacked : memref<2x1x8x4xf32>
  func.func @decode(%start: index, %rows: index) {
    // expected-error @+1 {{'bmb_exec.state_ref' op type 'memref<1x4x8xf32>' does not match the declaration 'memref<2x1x8x4xf32>' (one layer's slice)}}
    %s = bmb_exec.state_ref @kv[%start] : memref<1x4x8xf32>
    return
  }
}

// -----

func.func @reshape_count(%x: memref<4x8xf32>) {
  // expected-error @+1 {{'bmb_exec.reshape' op changes the element count: 'memref<4x8xf32>' to 'memref<16xf32>'}}
  %y = bmb_exec.reshape %x : memref<4x8xf32> to memref<16xf32>
  return
}

// -----

func.func @ewise_kind(%x: memref<8xf32>) {
  // expected-error @+1 {{'bmb_exec.ewise' op unknown element-wise kind 'gelu'}}
  bmb_exec.ewise "gelu" ins(%x : memref<8xf32>) outs(%x : memref<8xf32>)
  return
}

// -----

func.func @ewise_arity(%x: memref<8xf32>) {
  // expected-error @+1 {{'bmb_exec.ewise' op 'add' takes 2 input(s), not 1}}
  bmb_exec.ewise "add" ins(%x : memref<8xf32>) outs(%x : memref<8xf32>)
  return
}

// -----

func.func @ewise_scale(%x: memref<8xf32>) {
  // expected-error @+1 {{'bmb_exec.ewise' op 'scale' needs a factor}}
  bmb_exec.ewise "scale" ins(%x : memref<8xf32>) outs(%x : memref<8xf32>)
  return
}

// -----

func.func @kernel_args(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'bmb_exec.kernel' op body takes 1 scalars for 2 inputs}}
  bmb_exec.kernel @k ins(%a, %b : memref<8xf32>, memref<8xf32>) outs(%a : memref<8xf32>) {
  ^bb0(%x: f32):
    bmb_exec.kernel_yield %x : f32
  }
  return
}

// -----

func.func @kernel_arg_type(%a: memref<8xf32>, %b: memref<8xf64>) {
  // expected-error @+1 {{'bmb_exec.kernel' op body argument type 'f32' differs from its input's element type}}
  bmb_exec.kernel @k ins(%a, %b : memref<8xf32>, memref<8xf64>) outs(%a : memref<8xf32>) {
  ^bb0(%x: f32, %y: f32):
    bmb_exec.kernel_yield %x : f32
  }
  return
}

// -----

func.func @kernel_terminator(%a: memref<8xf32>) {
  // expected-error @+1 {{'bmb_exec.kernel' op body must end in bmb_exec.kernel_yield}}
  bmb_exec.kernel @k ins(%a : memref<8xf32>) outs(%a : memref<8xf32>) {
  ^bb0(%x: f32):
    "test.terminator"(%x) : (f32) -> ()
  }
  return
}

// -----

func.func @kernel_yield_type(%a: memref<8xf32>, %o: memref<8xf64>) {
  // expected-error @+1 {{'bmb_exec.kernel' op yields 'f32', not the output's element type}}
  bmb_exec.kernel @k ins(%a : memref<8xf32>) outs(%o : memref<8xf64>) {
  ^bb0(%x: f32):
    bmb_exec.kernel_yield %x : f32
  }
  return
}

// -----

func.func @kernel_body_op(%a: memref<8xf32>) {
  bmb_exec.kernel @k ins(%a : memref<8xf32>) outs(%a : memref<8xf32>) {
  ^bb0(%x: f32):
    // expected-error @+1 {{'memref.alloca' op is not scalar arith/math, bmb_exec.elem_call or bmb_exec.elem_index: generated kernel bodies are printed as C++ expressions}}
    %m = memref.alloca() : memref<f32>
    bmb_exec.kernel_yield %x : f32
  }
  return
}

// -----

// An op of no dialect (possible with --allow-unregistered-dialect) is
// reported, not a crash.
func.func @kernel_unregistered_op(%a: memref<8xf32>) {
  bmb_exec.kernel @k ins(%a : memref<8xf32>) outs(%a : memref<8xf32>) {
  ^bb0(%x: f32):
    // expected-error @+1 {{'test.op' op is not scalar arith/math, bmb_exec.elem_call or bmb_exec.elem_index: generated kernel bodies are printed as C++ expressions}}
    %y = "test.op"(%x) : (f32) -> f32
    bmb_exec.kernel_yield %y : f32
  }
  return
}

// -----

func.func @gemm_b_rank(%a: memref<4x8xf32>, %b: memref<2x16x8xf32>, %c: memref<4x16xf32>) {
  // expected-error @+1 {{'bmb_exec.gemm' op needs a 2-D b, got 'memref<2x16x8xf32>'}}
  bmb_exec.gemm %a, %b outs(%c) : memref<4x8xf32>, memref<2x16x8xf32> -> memref<4x16xf32>
  return
}

// -----

func.func @gemm_k(%a: memref<4x8xf32>, %b: memref<16x8xf32>, %c: memref<4x16xf32>) {
  // trans_b = false: b is [k, n] = [16, 8].
  // expected-error @+1 {{'bmb_exec.gemm' op a's last dim 8 is not k = 16}}
  bmb_exec.gemm %a, %b outs(%c) {trans_b = false} : memref<4x8xf32>, memref<16x8xf32> -> memref<4x16xf32>
  return
}

// -----

func.func @gemm_n(%a: memref<4x8xf32>, %b: memref<16x8xf32>, %c: memref<4x8xf32>) {
  // expected-error @+1 {{'bmb_exec.gemm' op out's last dim 8 is not n = 16}}
  bmb_exec.gemm %a, %b outs(%c) : memref<4x8xf32>, memref<16x8xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @gemm_rows(%a: memref<4x8xf32>, %b: memref<16x8xf32>, %c: memref<2x16xf32>) {
  // expected-error @+1 {{'bmb_exec.gemm' op a and out have different row counts}}
  bmb_exec.gemm %a, %b outs(%c) : memref<4x8xf32>, memref<16x8xf32> -> memref<2x16xf32>
  return
}

// -----

// k = 0 used to divide by zero in the row check.
func.func @gemm_empty_k(%a: memref<4x0xf32>, %b: memref<16x0xf32>, %c: memref<2x16xf32>) {
  // expected-error @+1 {{'bmb_exec.gemm' op a and out have different row counts}}
  bmb_exec.gemm %a, %b outs(%c) : memref<4x0xf32>, memref<16x0xf32> -> memref<2x16xf32>
  return
}

// -----

func.func @gemm_bias(%a: memref<4x8xf32>, %b: memref<16x8xf32>, %bias: memref<8xf32>, %c: memref<4x16xf32>) {
  // expected-error @+1 {{'bmb_exec.gemm' op bias must have n = 16 elements}}
  bmb_exec.gemm %a, %b bias %bias : memref<8xf32> outs(%c) : memref<4x8xf32>, memref<16x8xf32> -> memref<4x16xf32>
  return
}

// -----

func.func @gemm_residual(%a: memref<4x8xf32>, %b: memref<16x8xf32>, %r: memref<64xf32>, %c: memref<4x16xf32>) {
  // expected-error @+1 {{'bmb_exec.gemm' op residual must have out's type}}
  bmb_exec.gemm %a, %b residual %r : memref<64xf32> outs(%c) : memref<4x8xf32>, memref<16x8xf32> -> memref<4x16xf32>
  return
}

// -----

func.func @gemm_act(%a: memref<4x8xf32>, %b: memref<16x8xf32>, %c: memref<4x16xf32>) {
  // expected-error @+1 {{'bmb_exec.gemm' op unknown epilogue 'gelu'}}
  bmb_exec.gemm %a, %b outs(%c) {act = "gelu"} : memref<4x8xf32>, memref<16x8xf32> -> memref<4x16xf32>
  return
}

// -----

func.func @norm_kind(%x: memref<4x8xf32>, %w: memref<8xf32>) {
  // expected-error @+1 {{'bmb_exec.norm' op unknown kind 'batchnorm'}}
  bmb_exec.norm "batchnorm" %x, %w outs(%x) {eps = 1.0e-5 : f64} : memref<4x8xf32>, memref<8xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @norm_sum(%x: memref<4x8xf32>, %w: memref<8xf32>, %r: memref<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'bmb_exec.norm' op takes a residual and a sum buffer together}}
  bmb_exec.norm "layernorm" %x, %w residual %r : memref<4x8xf32> outs(%y) {eps = 1.0e-5 : f64} : memref<4x8xf32>, memref<8xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @norm_weight(%x: memref<4x8xf32>, %w: memref<4xf32>) {
  // expected-error @+1 {{'bmb_exec.norm' op weight must have 8 elements}}
  bmb_exec.norm "rmsnorm" %x, %w outs(%x) {eps = 1.0e-5 : f64} : memref<4x8xf32>, memref<4xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @rmsnorm_bias(%x: memref<4x8xf32>, %w: memref<8xf32>) {
  // expected-error @+1 {{'bmb_exec.norm' op rmsnorm takes no bias}}
  bmb_exec.norm "rmsnorm" %x, %w bias %w : memref<8xf32> outs(%x) {eps = 1.0e-5 : f64} : memref<4x8xf32>, memref<8xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @norm_out(%x: memref<4x8xf32>, %w: memref<8xf32>, %y: memref<32xf32>) {
  // expected-error @+1 {{'bmb_exec.norm' op out must have x's type}}
  bmb_exec.norm "layernorm" %x, %w outs(%y) {eps = 1.0e-5 : f64} : memref<4x8xf32>, memref<8xf32> -> memref<32xf32>
  return
}

// -----

func.func @attention_heads(%q: memref<1x8x64xf32>, %s: index) {
  // expected-error @+1 {{'bmb_exec.attention' op heads must be a positive multiple of kv_heads}}
  bmb_exec.attention %q, %q, %q cache %q, %q outs(%q) start %s {heads = 4 : i64, kv_heads = 3 : i64, head_dim = 16 : i64, capacity = 8 : i64, scale = 0.25 : f64} : memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32> -> memref<1x8x64xf32>
  return
}

// -----

func.func @attention_q(%q: memref<1x8x64xf32>, %s: index) {
  // expected-error @+1 {{'bmb_exec.attention' op q rows must be heads x head_dim}}
  bmb_exec.attention %q, %q, %q cache %q, %q outs(%q) start %s {heads = 4 : i64, kv_heads = 4 : i64, head_dim = 8 : i64, capacity = 8 : i64, scale = 0.25 : f64} : memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32> -> memref<1x8x64xf32>
  return
}

// -----

func.func @attention_kv(%q: memref<1x8x64xf32>, %k: memref<1x8x32xf32>, %c: memref<1x8x64xf32>, %s: index) {
  // expected-error @+1 {{'bmb_exec.attention' op k and the cache rows must be kv_heads x head_dim}}
  bmb_exec.attention %q, %k, %k cache %c, %c outs(%q) start %s {heads = 4 : i64, kv_heads = 2 : i64, head_dim = 16 : i64, capacity = 8 : i64, scale = 0.25 : f64} : memref<1x8x64xf32>, memref<1x8x32xf32>, memref<1x8x32xf32>, memref<1x8x64xf32>, memref<1x8x64xf32> -> memref<1x8x64xf32>
  return
}

// -----

func.func @attention_capacity(%q: memref<1x8x64xf32>, %s: index) {
  // expected-error @+1 {{'bmb_exec.attention' op the cache holds fewer than capacity = 16 rows}}
  bmb_exec.attention %q, %q, %q cache %q, %q outs(%q) start %s {causal, heads = 4 : i64, kv_heads = 4 : i64, head_dim = 16 : i64, capacity = 16 : i64, scale = 0.25 : f64} : memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32> -> memref<1x8x64xf32>
  return
}

// -----

// head_dim = 0 makes the cache rows empty; the capacity check used to divide
// by their length.
func.func @attention_empty_rows(%q: memref<1x8x0xf32>, %s: index) {
  // expected-error @+1 {{'bmb_exec.attention' op the cache holds fewer than capacity = 16 rows}}
  bmb_exec.attention %q, %q, %q cache %q, %q outs(%q) start %s {heads = 4 : i64, kv_heads = 4 : i64, head_dim = 0 : i64, capacity = 16 : i64, scale = 0.25 : f64} : memref<1x8x0xf32>, memref<1x8x0xf32>, memref<1x8x0xf32>, memref<1x8x0xf32>, memref<1x8x0xf32> -> memref<1x8x0xf32>
  return
}

// -----

func.func @attention_capacity_sign(%q: memref<1x8x64xf32>, %s: index) {
  // expected-error @+1 {{'bmb_exec.attention' op capacity must be positive, got -1}}
  bmb_exec.attention %q, %q, %q cache %q, %q outs(%q) start %s {heads = 4 : i64, kv_heads = 4 : i64, head_dim = 16 : i64, capacity = -1 : i64, scale = 0.25 : f64} : memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32> -> memref<1x8x64xf32>
  return
}

// -----

// Negative heads with a negative head_dim used to pass: the attributes were
// compared unsigned.
func.func @attention_negative_heads(%q: memref<1x8x64xf32>, %s: index) {
  // expected-error @+1 {{'bmb_exec.attention' op heads must be a positive multiple of kv_heads}}
  bmb_exec.attention %q, %q, %q cache %q, %q outs(%q) start %s {heads = -4 : i64, kv_heads = -4 : i64, head_dim = -16 : i64, capacity = 8 : i64, scale = 0.25 : f64} : memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32> -> memref<1x8x64xf32>
  return
}

// -----

func.func @take_axis(%x: memref<2x3x4xf32>, %y: memref<2x4xf32>) {
  // expected-error @+1 {{'bmb_exec.take' op axis 3 out of range for 'memref<2x3x4xf32>'}}
  bmb_exec.take %x outs(%y) {axis = 3 : i64, index = 0 : i64} : memref<2x3x4xf32> -> memref<2x4xf32>
  return
}

// -----

func.func @take_negative_axis(%x: memref<2x3x4xf32>, %y: memref<2x4xf32>) {
  // expected-error @+1 {{'bmb_exec.take' op axis -1 out of range for 'memref<2x3x4xf32>'}}
  bmb_exec.take %x outs(%y) {axis = -1 : i64, index = 0 : i64} : memref<2x3x4xf32> -> memref<2x4xf32>
  return
}

// -----

func.func @take_index(%x: memref<2x3x4xf32>, %y: memref<2x4xf32>) {
  // expected-error @+1 {{'bmb_exec.take' op index 3 out of range}}
  bmb_exec.take %x outs(%y) {axis = 1 : i64, index = 3 : i64} : memref<2x3x4xf32> -> memref<2x4xf32>
  return
}

// -----

func.func @take_out(%x: memref<2x3x4xf32>, %y: memref<2x3xf32>) {
  // expected-error @+1 {{'bmb_exec.take' op out must have x's elements without the axis}}
  bmb_exec.take %x outs(%y) {axis = 1 : i64, index = 0 : i64} : memref<2x3x4xf32> -> memref<2x3xf32>
  return
}

// -----

// Buffers have static shapes: run-time lengths are `rows` operands.
func.func @dynamic_buffer(%a: memref<?x8xf32>, %b: memref<16x8xf32>, %c: memref<4x16xf32>) {
  // expected-error @+1 {{'bmb_exec.gemm' op operand #0 must be statically shaped memref of any type values, but got 'memref<?x8xf32>'}}
  bmb_exec.gemm %a, %b outs(%c) : memref<?x8xf32>, memref<16x8xf32> -> memref<4x16xf32>
  return
}

// -----

bmb_exec.program @p {
  // expected-error @+1 {{'bmb_exec.param' op attribute 'type' failed to satisfy constraint: type attribute of statically shaped memref of any type values}}
  bmb_exec.param @w : memref<?xf32>
}

// -----

func.func @attention_prefix(%q: memref<1x8x64xf32>, %p: memref<4x32xf32>, %s: index) {
  // expected-error @+1 {{'bmb_exec.attention' op the prefixes must be [P, kv_heads x head_dim] of one type}}
  bmb_exec.attention %q, %q, %q cache %q, %q prefix %p, %p : memref<4x32xf32>, memref<4x32xf32> outs(%q) start %s {heads = 4 : i64, kv_heads = 4 : i64, head_dim = 16 : i64, capacity = 8 : i64, scale = 0.25 : f64} : memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32>, memref<1x8x64xf32> -> memref<1x8x64xf32>
  return
}
