// bmb-plan-memory refusals.
// RUN: bmb-opt %s -verify-diagnostics --bmb-plan-memory

// One flat group per element type: mixing is refused, not laid out wrong.
bmb_exec.program @mixed attributes {train = {opt_slots = 2 : i64}} {
  bmb_exec.param @a : memref<4xf32>
  // expected-error @below {{bmb-plan-memory: the trainable params mix 'f32' and 'f64'; one flat group per element type is not implemented yet}}
  bmb_exec.param @b : memref<4xf64>
}
