// bmb-plan-memory: params and state in declaration order, activations
// packed by liveness per entry function; every offset a multiple of 64.
// RUN: bmb-opt %s --bmb-plan-memory | FileCheck %s

// CHECK-LABEL: bmb_exec.program @plan attributes {activation_bytes = 3072 : i64, kind = "causal_lm", param_bytes = 4672 : i64, state_bytes = 320 : i64} {
bmb_exec.program @plan attributes {kind = "causal_lm"} {
  // Params one after the other: 16x64xf32 = 4096 bytes, then 12 bytes padded
  // to 64, then 512; 4096 + 64 + 512 = 4672.
  // CHECK-NEXT: bmb_exec.param @w offset 0 : memref<16x64xf32>
  // CHECK-NEXT: bmb_exec.param @b offset 4096 : memref<3xf32>
  // CHECK-NEXT: bmb_exec.state @kv stacked offset 0 : memref<2x1x4x8xf32>
  // CHECK-NEXT: bmb_exec.param @h.w stacked offset 4160 : memref<2x64xf32>
  // CHECK-NEXT: bmb_exec.state @s offset 256 : memref<5xf32>
  bmb_exec.param @w : memref<16x64xf32>
  bmb_exec.param @b : memref<3xf32>
  bmb_exec.state @kv stacked : memref<2x1x4x8xf32>
  bmb_exec.param @h.w stacked : memref<2x64xf32>
  bmb_exec.state @s : memref<5xf32>

  // CHECK-LABEL: func.func @straight(
  // CHECK-SAME: attributes {activation_bytes = 512 : i64}
  func.func @straight(%start: index, %rows: index) {
    // Two small buffers live together: 12 bytes each, 64 apart.
    // CHECK-NEXT: %[[S1:.*]] = bmb_exec.alloc offset 0 : memref<3xf32>
    // CHECK-NEXT: %[[S2:.*]] = bmb_exec.alloc offset 64 : memref<3xf32>
    %s1 = bmb_exec.alloc : memref<3xf32>
    %s2 = bmb_exec.alloc : memref<3xf32>
    bmb_exec.softmax %s1 outs(%s2) : memref<3xf32> -> memref<3xf32>
    // %a and %b overlap; %c starts after %a's last use and takes its place.
    // CHECK: %[[A:.*]] = bmb_exec.alloc offset 0 : memref<1x64xf32>
    // CHECK-NEXT: %[[B:.*]] = bmb_exec.alloc offset 256 : memref<1x64xf32>
    // CHECK-NEXT: bmb_exec.softmax %[[A]] outs(%[[B]])
    // CHECK-NEXT: %[[C:.*]] = bmb_exec.alloc offset 0 : memref<1x64xf32>
    %a = bmb_exec.alloc : memref<1x64xf32>
    %b = bmb_exec.alloc : memref<1x64xf32>
    bmb_exec.softmax %a outs(%b) : memref<1x64xf32> -> memref<1x64xf32>
    %c = bmb_exec.alloc : memref<1x64xf32>
    bmb_exec.softmax %b outs(%c) : memref<1x64xf32> -> memref<1x64xf32>
    // A use through a view keeps %c live: %d cannot take offset 0.
    // CHECK: %[[D:.*]] = bmb_exec.alloc offset 256 : memref<64xf32>
    %cv = bmb_exec.reshape %c : memref<1x64xf32> to memref<64xf32>
    %d = bmb_exec.alloc : memref<64xf32>
    bmb_exec.softmax %cv outs(%d) : memref<64xf32> -> memref<64xf32>
    bmb_exec.output "d" %d rows_dim -1 : memref<64xf32>
    // An output is live to the end: %e cannot take %d's place.
    // CHECK: %[[E:.*]] = bmb_exec.alloc offset 0 : memref<64xf32>
    %e = bmb_exec.alloc : memref<64xf32>
    bmb_exec.softmax %e outs(%e) : memref<64xf32> -> memref<64xf32>
    return
  }

  // CHECK-LABEL: func.func @loop(
  // CHECK-SAME: attributes {activation_bytes = 3072 : i64}
  func.func @loop(%start: index, %rows: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    // An input is live from the start: it cannot share %a's offset 0 even
    // though %a is allocated after it.
    // CHECK: %[[TOK:.*]] = bmb_exec.input "tokens" kind "tokens" rows_dim 1 offset 1024 : memref<1x4xi32>
    %tok = bmb_exec.input "tokens" kind "tokens" rows_dim 1 : memref<1x4xi32>
    %w = bmb_exec.param_ref @w : memref<16x64xf32>
    // CHECK: %[[A:.*]] = bmb_exec.alloc offset 0 : memref<1x4x64xf32>
    %a = bmb_exec.alloc : memref<1x4x64xf32>
    bmb_exec.embedding %tok, %w outs(%a) rows %rows : memref<1x4xi32>, memref<16x64xf32> -> memref<1x4x64xf32>
    // CHECK: scf.for
    scf.for %i = %c0 to %c2 step %c1 {
      // %a is defined outside the loop and read inside: the next iteration
      // reads it again, so it is live for the whole loop and %v may take
      // %t's offset (dead after %u's softmax) but not %a's.
      // CHECK-NEXT: %[[T:.*]] = bmb_exec.alloc offset 1024 : memref<1x4x64xf32>
      // CHECK-NEXT: bmb_exec.softmax %[[A]] outs(%[[T]])
      // CHECK-NEXT: %[[U:.*]] = bmb_exec.alloc offset 2048 : memref<1x4x64xf32>
      // CHECK-NEXT: bmb_exec.softmax %[[T]] outs(%[[U]])
      // CHECK-NEXT: %[[V:.*]] = bmb_exec.alloc offset 1024 : memref<1x4x64xf32>
      %t = bmb_exec.alloc : memref<1x4x64xf32>
      bmb_exec.softmax %a outs(%t) rows %rows : memref<1x4x64xf32> -> memref<1x4x64xf32>
      %u = bmb_exec.alloc : memref<1x4x64xf32>
      bmb_exec.softmax %t outs(%u) rows %rows : memref<1x4x64xf32> -> memref<1x4x64xf32>
      %v = bmb_exec.alloc : memref<1x4x64xf32>
      bmb_exec.softmax %u outs(%v) rows %rows : memref<1x4x64xf32> -> memref<1x4x64xf32>
    }
    // After the loop everything above is dead.
    // CHECK: %[[O:.*]] = bmb_exec.alloc offset 0 : memref<1x1x64xf32>
    %o = bmb_exec.alloc : memref<1x1x64xf32>
    bmb_exec.softmax %o outs(%o) : memref<1x1x64xf32> -> memref<1x1x64xf32>
    bmb_exec.output "o" %o rows_dim -1 : memref<1x1x64xf32>
    return
  }
}
