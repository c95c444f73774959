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
  // expected-error @+1 {{bmb-autodiff: @loss must return the result of bmb.fused_classifier, bmb.cross_entropy or bmb.verbalizer_loss}}
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

// A repeat's invariant that depends on a trainable param would need its
// gradient summed over the iterations.
bmb.model @M layer "M" {
  bmb.param @w : tensor<16x8xf32> init normal(0.02)
  bmb.param @bias : tensor<2x4x8xf32> init zeros
  func.func @loss(%t: tensor<2x4xi32>) -> tensor<f32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %x = bmb.embedding %t, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    %c = bmb.param_get @bias : tensor<2x4x8xf32>
    // expected-error @+1 {{bmb-autodiff: gradients of bmb.repeat "h"'s varied invariant values are not implemented}}
    %y = bmb.repeat 2 "h" layer "Shift" iter(%x) invariant(%c) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>, %b: tensor<2x4x8xf32>):
      %s = bmb.add %a, %b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %s : tensor<2x4x8xf32>
    }
    %loss, %d = bmb.fused_classifier %y, %w, %t : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
    return %loss : tensor<f32>
  }
}

// -----

// A repeat carrying two varied values of which the loss reads one: the other's
// gradient would be zeros.
bmb.model @M layer "M" {
  bmb.param @w : tensor<16x8xf32> init normal(0.02)
  func.func @loss(%t: tensor<2x4xi32>) -> tensor<f32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %x = bmb.embedding %t, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    // expected-error @+1 {{bmb-autodiff: carried value #1 of bmb.repeat "h" has no gradient while another has; zero gradients are not implemented}}
    %y:2 = bmb.repeat 2 "h" layer "Pair" iter(%x, %x) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>, %b: tensor<2x4x8xf32>):
      %s = bmb.add %a, %b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      bmb.yield %s, %b : tensor<2x4x8xf32>, tensor<2x4x8xf32>
    }
    %loss, %d = bmb.fused_classifier %y#0, %w, %t : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
    return %loss : tensor<f32>
  }
}

// -----

// A carried value whose gradient does not reach the iteration's input (the
// body replaces it): the input's gradient would be zeros.
bmb.model @M layer "M" {
  bmb.param @w : tensor<16x8xf32> init normal(0.02)
  bmb.param @c : tensor<2x4x8xf32> init zeros
  func.func @loss(%t: tensor<2x4xi32>) -> tensor<f32> {
    %w = bmb.param_get @w : tensor<16x8xf32>
    %x = bmb.embedding %t, %w : (tensor<2x4xi32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    // expected-error @+1 {{bmb-autodiff: the gradient of bmb.repeat "h"'s carried value #0 does not reach the iteration's input; zero gradients are not implemented}}
    %y = bmb.repeat 2 "h" layer "Reset" iter(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    ^bb0(%i: index, %a: tensor<2x4x8xf32>):
      %c = bmb.param_get @c : tensor<2x4x8xf32>
      bmb.yield %c : tensor<2x4x8xf32>
    }
    %loss, %d = bmb.fused_classifier %y, %w, %t : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4x16xf32>)
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
