//===- ShapeRules.h - The one place where op shape rules live ---*- C++ -*-===//
//
// Every primitive's shape and dtype rule, written once and used by Sema (to
// report a mismatch at the user's line), by the `bmb` op verifiers and by any
// shape pass. Plain C++ with no MLIR or LLVM dependency, so the front end can
// use it without linking MLIR and a verifier can call it with ArrayRefs.
//
// A rule takes its operands' signatures and attributes and returns either the
// result signature(s) or an error message that names the operand and shows
// both shapes, e.g.
//   "linear: input's last dimension 768 does not match the weight's
//    in-dimension 512 (input f32[8, 256, 768], weight f32[2304, 512])"
// The caller adds the location.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_DIALECTS_BMB_SHAPERULES_H
#define BMB_DIALECTS_BMB_SHAPERULES_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bmb::shapes {

enum class DType { F32, F64, F16, BF16, I8, I32, I64 };

const char *spelling(DType t);             // "f32", "bf16", "i32", ...
std::optional<DType> parseDType(const std::string &name);
bool isFloat(DType t);
bool isInteger(DType t);
int64_t byteSize(DType t);

using Shape = std::vector<int64_t>;

/// A tensor's dtype and static shape. Rank 0 is a scalar.
struct Sig {
  DType dtype = DType::F32;
  Shape shape;
  bool operator==(const Sig &o) const {
    return dtype == o.dtype && shape == o.shape;
  }
};

/// "[8, 256, 768]" / "f32[8, 256, 768]".
std::string str(const Shape &s);
std::string str(const Sig &s);
/// Product of the dimensions; nullopt on int64 overflow.
std::optional<int64_t> numElements(const Shape &s);

/// Either result signatures or an error message.
struct Result {
  std::vector<Sig> results;
  std::string error;
  bool ok() const { return error.empty(); }
  static Result fail(std::string msg) { return {{}, std::move(msg)}; }
  static Result of(Sig s) { return {{std::move(s)}, {}}; }
};

// Rules, one per primitive. Optional operands are passed as nullptr.
// Shapes are static (DESIGN decision 1): every dimension is >= 0.

/// embedding(ids: int[...], w: [num, dim]) -> [..., dim] (w's dtype).
Result embedding(const Sig &ids, const Sig &w);
/// linear(x: [..., in], w: [out, in], b: [out]?) -> [..., out].
/// Also the rule of lm_head (w: [vocab, dim], b: [vocab]?).
Result linear(const Sig &x, const Sig &w, const Sig *b, const char *opName = "linear");
/// layernorm(x: [..., d], w: [d], b: [d]?) -> x; eps > 0.
Result layerNorm(const Sig &x, const Sig &w, const Sig *b, double eps);
/// rmsnorm(x: [..., d], w: [d]) -> x; eps > 0.
Result rmsNorm(const Sig &x, const Sig &w, double eps);
/// attention(q: [B, T, heads*hd], k, v: [B, S, kv_heads*hd], mask: int[B, S]?)
///   -> [B, T, heads*hd]; heads % kv_heads == 0.
Result attention(const Sig &q, const Sig &k, const Sig &v, const Sig *mask,
                 int64_t heads, int64_t kvHeads);
/// rotary(x: [B, T, heads*hd], positions: int[T]) -> x; hd even.
Result rotary(const Sig &x, const Sig &positions, int64_t heads);
/// Element-wise unary ops (gelu, relu, silu, tanh, scale, dropout,
/// softmax along `axis`): float input, same result.
Result unaryFloat(const Sig &x, const char *opName);
Result softmax(const Sig &x, int64_t axis);
Result dropout(const Sig &x, double p);
/// Binary element-wise ops with numpy broadcasting of trailing dimensions;
/// both operands must have the same dtype.
Result broadcast(const Sig &a, const Sig &b, const char *opName);
/// cross_entropy(logits: [..., V], targets: int[...]) -> f32[] (the mean;
/// f64[] for f64 logits).
Result crossEntropy(const Sig &logits, const Sig &targets);
/// arange(n) -> i32[n].
Result arange(int64_t n);
/// take(x, index, axis): removes `axis`, keeping entry `index`.
Result take(const Sig &x, int64_t index, int64_t axis);
/// split(x, parts, axis) -> parts tensors; the axis must divide evenly.
Result split(const Sig &x, int64_t parts, int64_t axis);
/// reshape(x, shape): one -1 allowed; element counts must match.
Result reshape(const Sig &x, const Shape &shape);
/// transpose(x, perm): perm is a permutation of [0, rank).
Result transpose(const Sig &x, const std::vector<int64_t> &perm);

/// Normalizes a possibly negative axis against `rank`; nullopt if out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

} // namespace bmb::shapes

#endif // BMB_DIALECTS_BMB_SHAPERULES_H
