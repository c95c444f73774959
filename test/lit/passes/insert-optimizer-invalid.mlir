// bmb-insert-optimizer refuses an optimizer it has no update op for (Sema
// only lets adamw, adam and sgd through; IR written by hand may say more).
// RUN: bmb-opt %s -split-input-file -verify-diagnostics --bmb-insert-optimizer

bmb.model @M layer "M" {
  bmb.param @w : tensor<4x4xf32> init zeros
}
// expected-error @+1 {{bmb-insert-optimizer: optimizer 'rmsprop' is not implemented (adamw, adam, sgd are)}}
bmb.job @train train for @M {optimizer = {kind = "rmsprop", lr = 1.0e-3 : f64}}
