// bmb-plan-memory lays the trainable group out in units (docs/distributed.md):
// unit 0 = the params outside repeats (@wte, @lnf; the frozen @pos sits
// before the group), then one unit per layer holding that layer's slices of
// every param of the repeat (@q 256 B, @ln 32 B -> 64 B, @mlp 128 B: a unit
// is 448 B), so each stacked param's layers are one unit (448 B) apart.
// Stacked params of another layer count (@enc, 3 layers) form their own
// units after them. The unit table is in elements.
// RUN: bmb-opt %s --bmb-plan-memory | FileCheck %s

// CHECK-LABEL: bmb_exec.program @units
// CHECK-SAME: grad_bytes = 1408 : i64
// CHECK-SAME: group_elems = 352 : i64, group_param_offset = 64 : i64
// CHECK-SAME: group_units = array<i64: 0, 80, 192, 304, 320, 336, 352>
bmb_exec.program @units attributes {train = {opt_slots = 2 : i64}} {
  // CHECK: bmb_exec.param @wte offset 64 grad_offset 0 opt_offset 0 : memref<16x4xf32>
  bmb_exec.param @wte : memref<16x4xf32>
  // CHECK: bmb_exec.param @q stacked offset 384 grad_offset 320 opt_offset 320 layer_stride 448 : memref<2x8x8xf32>
  bmb_exec.param @q stacked : memref<2x8x8xf32>
  // CHECK: bmb_exec.param @pos frozen offset 0 : memref<8xf32>
  bmb_exec.param @pos frozen : memref<8xf32>
  // CHECK: bmb_exec.param @ln stacked offset 640 grad_offset 576 opt_offset 576 layer_stride 448 : memref<2x8xf32>
  bmb_exec.param @ln stacked : memref<2x8xf32>
  // CHECK: bmb_exec.param @enc stacked offset 1280 grad_offset 1216 opt_offset 1216 layer_stride 64 : memref<3x8xf32>
  bmb_exec.param @enc stacked : memref<3x8xf32>
  // CHECK: bmb_exec.param @mlp stacked offset 704 grad_offset 640 opt_offset 640 layer_stride 448 : memref<2x32xf32>
  bmb_exec.param @mlp stacked : memref<2x32xf32>
  // CHECK: bmb_exec.param @lnf offset 320 grad_offset 256 opt_offset 256 : memref<4xf32>
  bmb_exec.param @lnf : memref<4xf32>
}
