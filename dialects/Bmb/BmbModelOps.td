//===- BmbModelOps.td - Models, parameters, layers, jobs ---*- tablegen -*-===//
//
// The structure of a program: the model symbol table, its parameters, the
// layer-instance regions of its forward graph and the job that uses it.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_MODEL_OPS_TD
#define BMB_MODEL_OPS_TD

include "BmbDialect.td"
include "BmbAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

/// Every tensor in the dialect: static shape (DESIGN decision 1), one of the
/// dtypes ShapeRules knows.
def Bmb_Tensor : StaticShapeTensorOf<[F32, F64, F16, BF16, I8, I32, I64]>;

//===----------------------------------------------------------------------===//
// bmb.model
//===----------------------------------------------------------------------===//

def Bmb_ModelOp : Bmb_Op<"model", [
    Symbol, SymbolTable, IsolatedFromAbove, NoTerminator, SingleBlock,
    NoRegionArguments]> {
  let summary = "a model: its parameters and entry functions";
  let description = [{
    A model instantiated with concrete hyperparameters. The body is a symbol
    table holding the parameters (`bmb.param`) and the entry functions
    (`func.func @forward`; inference programs later get prefill and decode).
    `layer` names the declaration the model instantiates (`GPT2` for
    `model GPT2Tiny = GPT2(...)`).

    ```mlir
    bmb.model @GPT2Tiny layer "GPT2" {
      bmb.param @wte.w : tensor<50257x192xf32> init normal(0.02)
      func.func @forward(%tokens: tensor<8x256xi32>) -> tensor<8x256x192xf32> {
        %w = bmb.param_get @wte.w : tensor<50257x192xf32>
        %x = bmb.embedding %tokens, %w
            : (tensor<8x256xi32>, tensor<50257x192xf32>) -> tensor<8x256x192xf32>
        return %x : tensor<8x256x192xf32>
      }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$layer);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `layer` $layer attr-dict-with-keyword $body";
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name, "::llvm::StringRef":$layer)>
  ];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The parameters, in declaration order.
    ::llvm::iterator_range<::mlir::Block::op_iterator<ParamOp>> getParams();
  }];
}

//===----------------------------------------------------------------------===//
// bmb.param
//===----------------------------------------------------------------------===//

def Bmb_ParamOp : Bmb_Op<"param", [Symbol, HasParent<"ModelOp">]> {
  let summary = "a parameter of a model";
  let description = [{
    A parameter tensor of the enclosing model, named by its dotted path from
    the model root (`@h.attn.q.w`, Hugging Face style without the iteration
    index). The type gives shape and dtype; `init` how it starts; `frozen`
    marks a parameter that is not trained (no gradient, no optimizer state).

    `stacked k` says the first `k` dimensions index iterations of enclosing
    `bmb.repeat`s (DESIGN decision 2): `repeat(6) Block(192)`'s layer-norm
    weight is `tensor<6x192xf32>` with `stacked 1`, and iteration `i` reads
    slice `i` with `bmb.param_get @h.ln1.w[%i]`.

    ```mlir
    bmb.param @wte.w : tensor<50257x192xf32> init normal(0.02)
    bmb.param @ln_f.b : tensor<192xf32> init zeros frozen
    bmb.param @h.ln1.w : tensor<6x192xf32> init ones stacked 1
    bmb.param @h.mlp.up.w : tensor<6x768x192xf32> init uniform(-0.05, 0.05) stacked 1
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<Bmb_Tensor>:$type,
                       Bmb_InitAttr:$init,
                       UnitAttr:$frozen,
                       DefaultValuedAttr<I64Attr, "0">:$stacked);
  let assemblyFormat = [{
    $sym_name `:` $type `init` custom<InitBody>($init) (`frozen` $frozen^)?
    (`stacked` $stacked^)? attr-dict
  }];
  // The generated builder (name, RankedTensorType, InitAttr, bool frozen =
  // false, uint64_t stacked = 0) is the one MLIRGen uses.
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
    /// The type one iteration reads: the type without the stacked dims.
    ::mlir::RankedTensorType getSliceType();
    bool isTrainable() { return !getFrozen(); }
  }];
}

