// bmb-autodiff's diagnostics.
// RUN: bmb-opt %s -split-input-file --bmb-autodiff -verify-diagnostics

// An op on the path from a trainable param to the loss without a VJP rule.
bmb.model @M layer "M" {
  bmb.param @w : tensor<16x8xf32> init normal(0.02)
  bmb.param @x : tensor<2x4x8xf32> init zeros
  func.func @loss(%t: tensor<2x8xi32>) -> tensor<f32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %x = bmb.param_get @x : tensor<2x4x8xf32>
    // expected-error @+1 {{bmb-autodiff: no gradient rule for 'bmb.concat', which is on the path from a trainable parameter to the loss}}
    %c = bmb.concat %x, %x {axis = 1 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x8x8xf32>
    %loss, %d = bmb.fused_classifier %c, %w, %t : (tensor<2x8x8xf32>, tensor<16x8xf32>, tensor<2x8xi32>) -> (tensor<f32>, tensor<2x8x16xf32>)
    return %loss : tensor<f32>
  }
}

// -----

// The same op off the path (its operands depend on no trainable param) needs no rule.
bmb.model @M layer "M" {
  bmb.param @w : tensor<16x8xf32> init normal(0.02)
  bmb.param @f : tensor<2x4x8xf32> init zeros frozen
  func.func @loss(%t: tensor<2x8xi32>) -> tensor<f32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %f = bmb.param_get @f : tensor<2x4x8xf32>
    %c = bmb.concat %f, %f {axis = 1 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x8x8xf32>
    %loss, %d = bmb.fused_classifier %c, %w, %t : (tensor<2x8x8xf32>, tensor<16x8xf32>, tensor<2x8xi32>) -> (tensor<f32>, tensor<2x8x16xf32>)
    return %loss : tensor<f32>
  }
}

// -----

bmb.model @M layer "M" {
  bmb.param @w : tensor<8xf32> init zeros
  // expected-error @+1 {{bmb-autodiff: @loss must return the result of bmb.fused_classifier or bmb.cross_entropy}}
  func.func @loss(%l: tensor<f32>) -> tensor<f32> {
    %y = bmb.scale %l {factor = 2.0 : f64} : tensor<f32>
    return %y : tensor<f32>
  }
}

// -----

// A gradient of a split that only some parts receive would need zeros.
bmb.model @M layer "M" {
  bmb.param @w : tensor<16x8xf32> init normal(0.02)
  bmb.param @x : tensor<2x4x16xf32> init zeros
  func.func @loss(%t: tensor<2x4xi32>) -> tensor<f32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %x = bmb.param_get @x : tensor<2x4x16xf32>
    // expected-error @+1 {{bmb-autodiff: bmb.split result #1 has no gradient while the others have; zero gradients are not implemented}}
    %a, %b = bmb.split %x {axis = 2 : i64} : tensor<2x4x16xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>
    %loss, %d = bmb.fused_classifier %a, %w, %t : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
    return %loss : tensor<f32>
  }
}

// -----

// expected-error @+1 {{bmb-autodiff: model @M already has a @train_step}}
bmb.model @M layer "M" {
  bmb.param @w : tensor<16x8xf32> init normal(0.02)
  func.func @loss(%x: tensor<2x8xf32>, %t: tensor<2xi32>) -> tensor<f32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %loss, %d = bmb.fused_classifier %x, %w, %t : (tensor<2x8xf32>, tensor<16x8xf32>, tensor<2xi32>) -> (tensor<f32>, tensor<2x16xf32>)
    return %loss : tensor<f32>
  }
  func.func @train_step() {
    return
  }
}
