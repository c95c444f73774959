// The verifiers of the prompt-tuning ops name the shape that is wrong.
// RUN: bmb-opt %s -split-input-file -verify-diagnostics

func.func @f(%ids: tensor<2x16xi32>, %w: tensor<64x8xf32>, %soft: tensor<1x4xf32>) {
  // expected-error @+1 {{soft_embedding: soft must be a [n_soft, 8] table of the weight's type, got 'tensor<1x4xf32>'}}
  %e = bmb.soft_embedding %ids, %w, %soft : (tensor<2x16xi32>, tensor<64x8xf32>, tensor<1x4xf32>) -> tensor<2x16x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x16x8xf32>, %pos: tensor<3x1xi32>) {
  // expected-error @+1 {{gather_rows: positions must be i32 [2, M], got 'tensor<3x1xi32>'}}
  %r = bmb.gather_rows %x, %pos : (tensor<2x16x8xf32>, tensor<3x1xi32>) -> tensor<3x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x16x8xf32>, %pos: tensor<2x2xi32>) {
  // expected-error @+1 {{gather_rows: rows 'tensor<2x8xf32>' should be 'tensor<4x8xf32>'}}
  %r = bmb.gather_rows %x, %pos : (tensor<2x16x8xf32>, tensor<2x2xi32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @f(%r: tensor<2x8xf32>, %w: tensor<64x8xf32>, %labels: tensor<2xi32>, %words: tensor<2x2x2x8xi32>, %calib: tensor<2x2x2xf32>) {
  // expected-error @+1 {{verbalizer_loss: input has 2 rows, but 2 examples x 2 masks need 4}}
  %l, %dl, %s, %p = bmb.verbalizer_loss %r, %w, %labels, %words, %calib {reduce = ["max", "max"]}
      : (tensor<2x8xf32>, tensor<64x8xf32>, tensor<2xi32>, tensor<2x2x2x8xi32>, tensor<2x2x2xf32>)
      -> (tensor<f32>, tensor<2x64xf32>, tensor<2x2xf32>, tensor<2x2x2x2xf32>)
  return
}

// -----

func.func @f(%r: tensor<2x8xf32>, %w: tensor<64x8xf32>, %labels: tensor<2xi32>, %words: tensor<1x2x2x8xi32>, %calib: tensor<1x2x2xf32>) {
  // expected-error @+1 {{verbalizer_loss: reduce is first, mean or max, got "sum"}}
  %l, %dl, %s, %p = bmb.verbalizer_loss %r, %w, %labels, %words, %calib {reduce = ["sum"]}
      : (tensor<2x8xf32>, tensor<64x8xf32>, tensor<2xi32>, tensor<1x2x2x8xi32>, tensor<1x2x2xf32>)
      -> (tensor<f32>, tensor<2x64xf32>, tensor<2x2xf32>, tensor<2x1x2x2xf32>)
  return
}

// -----

func.func @f(%r: tensor<2x8xf32>, %w: tensor<64x8xf32>, %labels: tensor<2xi32>, %words: tensor<1x2x2x8xi32>, %calib: tensor<1x2x2xf32>) {
  // expected-error @+1 {{verbalizer_loss: scores 'tensor<2x3xf32>' should be 'tensor<2x2xf32>'}}
  %l, %dl, %s, %p = bmb.verbalizer_loss %r, %w, %labels, %words, %calib {reduce = ["first"]}
      : (tensor<2x8xf32>, tensor<64x8xf32>, tensor<2xi32>, tensor<1x2x2x8xi32>, tensor<1x2x2xf32>)
      -> (tensor<f32>, tensor<2x64xf32>, tensor<2x3xf32>, tensor<2x1x2x2xf32>)
  return
}
