//===- BmbExecOps.td - Ops of the execution plan -----------*- tablegen -*-===//
//
// Program-level declarations (params, state, name maps), buffers, and one op
// per runtime kernel of runtime/include/bmrt/kernels.h plus the generated
// element-wise kernel. Optional `rows` operands carry the run-time row count
// of the sequence dimension (the prompt length in prefill); ops without it
// work on their static shape.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_EXEC_OPS_TD
#define BMB_EXEC_OPS_TD

include "BmbExecDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpAsmInterface.td"

// Every buffer has a static shape (DESIGN decision 1): run-time lengths are
// `rows` operands. Dynamic memrefs used to pass the verifiers and then broke
// their arithmetic, memory planning and emission.
def BmbExec_Buffer : StaticShapeMemRefOf<[AnyType]>;

//===----------------------------------------------------------------------===//
// Program structure
//===----------------------------------------------------------------------===//

def BmbExec_ProgramOp : BmbExec_Op<"program", [
    Symbol, SymbolTable, IsolatedFromAbove, NoTerminator, SingleBlock,
    NoRegionArguments]> {
  let summary = "an executable program: params, state, name maps, entry points";
  let description = [{
    One program per job. Its attributes describe the job for the runtime
    (`model`, `job`, `kind` = "causal_lm" or "encoder", `vocab`, `ctx`,
    sampling defaults); memory planning adds the per-role sizes
    `param_bytes`, `state_bytes`, `activation_bytes`.

    ```mlir
    bmb_exec.program @chat attributes {kind = "causal_lm", model = "GPT2Nano"} {
      bmb_exec.param @wte.w : memref<512x64xf32>
      func.func @decode(%start: index, %rows: index) { return }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

def BmbExec_ParamOp : BmbExec_Op<"param", [Symbol, HasParent<"ProgramOp">]> {
  let summary = "a parameter in the params allocation";
  let description = [{
    `stacked` params belong to a repeat: shape `[layers, ...]`, slice i is
    layer i. `offset` (bytes into the params allocation) is set by memory
    planning. `init` is the declared initializer, `{kind, a, b}` with kind
    zeros, ones, normal (a = std), uniform (a, b) or constant (a), for
    programs that start from fresh parameters (`--init SEED`).

    Training programs: memory planning also sets `grad_offset` (bytes into
    the grads allocation) and `opt_offset` (bytes into the optimizer-state
    allocation: the program's `opt_slots` slots of the param's size, back to
    back) on every param that is not `frozen`; `decay` marks the params the
    optimizer applies weight decay to. A stacked trainable param's layers
    are not adjacent: the trainable group is layer-major (one unit per
    layer, docs/distributed.md), and `layer_stride` is the bytes from layer
    i's slice to layer i + 1's, in the params and the grads allocation
    alike. Without it the slices are back to back.

    zero = 2 programs: the backward writes a param's gradient into the
    grads staging allocation instead (one unit per repeat and the params
    outside repeats, docs/distributed.md): `staging_offset` is its byte
    offset there (of its layer-0 slice; every layer's slice goes there).
    zero = 3 programs read the trainable params from a param staging of
    the same layout, at the same offset (`bmb_exec.gather_unit` fills it).

    ```mlir
    bmb_exec.param @h.ln1.w stacked offset 4096 : memref<2x64xf32>
    bmb_exec.param @h.q.w stacked decay offset 0 grad_offset 0 opt_offset 0 layer_stride 16640 : memref<2x64x64xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<BmbExec_Buffer>:$type,
                       UnitAttr:$stacked, UnitAttr:$frozen, UnitAttr:$decay,
                       OptionalAttr<I64Attr>:$offset,
                       OptionalAttr<I64Attr>:$grad_offset, OptionalAttr<I64Attr>:$opt_offset,
                       OptionalAttr<I64Attr>:$layer_stride,
                       OptionalAttr<I64Attr>:$staging_offset,
                       OptionalAttr<DictionaryAttr>:$init);
  let assemblyFormat = [{
    $sym_name (`stacked` $stacked^)? (`frozen` $frozen^)? (`decay` $decay^)?
    (`offset` $offset^)? (`grad_offset` $grad_offset^)? (`opt_offset` $opt_offset^)?
    (`layer_stride` $layer_stride^)? (`staging_offset` $staging_offset^)?
    `:` $type attr-dict
  }];
  let extraClassDeclaration = [{
    /// Bytes of one layer's slice (of the whole param when not stacked).
    int64_t getSliceBytes();
    /// Bytes from layer i's slice to layer i + 1's (layer_stride, or the
    /// slice's size when the slices are back to back).
    int64_t getLayerStrideBytes();
  }];
  let hasVerifier = 1;
}

def BmbExec_StateOp : BmbExec_Op<"state", [Symbol, HasParent<"ProgramOp">]> {
  let summary = "persistent state (the KV cache) in the state allocation";
  let description = [{
    Kept across entry calls. A stacked state has one slice per layer.

    ```mlir
    bmb_exec.state @h.attn.k_cache stacked offset 0 : memref<2x1x64x64xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<BmbExec_Buffer>:$type,
                       UnitAttr:$stacked, OptionalAttr<I64Attr>:$offset);
  let assemblyFormat = [{
    $sym_name (`stacked` $stacked^)? (`offset` $offset^)? `:` $type attr-dict
  }];
}

def BmbExec_NameMapOp : BmbExec_Op<"name_map", [Symbol, HasParent<"ProgramOp">]> {
  let summary = "a checkpoint name map (external tensor names -> params)";
  let description = [{
    Each rule is a dictionary {external, parts (param symbols), axis,
    transpose, tied}: the external tensor is the parts concatenated along
    `axis`, transposed when `transpose`; see runtime/include/bmrt/program.h.

    ```mlir
    bmb_exec.name_map @hf [{axis = 0 : i64, external = "transformer.wte.weight",
                            parts = [@wte.w], tied = false, transpose = false} ]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, DictArrayAttr:$rules);
  let assemblyFormat = "$sym_name $rules attr-dict";
  let hasVerifier = 1;
}

def BmbExec_ParamRefOp : BmbExec_Op<"param_ref", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a view of a parameter (of layer %layer's slice if stacked)";
  let description = [{
    ```mlir
    %w = bmb_exec.param_ref @h.ln1.w[%i] : memref<64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, Optional<Index>:$layer);
  let results = (outs BmbExec_Buffer:$result);
  let assemblyFormat = "$param (`[` $layer^ `]`)? attr-dict `:` type($result)";
}

def BmbExec_StateRefOp : BmbExec_Op<"state_ref", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a view of a state buffer (of layer %layer's slice if stacked)";
  let description = [{
    ```mlir
    %kc = bmb_exec.state_ref @h.attn.k_cache[%i] : memref<1x64x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$state, Optional<Index>:$layer);
  let results = (outs BmbExec_Buffer:$result);
  let assemblyFormat = "$state (`[` $layer^ `]`)? attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

def BmbExec_AllocOp : BmbExec_Op<"alloc", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "an activation buffer";
  let description = [{
    Live from here to its last use. Memory planning packs every alloc of a
    function into the activations allocation by liveness and records the
    byte `offset`.

    ```mlir
    %x = bmb_exec.alloc offset 1024 : memref<1x64x64xf32>
    ```
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs BmbExec_Buffer:$result);
  let assemblyFormat = "(`offset` $offset^)? attr-dict `:` type($result)";
}

def BmbExec_InputOp : BmbExec_Op<"input"> {
  let summary = "an input buffer that the runtime fills before the call";
  let description = [{
    `kind` says what the app writes: "tokens", "token_types" (zeros) or
    "mask" (ones for the valid rows). `rows_dim` is the run-time length dim.

    ```mlir
    %tokens = bmb_exec.input "tokens" kind "tokens" rows_dim 1 offset 0 : memref<1x64xi32>
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$kind, I64Attr:$rows_dim,
                       OptionalAttr<I64Attr>:$offset);
  let results = (outs BmbExec_Buffer:$result);
  let assemblyFormat = [{
    $name `kind` $kind `rows_dim` $rows_dim (`offset` $offset^)? attr-dict `:` type($result)
  }];
}

def BmbExec_OutputOp : BmbExec_Op<"output"> {
  let summary = "marks a buffer as an output the runtime reads after the call";
  let description = [{
    `rows_dim` is the dim with the run-time length (-1: none).

    ```mlir
    bmb_exec.output "logits" %l rows_dim -1 : memref<1x1x512xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, BmbExec_Buffer:$buffer, I64Attr:$rows_dim);
  let assemblyFormat = "$name $buffer `rows_dim` $rows_dim attr-dict `:` type($buffer)";
}

def BmbExec_ReshapeOp : BmbExec_Op<"reshape", [Pure]> {
  let summary = "the same buffer seen with another shape";
  let description = [{
    ```mlir
    %y = bmb_exec.reshape %x : memref<1x64x64xf32> to memref<64x64xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$source);
  let results = (outs BmbExec_Buffer:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `to` type($result)";
  let hasVerifier = 1;
}

def BmbExec_RowViewOp : BmbExec_Op<"row_view", [Pure]> {
  let summary = "the rows of a buffer starting at a run-time row";
  let description = [{
    The source is seen as rows of `row_elems` elements; the result starts at
    row `%row`. Prefill uses it to compute the logits of the last prompt row
    only.

    ```mlir
    %last = bmb_exec.row_view %h[%r] row_elems 64 : memref<1x64x64xf32> to memref<1x1x64xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$source, Index:$row, I64Attr:$row_elems);
  let results = (outs BmbExec_Buffer:$result);
  let assemblyFormat = [{
    $source `[` $row `]` `row_elems` $row_elems attr-dict `:` type($source) `to` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Element-wise: named ops before fusion, generated kernels after
//===----------------------------------------------------------------------===//

def BmbExec_EwiseOp : BmbExec_Op<"ewise", [AttrSizedOperandSegments]> {
  let summary = "one element-wise op (before fusion)";
  let description = [{
    `kind`: add, sub, mul (two inputs, broadcast like numpy from the right),
    scale (one input times `factor`), gelu_tanh, gelu_erf, relu, silu, tanh,
    copy. The fusion pass turns every ewise into a GEMM epilogue, a fused
    norm, or part of a generated `bmb_exec.kernel`.

    ```mlir
    bmb_exec.ewise "add" ins(%a, %b : memref<1x64x64xf32>, memref<64x64xf32>) outs(%c : memref<1x64x64xf32>) rows %rows
    ```
  }];
  let arguments = (ins StrAttr:$kind, Variadic<BmbExec_Buffer>:$inputs, BmbExec_Buffer:$out,
                       Optional<Index>:$rows, OptionalAttr<F64Attr>:$factor);
  let assemblyFormat = [{
    $kind `ins` `(` $inputs `:` type($inputs) `)` `outs` `(` $out `:` type($out) `)`
    (`rows` $rows^)? attr-dict
  }];
  let hasVerifier = 1;
}

def BmbExec_KernelOp : BmbExec_Op<"kernel", [AttrSizedOperandSegments, IsolatedFromAbove,
    SingleBlock]> {
  let summary = "a generated element-wise kernel with a scalar body";
  let description = [{
    The body takes one scalar per input (broadcast inputs are read at
    `(i / in_div[k]) % in_mod[k]`, 0 meaning "no division"/"no modulo",
    set by prepare-for-emission), then one per `scalars` operand (i64
    values of the entry, the same for every element: dropout's seed, step,
    micro-step and layer), and yields the output element. It is printed
    as a `__host__ __device__` function and run by the runtime's map skeleton
    over the output's elements (rows x `inner` when `rows` is given);
    `bmb_exec.elem_index` in the body is the element's flat index.

    ```mlir
    bmb_exec.kernel @k0 ins(%a, %b : memref<1x4xf32>, memref<4xf32>) outs(%c : memref<1x4xf32>) {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      bmb_exec.kernel_yield %s : f32
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Variadic<BmbExec_Buffer>:$inputs, BmbExec_Buffer:$out,
                       Optional<Index>:$rows,
                       OptionalAttr<DenseI64ArrayAttr>:$in_div,
                       OptionalAttr<DenseI64ArrayAttr>:$in_mod,
                       OptionalAttr<I64Attr>:$inner,
                       Variadic<I64>:$scalars);
  let regions = (region SizedRegion<1>:$body);
  // Most kernels have no scalar operands: the builder without them.
  let builders = [
    OpBuilder<(ins "StringAttr":$sym_name, "ValueRange":$inputs, "Value":$out, "Value":$rows,
                   "DenseI64ArrayAttr":$in_div, "DenseI64ArrayAttr":$in_mod,
                   "IntegerAttr":$inner), [{
      build($_builder, $_state, sym_name, inputs, out, rows, in_div, in_mod, inner,
            ValueRange());
    }]>
  ];
  let assemblyFormat = [{
    $sym_name `ins` `(` $inputs `:` type($inputs) `)` `outs` `(` $out `:` type($out) `)`
    (`rows` $rows^)? (`scalars` `(` $scalars^ `:` type($scalars) `)`)?
    attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
}

def BmbExec_ElemIndexOp : BmbExec_Op<"elem_index", [Pure, HasParent<"KernelOp">]> {
  let summary = "the flat index of the element a generated kernel computes";
  let description = [{
    `i` of the kernel's `operator()(i)`: the element's offset in the output
    (row-major). Counter-based randomness (dropout) keys on it.

    ```mlir
    %i = bmb_exec.elem_index : i64
    ```
  }];
  let results = (outs I64:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def BmbExec_KernelYieldOp : BmbExec_Op<"kernel_yield", [Pure, Terminator,
    HasParent<"KernelOp">]> {
  let summary = "the element a generated kernel writes";
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// Runtime kernels (runtime/include/bmrt/kernels.h)
//===----------------------------------------------------------------------===//

def BmbExec_GemmOp : BmbExec_Op<"gemm", [AttrSizedOperandSegments]> {
  let summary = "out = act(a . b^T + bias) + residual (bmrt::gemm)";
  let description = [{
    `a` is [..., k] (rows x k), `b` is [n, k] (`trans_b`, our weights) or
    [k, n]; `act` is the epilogue: none, gelu_tanh, gelu_erf, relu, silu,
    tanh. `residual` may be the output buffer itself.

    ```mlir
    bmb_exec.gemm %x, %w bias %b act "gelu_tanh" outs(%y) rows %rows
        : memref<1x64x64xf32>, memref<256x64xf32>, memref<256xf32> -> memref<1x64x256xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$a, BmbExec_Buffer:$b, Optional<BmbExec_Buffer>:$bias,
                       Optional<BmbExec_Buffer>:$residual, BmbExec_Buffer:$out, Optional<Index>:$rows,
                       DefaultValuedAttr<BoolAttr, "true">:$trans_b,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$act);
  let assemblyFormat = [{
    $a `,` $b (`bias` $bias^ `:` type($bias))? (`residual` $residual^ `:` type($residual))?
    `outs` `(` $out `)` (`rows` $rows^)? attr-dict `:` type($a) `,` type($b) `->` type($out)
  }];
  let hasVerifier = 1;
}

def BmbExec_NormOp : BmbExec_Op<"norm", [AttrSizedOperandSegments]> {
  let summary = "layernorm / rmsnorm, optionally of a residual sum (bmrt::*norm_forward)";
  let description = [{
    `kind` = "layernorm" or "rmsnorm". With `residual %r sum %s`, computes
    s = x + r first and normalizes s (bmrt::residual_layernorm_forward).

    ```mlir
    bmb_exec.norm "layernorm" %x, %w bias %b outs(%y) rows %rows {eps = 1.0e-05 : f64}
        : memref<1x64x64xf32>, memref<64xf32> -> memref<1x64x64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$kind, BmbExec_Buffer:$x, BmbExec_Buffer:$w, Optional<BmbExec_Buffer>:$bias,
                       Optional<BmbExec_Buffer>:$residual, Optional<BmbExec_Buffer>:$sum,
                       BmbExec_Buffer:$out, Optional<Index>:$rows, F64Attr:$eps);
  let assemblyFormat = [{
    $kind $x `,` $w (`bias` $bias^ `:` type($bias))?
    (`residual` $residual^ `:` type($residual))? (`sum` $sum^ `:` type($sum))?
    `outs` `(` $out `)` (`rows` $rows^)? attr-dict `:` type($x) `,` type($w) `->` type($out)
  }];
  let hasVerifier = 1;
}

def BmbExec_AttentionOp : BmbExec_Op<"attention", [AttrSizedOperandSegments]> {
  let summary = "attention over a KV cache (bmrt::attention_forward)";
  let description = [{
    Writes the new k/v rows into `k_cache`/`v_cache` at `%start` (nothing to
    copy when the caches are k and v themselves, as in encoders), then
    attends from each new row over the cached rows. `capacity` is the rows
    per sequence of the caches.

    With `prefix %pk, %pv` (prefix tuning, both `[P, kv width]`) the caches
    hold the prefix in their first P rows and the tokens after it
    (bmrt::attention_prefix_forward writes the prefix, then attends from
    `start + P`); `capacity` counts the P rows, the mask does not. `gate`
    (one element): where 0 the prefix rows are masked out (a prefix on some
    iterations of a repeat).

    ```mlir
    bmb_exec.attention %q, %k, %v cache %kc, %vc outs(%o) start %start rows %rows
        {causal, heads = 4 : i64, kv_heads = 4 : i64, head_dim = 16 : i64, capacity = 64 : i64, scale = 2.5e-01 : f64}
        : memref<1x64x64xf32>, memref<1x64x64xf32>, memref<1x64x64xf32>, memref<1x64x64xf32>, memref<1x64x64xf32> -> memref<1x64x64xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$q, BmbExec_Buffer:$k, BmbExec_Buffer:$v, BmbExec_Buffer:$k_cache,
                       BmbExec_Buffer:$v_cache, Optional<BmbExec_Buffer>:$mask,
                       Optional<BmbExec_Buffer>:$prefix_k, Optional<BmbExec_Buffer>:$prefix_v,
                       Optional<BmbExec_Buffer>:$prefix_gate,
                       BmbExec_Buffer:$out, Index:$start, Optional<Index>:$rows,
                       UnitAttr:$causal, I64Attr:$heads, I64Attr:$kv_heads, I64Attr:$head_dim,
                       I64Attr:$capacity, F64Attr:$scale);
  let assemblyFormat = [{
    $q `,` $k `,` $v `cache` $k_cache `,` $v_cache (`mask` $mask^ `:` type($mask))?
    (`prefix` $prefix_k^ `,` $prefix_v `:` type($prefix_k) `,` type($prefix_v))?
    (`gate` $prefix_gate^ `:` type($prefix_gate))?
    `outs` `(` $out `)` `start` $start (`rows` $rows^)? attr-dict `:` type($q) `,` type($k)
    `,` type($v) `,` type($k_cache) `,` type($v_cache) `->` type($out)
  }];
  let hasVerifier = 1;
}

def BmbExec_RotaryOp : BmbExec_Op<"rotary"> {
  let summary = "rotary position embedding (bmrt::rotary_forward)";
  let description = [{
    ```mlir
    bmb_exec.rotary %x, %pos outs(%y) rows %rows {heads = 4 : i64, head_dim = 16 : i64, base = 1.0e+04 : f64}
        : memref<1x64x64xf32>, memref<64xi32> -> memref<1x64x64xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$x, BmbExec_Buffer:$positions, BmbExec_Buffer:$out, Optional<Index>:$rows,
                       I64Attr:$heads, I64Attr:$head_dim, F64Attr:$base);
  let assemblyFormat = [{
    $x `,` $positions `outs` `(` $out `)` (`rows` $rows^)? attr-dict `:` type($x) `,`
    type($positions) `->` type($out)
  }];
}

def BmbExec_EmbeddingOp : BmbExec_Op<"embedding"> {
  let summary = "out[r] = table[ids[r]] (bmrt::embedding_forward)";
  let description = [{
    ```mlir
    bmb_exec.embedding %ids, %table outs(%x) rows %rows : memref<1x64xi32>, memref<512x64xf32> -> memref<1x64x64xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$ids, BmbExec_Buffer:$table, BmbExec_Buffer:$out, Optional<Index>:$rows);
  let assemblyFormat = [{
    $ids `,` $table `outs` `(` $out `)` (`rows` $rows^)? attr-dict `:` type($ids) `,`
    type($table) `->` type($out)
  }];
}

def BmbExec_IterationSlotOp : BmbExec_Op<"iteration_slot", [Pure]> {
  let summary = "max(slots[i], 0): a per-iteration delta's stack entry (bmb.iteration_slot)";
  let description = [{
    ```mlir
    %s = bmb_exec.iteration_slot %l [-1, 0, 1]
    ```
  }];
  let arguments = (ins Index:$iteration, DenseI64ArrayAttr:$slots);
  let results = (outs Index:$result);
  let assemblyFormat = "$iteration $slots attr-dict";
}

def BmbExec_IterationGateOp : BmbExec_Op<"iteration_gate"> {
  let summary = "out[0] = slots[i] >= 0 ? 1 : 0 (bmb.iteration_gate)";
  let description = [{
    ```mlir
    bmb_exec.iteration_gate %l [-1, 0, 1] outs(%g) : memref<1xf32>
    ```
  }];
  let arguments = (ins Index:$iteration, DenseI64ArrayAttr:$slots, BmbExec_Buffer:$out);
  let assemblyFormat = "$iteration $slots `outs` `(` $out `)` attr-dict `:` type($out)";
}

def BmbExec_PositionsOp : BmbExec_Op<"positions"> {
  let summary = "out[r] = start + r (bmrt::positions_forward)";
  let description = [{
    ```mlir
    bmb_exec.positions outs(%p) start %start rows %rows : memref<64xi32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$out, Index:$start, Optional<Index>:$rows);
  let assemblyFormat = "`outs` `(` $out `)` `start` $start (`rows` $rows^)? attr-dict `:` type($out)";
}

def BmbExec_SoftmaxOp : BmbExec_Op<"softmax"> {
  let summary = "softmax over the last dim (bmrt::softmax_forward)";
  let description = [{
    ```mlir
    bmb_exec.softmax %x outs(%y) : memref<4x8xf32> -> memref<4x8xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$x, BmbExec_Buffer:$out, Optional<Index>:$rows);
  let assemblyFormat = "$x `outs` `(` $out `)` (`rows` $rows^)? attr-dict `:` type($x) `->` type($out)";
}

def BmbExec_TakeOp : BmbExec_Op<"take"> {
  let summary = "one index along an axis (bmrt::copy_strided)";
  let description = [{
    out[o, :] = x[o, index, :] with the dims before `axis` flattened into o.

    ```mlir
    bmb_exec.take %x outs(%y) {axis = 1 : i64, index = 0 : i64} : memref<1x64x64xf32> -> memref<1x64xf32>
    ```
  }];
  let arguments = (ins BmbExec_Buffer:$x, BmbExec_Buffer:$out, I64Attr:$axis, I64Attr:$index);
  let assemblyFormat = "$x `outs` `(` $out `)` attr-dict `:` type($x) `->` type($out)";
  let hasVerifier = 1;
}

include "BmbExecTrainOps.td"
include "BmbExecCommOps.td"
include "BmbExecOffloadOps.td"

#endif // BMB_EXEC_OPS_TD
