//===- BmbCheckpointMap.td - Checkpoint name maps ----------*- tablegen -*-===//
//
// How a model's parameters are named in a foreign checkpoint (Hugging Face
// transformers): one rule attribute per external tensor, and the op that
// holds a named map inside its bmb.model.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_CHECKPOINT_MAP_TD
#define BMB_CHECKPOINT_MAP_TD

include "BmbDialect.td"
include "BmbModelOps.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/SymbolInterfaces.td"

def Bmb_NameRuleAttr : AttrDef<Bmb_Dialect, "NameRule"> {
  let mnemonic = "name_rule";
  let summary = "one external tensor of a checkpoint name map";
  let description = [{
    The external tensor `external` is `parts` (symbols of `bmb.param`s)
    concatenated along `axis` in our layout, then transposed when
    `transpose` (2-D only); for stacked parts all of this holds per layer
    slice, and `{i}` in `external` is the layer index. A `tied` rule has one
    part and names a tensor a checkpoint may omit because it holds the same
    data as that part. The parts are symbol references, so symbol uses,
    renaming and `symbol-dce` see them.

    Inside `bmb.checkpoint_map` it is printed bare; on its own it reads
    `#bmb.name_rule<"transformer.h.{i}.attn.c_proj.weight" = transpose(@h.attn.o.w)>`.
    The value is one of `@p`, `concat(@a, @b, axis = k)` (axis printed when
    not 0), `transpose(@p)`, `transpose(concat(...))` or `tied(@p)`.
  }];
  let parameters = (ins StringRefParameter<"the name in the checkpoint">:$external,
                        ArrayRefParameter<"::mlir::FlatSymbolRefAttr",
                                          "the bmb.param symbols">:$parts,
                        "int64_t":$axis, "bool":$transpose, "bool":$tied);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Parses/prints the body without the angle brackets:
    /// `"name" = transpose(concat(@a, @b))`.
    static ::mlir::Attribute parseBody(::mlir::AsmParser &parser);
    void printBody(::mlir::AsmPrinter &printer) const;
    /// How many times "{i}" appears in the external name.
    unsigned getNumLayerIndices() const;
  }];
}

def Bmb_CheckpointMapOp : Bmb_Op<"checkpoint_map", [
    HasParent<"ModelOp">, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "how the model's parameters are named in a foreign checkpoint";
  let description = [{
    A checkpoint name map of the enclosing `bmb.model`, from a
    `checkpoint NAME for MODEL { ... }` declaration: the runtime loads a
    checkpoint written with these names (Hugging Face `transformers` for
    `"hf"`) and saves back in that layout. Each rule (`#bmb.name_rule`) gives
    one external tensor: `"name" = transpose?(concat(@parts, axis = k))` in
    our layout, per layer slice for stacked parameters (`{i}` is the layer
    index), or `tied(@p)` for a tensor the checkpoint may omit.

    The verifier checks that the map's name is unique in its model, external
    names are unique, every part is a `bmb.param` of the model, the parts of
    a rule are all unstacked (no `{i}`) or all stacked one deep (one `{i}`),
    concatenated parts agree in dtype, number of layers and every dimension
    but `axis`, `axis` is within the rank, transposed tensors are 2-D per
    layer, and no parameter is part of two rules that are not tied. That the
    map covers every parameter is Sema's check: passes may add parameters
    (deltas) that no foreign checkpoint has.

    The op has no results and no declared effects, so canonicalization and
    `symbol-dce` keep it, and the parameters it names stay referenced.

    ```mlir
    bmb.checkpoint_map "hf" [
      "transformer.wte.weight" = @wte.w,
      "transformer.h.{i}.attn.c_attn.weight" = transpose(concat(@h.attn.q.w, @h.attn.k.w, @h.attn.v.w)),
      "transformer.h.{i}.attn.c_attn.bias" = concat(@h.attn.q.b, @h.attn.k.b, @h.attn.v.b),
      "lm_head.weight" = tied(@wte.w)
    ]
    ```
  }];
  let arguments = (ins StrAttr:$name,
                       TypedArrayAttrBase<Bmb_NameRuleAttr, "name rules">:$rules);
  let assemblyFormat = "$name custom<NameRules>($rules) attr-dict";
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name,
                   "::llvm::ArrayRef<NameRuleAttr>":$rules)>
  ];
  let hasVerifier = 1;
}

#endif // BMB_CHECKPOINT_MAP_TD
