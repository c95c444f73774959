// bmb-prepare-for-emission: each generated kernel gets `inner` (elements per
// row when it runs over %rows rows, else all elements) and per input the
// divisor and modulus of its broadcast (0: none); anything unplanned or
// unfused is an error.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-prepare-for-emission | FileCheck %s

// CHECK-LABEL: bmb_exec.program @prep
bmb_exec.program @prep attributes {kind = "causal_lm"} {
  bmb_exec.param @bias offset 0 : memref<64xf32>
  bmb_exec.state @kv offset 0 : memref<1x8x64xf32>

  // CHECK-LABEL: func.func @prefill(
  func.func @prefill(%start: index, %rows: index) {
    %x = bmb_exec.alloc offset 0 : memref<1x8x64xf32>
    %y = bmb_exec.alloc offset 2048 : memref<1x8x64xf32>
    %p = bmb_exec.alloc offset 4096 : memref<8x64xf32>
    %g = bmb_exec.alloc offset 6144 : memref<1x8x1xf32>
    %b = bmb_exec.param_ref @bias : memref<64xf32>
    // The same shape, a [T, C] input into [1, T, C] (leading ones do not
    // count) and a [C] suffix: element i of the output reads i, i and
    // i % 64; over %rows rows of 64.
    // CHECK: bmb_exec.kernel @k0 ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<1x8x64xf32>, memref<8x64xf32>, memref<64xf32>) outs(%{{.*}} : memref<1x8x64xf32>) rows %{{.*}} attributes {in_div = array<i64: 0, 0, 0>, in_mod = array<i64: 0, 0, 64>, inner = 64 : i64} {
    bmb_exec.kernel @k0 ins(%x, %p, %b : memref<1x8x64xf32>, memref<8x64xf32>, memref<64xf32>) outs(%y : memref<1x8x64xf32>) rows %rows {
    ^bb0(%a0: f32, %a1: f32, %a2: f32):
      %s = arith.addf %a0, %a1 : f32
      %t = arith.addf %s, %a2 : f32
      bmb_exec.kernel_yield %t : f32
    }
    // Trailing ones: a per-row scalar [1, T, 1] into [1, T, C] reads i / 64.
    // CHECK: bmb_exec.kernel @k1 ins(%{{.*}}, %{{.*}} : memref<1x8x64xf32>, memref<1x8x1xf32>) outs(%{{.*}} : memref<1x8x64xf32>) rows %{{.*}} attributes {in_div = array<i64: 0, 64>, in_mod = array<i64: 0, 0>, inner = 64 : i64} {
    bmb_exec.kernel @k1 ins(%x, %g : memref<1x8x64xf32>, memref<1x8x1xf32>) outs(%y : memref<1x8x64xf32>) rows %rows {
    ^bb0(%a0: f32, %a1: f32):
      %m = arith.mulf %a0, %a1 : f32
      bmb_exec.kernel_yield %m : f32
    }
    // Without rows: all 512 elements; [1, 1, C] is a suffix after its
    // leading ones.
    %o = bmb_exec.alloc offset 8192 : memref<1x1x64xf32>
    // CHECK: bmb_exec.kernel @k2 ins(%{{.*}}, %{{.*}} : memref<1x8x64xf32>, memref<1x1x64xf32>) outs(%{{.*}} : memref<1x8x64xf32>) attributes {in_div = array<i64: 0, 0>, in_mod = array<i64: 0, 64>, inner = 512 : i64} {
    bmb_exec.kernel @k2 ins(%x, %o : memref<1x8x64xf32>, memref<1x1x64xf32>) outs(%y : memref<1x8x64xf32>) {
    ^bb0(%a0: f32, %a1: f32):
      %m = arith.subf %a0, %a1 : f32
      bmb_exec.kernel_yield %m : f32
    }
    // An all-ones output over %rows rows: one element per row.
    %one = bmb_exec.alloc offset 8448 : memref<1x1xf32>
    // CHECK: bmb_exec.kernel @k3 ins(%{{.*}} : memref<1x1xf32>) outs(%{{.*}} : memref<1x1xf32>) rows %{{.*}} attributes {in_div = array<i64: 0>, in_mod = array<i64: 0>, inner = 1 : i64} {
    bmb_exec.kernel @k3 ins(%one : memref<1x1xf32>) outs(%one : memref<1x1xf32>) rows %rows {
    ^bb0(%a0: f32):
      bmb_exec.kernel_yield %a0 : f32
    }
    bmb_exec.output "y" %y rows_dim 1 : memref<1x8x64xf32>
    return
  }
}

// -----

func.func @unplanned(%x: memref<8xf32>) {
  // expected-error @+1 {{has no offset: run memory planning (bmb-plan-memory) first}}
  %y = bmb_exec.alloc : memref<8xf32>
  bmb_exec.softmax %x outs(%y) : memref<8xf32> -> memref<8xf32>
  return
}

// -----

func.func @unplanned_input() {
  // expected-error @+1 {{has no offset: run memory planning (bmb-plan-memory) first}}
  %t = bmb_exec.input "tokens" kind "tokens" rows_dim 1 : memref<1x8xi32>
  return
}

// -----

bmb_exec.program @p {
  // expected-error @+1 {{has no offset: run memory planning (bmb-plan-memory) first}}
  bmb_exec.param @w : memref<8xf32>
  // expected-error @+1 {{has no offset: run memory planning (bmb-plan-memory) first}}
  bmb_exec.state @kv : memref<8xf32>
}

// -----

func.func @unfused(%x: memref<8xf32>) {
  %y = bmb_exec.alloc offset 0 : memref<8xf32>
  // expected-error @+1 {{is not fused yet: run bmb-fuse-kernels first}}
  bmb_exec.ewise "relu" ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
  return
}

// -----

func.func @output_view(%rows: index) {
  %x = bmb_exec.alloc offset 0 : memref<1x8x4xf32>
  %v = bmb_exec.row_view %x[%rows] row_elems 4 : memref<1x8x4xf32> to memref<1x1x4xf32>
  // expected-error @+1 {{must name a planned activation buffer}}
  bmb_exec.output "last" %v rows_dim -1 : memref<1x1x4xf32>
  return
}

// -----

func.func @graph_left(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{is left over from the model graph: lower it first (bmb-lower-to-exec)}}
  %y = bmb.relu %x : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @middle_broadcast(%x: memref<4x1x8xf32>) {
  %y = bmb_exec.alloc offset 0 : memref<4x3x8xf32>
  // expected-error @+1 {{a generated kernel cannot broadcast 'memref<4x1x8xf32>' to 'memref<4x3x8xf32>' (only suffixes and trailing ones)}}
  bmb_exec.kernel @k ins(%x : memref<4x1x8xf32>) outs(%y : memref<4x3x8xf32>) {
  ^bb0(%a: f32):
    bmb_exec.kernel_yield %a : f32
  }
  return
}

// -----

func.func @prefix_broadcast(%x: memref<8xf32>) {
  %y = bmb_exec.alloc offset 0 : memref<8x16xf32>
  // expected-error @+1 {{a generated kernel cannot broadcast 'memref<8xf32>' to 'memref<8x16xf32>' (only suffixes and trailing ones)}}
  bmb_exec.kernel @k ins(%x : memref<8xf32>) outs(%y : memref<8x16xf32>) {
  ^bb0(%a: f32):
    bmb_exec.kernel_yield %a : f32
  }
  return
}