def Bmb_ParamGetOp : Bmb_Op<"param_get", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "reads a parameter (one iteration's slice if stacked)";
  let description = [{
    Reads the parameter `@param` of the enclosing `bmb.model`. A stacked
    parameter takes one index per stacked dimension, outermost first; each
    index is the induction variable of an enclosing `bmb.repeat` (passed into
    nested `bmb.layer` regions as an operand, because those are isolated),
    and the result is that iteration's slice.

    ```mlir
    %w = bmb.param_get @wte.w : tensor<50257x192xf32>
    %g = bmb.param_get @h.ln1.w[%i] : tensor<192xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, Variadic<Index>:$indices);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = [{
    $param (`[` $indices^ `]`)? attr-dict `:` type($result)
  }];
  let builders = [
    /// Reads `param` (its slice when `indices` are given).
    OpBuilder<(ins "ParamOp":$param, CArg<"::mlir::ValueRange", "{}">:$indices)>
  ];
  let hasVerifier = 1;
}

def Bmb_IterationSlotOp : Bmb_Op<"iteration_slot", [Pure]> {
  let summary = "a per-iteration delta's entry for a repeat iteration";
  let description = [{
    A delta on some iterations of a rolled `bmb.repeat` (bmb-insert-deltas,
    DESIGN decision 2) stacks its params over the selected iterations only.
    `slots[i]` is iteration i's entry in that compact stack, -1 for an
    iteration without the delta; the result is `max(slots[i], 0)`, so every
    iteration reads a valid entry and the unselected ones have their
    contribution zeroed by `bmb.iteration_gate` with the same slots.
    `bmb.param_get` takes it as the index of such a param.

    ```mlir
    %s = bmb.iteration_slot %i [-1, 0, 1]
    %a = bmb.param_get @h.q.lora_a[%s] : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Index:$iteration, DenseI64ArrayAttr:$slots);
  let results = (outs Index:$result);
  let assemblyFormat = "$iteration $slots attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Entries of the compact stack: the largest slot + 1.
    int64_t getStackSize();
  }];
}

