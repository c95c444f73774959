//===- ShapeRules.cpp - Shape and dtype rules of the bmb primitives -------===//
//
// One function per primitive; Sema and the `bmb` op verifiers both call
// these, so a message reads the same whether the user's .bmb file or an IR
// pass got it wrong. Messages follow one pattern: "<op>: <what is wrong>
// (<operand> <sig>, ...)", naming operands the way the stdlib does (input,
// weight, bias, query, key, value, mask, ...) and showing every shape that
// took part. Plain C++17: no MLIR or LLVM here (see ShapeRules.h).
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/ShapeRules.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace bmb::shapes {

const char *spelling(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I8:
    return "i8";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  return "?";
}

std::optional<DType> parseDType(const std::string &name) {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,
                  DType::I32, DType::I64})
    if (name == spelling(t))
      return t;
  return std::nullopt;
}

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 ||
         t == DType::BF16;
}

bool isInteger(DType t) { return !isFloat(t); }

int64_t byteSize(DType t) {
  switch (t) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I8:
    return 1;
  }
  return 0;
}

std::string str(const Shape &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

std::string str(const Sig &s) { return spelling(s.dtype) + str(s.shape); }

std::optional<int64_t> numElements(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      return std::nullopt;
  }
  return n;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return std::nullopt;
  return axis;
}

namespace {

std::string num(int64_t v) { return std::to_string(v); }

/// Shortest "%g" rendering that reads back as the same double: 1e-05, 0.02.
std::string num(double v) {
  char buf[32];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}

/// "input f32[8, 256, 768]": an operand's role and signature.
std::string arg(const char *role, const Sig &s) {
  return std::string(role) + " " + str(s);
}

std::string paren(const std::string &a) { return " (" + a + ")"; }
std::string paren(const std::string &a, const std::string &b) {
  return " (" + a + ", " + b + ")";
}

Result fail(const char *op, const std::string &msg) {
  return Result::fail(std::string(op) + ": " + msg);
}

/// The operand must have a float dtype; returns the error or an empty string.
std::string needFloat(const char *op, const char *role, const Sig &s) {
  if (isFloat(s.dtype))
    return {};
  return std::string(op) + ": " + role + " must have a float dtype, got " +
         spelling(s.dtype) + paren(arg(role, s));
}

std::string needInteger(const char *op, const char *role, const Sig &s) {
  if (isInteger(s.dtype))
    return {};
  return std::string(op) + ": " + role + " must have an integer dtype, got " +
         spelling(s.dtype) + paren(arg(role, s));
}

std::string needRank(const char *op, const char *role, const Sig &s,
                     size_t rank, const char *layout) {
  if (s.shape.size() == rank)
    return {};
  return std::string(op) + ": " + role + " must have rank " +
         num(int64_t(rank)) + " " + layout + ", got rank " +
         num(int64_t(s.shape.size())) + paren(arg(role, s));
}

std::string needNonScalar(const char *op, const char *role, const Sig &s) {
  if (!s.shape.empty())
    return {};
  return std::string(op) + ": " + role + " must have rank >= 1, got a scalar" +
         paren(arg(role, s));
}

/// `other` must have `ref`'s dtype ("weight dtype bf16 does not match the
/// input's f32").
std::string needSameDType(const char *op, const char *refRole, const Sig &ref,
                          const char *role, const Sig &other) {
  if (ref.dtype == other.dtype)
    return {};
  return std::string(op) + ": " + role + " dtype " + spelling(other.dtype) +
         " does not match the " + refRole + "'s " + spelling(ref.dtype) +
         paren(arg(refRole, ref), arg(role, other));
}

/// Returns the first non-empty error among `checks`.
Result firstError(std::initializer_list<std::string> checks) {
  for (const std::string &e : checks)
    if (!e.empty())
      return Result::fail(e);
  return {};
}

/// Shared by layernorm and rmsnorm: a per-feature vector over x's last dim.
std::string needFeatureVector(const char *op, const char *role, const Sig &x,
                              const Sig &v) {
  if (std::string e = needSameDType(op, "input", x, role, v); !e.empty())
    return e;
  if (v.shape.size() == 1 && v.shape[0] == x.shape.back())
    return {};
  return std::string(op) + ": " + role + " shape " + str(v.shape) +
         " does not match the input's last dimension " + num(x.shape.back()) +
         paren(arg("input", x), arg(role, v));
}

Result norm(const char *op, const Sig &x, const Sig &w, const Sig *b,
            double eps) {
  if (Result r = firstError(
          {needFloat(op, "input", x), needNonScalar(op, "input", x)});
      !r.ok())
    return r;
  if (!(eps > 0) || !std::isfinite(eps))
    return fail(op, "eps must be positive and finite, got " + num(eps));
  if (std::string e = needFeatureVector(op, "weight", x, w); !e.empty())
    return Result::fail(e);
  if (b)
    if (std::string e = needFeatureVector(op, "bias", x, *b); !e.empty())
      return Result::fail(e);
  return Result::of(x);
}

/// `role` is [B, T, heads * head_dim]: its last dimension splits into
/// `heads` (already checked positive) equal heads.
std::string needHeadSplit(const char *op, const char *role, const Sig &x,
                          int64_t heads) {
  if (x.shape[2] % heads == 0)
    return "";
  return std::string(op) + ": " + role + "'s last dimension " + num(x.shape[2]) +
         " is not divisible by heads " + num(heads) + paren(arg(role, x));
}

} // namespace

