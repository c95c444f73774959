//===- BmbTensorOps.td - The primitives on tensors ---------*- tablegen -*-===//
//
// The primitive ops the stdlib calls. Shape and dtype rules are not written
// here but in ShapeRules.cpp, shared with Sema: every Bmb_RuleOp implements
// `applyShapeRule`, which converts the operand types to signatures and
// calls the rule. Two users:
//  * inferReturnTypes (InferTypeOpInterface), so builders need no result
//    types and unary ops print only their operand type;
//  * verify(), which reports the rule's own message ("linear: input's last
//    dimension 768 does not match ...") or a result type the rule does not
//    give. The interface's comparison is switched off (isCompatibleReturnTypes
//    accepts anything) because it runs first and would only say "failed to
//    infer returned types".
// split, reshape and random take their result types from the IR and check
// them against the rule in verify().
//
//===----------------------------------------------------------------------===//
#ifndef BMB_TENSOR_OPS_TD
#define BMB_TENSOR_OPS_TD

include "BmbDialect.td"
include "BmbAttrs.td"
include "BmbModelOps.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

/// Base of the primitives whose result types a ShapeRules function gives.
class Bmb_RuleOp<string mnemonic, list<Trait> traits = []>
    : Bmb_Op<mnemonic, !listconcat([Pure, InferTypeOpAdaptorWithIsCompatible],
                                   traits)> {
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The op's ShapeRules rule applied to the operand types and attributes
    /// in `adaptor` (attributes may still be missing while parsing).
    static ::bmb::shapes::Result applyShapeRule(Adaptor adaptor);
  }];
}

/// Element-wise maps x -> f(x) on a float tensor.
class Bmb_UnaryOp<string mnemonic, list<Trait> traits = []>
    : Bmb_RuleOp<mnemonic, !listconcat([Elementwise], traits)> {
  let arguments = (ins Bmb_Tensor:$input);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

/// Element-wise binary ops with numpy broadcasting of trailing dimensions.
class Bmb_BroadcastOp<string mnemonic, string what>
    : Bmb_RuleOp<mnemonic> {
  let summary = what # " with broadcasting";
  let description = [{
    Element-wise }] # what # [{ of two tensors of the same dtype; shapes
    are aligned from the right and a dimension of 1 broadcasts (numpy).

    ```mlir
    %y = bmb.}] # mnemonic # [{ %x, %pos
        : (tensor<8x256x192xf32>, tensor<256x192xf32>) -> tensor<8x256x192xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$lhs, Bmb_Tensor:$rhs);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Layers' primitives
//===----------------------------------------------------------------------===//

def Bmb_EmbeddingOp : Bmb_RuleOp<"embedding"> {
  let summary = "looks up rows of an embedding table";
  let description = [{
    `result[..., :] = weight[ids[...], :]`: integer ids of any shape,
    a `[num, dim]` float table; the result is `[..., dim]`.

    ```mlir
    %e = bmb.embedding %ids, %w
        : (tensor<8x256xi32>, tensor<50257x192xf32>) -> tensor<8x256x192xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$ids, Bmb_Tensor:$weight);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$ids `,` $weight attr-dict `:` functional-type(operands, results)";
}

