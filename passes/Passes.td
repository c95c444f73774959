//===- Passes.td - bmb passes ------------------------------*- tablegen -*-===//
//
// One def per pass, in pipeline order; each is implemented in the .cpp
// named after it and tested in test/lit/passes/<flag without bmb->.mlir.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_PASSES_TD
#define BMB_PASSES_TD

include "mlir/Pass/PassBase.td"

def ParamStatsPass : Pass<"bmb-param-stats", "::mlir::ModuleOp"> {
  let summary = "Prints each model's parameter counts and training memory";
  let description = [{
    An analysis; the IR is unchanged. For every `bmb.model` it prints one row
    per layer instance that owns parameters (a parameter's path without its
    last segment; instances of a `bmb.repeat` show `xN`), with the element
    count and bytes, then a per-dtype summary and the totals. For each
    `bmb.job` of kind `train` on the model it adds the memory of the
    gradients (trainable parameters, in their dtype) and of the optimizer
    state (AdamW: 2 x f32 per trainable element; SGD: 1 x f32 momentum,
    none with `momentum = 0`) and the total.

    `bmbc --stats` prints the same table from the same code
    (`mlir::bmb::computeParamStats` in passes/ParamStats.h). A count or
    size that overflows int64 is an error.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the table ('-' is stdout)">
  ];
}

#endif // BMB_PASSES_TD