Result embedding(const Sig &ids, const Sig &w) {
  const char *op = "embedding";
  if (Result r = firstError({needInteger(op, "ids", ids),
                             needRank(op, "weight", w, 2, "[num, dim]"),
                             needFloat(op, "weight", w)});
      !r.ok())
    return r;
  Sig out{w.dtype, ids.shape};
  out.shape.push_back(w.shape[1]);
  return Result::of(out);
}

Result linear(const Sig &x, const Sig &w, const Sig *b, const char *op) {
  if (Result r =
          firstError({needFloat(op, "input", x), needNonScalar(op, "input", x),
                      needRank(op, "weight", w, 2, "[out, in]"),
                      needSameDType(op, "input", x, "weight", w)});
      !r.ok())
    return r;
  if (x.shape.back() != w.shape[1])
    return fail(op, "input's last dimension " + num(x.shape.back()) +
                        " does not match the weight's in-dimension " +
                        num(w.shape[1]) +
                        paren(arg("input", x), arg("weight", w)));
  if (b) {
    if (std::string e = needSameDType(op, "weight", w, "bias", *b); !e.empty())
      return Result::fail(e);
    if (b->shape.size() != 1 || b->shape[0] != w.shape[0])
      return fail(op, "bias shape " + str(b->shape) +
                          " does not match the weight's out-dimension " +
                          num(w.shape[0]) +
                          paren(arg("bias", *b), arg("weight", w)));
  }
  Sig out = x;
  out.shape.back() = w.shape[0];
  return Result::of(out);
}

Result layerNorm(const Sig &x, const Sig &w, const Sig *b, double eps) {
  return norm("layernorm", x, w, b, eps);
}

Result rmsNorm(const Sig &x, const Sig &w, double eps) {
  return norm("rmsnorm", x, w, nullptr, eps);
}

Result attention(const Sig &q, const Sig &k, const Sig &v, const Sig *mask,
                 int64_t heads, int64_t kvHeads) {
  const char *op = "attention";
  if (heads < 1)
    return fail(op, "heads must be positive, got " + num(heads));
  if (kvHeads < 1)
    return fail(op, "kv_heads must be positive, got " + num(kvHeads));
  if (heads % kvHeads != 0)
    return fail(op, "heads " + num(heads) + " is not a multiple of kv_heads " +
                        num(kvHeads));
  const char *layout = "[B, T, heads * head_dim]";
  if (Result r = firstError(
          {needFloat(op, "query", q), needRank(op, "query", q, 3, layout),
           needRank(op, "key", k, 3, "[B, S, kv_heads * head_dim]"),
           needSameDType(op, "query", q, "key", k),
           needSameDType(op, "key", k, "value", v)});
      !r.ok())
    return r;
  if (std::string e = needHeadSplit(op, "query", q, heads); !e.empty())
    return Result::fail(e);
  int64_t headDim = q.shape[2] / heads;
  if (k.shape[0] != q.shape[0])
    return fail(op, "key's batch dimension " + num(k.shape[0]) +
                        " does not match the query's " + num(q.shape[0]) +
                        paren(arg("query", q), arg("key", k)));
  if (k.shape[2] != kvHeads * headDim)
    return fail(op,
                "key's last dimension " + num(k.shape[2]) +
                    " does not match kv_heads * head_dim = " + num(kvHeads) +
                    " * " + num(headDim) + " = " + num(kvHeads * headDim) +
                    paren(arg("query", q), arg("key", k)));
  if (v.shape != k.shape)
    return fail(op, "value shape " + str(v.shape) +
                        " does not match the key's " + str(k.shape) +
                        paren(arg("key", k), arg("value", v)));
  if (mask) {
    if (std::string e = needInteger(op, "mask", *mask); !e.empty())
      return Result::fail(e);
    Shape want{q.shape[0], k.shape[1]};
    if (mask->shape != want)
      return fail(op, "mask must have shape [B, S] = " + str(want) + ", got " +
                          str(mask->shape) + " (query " + str(q) + ", key " +
                          str(k) + ", mask " + str(*mask) + ")");
  }
  return Result::of(q);
}