def Bmb_IterationGateOp : Bmb_Op<"iteration_gate", [Pure]> {
  let summary = "1 for an iteration with the delta, 0 without";
  let description = [{
    `slots[i] >= 0 ? 1 : 0` as a one-element float tensor: a per-iteration
    delta's contribution is multiplied by it (see `bmb.iteration_slot`), so
    the loop stays rolled and the iterations without the delta compute
    exactly the backbone (and give the delta params zero gradient).

    ```mlir
    %g = bmb.iteration_gate %i [-1, 0, 1] : tensor<1xf32>
    ```
  }];
  let arguments = (ins Index:$iteration, DenseI64ArrayAttr:$slots);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$iteration $slots attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Layer regions
//===----------------------------------------------------------------------===//

def Bmb_LayerOp : Bmb_Op<"layer", [
    IsolatedFromAbove, SingleBlock, RecursiveMemoryEffects]> {
  let summary = "one layer instance of the forward graph";
  let description = [{
    A layer instance: `instance` is its member name (one segment of the
    parameter path), `layer` the declaration it instantiates. The region is
    isolated from above: the operands become the block's arguments, so a
    pass can move, clone (activation checkpointing) or schedule (ZeRO
    prefetch, offload) a whole instance. The body ends in `bmb.yield`.

    ```mlir
    %x = bmb.layer "wte" layer "Embedding" (%tokens)
        : (tensor<8x256xi32>) -> tensor<8x256x192xf32> {
    ^bb0(%ids: tensor<8x256xi32>):
      %w = bmb.param_get @wte.w : tensor<50257x192xf32>
      %e = bmb.embedding %ids, %w
          : (tensor<8x256xi32>, tensor<50257x192xf32>) -> tensor<8x256x192xf32>
      bmb.yield %e : tensor<8x256x192xf32>
    }
    ```

    Training (docs/training-ir.md) adds two things. `num_saved` says that
    the last `num_saved` results are not outputs of the layer but values of
    its body that its backward needs (0 by default). `backward` marks the
    reverse of a forward instance of the same name: its operands are the
    forward's saved values, then the gradients of the forward's results;
    its results are the gradients of the forward's varied inputs.

    ```mlir
    %dx = bmb.layer "q" layer "Linear" backward (%x, %i, %dy)
        : (tensor<4x64x64xf32>, index, tensor<4x64x64xf32>) -> tensor<4x64x64xf32> {
    ^bb0(%a: tensor<4x64x64xf32>, %j: index, %g: tensor<4x64x64xf32>):
      %w = bmb.param_get @h.attn.q.w[%j] : tensor<64x64xf32>
      %dw = bmb.linear_grad_weight %g, %a
          : (tensor<4x64x64xf32>, tensor<4x64x64xf32>) -> tensor<64x64xf32>
      bmb.grad_accumulate @h.attn.q.w[%j], %dw : tensor<64x64xf32>
      %d = bmb.linear_grad_input %g, %w
          : (tensor<4x64x64xf32>, tensor<64x64xf32>) -> tensor<4x64x64xf32>
      bmb.yield %d : tensor<4x64x64xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$instance, StrAttr:$layer,
                       Variadic<AnyType>:$inputs,
                       DefaultValuedAttr<I64Attr, "0">:$num_saved,
                       UnitAttr:$backward);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $instance `layer` $layer (`backward` $backward^)? ` ` `(` $inputs `)`
    attr-dict `:` functional-type($inputs, $results) $body
  }];
  let builders = [
    /// Creates the body block with one argument per input; the caller fills
    /// it and ends it with bmb.yield.
    OpBuilder<(ins "::llvm::StringRef":$instance, "::llvm::StringRef":$layer,
                   "::mlir::TypeRange":$resultTypes, "::mlir::ValueRange":$inputs)>
  ];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block *getBodyBlock() { return &getBody().front(); }
    /// The results that are the layer's outputs (all but the saved ones).
    ::mlir::ResultRange getOutputs() {
      return getResults().drop_back(getNumSaved());
    }
    /// The last num_saved results: values the backward needs.
    ::mlir::ResultRange getSaved() {
      return getResults().take_back(getNumSaved());
    }
  }];
}

def Bmb_RepeatOp : Bmb_Op<"repeat", [
    IsolatedFromAbove, SingleBlock, RecursiveMemoryEffects,
    AttrSizedOperandSegments]> {
  let summary = "a layer instance iterated `count` times, kept rolled";
  let description = [{
    `repeat(n) Block(...)`: one body run `count` times over stacked
    parameters (DESIGN decision 2: never unrolled). `iter` values are carried
    from one iteration to the next (they are the results); `invariant`
    values are the same for every iteration. The block's arguments are the
    `index` induction variable, then the carried values, then the invariant
    ones; `bmb.yield` returns the next carried values.

    ```mlir
    %y = bmb.repeat 6 "h" layer "PostLNBlock" iter(%x) invariant(%mask)
        : (tensor<8x128x192xf32>, tensor<8x128xi32>) -> tensor<8x128x192xf32> {
    ^bb0(%i: index, %a: tensor<8x128x192xf32>, %m: tensor<8x128xi32>):
      %w = bmb.param_get @h.ln1.w[%i] : tensor<192xf32>
      %n = bmb.layernorm %a, %w {eps = 1.0e-12 : f64}
          : (tensor<8x128x192xf32>, tensor<192xf32>) -> tensor<8x128x192xf32>
      bmb.yield %n : tensor<8x128x192xf32>
    }
    ```

    Training (docs/training-ir.md) adds `num_saved` and `reverse`. With
    `num_saved = n`, `bmb.yield` returns the next carried values and then
    `n` values each iteration saves for the backward; the op's results are
    the final carried values and then the `n` saves of all iterations
    stacked, `tensor<count x ...>`, iteration `i` at index `i` (read with
    `bmb.stack_get`). `reverse` runs the induction variable from `count - 1`
    down to 0 (the backward of a forward repeat).

    ```mlir
    %y, %xs = bmb.repeat 2 "h" layer "Block" iter(%x) {num_saved = 1 : i64}
        : (tensor<4x64x64xf32>) -> (tensor<4x64x64xf32>, tensor<2x4x64x64xf32>) {
    ^bb0(%i: index, %a: tensor<4x64x64xf32>):
      %w = bmb.param_get @h.ln1.w[%i] : tensor<64xf32>
      %n = bmb.rmsnorm %a, %w {eps = 1.0e-05 : f64}
          : (tensor<4x64x64xf32>, tensor<64xf32>) -> tensor<4x64x64xf32>
      bmb.yield %n, %a : tensor<4x64x64xf32>, tensor<4x64x64xf32>
    }
    ```
  }];
  let arguments = (ins I64Attr:$count, StrAttr:$instance, StrAttr:$layer,
                       Variadic<Bmb_Tensor>:$iter,
                       Variadic<AnyType>:$invariant,
                       DefaultValuedAttr<I64Attr, "0">:$num_saved,
                       UnitAttr:$reverse);
  let results = (outs Variadic<Bmb_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $count $instance `layer` $layer (`reverse` $reverse^)? `iter` `(` $iter `)`
    (`invariant` `(` $invariant^ `)`)? attr-dict `:`
    functional-type(operands, $results) $body
  }];
  let builders = [
    /// Creates the body block (index, carried..., invariant...); the caller
    /// fills it and ends it with bmb.yield of the next carried values.
    OpBuilder<(ins "int64_t":$count, "::llvm::StringRef":$instance,
                   "::llvm::StringRef":$layer, "::mlir::ValueRange":$iter,
                   CArg<"::mlir::ValueRange", "{}">:$invariant)>
  ];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block *getBodyBlock() { return &getBody().front(); }
    ::mlir::BlockArgument getInductionVar() { return getBodyBlock()->getArgument(0); }
    ::mlir::Block::BlockArgListType getCarriedArgs() {
      return getBodyBlock()->getArguments().slice(1, getIter().size());
    }
    ::mlir::Block::BlockArgListType getInvariantArgs() {
      return getBodyBlock()->getArguments().drop_front(1 + getIter().size());
    }
    /// The final carried values (all results but the stacked saves).
    ::mlir::ResultRange getCarriedResults() {
      return getResults().drop_back(getNumSaved());
    }
    /// The last num_saved results: the saves of every iteration, stacked.
    ::mlir::ResultRange getStackedSaves() {
      return getResults().take_back(getNumSaved());
    }
  }];
}

def Bmb_YieldOp : Bmb_Op<"yield", [
    Pure, ReturnLike, Terminator, ParentOneOf<["LayerOp", "RepeatOp"]>]> {
  let summary = "ends a bmb.layer or bmb.repeat body";
  let description = [{
    Returns a layer's results, or a repeat iteration's next carried values
    (then the values it saves, with `num_saved`).

    ```mlir
    bmb.yield %e : tensor<8x256x192xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

//===----------------------------------------------------------------------===//
// Jobs and prompt/compression declarations
//===----------------------------------------------------------------------===//

def Bmb_JobOp : Bmb_Op<"job", [
    Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "what to do with a model: train, tune, compress or infer";
  let description = [{
    A job of the program: `kind` says what it does, `model` which
    `bmb.model` it runs, `from` an optional checkpoint to start from and
    `recipe` an optional `bmb.recipe` (compress jobs). `settings` holds every
    setting after defaults, sorted by name: integers as `i64`, reals as
    `f64`, booleans, strings, lists and tuples as arrays, and configuration
    calls such as `adamw(lr = 6e-4)` as a dictionary with `kind` = the
    callee's name (`{kind = "adamw", lr = 6.0e-04 : f64}`).

    ```mlir
    bmb.job @pretrain train for @GPT2Tiny {batch = 8 : i64, seq = 256 : i64,
        optimizer = {kind = "adamw", lr = 6.0e-04 : f64}}
    bmb.job @chat infer for @GPT2 from "ckpt/" {}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Bmb_JobKindAttr:$kind,
                       FlatSymbolRefAttr:$model,
                       OptionalAttr<StrAttr>:$from,
                       OptionalAttr<FlatSymbolRefAttr>:$recipe,
                       DictionaryAttr:$settings);
  let assemblyFormat = [{
    $sym_name `` $kind `for` $model (`from` $from^)? (`recipe` $recipe^)?
    $settings attr-dict-with-keyword
  }];
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name, "JobKind":$kind,
                   "::llvm::StringRef":$model, "::mlir::DictionaryAttr":$settings,
                   CArg<"::llvm::StringRef", "{}">:$from,
                   CArg<"::llvm::StringRef", "{}">:$recipe)>
  ];
}

def Bmb_TemplateOp : Bmb_Op<"template", [Symbol]> {
  let summary = "a prompt template";
  let description = [{
    A prompt template: text with `{placeholder}`s (`{text_a}`, `{mask}`, ...)
    that prompt lowering turns into input assembly. `{{` and `}}` stand for
    literal braces.

    ```mlir
    bmb.template @sentiment "{text_a} It was {mask}."
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$text);
  let assemblyFormat = "$sym_name $text attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The placeholder names in order of appearance.
    ::llvm::SmallVector<::llvm::StringRef> getPlaceholders();
  }];
}

def Bmb_VerbalizerOp : Bmb_Op<"verbalizer", [Symbol]> {
  let summary = "maps class labels to label words";
  let description = [{
    Label `i` is `labels[i]`, and its score is read from the vocabulary
    entries of `words[i]` at the mask (the words' probabilities are
    averaged). A word of several tokens is reduced to one logit by `reduce`
    (`mean`, `first` or `max`). `soft` makes the label embeddings trainable
    (initialised from the words); `calibrate` divides the label
    probabilities by their mean over a content-free input.

    ```mlir
    bmb.verbalizer @polarity labels ["negative", "positive"]
        words [["bad"], ["good", "wonderful", "great"]] {reduce = "first", calibrate}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrArrayAttr:$labels,
                       TypedArrayAttrBase<StrArrayAttr, "arrays of words">:$words,
                       DefaultValuedStrAttr<StrAttr, "mean">:$reduce,
                       UnitAttr:$soft, UnitAttr:$calibrate);
  let assemblyFormat = "$sym_name `labels` $labels `words` $words attr-dict";
  let hasVerifier = 1;
}

def Bmb_RecipeOp : Bmb_Op<"recipe", [Symbol]> {
  let summary = "a compression recipe";
  let description = [{
    The directives of a `recipe`, in order: each a dictionary whose `verb` is
    `distill`, `prune`, `quantize` or `moefy`, with its normalized options.

    ```mlir
    bmb.recipe @cook [
      {verb = "prune", pattern = "2:4", on = ["*.mlp.*.w"]},
      {verb = "quantize", to = "int8", qat = true}
    ]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypedArrayAttrBase<DictionaryAttr, "directives">:$directives);
  let assemblyFormat = "$sym_name $directives attr-dict";
  let hasVerifier = 1;
}

#endif // BMB_MODEL_OPS_TD