class Bmb_LinearLikeOp<string mnemonic> : Bmb_RuleOp<mnemonic> {
  let arguments = (ins Bmb_Tensor:$input, Bmb_Tensor:$weight,
                       Optional<Bmb_Tensor>:$bias);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Bmb_LinearOp : Bmb_LinearLikeOp<"linear"> {
  let summary = "x W^T + b";
  let description = [{
    `input: [..., in]`, `weight: [out, in]` (PyTorch layout), optional
    `bias: [out]`; the result is `[..., out]`.

    ```mlir
    %y = bmb.linear %x, %w, %b
        : (tensor<8x256x192xf32>, tensor<576x192xf32>, tensor<576xf32>)
        -> tensor<8x256x576xf32>
    ```
  }];
}

def Bmb_LMHeadOp : Bmb_LinearLikeOp<"lm_head"> {
  let summary = "the output projection to vocabulary logits";
  let description = [{
    The same computation and shape rule as `bmb.linear` (`weight` is
    `[vocab, dim]`, often the tied token embedding), kept as its own op so
    that the fused classifier (LM head + softmax + cross-entropy, DESIGN
    decision 4) can find it.

    ```mlir
    %logits = bmb.lm_head %h, %wte
        : (tensor<8x256x192xf32>, tensor<50257x192xf32>) -> tensor<8x256x50257xf32>
    ```
  }];
}

def Bmb_LayerNormOp : Bmb_RuleOp<"layernorm"> {
  let summary = "layer normalization over the last dimension";
  let description = [{
    `(x - mean) / sqrt(var + eps) * weight + bias` over the last dimension;
    `weight` and the optional `bias` are `[dim]`. `eps` is an attribute
    because models differ (1e-5 for GPT-2, 1e-12 for BERT).

    ```mlir
    %y = bmb.layernorm %x, %w, %b {eps = 1.0e-05 : f64}
        : (tensor<8x256x192xf32>, tensor<192xf32>, tensor<192xf32>) -> tensor<8x256x192xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$input, Bmb_Tensor:$weight,
                       Optional<Bmb_Tensor>:$bias, F64Attr:$eps);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Bmb_RMSNormOp : Bmb_RuleOp<"rmsnorm"> {
  let summary = "RMS normalization over the last dimension";
  let description = [{
    `x / sqrt(mean(x^2) + eps) * weight` over the last dimension (Llama).

    ```mlir
    %y = bmb.rmsnorm %x, %w {eps = 1.0e-05 : f64}
        : (tensor<4x64x64xf32>, tensor<64xf32>) -> tensor<4x64x64xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$input, Bmb_Tensor:$weight, F64Attr:$eps);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$input `,` $weight attr-dict `:` functional-type(operands, results)";
}

def Bmb_AttentionOp : Bmb_RuleOp<"attention", [AttrSizedOperandSegments]> {
  let summary = "multi-head (grouped-query) scaled dot-product attention";
  let description = [{
    `query: [B, T, heads * head_dim]`, `key` and `value`:
    `[B, S, kv_heads * head_dim]`, optional integer `mask: [B, S]`
    (1 = attend, 0 = padding). `heads` must be a multiple of `kv_heads`
    (grouped-query attention when they differ). `causal` masks future
    positions; `scale` multiplies the logits (1/sqrt(head_dim) unless the
    model says otherwise). The result has the query's shape, heads merged.

    With `prefix(%pk, %pv)` (prefix tuning, bmb-insert-deltas), both
    `[P, kv_heads * head_dim]`, every sequence's keys and values are
    `[pk; key]` and `[pv; value]`: every query sees the P prefix positions
    before its causal window, and the mask (which covers `key` only) never
    hides them. `gate %g` (a one-element `bmb.iteration_gate`, for a prefix
    on some iterations of a repeat) turns the prefix off where it is 0.

    ```mlir
    %y = bmb.attention %q, %k, %v {causal, heads = 6 : i64, kv_heads = 6 : i64,
                                   scale = 0.17677669529663687 : f64}
        : (tensor<8x256x192xf32>, tensor<8x256x192xf32>, tensor<8x256x192xf32>)
        -> tensor<8x256x192xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$query, Bmb_Tensor:$key, Bmb_Tensor:$value,
                       Optional<Bmb_Tensor>:$mask, Optional<Bmb_Tensor>:$prefix_key,
                       Optional<Bmb_Tensor>:$prefix_value, Optional<Bmb_Tensor>:$prefix_gate,
                       I64Attr:$heads, I64Attr:$kv_heads, UnitAttr:$causal, F64Attr:$scale);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)?
    (`prefix` `(` $prefix_key^ `,` $prefix_value `)`)? (`gate` $prefix_gate^)? attr-dict `:`
    functional-type(operands, results)
  }];
  // Most attentions have no prefix: the builder without it.
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$query, "::mlir::Value":$key,
                   "::mlir::Value":$value, "::mlir::Value":$mask, "::mlir::IntegerAttr":$heads,
                   "::mlir::IntegerAttr":$kv_heads, "::mlir::UnitAttr":$causal,
                   "::mlir::FloatAttr":$scale), [{
      build($_builder, $_state, result, query, key, value, mask, ::mlir::Value(),
            ::mlir::Value(), ::mlir::Value(), heads, kv_heads, causal, scale);
    }]>
  ];
}

def Bmb_RotaryOp : Bmb_RuleOp<"rotary"> {
  let summary = "rotary position embedding (RoPE)";
  let description = [{
    Rotates each head's pairs of features of `input: [B, T, heads * head_dim]`
    by angles `position * base^(-2i / head_dim)`; `positions` is an integer
    `[T]` tensor (runtime offsets such as the KV position are operands, not
    shapes: DESIGN decision 1). `head_dim` must be even.

    ```mlir
    %r = bmb.rotary %q, %pos {base = 1.0e+04 : f64, heads = 4 : i64}
        : (tensor<4x64x64xf32>, tensor<64xi32>) -> tensor<4x64x64xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$input, Bmb_Tensor:$positions,
                       I64Attr:$heads, F64Attr:$base);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$input `,` $positions attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

def Bmb_GeluOp : Bmb_UnaryOp<"gelu"> {
  let summary = "GELU activation";
  let description = [{
    `x * Phi(x)`. `approximate` is part of the numerics (DESIGN decision 7):
    `none` evaluates Phi with erf (BERT), `tanh` uses the tanh approximation
    (GPT-2).

    ```mlir
    %y = bmb.gelu %x approximate tanh : tensor<8x256x768xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$input,
                       Bmb_GeluApproximationAttr:$approximate);
  let assemblyFormat = "$input `approximate` `` $approximate attr-dict `:` type($input)";
}

def Bmb_ReluOp : Bmb_UnaryOp<"relu"> {
  let summary = "ReLU activation";
  let description = [{
    `max(x, 0)`.

    ```mlir
    %y = bmb.relu %x : tensor<8x256x768xf32>
    ```
  }];
}

def Bmb_SiluOp : Bmb_UnaryOp<"silu"> {
  let summary = "SiLU (swish) activation";
  let description = [{
    `x * sigmoid(x)` (the gate of SwiGLU).

    ```mlir
    %y = bmb.silu %x : tensor<4x64x176xf32>
    ```
  }];
}

def Bmb_TanhOp : Bmb_UnaryOp<"tanh"> {
  let summary = "hyperbolic tangent";
  let description = [{
    ```mlir
    %y = bmb.tanh %x : tensor<8x768xf32>
    ```
  }];
}

def Bmb_AddOp : Bmb_BroadcastOp<"add", "addition">;
def Bmb_SubOp : Bmb_BroadcastOp<"sub", "subtraction">;
def Bmb_MulOp : Bmb_BroadcastOp<"mul", "multiplication">;

def Bmb_ScaleOp : Bmb_UnaryOp<"scale"> {
  let summary = "multiplies by a constant";
  let description = [{
    `x * factor`. Scaling by 1.0 folds away; two scales combine.

    ```mlir
    %y = bmb.scale %x {factor = 1.250000e-01 : f64} : tensor<8x256x192xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$input, F64Attr:$factor);
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Bmb_SoftmaxOp : Bmb_UnaryOp<"softmax"> {
  let summary = "softmax along an axis";
  let description = [{
    `exp(x) / sum(exp(x))` along `axis` (negative counts from the end).

    ```mlir
    %p = bmb.softmax %x {axis = -1 : i64} : tensor<8x256x512xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$input, I64Attr:$axis);
}

def Bmb_DropoutOp : Bmb_UnaryOp<"dropout"> {
  let summary = "inverted dropout with a counter-based mask";
  let description = [{
    Zeroes each element with probability `p` and scales the rest by
    `1 / (1 - p)` in training; the identity in inference and when `p` = 0
    (which folds away).

    The mask is not state: it is a pure function of (seed, step, `rng_id`,
    the enclosing `bmb.repeat` iteration indices, element index) through a
    counter-based Philox generator (DESIGN decision 6). So the op carries
    only its id, a recomputed forward (activation checkpointing) draws the
    same mask, and masks agree across world sizes, resumes and backends.
    MLIRGen numbers the dropouts and randoms of a program from 0; a clone
    keeps its original's id on purpose.

    ```mlir
    %y = bmb.dropout %x {p = 1.000000e-01 : f64, rng_id = 3 : i64} : tensor<8x256x192xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$input, F64Attr:$p, I64Attr:$rng_id);
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Losses, index generators, randomness
//===----------------------------------------------------------------------===//

def Bmb_CrossEntropyOp : Bmb_RuleOp<"cross_entropy"> {
  let summary = "mean softmax cross-entropy of logits against targets";
  let description = [{
    `logits: [..., V]` float, integer `targets: [...]`; the result is the f32
    scalar mean over the targets that are not `ignore_index` (-100 by
    default, as in PyTorch).

    ```mlir
    %loss = bmb.cross_entropy %logits, %targets
        : (tensor<8x256x50257xf32>, tensor<8x256xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$logits, Bmb_Tensor:$targets,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$logits `,` $targets attr-dict `:` functional-type(operands, results)";
}

def Bmb_ArangeOp : Bmb_RuleOp<"arange"> {
  let summary = "the integers 0 .. n-1";
  let description = [{
    ```mlir
    %pos = bmb.arange 256 : tensor<256xi32>
    ```
  }];
  let arguments = (ins I64Attr:$n);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$n attr-dict `:` type($result)";
}

def Bmb_RandomOp : Bmb_Op<"random", [Pure]> {
  let summary = "a tensor of counter-based random numbers";
  let description = [{
    Samples `normal` (N(0, 1)) or `uniform` (U[0, 1)) numbers from the same
    counter-based Philox stream as `bmb.dropout`, keyed by (seed, step,
    `rng_id`, repeat iterations, element index): the op has no state, and
    two ops with the same id produce the same numbers.

    ```mlir
    %n = bmb.random normal {rng_id = 7 : i64} : tensor<8x256x192xf32>
    ```
  }];
  let arguments = (ins Bmb_DistributionAttr:$distribution, I64Attr:$rng_id);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$distribution attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Bmb_TakeOp : Bmb_RuleOp<"take"> {
  let summary = "one entry along an axis, which is removed";
  let description = [{
    `take(x, 0, axis = 1)` is `x[:, 0]` (BERT's pooler reads the first
    token). Negative `index` and `axis` count from the end.

    ```mlir
    %cls = bmb.take %x {axis = 1 : i64, index = 0 : i64}
        : (tensor<8x128x768xf32>) -> tensor<8x768xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$input, I64Attr:$index, I64Attr:$axis);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Bmb_SplitOp : Bmb_Op<"split", [Pure]> {
  let summary = "splits a tensor into equal parts along an axis";
  let description = [{
    The number of results is the number of parts; the axis must divide
    evenly.

    ```mlir
    %q, %k, %v = bmb.split %qkv {axis = 2 : i64}
        : tensor<8x256x576xf32> -> tensor<8x256x192xf32>, tensor<8x256x192xf32>,
          tensor<8x256x192xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$input, I64Attr:$axis);
  let results = (outs Variadic<Bmb_Tensor>:$results);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($results)";
  let hasVerifier = 1;
}

def Bmb_ReshapeOp : Bmb_Op<"reshape", [Pure]> {
  let summary = "reinterprets a tensor with another shape";
  let description = [{
    Same elements in row-major order, same dtype; the result type gives the
    new shape. A reshape to the input's type folds away, and a reshape of a
    reshape reads the original input.

    ```mlir
    %h = bmb.reshape %x : tensor<8x256x192xf32> -> tensor<8x256x6x32xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$input);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Bmb_TransposeOp : Bmb_RuleOp<"transpose"> {
  let summary = "permutes the dimensions";
  let description = [{
    `result.shape[i] = input.shape[perm[i]]`. The identity permutation folds
    away and two transposes compose into one.

    ```mlir
    %t = bmb.transpose %x perm [0, 2, 1, 3]
        : (tensor<8x256x6x32xf32>) -> tensor<8x6x256x32xf32>
    ```
  }];
  let arguments = (ins Bmb_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Bmb_Tensor:$result);
  let assemblyFormat = [{
    $input `perm` $perm attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

#endif // BMB_TENSOR_OPS_TD