Result rotary(const Sig &x, const Sig &positions, int64_t heads) {
  const char *op = "rotary";
  if (heads < 1)
    return fail(op, "heads must be positive, got " + num(heads));
  if (Result r =
          firstError({needFloat(op, "input", x),
                      needRank(op, "input", x, 3, "[B, T, heads * head_dim]"),
                      needInteger(op, "positions", positions)});
      !r.ok())
    return r;
  if (std::string e = needHeadSplit(op, "input", x, heads); !e.empty())
    return Result::fail(e);
  int64_t headDim = x.shape[2] / heads;
  if (headDim % 2 != 0)
    return fail(op, "head_dim " + num(headDim) + " must be even (input " +
                        str(x) + ", heads " + num(heads) + ")");
  Shape want{x.shape[1]};
  if (positions.shape != want)
    return fail(op, "positions must have shape [T] = " + str(want) + ", got " +
                        str(positions.shape) +
                        paren(arg("input", x), arg("positions", positions)));
  return Result::of(x);
}

Result unaryFloat(const Sig &x, const char *op) {
  if (std::string e = needFloat(op, "input", x); !e.empty())
    return Result::fail(e);
  return Result::of(x);
}

Result softmax(const Sig &x, int64_t axis) {
  const char *op = "softmax";
  if (Result r = firstError(
          {needFloat(op, "input", x), needNonScalar(op, "input", x)});
      !r.ok())
    return r;
  if (!normalizeAxis(axis, int64_t(x.shape.size())))
    return fail(op, "axis " + num(axis) + " is out of range for rank " +
                        num(int64_t(x.shape.size())) + paren(arg("input", x)));
  return Result::of(x);
}

Result dropout(const Sig &x, double p) {
  const char *op = "dropout";
  if (std::string e = needFloat(op, "input", x); !e.empty())
    return Result::fail(e);
  if (!(p >= 0 && p < 1))
    return fail(op, "p must be in [0, 1), got " + num(p));
  return Result::of(x);
}

