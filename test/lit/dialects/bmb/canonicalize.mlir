// Folds and canonicalization patterns of the bmb dialect.
// RUN: bmb-opt %s -canonicalize -split-input-file | FileCheck %s

// dropout with p = 0 is the identity.
// CHECK-LABEL: func.func @dropout_zero
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK-NEXT: return %[[X]]
func.func @dropout_zero(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = bmb.dropout %x {p = 0.0 : f64, rng_id = 1 : i64} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// A dropout with p > 0 stays.
// CHECK-LABEL: func.func @dropout_kept
// CHECK: bmb.dropout %{{.*}} {p = 1.000000e-01 : f64, rng_id = 1 : i64}
func.func @dropout_kept(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = bmb.dropout %x {p = 0.1 : f64, rng_id = 1 : i64} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// scale by 1.0 is the identity.
// CHECK-LABEL: func.func @scale_one
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @scale_one(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = bmb.scale %x {factor = 1.0 : f64} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Two scales combine into one.
// CHECK-LABEL: func.func @scale_scale
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[S:.*]] = bmb.scale %[[X]] {factor = 1.500000e+00 : f64} : tensor<8xf32>
// CHECK-NEXT: return %[[S]]
func.func @scale_scale(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = bmb.scale %x {factor = 0.5 : f64} : tensor<8xf32>
  %1 = bmb.scale %0 {factor = 3.0 : f64} : tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// scale(scale(x, 0.5), 2.0) combines to a scale by 1.0, which then folds.
// CHECK-LABEL: func.func @scale_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @scale_inverse(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = bmb.scale %x {factor = 0.5 : f64} : tensor<8xf32>
  %1 = bmb.scale %0 {factor = 2.0 : f64} : tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// A reshape to the same type is the identity.
// CHECK-LABEL: func.func @reshape_same
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_same(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = bmb.reshape %x : tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// reshape(reshape(x)) reads x; if the shapes come back, nothing is left.
// CHECK-LABEL: func.func @reshape_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK-NEXT: %[[R:.*]] = bmb.reshape %[[X]] : tensor<8x16xf32> -> tensor<128xf32>
// CHECK-NEXT: return %[[X]], %[[R]]
func.func @reshape_reshape(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<128xf32>) {
  %0 = bmb.reshape %x : tensor<8x16xf32> -> tensor<2x4x16xf32>
  %1 = bmb.reshape %0 : tensor<2x4x16xf32> -> tensor<8x16xf32>
  %2 = bmb.reshape %0 : tensor<2x4x16xf32> -> tensor<128xf32>
  return %1, %2 : tensor<8x16xf32>, tensor<128xf32>
}

// -----

// The identity permutation folds.
// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = bmb.transpose %x perm [0, 1] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Two transposes compose: r[i] = p[q[i]].
// CHECK-LABEL: func.func @transpose_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = bmb.transpose %[[X]] perm [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT: return %[[T]]
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = bmb.transpose %x perm [1, 2, 0] : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = bmb.transpose %0 perm [1, 2, 0] : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// A transpose and its inverse cancel.
// CHECK-LABEL: func.func @transpose_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = bmb.transpose %x perm [0, 2, 1] : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %1 = bmb.transpose %0 perm [0, 2, 1] : (tensor<2x4x3xf32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// Pure ops whose results are unused disappear, and so does a layer instance
// whose body is pure and whose results are unused.
// CHECK-LABEL: bmb.model @Dead
// CHECK: func.func @forward(%[[X:.*]]: tensor<8xf32>)
// CHECK-NOT: bmb.layer
// CHECK-NOT: bmb.param_get
// CHECK: return %[[X]]
bmb.model @Dead layer "Dead" {
  bmb.param @a.w : tensor<8xf32> init ones
  func.func @forward(%x: tensor<8xf32>) -> tensor<8xf32> {
    %0 = bmb.layer "a" layer "A" (%x) : (tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%v: tensor<8xf32>):
      %w = bmb.param_get @a.w : tensor<8xf32>
      %m = bmb.mul %v, %w : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      bmb.yield %m : tensor<8xf32>
    }
    return %x : tensor<8xf32>
  }
}
