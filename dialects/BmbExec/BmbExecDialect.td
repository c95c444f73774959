//===- BmbExecDialect.td - The execution plan dialect ------*- tablegen -*-===//
//
// What the `bmb` model graph lowers to (DESIGN.md, "The pipeline"): buffers
// in per-role allocations, runtime kernels from the declared list
// (runtime/include/bmrt/kernels.h) and generated element-wise kernels with
// scalar bodies. Each op maps to one runtime call or one generated kernel, so
// emission only prints.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_EXEC_DIALECT_TD
#define BMB_EXEC_DIALECT_TD

include "mlir/IR/OpBase.td"

def BmbExec_Dialect : Dialect {
  let name = "bmb_exec";
  let cppNamespace = "::mlir::bmb::exec";
  let summary = "The execution plan: buffers, runtime kernels, generated kernels";
  let description = [{
    A `bmb_exec.program` holds the parameters (`bmb_exec.param`), the
    persistent state (`bmb_exec.state`: the KV cache), the checkpoint name
    maps and the entry functions. Entry functions take `(%start, %rows)`: the
    absolute position of the first row and the number of valid rows
    (DESIGN decision 1: shapes are static, lengths are scalars). Inside,
    buffers are `memref`s: `bmb_exec.alloc` (activations, packed by
    liveness), `bmb_exec.input`, views of parameters and state; every other op
    writes into buffers it is given (destination-passing style). A
    `repeat` is an `scf.for` over the layer index, and stacked parameters
    are read with `bmb_exec.param_ref @p[%i]` (DESIGN decision 2).
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let useDefaultTypePrinterParser = 1;
}

class BmbExec_Op<string mnemonic, list<Trait> traits = []>
    : Op<BmbExec_Dialect, mnemonic, traits>;

#endif // BMB_EXEC_DIALECT_TD