Result broadcast(const Sig &a, const Sig &b, const char *op) {
  if (a.dtype != b.dtype)
    return fail(op, std::string("operand dtypes differ: ") + spelling(a.dtype) +
                        " and " + spelling(b.dtype) +
                        paren(arg("lhs", a), arg("rhs", b)));
  // numpy: align from the right; each pair must be equal or contain a 1.
  size_t rank = std::max(a.shape.size(), b.shape.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    size_t ia = a.shape.size(), ib = b.shape.size();
    int64_t da = i < ia ? a.shape[ia - 1 - i] : 1;
    int64_t db = i < ib ? b.shape[ib - 1 - i] : 1;
    if (da != db && da != 1 && db != 1)
      return fail(op, "lhs dimension " + num(da) +
                          " does not match rhs dimension " + num(db) +
                          " and neither is 1" +
                          paren(arg("lhs", a), arg("rhs", b)));
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return Result::of(Sig{a.dtype, out});
}

Result crossEntropy(const Sig &logits, const Sig &targets) {
  const char *op = "cross_entropy";
  if (Result r = firstError({needFloat(op, "logits", logits),
                             needNonScalar(op, "logits", logits),
                             needInteger(op, "targets", targets)});
      !r.ok())
    return r;
  Shape lead(logits.shape.begin(), logits.shape.end() - 1);
  if (targets.shape != lead)
    return fail(op, "targets shape " + str(targets.shape) +
                        " does not match the logits' leading dimensions " +
                        str(lead) +
                        paren(arg("logits", logits), arg("targets", targets)));
  // Low-precision logits still give an f32 loss; f64 logits an f64 one.
  return Result::of(Sig{logits.dtype == DType::F64 ? DType::F64 : DType::F32, {}});
}

Result arange(int64_t n) {
  if (n < 1)
    return fail("arange", "length must be positive, got " + num(n));
  return Result::of(Sig{DType::I32, {n}});
}

Result take(const Sig &x, int64_t index, int64_t axis) {
  const char *op = "take";
  if (std::string e = needNonScalar(op, "input", x); !e.empty())
    return Result::fail(e);
  std::optional<int64_t> ax = normalizeAxis(axis, int64_t(x.shape.size()));
  if (!ax)
    return fail(op, "axis " + num(axis) + " is out of range for rank " +
                        num(int64_t(x.shape.size())) + paren(arg("input", x)));
  int64_t size = x.shape[*ax];
  if (index < -size || index >= size)
    return fail(op, "index " + num(index) + " is out of range for axis " +
                        num(*ax) + " of size " + num(size) +
                        paren(arg("input", x)));
  Sig out = x;
  out.shape.erase(out.shape.begin() + *ax);
  return Result::of(out);
}

Result split(const Sig &x, int64_t parts, int64_t axis) {
  const char *op = "split";
  if (parts < 1)
    return fail(op, "parts must be positive, got " + num(parts));
  if (std::string e = needNonScalar(op, "input", x); !e.empty())
    return Result::fail(e);
  std::optional<int64_t> ax = normalizeAxis(axis, int64_t(x.shape.size()));
  if (!ax)
    return fail(op, "axis " + num(axis) + " is out of range for rank " +
                        num(int64_t(x.shape.size())) + paren(arg("input", x)));
  if (x.shape[*ax] % parts != 0)
    return fail(op, "axis " + num(*ax) + " of size " + num(x.shape[*ax]) +
                        " does not split into " + num(parts) + " equal parts" +
                        paren(arg("input", x)));
  Sig part = x;
  part.shape[*ax] /= parts;
  return {std::vector<Sig>(size_t(parts), part), {}};
}

Result reshape(const Sig &x, const Shape &shape) {
  const char *op = "reshape";
  std::optional<int64_t> have = numElements(x.shape);
  if (!have)
    return fail(op, "the input's element count overflows int64" +
                        paren(arg("input", x)));
  int inferred = -1;
  Shape known;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred >= 0)
        return fail(op, "at most one dimension may be -1, got " + str(shape));
      inferred = int(i);
      continue;
    }
    if (shape[i] < 0)
      return fail(op, "dimension " + num(shape[i]) + " in " + str(shape) +
                          " must be >= 0 or -1");
    known.push_back(shape[i]);
  }
  std::optional<int64_t> want = numElements(known);
  if (!want)
    return fail(op, "the element count of " + str(shape) + " overflows int64");
  Shape out = shape;
  if (inferred >= 0) {
    if (*want == 0 || *have % *want != 0)
      return fail(op, "cannot infer the -1 in " + str(shape) + " from " +
                          num(*have) + " elements" + paren(arg("input", x)));
    out[inferred] = *have / *want;
  } else if (*want != *have) {
    return fail(op, "cannot reshape " + num(*have) + " elements into " +
                        str(shape) + " (" + num(*want) + " elements)" +
                        paren(arg("input", x)));
  }
  return Result::of(Sig{x.dtype, out});
}

Result transpose(const Sig &x, const std::vector<int64_t> &perm) {
  const char *op = "transpose";
  size_t rank = x.shape.size();
  std::vector<bool> seen(rank, false);
  bool ok = perm.size() == rank;
  for (size_t i = 0; ok && i < perm.size(); ++i) {
    ok = perm[i] >= 0 && perm[i] < int64_t(rank) && !seen[perm[i]];
    if (ok)
      seen[perm[i]] = true;
  }
  if (!ok)
    return fail(op, "perm " + str(perm) + " is not a permutation of [0, " +
                        num(int64_t(rank)) + ")" + paren(arg("input", x)));
  Sig out = x;
  for (size_t i = 0; i < rank; ++i)
    out.shape[i] = x.shape[perm[i]];
  return Result::of(out);
}

} // namespace bmb::shapes
