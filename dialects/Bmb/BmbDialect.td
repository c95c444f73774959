//===- BmbDialect.td - The bmb dialect ---------------------*- tablegen -*-===//
//
// The model graph on tensors (DESIGN.md, "The pipeline"). A model is a symbol
// table of parameters and entry functions; a layer instance is a region; a
// `repeat(n)` stays one rolled region over stacked parameters.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_DIALECT_TD
#define BMB_DIALECT_TD

include "mlir/IR/OpBase.td"

def Bmb_Dialect : Dialect {
  let name = "bmb";
  let cppNamespace = "::mlir::bmb";
  let summary = "Transformer models, their parameters and their jobs, on tensors";
  let description = [{
    The `bmb` dialect is what `bmbc`'s MLIRGen produces from an elaborated
    `.bmb` program and what the technique passes (delta insertion, autodiff,
    activation checkpointing, ZeRO, offload, ...) rewrite before lowering to
    the execution plan.

    * A `bmb.model` is a symbol table holding the model's parameters
      (`bmb.param`, with shape, dtype, initializer and trainability) and its
      entry functions (`func.func @forward`, later prefill/decode).
    * Every layer instance is a `bmb.layer` region, isolated from above, so
      passes can find, clone and schedule whole instances.
    * `repeat(n)` is one rolled `bmb.repeat` whose parameters are stacked
      `[n, ...]`; `bmb.param_get` reads the current iteration's slice.
    * Primitive ops (`bmb.linear`, `bmb.attention`, ...) work on statically
      shaped tensors; their shape rules are the ones Sema checks
      (`dialects/Bmb/ShapeRules.h`). Numerics (GELU approximation, epsilons,
      attention scale, dropout ids) are attributes.
    * `bmb.job`, `bmb.template`, `bmb.verbalizer` and `bmb.recipe` carry
      what the program is for.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Defined in BmbAttrs.cpp, where the attribute storage classes are.
    void registerAttributes();
  }];
}

class Bmb_Op<string mnemonic, list<Trait> traits = []>
    : Op<Bmb_Dialect, mnemonic, traits>;

#endif // BMB_DIALECT_TD
