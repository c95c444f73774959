//===- SemaPrimitives.cpp - The primitive ops callable from forward -------===//
//
// Each primitive declares its arguments once (name, kind, default) in the
// table below; a generic binder matches positional and keyword arguments,
// then the primitive's rule from ShapeRules.h checks the tensors and the node
// is added. Attribute names are those of the `bmb` dialect ops.
//
//===----------------------------------------------------------------------===//
#include "lang/SemaInternal.h"

#include <cmath>

using namespace bmb;
using namespace bmb::sema;
using K = Constant::Kind;
using program::kNoValue;

namespace {

enum class ArgKind { Tensor, OptTensor, Int, Float, Bool, Word, IntList };

struct ArgSpec {
  const char *name;
  ArgKind kind;
  bool required;
};

struct PrimitiveSpec {
  const char *name;
  std::vector<ArgSpec> args;
};

const std::vector<PrimitiveSpec> &primitives() {
  using A = ArgKind;
  static const std::vector<PrimitiveSpec> table = {
      {"embedding", {{"ids", A::Tensor, true}, {"w", A::Tensor, true}}},
      {"linear", {{"x", A::Tensor, true}, {"w", A::Tensor, true}, {"b", A::OptTensor, false}}},
      {"lm_head", {{"x", A::Tensor, true}, {"w", A::Tensor, true}, {"b", A::OptTensor, false}}},
      {"layernorm",
       {{"x", A::Tensor, true}, {"w", A::Tensor, true}, {"b", A::OptTensor, false},
        {"eps", A::Float, false}}},
      {"rmsnorm", {{"x", A::Tensor, true}, {"w", A::Tensor, true}, {"eps", A::Float, false}}},
      {"attention",
       {{"q", A::Tensor, true}, {"k", A::Tensor, true}, {"v", A::Tensor, true},
        {"mask", A::OptTensor, false}, {"heads", A::Int, true}, {"kv_heads", A::Int, false},
        {"causal", A::Bool, false}, {"scale", A::Float, false}}},
      {"rotary",
       {{"x", A::Tensor, true}, {"positions", A::Tensor, true}, {"heads", A::Int, true},
        {"base", A::Float, false}}},
      {"gelu", {{"x", A::Tensor, true}, {"approximate", A::Word, false}}},
      {"relu", {{"x", A::Tensor, true}}},
      {"silu", {{"x", A::Tensor, true}}},
      {"tanh", {{"x", A::Tensor, true}}},
      {"activate", {{"x", A::Tensor, true}, {"act", A::Word, true}}},
      {"add", {{"a", A::Tensor, true}, {"b", A::Tensor, true}}},
      {"sub", {{"a", A::Tensor, true}, {"b", A::Tensor, true}}},
      {"mul", {{"a", A::Tensor, true}, {"b", A::Tensor, true}}},
      {"scale", {{"x", A::Tensor, true}, {"factor", A::Float, true}}},
      {"softmax", {{"x", A::Tensor, true}, {"axis", A::Int, false}}},
      {"dropout", {{"x", A::Tensor, true}, {"p", A::Float, true}}},
      {"cross_entropy",
       {{"logits", A::Tensor, true}, {"targets", A::Tensor, true},
        {"ignore_index", A::Int, false}}},
      {"arange", {{"n", A::Int, true}}},
      {"take", {{"x", A::Tensor, true}, {"index", A::Int, true}, {"axis", A::Int, false}}},
      {"split", {{"x", A::Tensor, true}, {"parts", A::Int, true}, {"axis", A::Int, false}}},
      {"reshape", {{"x", A::Tensor, true}, {"shape", A::IntList, true}}},
      {"transpose", {{"x", A::Tensor, true}, {"perm", A::IntList, true}}},
  };
  return table;
}

const PrimitiveSpec *findPrimitive(const std::string &name) {
  for (const PrimitiveSpec &p : primitives())
    if (name == p.name)
      return &p;
  return nullptr;
}

} // namespace

