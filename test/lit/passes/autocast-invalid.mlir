// bmb-autocast refusals.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-autocast

// The marks go on @loss: without bmb-attach-loss there is nothing to mark.
bmb.model @M layer "M" {
  bmb.param @w : tensor<8x8xf32> init zeros
}
// expected-error @below {{bmb-autocast: model @M has no @loss (run bmb-attach-loss first)}}
bmb.job @train train for @M {precision = "bf16"}

// -----

// Running it twice is a pipeline bug, not a no-op.
bmb.model @M layer "M" {
  bmb.param @w : tensor<8x8xf32> init zeros
  // expected-error @below {{bmb-autocast: @loss is already autocast}}
  func.func @loss(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w = bmb.param_get @w : tensor<8x8xf32>
    %y = bmb.linear %x, %w {bmb.autocast = bf16} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}
bmb.job @train train for @M {precision = "bf16"}
