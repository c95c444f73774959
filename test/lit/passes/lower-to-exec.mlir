// bmb-lower-to-exec: an infer job's model (entries @prefill at T = ctx and
// @decode at T = 1, as bmbc makes them) becomes a bmb_exec.program.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-lower-to-exec | FileCheck %s

// CHECK-LABEL: bmb_exec.program @chat attributes {ctx = 8 : i64, from = "ckpt/", job = "chat", kind = "causal_lm", model = "Tiny",
// CHECK-SAME: vocab = 16 : i64} {
// One KV cache per causal attention, stacked per layer of the repeat.
// CHECK-DAG: bmb_exec.state @kv0.k stacked : memref<2x1x8x8xf32>
// CHECK-DAG: bmb_exec.state @kv0.v stacked : memref<2x1x8x8xf32>
// CHECK: bmb_exec.param @wte.w : memref<16x8xf32>
// CHECK: bmb_exec.param @h.ln.w stacked : memref<2x8xf32>
// CHECK: bmb_exec.param @ln_f.w frozen : memref<8xf32>

// CHECK-LABEL: func.func @prefill(%{{.*}}: index {bmb.name = "start"}, %{{.*}}: index {bmb.name = "rows"}) {
// CHECK-SAME: {{^}}
// CHECK-NEXT: %[[TOK:.*]] = bmb_exec.input "tokens" kind "tokens" rows_dim 1 : memref<1x8xi32>
// CHECK-NEXT: %[[WTE:.*]] = bmb_exec.param_ref @wte.w : memref<16x8xf32>
// CHECK-NEXT: %[[X:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.embedding %[[TOK]], %[[WTE]] outs(%[[X]]) rows %[[ROWS:arg1]] : memref<1x8xi32>, memref<16x8xf32> -> memref<1x8x8xf32>
// arange(T) is the positions of the rows, from %start.
// CHECK-NEXT: %[[POS:.*]] = bmb_exec.alloc : memref<8xi32>
// CHECK-NEXT: bmb_exec.positions outs(%[[POS]]) start %[[START:arg0]] rows %[[ROWS]] : memref<8xi32>
// CHECK: bmb_exec.embedding %[[POS]], %{{.*}} outs(%[[P:.*]]) rows %[[ROWS]] : memref<8xi32>, memref<8x8xf32> -> memref<8x8xf32>
// CHECK-NEXT: %[[H:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.ewise "add" ins(%[[X]], %[[P]] : memref<1x8x8xf32>, memref<8x8xf32>) outs(%[[H]] : memref<1x8x8xf32>) rows %[[ROWS]]
// The repeat is an scf.for over the layer index; its layers are inlined.
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[C2]] step %[[C1]] {
// CHECK-NEXT: %[[LW:.*]] = bmb_exec.param_ref @h.ln.w[%[[I]]] : memref<8xf32>
// CHECK-NEXT: %[[LB:.*]] = bmb_exec.param_ref @h.ln.b[%[[I]]] : memref<8xf32>
// CHECK-NEXT: %[[N:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.norm "layernorm" %[[H]], %[[LW]] bias %[[LB]] : memref<8xf32> outs(%[[N]]) rows %[[ROWS]] {eps = 1.000000e-05 : f64} : memref<1x8x8xf32>, memref<8xf32> -> memref<1x8x8xf32>
// CHECK-NEXT: %[[QW:.*]] = bmb_exec.param_ref @h.q.w[%[[I]]] : memref<8x8xf32>
// CHECK-NEXT: %[[QB:.*]] = bmb_exec.param_ref @h.q.b[%[[I]]] : memref<8xf32>
// CHECK-NEXT: %[[Q:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.gemm %[[N]], %[[QW]] bias %[[QB]] : memref<8xf32> outs(%[[Q]]) rows %[[ROWS]] : memref<1x8x8xf32>, memref<8x8xf32> -> memref<1x8x8xf32>
// CHECK: bmb_exec.gemm %[[N]], %{{.*}} outs(%[[K:.*]]) rows %[[ROWS]] : memref<1x8x8xf32>, memref<8x8xf32> -> memref<1x8x8xf32>
// CHECK: bmb_exec.gemm %[[N]], %{{.*}} outs(%[[V:.*]]) rows %[[ROWS]] : memref<1x8x8xf32>, memref<8x8xf32> -> memref<1x8x8xf32>
// CHECK-NEXT: %[[KC:.*]] = bmb_exec.state_ref @kv0.k[%[[I]]] : memref<1x8x8xf32>
// CHECK-NEXT: %[[VC:.*]] = bmb_exec.state_ref @kv0.v[%[[I]]] : memref<1x8x8xf32>
// CHECK-NEXT: %[[ATT:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.attention %[[Q]], %[[K]], %[[V]] cache %[[KC]], %[[VC]] outs(%[[ATT]]) start %[[START]] rows %[[ROWS]] {capacity = 8 : i64, causal, head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, scale = 5.000000e-01 : f64} : memref<1x8x8xf32>, memref<1x8x8xf32>, memref<1x8x8xf32>, memref<1x8x8xf32>, memref<1x8x8xf32> -> memref<1x8x8xf32>
// Dropout is the identity: GELU reads the attention's output.
// CHECK-NEXT: %[[G:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.ewise "gelu_tanh" ins(%[[ATT]] : memref<1x8x8xf32>) outs(%[[G]] : memref<1x8x8xf32>) rows %[[ROWS]]
// CHECK-NEXT: %[[S:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.ewise "add" ins(%[[H]], %[[G]] : memref<1x8x8xf32>, memref<1x8x8xf32>) outs(%[[S]] : memref<1x8x8xf32>) rows %[[ROWS]]
// The add reads the carried buffer, so it cannot write it: a copy does.
// CHECK-NEXT: bmb_exec.ewise "copy" ins(%[[S]] : memref<1x8x8xf32>) outs(%[[H]] : memref<1x8x8xf32>) rows %[[ROWS]]
// CHECK-NEXT: }
// CHECK: bmb_exec.norm "rmsnorm" %[[H]], %{{.*}} outs(%[[F:.*]]) rows %[[ROWS]] {eps = 9.9999999999999995E-7 : f64}
// Prefill computes the logits of the last valid row only.
// CHECK: %[[LAST:.*]] = arith.subi %[[ROWS]], %{{.*}} : index
// CHECK-NEXT: %[[ROW:.*]] = bmb_exec.row_view %[[F]][%[[LAST]]] row_elems 8 : memref<1x8x8xf32> to memref<1x1x8xf32>
// CHECK-NEXT: %[[L:.*]] = bmb_exec.alloc : memref<1x1x16xf32>
// CHECK-NEXT: bmb_exec.gemm %[[ROW]], %[[WTE]] outs(%[[L]]) : memref<1x1x8xf32>, memref<16x8xf32> -> memref<1x1x16xf32>
// CHECK-NEXT: bmb_exec.output "logits" %[[L]] rows_dim -1 : memref<1x1x16xf32>
// CHECK-NEXT: return

// Decode: one row at %start, static shapes, no `rows` operands.
// CHECK-LABEL: func.func @decode(
// CHECK: bmb_exec.input "tokens" kind "tokens" rows_dim 1 : memref<1x1xi32>
// CHECK: bmb_exec.embedding %{{.*}}, %{{.*}} outs(%{{.*}}) : memref<1x1xi32>, memref<16x8xf32> -> memref<1x1x8xf32>
// CHECK: bmb_exec.positions outs(%{{.*}}) start %arg0 : memref<1xi32>
// CHECK: scf.for %[[DI:.*]] = 
// CHECK: bmb_exec.state_ref @kv0.k[%[[DI]]] : memref<1x8x8xf32>
// CHECK: bmb_exec.attention {{.*}} start %arg0 {capacity = 8 : i64, causal, {{.*}} : memref<1x1x8xf32>, memref<1x1x8xf32>, memref<1x1x8xf32>, memref<1x8x8xf32>, memref<1x8x8xf32> -> memref<1x1x8xf32>
// CHECK: bmb_exec.gemm %{{.*}}, %{{.*}} outs(%[[DL:.*]]) : memref<1x1x8xf32>, memref<16x8xf32> -> memref<1x1x16xf32>
// CHECK-NEXT: bmb_exec.output "logits" %[[DL]] rows_dim -1 : memref<1x1x16xf32>
// The model, the job and the template are gone.
// CHECK-NOT: bmb.model
// CHECK-NOT: bmb.job
// CHECK-NOT: bmb.template

// A two-layer pre-LN decoder, trimmed from `bmbc --emit=bmb` of GPT2Nano
// (vocab 16, ctx 8, dim 8, 2 heads, no MLP).
bmb.model @Tiny layer "GPT2" {
  bmb.param @wte.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @wpe.w : tensor<8x8xf32> init normal(0.02)
  bmb.param @h.ln.w : tensor<2x8xf32> init ones stacked 1
  bmb.param @h.ln.b : tensor<2x8xf32> init zeros stacked 1
  bmb.param @h.q.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
  bmb.param @h.q.b : tensor<2x8xf32> init zeros stacked 1
  bmb.param @h.k.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
  bmb.param @h.v.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
  bmb.param @ln_f.w : tensor<8xf32> init ones frozen
  func.func @prefill(%tokens: tensor<1x8xi32> {bmb.name = "tokens"}) -> tensor<1x8x16xf32> {
    %wte = bmb.param_get @wte.w : tensor<16x8xf32>
    %x = bmb.embedding %tokens, %wte : (tensor<1x8xi32>, tensor<16x8xf32>) -> tensor<1x8x8xf32>
    %pos = bmb.arange 8 : tensor<8xi32>
    %wpe = bmb.param_get @wpe.w : tensor<8x8xf32>
    %p = bmb.embedding %pos, %wpe : (tensor<8xi32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %x1 = bmb.add %x, %p : (tensor<1x8x8xf32>, tensor<8x8xf32>) -> tensor<1x8x8xf32>
    %y = bmb.repeat 2 "h" layer "Block" iter(%x1) : (tensor<1x8x8xf32>) -> tensor<1x8x8xf32> {
    ^bb0(%i: index, %a: tensor<1x8x8xf32>):
      %n = bmb.layer "ln" layer "LayerNorm" (%a, %i) : (tensor<1x8x8xf32>, index) -> tensor<1x8x8xf32> {
      ^bb0(%v: tensor<1x8x8xf32>, %j: index):
        %w = bmb.param_get @h.ln.w[%j] : tensor<8xf32>
        %b = bmb.param_get @h.ln.b[%j] : tensor<8xf32>
        %r = bmb.layernorm %v, %w, %b {eps = 1.0e-5 : f64} : (tensor<1x8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x8xf32>
        bmb.yield %r : tensor<1x8x8xf32>
      }
      %qw = bmb.param_get @h.q.w[%i] : tensor<8x8xf32>
      %qb = bmb.param_get @h.q.b[%i] : tensor<8xf32>
      %q = bmb.linear %n, %qw, %qb : (tensor<1x8x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x8x8xf32>
      %kw = bmb.param_get @h.k.w[%i] : tensor<8x8xf32>
      %k = bmb.linear %n, %kw : (tensor<1x8x8xf32>, tensor<8x8xf32>) -> tensor<1x8x8xf32>
      %vw = bmb.param_get @h.v.w[%i] : tensor<8x8xf32>
      %v = bmb.linear %n, %vw : (tensor<1x8x8xf32>, tensor<8x8xf32>) -> tensor<1x8x8xf32>
      %att = bmb.attention %q, %k, %v {causal, heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64} : (tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
      %d = bmb.dropout %att {p = 0.1 : f64, rng_id = 0 : i64} : tensor<1x8x8xf32>
      %g = bmb.gelu %d approximate tanh : tensor<1x8x8xf32>
      %s = bmb.add %a, %g : (tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
      bmb.yield %s : tensor<1x8x8xf32>
    }
    %fw = bmb.param_get @ln_f.w : tensor<8xf32>
    %h = bmb.rmsnorm %y, %fw {eps = 1.0e-6 : f64} : (tensor<1x8x8xf32>, tensor<8xf32>) -> tensor<1x8x8xf32>
    %l = bmb.lm_head %h, %wte : (tensor<1x8x8xf32>, tensor<16x8xf32>) -> tensor<1x8x16xf32>
    return %l : tensor<1x8x16xf32>
  }
  func.func @decode(%tokens: tensor<1x1xi32> {bmb.name = "tokens"}) -> tensor<1x1x16xf32> {
    %wte = bmb.param_get @wte.w : tensor<16x8xf32>
    %x = bmb.embedding %tokens, %wte : (tensor<1x1xi32>, tensor<16x8xf32>) -> tensor<1x1x8xf32>
    %pos = bmb.arange 1 : tensor<1xi32>
    %wpe = bmb.param_get @wpe.w : tensor<8x8xf32>
    %p = bmb.embedding %pos, %wpe : (tensor<1xi32>, tensor<8x8xf32>) -> tensor<1x8xf32>
    %x1 = bmb.add %x, %p : (tensor<1x1x8xf32>, tensor<1x8xf32>) -> tensor<1x1x8xf32>
    %y = bmb.repeat 2 "h" layer "Block" iter(%x1) : (tensor<1x1x8xf32>) -> tensor<1x1x8xf32> {
    ^bb0(%i: index, %a: tensor<1x1x8xf32>):
      %w = bmb.param_get @h.ln.w[%i] : tensor<8xf32>
      %b = bmb.param_get @h.ln.b[%i] : tensor<8xf32>
      %n = bmb.layernorm %a, %w, %b {eps = 1.0e-5 : f64} : (tensor<1x1x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x1x8xf32>
      %qw = bmb.param_get @h.q.w[%i] : tensor<8x8xf32>
      %qb = bmb.param_get @h.q.b[%i] : tensor<8xf32>
      %q = bmb.linear %n, %qw, %qb : (tensor<1x1x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x1x8xf32>
      %kw = bmb.param_get @h.k.w[%i] : tensor<8x8xf32>
      %k = bmb.linear %n, %kw : (tensor<1x1x8xf32>, tensor<8x8xf32>) -> tensor<1x1x8xf32>
      %vw = bmb.param_get @h.v.w[%i] : tensor<8x8xf32>
      %v = bmb.linear %n, %vw : (tensor<1x1x8xf32>, tensor<8x8xf32>) -> tensor<1x1x8xf32>
      %att = bmb.attention %q, %k, %v {causal, heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64} : (tensor<1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>) -> tensor<1x1x8xf32>
      %d = bmb.dropout %att {p = 0.1 : f64, rng_id = 0 : i64} : tensor<1x1x8xf32>
      %g = bmb.gelu %d approximate tanh : tensor<1x1x8xf32>
      %s = bmb.add %a, %g : (tensor<1x1x8xf32>, tensor<1x1x8xf32>) -> tensor<1x1x8xf32>
      bmb.yield %s : tensor<1x1x8xf32>
    }
    %fw = bmb.param_get @ln_f.w : tensor<8xf32>
    %h = bmb.rmsnorm %y, %fw {eps = 1.0e-6 : f64} : (tensor<1x1x8xf32>, tensor<8xf32>) -> tensor<1x1x8xf32>
    %l = bmb.lm_head %h, %wte : (tensor<1x1x8xf32>, tensor<16x8xf32>) -> tensor<1x1x16xf32>
    return %l : tensor<1x1x16xf32>
  }
}
bmb.job @chat infer for @Tiny from "ckpt/" {batch = 1 : i64, sampling = {kind = "greedy"}, seq = 8 : i64}
bmb.template @unused "{text_a} It was {mask}."

// -----

// CHECK-LABEL: bmb_exec.program @embed attributes {ctx = 8 : i64, from = "", job = "embed", kind = "encoder", model = "Enc",
// CHECK-SAME: vocab = 16 : i64} {
// CHECK-NOT: bmb_exec.state
// CHECK-LABEL: func.func @prefill(
// CHECK-NEXT: %[[TOK:.*]] = bmb_exec.input "tokens" kind "tokens" rows_dim 1 : memref<1x8xi32>
// CHECK-NEXT: %[[TYP:.*]] = bmb_exec.input "token_types" kind "token_types" rows_dim 1 : memref<1x8xi32>
// CHECK-NEXT: %[[MASK:.*]] = bmb_exec.input "mask" kind "mask" rows_dim 1 : memref<1x8xi32>
// CHECK: bmb_exec.embedding %[[TYP]], %{{.*}} outs(%{{.*}}) rows %arg1 : memref<1x8xi32>, memref<2x8xf32> -> memref<1x8x8xf32>
// CHECK: bmb_exec.embedding %[[TOK]], %{{.*}} outs(%{{.*}}) rows %arg1 : memref<1x8xi32>, memref<16x8xf32> -> memref<1x8x8xf32>
// CHECK-NEXT: %[[H:.*]] = bmb_exec.alloc : memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.ewise "add" ins({{.*}}) outs(%[[H]] : memref<1x8x8xf32>) rows %arg1
// CHECK: scf.for %[[I:.*]] = 
// CHECK: bmb_exec.gemm %[[H]], %{{.*}} outs(%[[Q:.*]]) rows %arg1
// Bidirectional: the caches are k and v themselves, of T rows; the mask is
// the invariant input.
// CHECK: bmb_exec.attention %[[Q]], %[[Q]], %[[Q]] cache %[[Q]], %[[Q]] mask %[[MASK]] : memref<1x8xi32> outs(%[[ATT:.*]]) start %arg0 rows %arg1 {capacity = 8 : i64, head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, scale = 5.000000e-01 : f64}
// CHECK: bmb_exec.ewise "add" ins(%[[H]], %[[ATT]] : memref<1x8x8xf32>, memref<1x8x8xf32>) outs(%[[S:.*]] : memref<1x8x8xf32>) rows %arg1
// The norm is the last writer and does not read the carried buffer: it
// writes the carried buffer directly, no copy.
// CHECK: bmb_exec.norm "layernorm" %[[S]], %{{.*}} outs(%[[H]]) rows %arg1 {eps = 9.9999999999999998E-13 : f64}
// CHECK-NEXT: }
// CHECK-NEXT: %[[FIRST:.*]] = bmb_exec.alloc : memref<1x8xf32>
// CHECK-NEXT: bmb_exec.take %[[H]] outs(%[[FIRST]]) {axis = 1 : i64, index = 0 : i64} : memref<1x8x8xf32> -> memref<1x8xf32>
// CHECK-NEXT: bmb_exec.output "hidden" %[[H]] rows_dim 1 : memref<1x8x8xf32>
// CHECK-NEXT: bmb_exec.output "pooled" %[[FIRST]] rows_dim -1 : memref<1x8xf32>
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NOT: func.func @decode

// An encoder (BERT-like, post-LN): bidirectional attention with a key mask
// makes the program an encoder with no @decode and no KV cache; the hidden
// states and a pooled first row are the outputs. token_types is embedded
// before tokens: `vocab` still comes from the tokens' table.
bmb.model @Enc layer "BERT" {
  bmb.param @type.w : tensor<2x8xf32> init normal(0.02)
  bmb.param @word.w : tensor<16x8xf32> init normal(0.02)
  bmb.param @enc.q.w : tensor<2x8x8xf32> init normal(0.02) stacked 1
  bmb.param @enc.ln.w : tensor<2x8xf32> init ones stacked 1
  func.func @prefill(%tokens: tensor<1x8xi32> {bmb.name = "tokens"}, %types: tensor<1x8xi32> {bmb.name = "token_types"}, %mask: tensor<1x8xi32> {bmb.name = "mask"}) -> (tensor<1x8x8xf32>, tensor<1x8xf32>) {
    %tw = bmb.param_get @type.w : tensor<2x8xf32>
    %t = bmb.embedding %types, %tw : (tensor<1x8xi32>, tensor<2x8xf32>) -> tensor<1x8x8xf32>
    %ww = bmb.param_get @word.w : tensor<16x8xf32>
    %w = bmb.embedding %tokens, %ww : (tensor<1x8xi32>, tensor<16x8xf32>) -> tensor<1x8x8xf32>
    %x = bmb.add %w, %t : (tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
    %y = bmb.repeat 2 "enc" layer "PostLNBlock" iter(%x) invariant(%mask) : (tensor<1x8x8xf32>, tensor<1x8xi32>) -> tensor<1x8x8xf32> {
    ^bb0(%i: index, %a: tensor<1x8x8xf32>, %m: tensor<1x8xi32>):
      %qw = bmb.param_get @enc.q.w[%i] : tensor<8x8xf32>
      %q = bmb.linear %a, %qw : (tensor<1x8x8xf32>, tensor<8x8xf32>) -> tensor<1x8x8xf32>
      %att = bmb.attention %q, %q, %q, %m {heads = 2 : i64, kv_heads = 2 : i64, scale = 0.5 : f64} : (tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8xi32>) -> tensor<1x8x8xf32>
      %s = bmb.add %a, %att : (tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
      %lw = bmb.param_get @enc.ln.w[%i] : tensor<8xf32>
      %n = bmb.layernorm %s, %lw {eps = 1.0e-12 : f64} : (tensor<1x8x8xf32>, tensor<8xf32>) -> tensor<1x8x8xf32>
      bmb.yield %n : tensor<1x8x8xf32>
    }
    %first = bmb.take %y {axis = 1 : i64, index = 0 : i64} : (tensor<1x8x8xf32>) -> tensor<1x8xf32>
    return %y, %first : tensor<1x8x8xf32>, tensor<1x8xf32>
  }
  func.func @decode(%tokens: tensor<1x1xi32> {bmb.name = "tokens"}, %types: tensor<1x1xi32> {bmb.name = "token_types"}, %mask: tensor<1x1xi32> {bmb.name = "mask"}) -> tensor<1x1x8xf32> {
    %ww = bmb.param_get @word.w : tensor<16x8xf32>
    %w = bmb.embedding %tokens, %ww : (tensor<1x1xi32>, tensor<16x8xf32>) -> tensor<1x1x8xf32>
    return %w : tensor<1x1x8xf32>
  }
}
bmb.job @embed infer for @Enc {batch = 1 : i64, seq = 8 : i64}

// -----

// A train job before autodiff: its entries are not there yet.
module {
  bmb.model @M layer "M" {
    bmb.param @w : tensor<8xf32> init ones
  }
  // expected-error @+1 {{a train job is lowered from @loss, @train_step and @optimizer_step: run bmb-attach-loss, bmb-autodiff and bmb-insert-optimizer first (bmb-train-pipeline)}}
  bmb.job @pretrain train for @M {batch = 1 : i64, seq = 8 : i64}
}

// -----

// expected-error @+1 {{bmb-lower-to-exec needs an infer, train or tune job: executables for compress jobs are not implemented yet}}
module {
  bmb.model @M layer "M" {
    bmb.param @w : tensor<8xf32> init ones
  }
  bmb.recipe @r [{verb = "prune"}]
  bmb.job @small compress for @M recipe @r {batch = 1 : i64, seq = 8 : i64}
}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<8xf32> init ones
}
// expected-error @+1 {{quantize = int8 is not implemented yet (int8 inference comes with the compression work); remove it to build in fp32}}
bmb.job @chat infer for @M {batch = 1 : i64, quantize = "int8", seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<8xf32> init ones
}
// expected-error @+1 {{memory budgets (CPU-GPU layer scheduling) are not implemented yet; remove `memory` to build a program that keeps every layer resident}}
bmb.job @chat infer for @M {batch = 1 : i64, memory = {gpu = "4GB"}, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<8xf32> init ones
}
// expected-error @+1 {{batch = 4: infer programs run one sequence per call for now (batch = 1)}}
bmb.job @chat infer for @M {batch = 4 : i64, seq = 8 : i64}

// -----

// expected-error @+1 {{an infer model needs the entries @prefill and @decode (bmbc makes them from the forward)}}
bmb.model @M layer "M" {
  bmb.param @w : tensor<8xf32> init ones
  func.func @forward(%tokens: tensor<1x8xi32> {bmb.name = "tokens"}) -> tensor<1x8xi32> {
    return %tokens : tensor<1x8xi32>
  }
}
bmb.job @chat infer for @M {batch = 1 : i64, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  // expected-error @+1 {{parameters stacked by nested repeats are not supported yet}}
  bmb.param @g.h.w : tensor<2x3x8xf32> init ones stacked 2
  func.func @prefill(%tokens: tensor<1x8xi32> {bmb.name = "tokens"}) -> tensor<1x8xi32> {
    return %tokens : tensor<1x8xi32>
  }
}
bmb.job @chat infer for @M {batch = 1 : i64, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  // expected-error @+1 {{input 'pixels' of the model: an infer program is fed tokens, token_types and mask only}}
  func.func @prefill(%x: tensor<1x8xi32> {bmb.name = "pixels"}) -> tensor<1x8xi32> {
    return %x : tensor<1x8xi32>
  }
}
bmb.job @chat infer for @M {batch = 1 : i64, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  // expected-error @+1 {{input 'tokens' must be [1, T]: infer programs run one sequence per call, got 'tensor<2x8xi32>'}}
  func.func @prefill(%x: tensor<2x8xi32> {bmb.name = "tokens"}) -> tensor<2x8xi32> {
    return %x : tensor<2x8xi32>
  }
}
bmb.job @chat infer for @M {batch = 1 : i64, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<16x8xf32> init ones
  func.func @prefill(%tokens: tensor<1x8xi32> {bmb.name = "tokens"}) -> tensor<1x8x8xf32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %x = bmb.embedding %tokens, %w : (tensor<1x8xi32>, tensor<16x8xf32>) -> tensor<1x8x8xf32>
    // expected-error @+1 {{'bmb.transpose' is not supported by the inference lowering yet}}
    %t = bmb.transpose %x perm [0, 2, 1] : (tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
    return %t : tensor<1x8x8xf32>
  }
}
bmb.job @chat infer for @M {batch = 1 : i64, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<16x8xf32> init ones
  func.func @prefill(%tokens: tensor<1x8xi32> {bmb.name = "tokens"}) -> tensor<f32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %x = bmb.embedding %tokens, %w : (tensor<1x8xi32>, tensor<16x8xf32>) -> tensor<1x8x8xf32>
    // expected-error @+1 {{'bmb.cross_entropy' has no place in an infer program}}
    %l = bmb.cross_entropy %x, %tokens : (tensor<1x8x8xf32>, tensor<1x8xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
bmb.job @chat infer for @M {batch = 1 : i64, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<16x8xf32> init ones
  func.func @prefill(%tokens: tensor<1x8xi32> {bmb.name = "tokens"}) -> tensor<1x8x8xf32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %x = bmb.embedding %tokens, %w : (tensor<1x8xi32>, tensor<16x8xf32>) -> tensor<1x8x8xf32>
    // expected-error @+1 {{softmax over a dim other than the last is not supported by the host lowering yet}}
    %s = bmb.softmax %x {axis = 1 : i64} : tensor<1x8x8xf32>
    return %s : tensor<1x8x8xf32>
  }
}
bmb.job @chat infer for @M {batch = 1 : i64, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<16x8xf32> init ones
  func.func @prefill(%tokens: tensor<1x8xi32> {bmb.name = "tokens"}) -> tensor<1x8xf32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %x = bmb.embedding %tokens, %w : (tensor<1x8xi32>, tensor<16x8xf32>) -> tensor<1x8x8xf32>
    // expected-error @+1 {{take along the sequence dim needs index 0 at inference (the prompt length is a run-time value)}}
    %t = bmb.take %x {axis = 1 : i64, index = 3 : i64} : (tensor<1x8x8xf32>) -> tensor<1x8xf32>
    return %t : tensor<1x8xf32>
  }
}
bmb.job @chat infer for @M {batch = 1 : i64, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<16x8xf32> init ones
  func.func @prefill(%tokens: tensor<1x8xi32> {bmb.name = "tokens"}) -> tensor<1x8xf32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %x = bmb.embedding %tokens, %w : (tensor<1x8xi32>, tensor<16x8xf32>) -> tensor<1x8x8xf32>
    // expected-error @+1 {{take after the sequence dim is not supported at inference yet}}
    %t = bmb.take %x {axis = 2 : i64, index = 0 : i64} : (tensor<1x8x8xf32>) -> tensor<1x8xf32>
    return %t : tensor<1x8xf32>
  }
}
bmb.job @chat infer for @M {batch = 1 : i64, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<16x8xf32> init ones
  func.func @prefill(%tokens: tensor<1x8xi32> {bmb.name = "tokens"}) -> tensor<64xf32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %x = bmb.embedding %tokens, %w : (tensor<1x8xi32>, tensor<16x8xf32>) -> tensor<1x8x8xf32>
    // expected-error @+1 {{reshape across the sequence dim is not supported at inference}}
    %r = bmb.reshape %x : tensor<1x8x8xf32> -> tensor<64xf32>
    return %r : tensor<64xf32>
  }
}
bmb.job @chat infer for @M {batch = 1 : i64, seq = 8 : i64}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<16x8xf32> init ones
  func.func @prefill(%tokens: tensor<1x8xi32> {bmb.name = "tokens"}) -> tensor<1x8x8xf32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %x = bmb.embedding %tokens, %w : (tensor<1x8xi32>, tensor<16x8xf32>) -> tensor<1x8x8xf32>
    %y = bmb.repeat 2 "g" layer "Group" iter(%x) : (tensor<1x8x8xf32>) -> tensor<1x8x8xf32> {
    ^bb0(%i: index, %a: tensor<1x8x8xf32>):
      // expected-error @+1 {{a repeat inside a repeat is not supported by the inference lowering yet}}
      %z = bmb.repeat 3 "h" layer "Block" iter(%a) : (tensor<1x8x8xf32>) -> tensor<1x8x8xf32> {
      ^bb0(%j: index, %b: tensor<1x8x8xf32>):
        %r = bmb.relu %b : tensor<1x8x8xf32>
        bmb.yield %r : tensor<1x8x8xf32>
      }
      bmb.yield %z : tensor<1x8x8xf32>
    }
    return %y : tensor<1x8x8xf32>
  }
}
bmb.job @chat infer for @M {batch = 1 : i64, seq = 8 : i64}
