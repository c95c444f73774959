// Round trip of every bmb_exec op: custom form, generic form and bytecode.
// RUN: bmb-opt %s | bmb-opt | FileCheck %s
// RUN: bmb-opt %s --mlir-print-op-generic | bmb-opt | FileCheck %s
// RUN: bmb-opt %s --emit-bytecode | bmb-opt | FileCheck %s

// CHECK-LABEL: bmb_exec.program @chat attributes {ctx = 64 : i64, kind = "causal_lm", model = "Nano"} {
bmb_exec.program @chat attributes {kind = "causal_lm", model = "Nano", ctx = 64 : i64} {
  // CHECK-NEXT: bmb_exec.param @wte.w offset 0 : memref<512x64xf32>
  bmb_exec.param @wte.w offset 0 : memref<512x64xf32>
  // CHECK-NEXT: bmb_exec.param @wpe.w frozen : memref<64x64xf32>
  bmb_exec.param @wpe.w frozen : memref<64x64xf32>
  // CHECK-NEXT: bmb_exec.param @h.ln.w stacked offset 4096 : memref<2x64xf32>
  bmb_exec.param @h.ln.w stacked offset 4096 : memref<2x64xf32>
  // CHECK-NEXT: bmb_exec.param @h.ln.b stacked frozen : memref<2x64xf32>
  bmb_exec.param @h.ln.b stacked frozen : memref<2x64xf32>
  // CHECK-NEXT: bmb_exec.param @h.fc.w stacked : memref<2x256x64xf32>
  bmb_exec.param @h.fc.w stacked : memref<2x256x64xf32>
  // CHECK-NEXT: bmb_exec.param @h.fc.b stacked : memref<2x256xf32>
  bmb_exec.param @h.fc.b stacked : memref<2x256xf32>
  // CHECK-NEXT: bmb_exec.state @h.k_cache stacked offset 0 : memref<2x1x64x32xf32>
  bmb_exec.state @h.k_cache stacked offset 0 : memref<2x1x64x32xf32>
  // CHECK-NEXT: bmb_exec.state @h.v_cache stacked : memref<2x1x64x32xf32>
  bmb_exec.state @h.v_cache stacked : memref<2x1x64x32xf32>
  // CHECK-NEXT: bmb_exec.state @scratch offset 64 : memref<1x64x64xf32>
  bmb_exec.state @scratch offset 64 : memref<1x64x64xf32>
  // CHECK-NEXT: bmb_exec.name_map @hf [{axis = 0 : i64, external = "transformer.wte.weight", parts = [@wte.w], tied = false, transpose = false}, {axis = 1 : i64, external = "h.ln", parts = [@h.ln.w, @h.ln.b], tied = true, transpose = true}]
  bmb_exec.name_map @hf [{axis = 0 : i64, external = "transformer.wte.weight", parts = [@wte.w], tied = false, transpose = false},
                         {axis = 1 : i64, external = "h.ln", parts = [@h.ln.w, @h.ln.b], tied = true, transpose = true}]

  // CHECK-LABEL: func.func @prefill(
  // CHECK-SAME: %[[START:.*]]: index, %[[ROWS:.*]]: index)
  func.func @prefill(%start: index, %rows: index) {
    // CHECK: %[[TOK:.*]] = bmb_exec.input "tokens" kind "tokens" rows_dim 1 offset 0 : memref<1x64xi32>
    %tokens = bmb_exec.input "tokens" kind "tokens" rows_dim 1 offset 0 : memref<1x64xi32>
    // CHECK: %[[MASK:.*]] = bmb_exec.input "mask" kind "mask" rows_dim 1 : memref<1x64xi32>
    %mask = bmb_exec.input "mask" kind "mask" rows_dim 1 : memref<1x64xi32>
    // CHECK: %[[WTE:.*]] = bmb_exec.param_ref @wte.w : memref<512x64xf32>
    %wte = bmb_exec.param_ref @wte.w : memref<512x64xf32>
    // CHECK: %[[X:.*]] = bmb_exec.alloc offset 256 : memref<1x64x64xf32>
    %x = bmb_exec.alloc offset 256 : memref<1x64x64xf32>
    // CHECK: bmb_exec.embedding %[[TOK]], %[[WTE]] outs(%[[X]]) rows %[[ROWS]] : memref<1x64xi32>, memref<512x64xf32> -> memref<1x64x64xf32>
    bmb_exec.embedding %tokens, %wte outs(%x) rows %rows : memref<1x64xi32>, memref<512x64xf32> -> memref<1x64x64xf32>
    // CHECK: %[[POS:.*]] = bmb_exec.alloc : memref<64xi32>
    %pos = bmb_exec.alloc : memref<64xi32>
    // CHECK: bmb_exec.positions outs(%[[POS]]) start %[[START]] rows %[[ROWS]] : memref<64xi32>
    bmb_exec.positions outs(%pos) start %start rows %rows : memref<64xi32>
    // CHECK: bmb_exec.positions outs(%[[POS]]) start %[[START]] : memref<64xi32>
    bmb_exec.positions outs(%pos) start %start : memref<64xi32>
    // CHECK: %[[WPE:.*]] = bmb_exec.param_ref @wpe.w : memref<64x64xf32>
    %wpe = bmb_exec.param_ref @wpe.w : memref<64x64xf32>
    %p = bmb_exec.alloc : memref<64x64xf32>
    // CHECK: bmb_exec.embedding %[[POS]], %[[WPE]] outs(%{{.*}}) : memref<64xi32>, memref<64x64xf32> -> memref<64x64xf32>
    bmb_exec.embedding %pos, %wpe outs(%p) : memref<64xi32>, memref<64x64xf32> -> memref<64x64xf32>
    %s = bmb_exec.alloc : memref<1x64x64xf32>
    // CHECK: bmb_exec.ewise "add" ins(%[[X]], %{{.*}} : memref<1x64x64xf32>, memref<64x64xf32>) outs(%{{.*}} : memref<1x64x64xf32>) rows %[[ROWS]]{{$}}
    bmb_exec.ewise "add" ins(%x, %p : memref<1x64x64xf32>, memref<64x64xf32>) outs(%s : memref<1x64x64xf32>) rows %rows
    // CHECK: bmb_exec.ewise "scale" ins(%{{.*}} : memref<1x64x64xf32>) outs(%{{.*}} : memref<1x64x64xf32>) {factor = 5.000000e-01 : f64}
    bmb_exec.ewise "scale" ins(%s : memref<1x64x64xf32>) outs(%s : memref<1x64x64xf32>) {factor = 0.5 : f64}
    // CHECK: bmb_exec.ewise "gelu_tanh" ins(%{{.*}} : memref<1x64x64xf32>) outs(%{{.*}} : memref<1x64x64xf32>){{$}}
    bmb_exec.ewise "gelu_tanh" ins(%s : memref<1x64x64xf32>) outs(%s : memref<1x64x64xf32>)

    // CHECK: bmb_exec.kernel @k0 ins(%[[X]], %{{.*}} : memref<1x64x64xf32>, memref<64x64xf32>) outs(%{{.*}} : memref<1x64x64xf32>) rows %[[ROWS]] attributes {in_div = array<i64: 0, 0>, in_mod = array<i64: 0, 0>, inner = 64 : i64} {
    // CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
    // CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f32
    // CHECK-NEXT: %[[TH:.*]] = math.tanh %[[SUM]] : f32
    // CHECK-NEXT: bmb_exec.kernel_yield %[[TH]] : f32
    // CHECK-NEXT: }
    bmb_exec.kernel @k0 ins(%x, %p : memref<1x64x64xf32>, memref<64x64xf32>) outs(%s : memref<1x64x64xf32>) rows %rows attributes {in_div = array<i64: 0, 0>, in_mod = array<i64: 0, 0>, inner = 64 : i64} {
    ^bb0(%a: f32, %b: f32):
      %sum = arith.addf %a, %b : f32
      %th = math.tanh %sum : f32
      bmb_exec.kernel_yield %th : f32
    }
    // CHECK: bmb_exec.kernel @k1 ins(%{{.*}} : memref<64xf32>) outs(%{{.*}} : memref<1x64x64xf32>) {
    %bias = bmb_exec.alloc : memref<64xf32>
    bmb_exec.kernel @k1 ins(%bias : memref<64xf32>) outs(%s : memref<1x64x64xf32>) {
    ^bb0(%a: f32):
      bmb_exec.kernel_yield %a : f32
    }

    // CHECK: %[[C1:.*]] = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    // CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[C1]] {
    scf.for %i = %c0 to %c2 step %c1 {
      // CHECK: %[[LW:.*]] = bmb_exec.param_ref @h.ln.w[%[[I]]] : memref<64xf32>
      %lw = bmb_exec.param_ref @h.ln.w[%i] : memref<64xf32>
      // CHECK: %[[LB:.*]] = bmb_exec.param_ref @h.ln.b[%[[I]]] : memref<64xf32>
      %lb = bmb_exec.param_ref @h.ln.b[%i] : memref<64xf32>
      %n = bmb_exec.alloc : memref<1x64x64xf32>
      // CHECK: bmb_exec.norm "layernorm" %{{.*}}, %[[LW]] bias %[[LB]] : memref<64xf32> outs(%{{.*}}) rows %[[ROWS]] {eps = 1.000000e-05 : f64} : memref<1x64x64xf32>, memref<64xf32> -> memref<1x64x64xf32>
      bmb_exec.norm "layernorm" %s, %lw bias %lb : memref<64xf32> outs(%n) rows %rows {eps = 1.0e-5 : f64} : memref<1x64x64xf32>, memref<64xf32> -> memref<1x64x64xf32>
      // CHECK: bmb_exec.norm "rmsnorm" %{{.*}}, %[[LW]] residual %{{.*}} : memref<1x64x64xf32> sum %{{.*}} : memref<1x64x64xf32> outs(%{{.*}}) {eps = 9.9999999999999995E-7 : f64} : memref<1x64x64xf32>, memref<64xf32> -> memref<1x64x64xf32>
      bmb_exec.norm "rmsnorm" %x, %lw residual %n : memref<1x64x64xf32> sum %s : memref<1x64x64xf32> outs(%n) {eps = 1.0e-6 : f64} : memref<1x64x64xf32>, memref<64xf32> -> memref<1x64x64xf32>
      // CHECK: %[[KC:.*]] = bmb_exec.state_ref @h.k_cache[%[[I]]] : memref<1x64x32xf32>
      %kc = bmb_exec.state_ref @h.k_cache[%i] : memref<1x64x32xf32>
      // CHECK: %[[VC:.*]] = bmb_exec.state_ref @h.v_cache[%[[I]]] : memref<1x64x32xf32>
      %vc = bmb_exec.state_ref @h.v_cache[%i] : memref<1x64x32xf32>
      %o = bmb_exec.alloc : memref<1x64x64xf32>
      // CHECK: bmb_exec.attention %{{.*}}, %{{.*}}, %{{.*}} cache %[[KC]], %[[VC]] outs(%{{.*}}) start %[[START]] rows %[[ROWS]] {capacity = 64 : i64, causal, head_dim = 16 : i64, heads = 4 : i64, kv_heads = 2 : i64, scale = 2.500000e-01 : f64} : memref<1x64x64xf32>, memref<1x64x32xf32>, memref<1x64x32xf32>, memref<1x64x32xf32>, memref<1x64x32xf32> -> memref<1x64x64xf32>
      %k = bmb_exec.alloc : memref<1x64x32xf32>
      bmb_exec.attention %n, %k, %k cache %kc, %vc outs(%o) start %start rows %rows {causal, heads = 4 : i64, kv_heads = 2 : i64, head_dim = 16 : i64, capacity = 64 : i64, scale = 0.25 : f64} : memref<1x64x64xf32>, memref<1x64x32xf32>, memref<1x64x32xf32>, memref<1x64x32xf32>, memref<1x64x32xf32> -> memref<1x64x64xf32>
      // Prefix tuning: 4 prefix rows in the cache (capacity 64 = 4 + 60),
      // gated per layer (a prefix on some iterations).
      // CHECK: %[[SLOT:.*]] = bmb_exec.iteration_slot %[[I]] [-1, 0]
      %slot = bmb_exec.iteration_slot %i [-1, 0]
      %pk = bmb_exec.alloc : memref<4x32xf32>
      %g = bmb_exec.alloc : memref<1xf32>
      // CHECK: bmb_exec.iteration_gate %[[I]] [-1, 0] outs(%{{.*}}) : memref<1xf32>
      bmb_exec.iteration_gate %i [-1, 0] outs(%g) : memref<1xf32>
      // CHECK: bmb_exec.attention %{{.*}}, %{{.*}}, %{{.*}} cache %[[KC]], %[[VC]] prefix %{{.*}}, %{{.*}} : memref<4x32xf32>, memref<4x32xf32> gate %{{.*}} : memref<1xf32> outs(
      bmb_exec.attention %n, %k, %k cache %kc, %vc prefix %pk, %pk : memref<4x32xf32>, memref<4x32xf32> gate %g : memref<1xf32> outs(%o) start %start rows %rows {causal, heads = 4 : i64, kv_heads = 2 : i64, head_dim = 16 : i64, capacity = 64 : i64, scale = 0.25 : f64} : memref<1x64x64xf32>, memref<1x64x32xf32>, memref<1x64x32xf32>, memref<1x64x32xf32>, memref<1x64x32xf32> -> memref<1x64x64xf32>
      // Bidirectional attention over k and v themselves, with a key mask.
      // CHECK: bmb_exec.attention %{{.*}}, %[[KV:.*]], %[[KV]] cache %[[KV]], %[[KV]] mask %[[MASK]] : memref<1x64xi32> outs(%{{.*}}) start %[[C0:.*]] {capacity = 64 : i64, head_dim = 16 : i64, heads = 4 : i64, kv_heads = 4 : i64, scale = 2.500000e-01 : f64} : memref<1x64x64xf32>, memref<1x64x64xf32>, memref<1x64x64xf32>, memref<1x64x64xf32>, memref<1x64x64xf32> -> memref<1x64x64xf32>
      bmb_exec.attention %n, %x, %x cache %x, %x mask %mask : memref<1x64xi32> outs(%o) start %c0 {heads = 4 : i64, kv_heads = 4 : i64, head_dim = 16 : i64, capacity = 64 : i64, scale = 0.25 : f64} : memref<1x64x64xf32>, memref<1x64x64xf32>, memref<1x64x64xf32>, memref<1x64x64xf32>, memref<1x64x64xf32> -> memref<1x64x64xf32>
      %fw = bmb_exec.param_ref @h.fc.w[%i] : memref<256x64xf32>
      %fb = bmb_exec.param_ref @h.fc.b[%i] : memref<256xf32>
      %u = bmb_exec.alloc : memref<1x64x256xf32>
      // CHECK: bmb_exec.gemm %{{.*}}, %{{.*}} bias %{{.*}} : memref<256xf32> outs(%{{.*}}) rows %[[ROWS]] {act = "gelu_tanh"} : memref<1x64x64xf32>, memref<256x64xf32> -> memref<1x64x256xf32>
      bmb_exec.gemm %o, %fw bias %fb : memref<256xf32> outs(%u) rows %rows {act = "gelu_tanh"} : memref<1x64x64xf32>, memref<256x64xf32> -> memref<1x64x256xf32>
      // CHECK: bmb_exec.gemm %{{.*}}, %{{.*}} residual %{{.*}} : memref<1x64x64xf32> outs(%{{.*}}) {trans_b = false} : memref<1x64x256xf32>, memref<256x64xf32> -> memref<1x64x64xf32>
      bmb_exec.gemm %u, %fw residual %s : memref<1x64x64xf32> outs(%s) {trans_b = false} : memref<1x64x256xf32>, memref<256x64xf32> -> memref<1x64x64xf32>
    }
    // CHECK: %[[PR:.*]] = bmb_exec.alloc : memref<64xi32>
    // CHECK: bmb_exec.rotary %{{.*}}, %[[PR]] outs(%{{.*}}) rows %[[ROWS]] {base = 1.000000e+04 : f64, head_dim = 16 : i64, heads = 4 : i64} : memref<1x64x64xf32>, memref<64xi32> -> memref<1x64x64xf32>
    %pr = bmb_exec.alloc : memref<64xi32>
    bmb_exec.rotary %s, %pr outs(%s) rows %rows {heads = 4 : i64, head_dim = 16 : i64, base = 1.0e4 : f64} : memref<1x64x64xf32>, memref<64xi32> -> memref<1x64x64xf32>
    // CHECK: bmb_exec.softmax %{{.*}} outs(%{{.*}}) rows %[[ROWS]] : memref<1x64x64xf32> -> memref<1x64x64xf32>
    bmb_exec.softmax %s outs(%x) rows %rows : memref<1x64x64xf32> -> memref<1x64x64xf32>
    %sm = bmb_exec.alloc : memref<4x8xf32>
    // CHECK: bmb_exec.softmax %{{.*}} outs(%{{.*}}) : memref<4x8xf32> -> memref<4x8xf32>
    bmb_exec.softmax %sm outs(%sm) : memref<4x8xf32> -> memref<4x8xf32>
    %first = bmb_exec.alloc : memref<1x64xf32>
    // CHECK: bmb_exec.take %{{.*}} outs(%{{.*}}) {axis = 1 : i64, index = 0 : i64} : memref<1x64x64xf32> -> memref<1x64xf32>
    bmb_exec.take %s outs(%first) {axis = 1 : i64, index = 0 : i64} : memref<1x64x64xf32> -> memref<1x64xf32>
    // CHECK: %[[FLAT:.*]] = bmb_exec.reshape %[[X]] : memref<1x64x64xf32> to memref<64x64xf32>
    %flat = bmb_exec.reshape %x : memref<1x64x64xf32> to memref<64x64xf32>
    // CHECK: %[[LAST:.*]] = arith.subi %[[ROWS]], %[[C1]] : index
    %last = arith.subi %rows, %c1 : index
    // CHECK: %[[ROW:.*]] = bmb_exec.row_view %[[FLAT]][%[[LAST]]] row_elems 64 : memref<64x64xf32> to memref<1x1x64xf32>
    %row = bmb_exec.row_view %flat[%last] row_elems 64 : memref<64x64xf32> to memref<1x1x64xf32>
    %logits = bmb_exec.alloc offset 4096 : memref<1x1x512xf32>
    // CHECK: bmb_exec.gemm %[[ROW]], %[[WTE]] outs(%[[LOGITS:.*]]) : memref<1x1x64xf32>, memref<512x64xf32> -> memref<1x1x512xf32>
    bmb_exec.gemm %row, %wte outs(%logits) : memref<1x1x64xf32>, memref<512x64xf32> -> memref<1x1x512xf32>
    // CHECK: bmb_exec.output "logits" %[[LOGITS]] rows_dim -1 : memref<1x1x512xf32>
    bmb_exec.output "logits" %logits rows_dim -1 : memref<1x1x512xf32>
    // CHECK: bmb_exec.output "hidden" %[[X]] rows_dim 1 : memref<1x64x64xf32>
    bmb_exec.output "hidden" %x rows_dim 1 : memref<1x64x64xf32>
    return
  }

  // CHECK-LABEL: func.func @decode(
  func.func @decode(%start: index, %rows: index) {
    // CHECK: bmb_exec.input "token_types" kind "token_types" rows_dim 1 : memref<1x1xi32>
    %types = bmb_exec.input "token_types" kind "token_types" rows_dim 1 : memref<1x1xi32>
    // CHECK: bmb_exec.state_ref @scratch : memref<1x64x64xf32>
    %scratch = bmb_exec.state_ref @scratch : memref<1x64x64xf32>
    return
  }
}
