// bmb-frontend-pipeline: what bmbc runs right after MLIRGen (canonicalize,
// symbol-dce).
// RUN: bmb-opt %s --bmb-frontend-pipeline | FileCheck %s

// CHECK-LABEL: bmb.model @M layer "M"
// CHECK: bmb.param @w : tensor<8xf32> init ones
// CHECK: func.func @forward(%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[W:.*]] = bmb.param_get @w
// CHECK-NEXT: %[[Y:.*]] = bmb.mul %[[X]], %[[W]]
// CHECK-NEXT: return %[[Y]]
// CHECK-NOT: @unused
bmb.model @M layer "M" {
  bmb.param @w : tensor<8xf32> init ones
  func.func @forward(%x: tensor<8xf32>) -> tensor<8xf32> {
    %w = bmb.param_get @w : tensor<8xf32>
    %d = bmb.dropout %x {p = 0.0 : f64, rng_id = 0 : i64} : tensor<8xf32>
    %s = bmb.scale %d {factor = 1.0 : f64} : tensor<8xf32>
    %y = bmb.mul %s, %w : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    return %y : tensor<8xf32>
  }
  func.func private @unused(%x: tensor<8xf32>) -> tensor<8xf32> {
    return %x : tensor<8xf32>
  }
}
// CHECK: bmb.job @pretrain train for @M
bmb.job @pretrain train for @M {}

// A checkpoint map survives the pipeline and keeps the parameters it names:
// symbol-dce removes the private @dead but not the private @named.
// CHECK-LABEL: bmb.model @Mapped layer "M"
// CHECK: bmb.param @named : tensor<8xf32> init ones {sym_visibility = "private"}
// CHECK-NOT: @dead
// CHECK: bmb.checkpoint_map "hf" [
// CHECK-NEXT: "named" = @named,
// CHECK-NEXT: "copy" = tied(@named)
// CHECK-NEXT: ]
bmb.model @Mapped layer "M" {
  bmb.param @named : tensor<8xf32> init ones {sym_visibility = "private"}
  bmb.param @dead : tensor<8xf32> init ones {sym_visibility = "private"}
  bmb.checkpoint_map "hf" ["named" = @named, "copy" = tied(@named)]
}