SValue Sema::GraphBuilder::callPrimitive(const std::string &name,
                                         const ast::CallExpr &e, Scope &locals) {
  const PrimitiveSpec *spec = findPrimitive(name);
  if (!spec) {
    std::vector<std::string> names;
    for (const PrimitiveSpec &p : primitives())
      names.push_back(p.name);
    for (const Scope *s = &locals; s; s = s->parent)
      for (const auto &kv : s->names)
        if (kv.second.kind == SValue::Kind::Layer)
          names.push_back(kv.first);
    sema.error(e.callee->loc, "unknown function '" + name + "'" + sema.suggest(name, names));
    return SValue::error();
  }

  // Bind arguments to the spec.
  std::vector<const ast::Arg *> bound(spec->args.size(), nullptr);
  bool ok = true;
  size_t pos = 0;
  for (const ast::Arg &a : e.args) {
    size_t idx = spec->args.size();
    if (a.keyword.empty()) {
      idx = pos++;
      if (idx >= spec->args.size()) {
        sema.error(a.value->loc, std::string("too many arguments for '") + name + "'");
        return SValue::error();
      }
    } else {
      for (size_t i = 0; i < spec->args.size(); ++i)
        if (a.keyword == spec->args[i].name)
          idx = i;
      if (idx == spec->args.size()) {
        std::vector<std::string> names;
        for (const ArgSpec &s : spec->args)
          names.push_back(s.name);
        sema.error(a.keywordLoc, "'" + name + "' has no argument '" + a.keyword + "'" +
                                     sema.suggest(a.keyword, names));
        ok = false;
        continue;
      }
    }
    if (bound[idx]) {
      sema.error(a.keyword.empty() ? a.value->loc : a.keywordLoc,
                 std::string("argument '") + spec->args[idx].name + "' of '" + name +
                     "' is given twice");
      ok = false;
      continue;
    }
    bound[idx] = &a;
  }
  for (size_t i = 0; i < spec->args.size(); ++i)
    if (spec->args[i].required && !bound[i]) {
      sema.error(e.loc, std::string("'") + name + "' needs the argument '" +
                            spec->args[i].name + "'");
      ok = false;
    }
  if (!ok)
    return SValue::error();

  // Evaluate them.
  std::vector<ValueId> tensors(spec->args.size(), kNoValue);
  std::vector<SValue> consts(spec->args.size());
  for (size_t i = 0; i < spec->args.size(); ++i) {
    if (!bound[i])
      continue;
    const ArgSpec &s = spec->args[i];
    const ast::Expr &x = *bound[i]->value;
    SValue v = eval(x, locals);
    if (v.isError()) {
      ok = false;
      continue;
    }
    std::string what = std::string("argument '") + s.name + "' of '" + name + "'";
    switch (s.kind) {
    case ArgKind::OptTensor:
      if (v.kind == SValue::Kind::Absent ||
          (v.kind == SValue::Kind::Const && v.c.kind == K::None))
        continue; // an optional operand switched off, e.g. a bias
      [[fallthrough]];
    case ArgKind::Tensor:
      tensors[i] = asTensor(v, x.loc, what);
      ok &= tensors[i] != kNoValue;
      continue;
    default:
      break;
    }
    if (v.kind != SValue::Kind::Const) {
      sema.error(x.loc, what + " must be known at compile time, got " + describe(v));
      ok = false;
      continue;
    }
    Constant &c = v.c;
    bool good = true;
    switch (s.kind) {
    case ArgKind::Int:
      good = c.kind == K::Int;
      break;
    case ArgKind::Float:
      if (c.kind == K::Int)
        c = Constant::ofFloat(static_cast<double>(c.i));
      good = c.kind == K::Float;
      break;
    case ArgKind::Bool:
      good = c.kind == K::Bool;
      break;
    case ArgKind::Word:
      good = c.kind == K::Enum || c.kind == K::None;
      if (c.kind == K::None)
        c = Constant::ofEnum("none");
      break;
    case ArgKind::IntList:
      good = c.kind == K::List || c.kind == K::Tuple;
      for (const Constant &el : c.elements)
        good &= el.kind == K::Int;
      break;
    default:
      break;
    }
    if (!good) {
      static const char *kinds[] = {"a tensor", "a tensor", "an integer", "a number",
                                    "a bool",   "a name",   "a list of integers"};
      sema.error(x.loc, what + " must be " + kinds[static_cast<int>(s.kind)] + ", got " +
                            describe(v));
      ok = false;
      continue;
    }
    consts[i] = v;
  }
  if (!ok)
    return SValue::error();

  auto sig = [&](size_t i) -> const Sig & { return sigOf(tensors[i]); };
  auto opt = [&](size_t i) -> const Sig * {
    return tensors[i] == kNoValue ? nullptr : &sigOf(tensors[i]);
  };
  auto has = [&](size_t i) { return bound[i] != nullptr && !consts[i].isError(); };
  auto i64 = [&](size_t i, int64_t d) { return has(i) ? consts[i].c.i : d; };
  auto f64 = [&](size_t i, double d) { return has(i) ? consts[i].c.f : d; };
  auto word = [&](size_t i, const char *d) {
    return has(i) ? consts[i].c.s : std::string(d);
  };
  auto list = [&](size_t i) {
    std::vector<int64_t> out;
    for (const Constant &el : consts[i].c.elements)
      out.push_back(el.i);
    return out;
  };
  auto optOperands = [&](std::initializer_list<size_t> idx) {
    std::vector<ValueId> out;
    for (size_t i : idx)
      out.push_back(tensors[i]);
    return out;
  };
  using C = Constant;
  Loc loc = e.loc;
  std::string n = name;

  if (n == "embedding")
    return addNode(n, optOperands({0, 1}), shapes::embedding(sig(0), sig(1)), loc);
  if (n == "linear" || n == "lm_head")
    return addNode(n, optOperands({0, 1, 2}),
                   shapes::linear(sig(0), sig(1), opt(2), n.c_str()), loc);
  if (n == "layernorm") {
    double eps = f64(3, 1e-5);
    return addNode(n, optOperands({0, 1, 2}), shapes::layerNorm(sig(0), sig(1), opt(2), eps),
                   loc, {{"eps", C::ofFloat(eps)}});
  }
  if (n == "rmsnorm") {
    double eps = f64(2, 1e-6);
    return addNode(n, optOperands({0, 1}), shapes::rmsNorm(sig(0), sig(1), eps), loc,
                   {{"eps", C::ofFloat(eps)}});
  }
  if (n == "attention") {
    int64_t heads = i64(4, 0), kvHeads = i64(5, heads);
    shapes::Result r = shapes::attention(sig(0), sig(1), sig(2), opt(3), heads, kvHeads);
    if (!r.ok())
      return addNode(n, {}, r, loc);
    int64_t headDim = sig(0).shape.back() / heads;
    double scale = f64(7, 1.0 / std::sqrt(static_cast<double>(headDim)));
    return addNode(n, optOperands({0, 1, 2, 3}), r, loc,
                   {{"heads", C::ofInt(heads)},
                    {"kv_heads", C::ofInt(kvHeads)},
                    {"causal", C::ofBool(has(6) && consts[6].c.b)},
                    {"scale", C::ofFloat(scale)}});
  }
  if (n == "rotary") {
    int64_t heads = i64(2, 0);
    double base = f64(3, 10000.0);
    if (!(base > 1.0)) {
      sema.error(bound[3]->value->loc, "rotary base must be greater than 1");
      return SValue::error();
    }
    return addNode(n, optOperands({0, 1}), shapes::rotary(sig(0), sig(1), heads), loc,
                   {{"heads", C::ofInt(heads)}, {"base", C::ofFloat(base)}});
  }
  if (n == "activate") {
    std::string act = word(1, "");
    if (act == "gelu" || act == "gelu_tanh")
      return addNode("gelu", optOperands({0}), shapes::unaryFloat(sig(0), "gelu"), loc,
                     {{"approximate", C::ofEnum(act == "gelu" ? "none" : "tanh")}});
    if (act == "relu" || act == "silu" || act == "tanh")
      return addNode(act, optOperands({0}), shapes::unaryFloat(sig(0), act.c_str()), loc);
    sema.error(bound[1]->value->loc,
               "activate() takes gelu, gelu_tanh, relu, silu or tanh, got '" + act + "'" +
                   (act == "swiglu" ? " (swiglu gates two projections; see MLP in stdlib/nn.bmb)"
                                    : ""));
    return SValue::error();
  }
  if (n == "gelu") {
    std::string approx = word(1, "none");
    if (approx != "none" && approx != "tanh") {
      sema.error(bound[1]->value->loc, "gelu's approximate is none or tanh, got '" + approx + "'");
      return SValue::error();
    }
    return addNode(n, optOperands({0}), shapes::unaryFloat(sig(0), "gelu"), loc,
                   {{"approximate", C::ofEnum(approx)}});
  }
  if (n == "relu" || n == "silu" || n == "tanh")
    return addNode(n, optOperands({0}), shapes::unaryFloat(sig(0), n.c_str()), loc);
  if (n == "add" || n == "sub" || n == "mul")
    return addNode(n, optOperands({0, 1}), shapes::broadcast(sig(0), sig(1), n.c_str()), loc);
  if (n == "scale")
    return addNode(n, optOperands({0}), shapes::unaryFloat(sig(0), "scale"), loc,
                   {{"factor", C::ofFloat(f64(1, 1.0))}});
  if (n == "softmax") {
    int64_t axis = i64(1, -1);
    return addNode(n, optOperands({0}), shapes::softmax(sig(0), axis), loc,
                   {{"axis", C::ofInt(axis)}});
  }
  if (n == "dropout") {
    double p = f64(1, 0.0);
    return addNode(n, optOperands({0}), shapes::dropout(sig(0), p), loc,
                   {{"p", C::ofFloat(p)}});
  }
  if (n == "cross_entropy")
    return addNode(n, optOperands({0, 1}), shapes::crossEntropy(sig(0), sig(1)), loc,
                   {{"ignore_index", C::ofInt(i64(2, -100))}});
  if (n == "arange")
    return addNode(n, {}, shapes::arange(i64(0, 0)), loc);
  if (n == "take") {
    int64_t index = i64(1, 0), axis = i64(2, 0);
    return addNode(n, optOperands({0}), shapes::take(sig(0), index, axis), loc,
                   {{"index", C::ofInt(index)}, {"axis", C::ofInt(axis)}});
  }
  if (n == "split") {
    int64_t parts = i64(1, 1), axis = i64(2, -1);
    return addNode(n, optOperands({0}), shapes::split(sig(0), parts, axis), loc,
                   {{"axis", C::ofInt(axis)}});
  }
  if (n == "reshape") {
    shapes::Result r = shapes::reshape(sig(0), list(1));
    return addNode(n, optOperands({0}), r, loc);
  }
  if (n == "transpose") {
    std::vector<int64_t> perm = list(1);
    Constant p;
    p.kind = K::List;
    for (int64_t v : perm)
      p.elements.push_back(C::ofInt(v));
    return addNode(n, optOperands({0}), shapes::transpose(sig(0), perm), loc,
                   {{"perm", p}});
  }
  sema.error(loc, "internal error: primitive '" + n + "' has no rule");
  return SValue::error();
}
