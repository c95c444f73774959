//===- SemaExpr.cpp - Compile-time expressions ----------------------------===//
//
// Hyperparameters, shapes, conditions and job settings are evaluated here.
// Integer arithmetic is checked for overflow and division by zero; `/` of
// two integers stays an integer when it divides exactly (so `dim / heads` is
// a dimension) and becomes a float otherwise. (`//` starts a comment, so there
// is no floor-division operator.)
//
//===----------------------------------------------------------------------===//
#include "lang/SemaInternal.h"

#include <cmath>
#include <set>

using namespace bmb;
using namespace bmb::sema;
using llvm::cast;
using llvm::dyn_cast;

namespace {
using K = Constant::Kind;

// Words that name an enum value wherever a name is not otherwise bound:
// activations, dtypes, GELU approximations, tokenizers, targets, precisions,
// samplers and the like. Job schemas check which ones each setting accepts.
const std::set<std::string> &enumWords() {
  static const std::set<std::string> words = {
      // activations and their approximations
      "gelu", "gelu_tanh", "relu", "silu", "swiglu", "tanh", "erf", "none",
      // dtypes
      "f32", "f64", "f16", "bf16", "i8", "i32", "i64", "int8", "fp32", "fp16",
      // parameter initializers without arguments
      "zeros", "ones",
      // tokenizers, targets, offload, quantization, misc job words
      "gpt2", "bert", "byte", "llama", "sentencepiece", "wordpiece", "host",
      "cuda", "optimizer", "params", "auto", "greedy", "linear", "qat", "ptq",
      "heads", "layers", "unstructured", "sequential", "random", "all",
      "causal_lm", "masked_lm",
  };
  return words;
}
} // namespace

bool Sema::isEnumWord(const std::string &name) const {
  return enumWords().count(name) != 0;
}

std::string Sema::describe(const SValue &v) {
  switch (v.kind) {
  case SValue::Kind::Error:
    return "an invalid value";
  case SValue::Kind::Tensor:
    return "a tensor";
  case SValue::Kind::Param:
    return "a parameter";
  case SValue::Kind::Layer:
    return "a layer";
  case SValue::Kind::Tuple:
    return "several tensors";
  case SValue::Kind::Absent:
    return "a member that is switched off";
  case SValue::Kind::Const:
    break;
  }
  switch (v.c.kind) {
  case K::None:
    return "none";
  case K::Int:
    return "an integer";
  case K::Float:
    return "a float";
  case K::Bool:
    return "a bool";
  case K::String:
    return "a string";
  case K::Enum:
    return "the name '" + v.c.s + "'";
  case K::List:
    return "a list";
  case K::Tuple:
    return "a tuple";
  case K::Call:
    return "'" + v.c.s + "(...)'";
  case K::Pair:
    return "a pair";
  }
  return "a value";
}

static bool isNumber(const SValue &v) {
  return v.kind == SValue::Kind::Const &&
         (v.c.kind == K::Int || v.c.kind == K::Float);
}
static double asDouble(const Constant &c) {
  return c.kind == K::Int ? static_cast<double>(c.i) : c.f;
}

SValue Sema::evalBinaryConst(const ast::BinaryExpr &e, const SValue &a,
                             const SValue &b) {
  using ast::BinaryOp;
  const char *op = ast::spelling(e.op);
  if (a.isError() || b.isError())
    return SValue::error();
  auto fail = [&](const std::string &msg) {
    error(e.loc, msg);
    return SValue::error();
  };
  if (a.kind != SValue::Kind::Const || b.kind != SValue::Kind::Const)
    return fail(std::string("operator '") + op + "' needs two constants here, got " +
                describe(a) + " and " + describe(b));
  const Constant &x = a.c, &y = b.c;

  if (e.op == BinaryOp::And || e.op == BinaryOp::Or) {
    if (x.kind != K::Bool || y.kind != K::Bool)
      return fail(std::string("operator '") + op + "' needs two bools, got " +
                  describe(a) + " and " + describe(b));
    return SValue::constant(Constant::ofBool(e.op == BinaryOp::And ? (x.b && y.b)
                                                                   : (x.b || y.b)));
  }
  if (e.op == BinaryOp::Eq || e.op == BinaryOp::Ne) {
    bool eq;
    if (isNumber(a) && isNumber(b))
      eq = asDouble(x) == asDouble(y);
    else if (x.kind == y.kind && (x.kind == K::Bool || x.kind == K::String ||
                                  x.kind == K::Enum || x.kind == K::None))
      eq = x.kind == K::Bool ? x.b == y.b : x.s == y.s;
    else if ((x.kind == K::None) != (y.kind == K::None))
      eq = false;
    else
      return fail(std::string("cannot compare ") + describe(a) + " with " + describe(b));
    return SValue::constant(Constant::ofBool(e.op == BinaryOp::Eq ? eq : !eq));
  }
  if (e.op == BinaryOp::Lt || e.op == BinaryOp::Le || e.op == BinaryOp::Gt ||
      e.op == BinaryOp::Ge) {
    if (!isNumber(a) || !isNumber(b))
      return fail(std::string("operator '") + op + "' needs two numbers, got " +
                  describe(a) + " and " + describe(b));
    double l = asDouble(x), r = asDouble(y);
    bool v = e.op == BinaryOp::Lt   ? l < r
             : e.op == BinaryOp::Le ? l <= r
             : e.op == BinaryOp::Gt ? l > r
                                    : l >= r;
    return SValue::constant(Constant::ofBool(v));
  }
  if (e.op == BinaryOp::Add && x.kind == K::String && y.kind == K::String)
    return SValue::constant(Constant::ofString(x.s + y.s));
  if (!isNumber(a) || !isNumber(b))
    return fail(std::string("operator '") + op + "' needs two numbers, got " +
                describe(a) + " and " + describe(b));

  if (x.kind == K::Int && y.kind == K::Int) {
    int64_t l = x.i, r = y.i, out = 0;
    bool overflow = false;
    switch (e.op) {
    case BinaryOp::Add:
      overflow = __builtin_add_overflow(l, r, &out);
      break;
    case BinaryOp::Sub:
      overflow = __builtin_sub_overflow(l, r, &out);
      break;
    case BinaryOp::Mul:
      overflow = __builtin_mul_overflow(l, r, &out);
      break;
    case BinaryOp::Div:
    case BinaryOp::Mod:
      if (r == 0)
        return fail("division by zero: " + std::to_string(l) + " " + op + " 0");
      if (l == INT64_MIN && r == -1)
        return fail("integer overflow in " + std::to_string(l) + " " + op + " -1");
      if (e.op == BinaryOp::Div && l % r != 0)
        return SValue::constant(
            Constant::ofFloat(static_cast<double>(l) / static_cast<double>(r)));
      if (e.op == BinaryOp::Mod) {
        out = l % r;
        if (out != 0 && ((out < 0) != (r < 0)))
          out += r; // Python-style modulo: the sign of the divisor
      } else {
        out = l / r;
        if ((l % r != 0) && ((l < 0) != (r < 0)))
          --out; // floor, not truncation
      }
      break;
    default:
      return fail(std::string("operator '") + op + "' is not defined on integers");
    }
    if (overflow)
      return fail("integer overflow in " + std::to_string(l) + " " + op + " " +
                  std::to_string(r));
    return SValue::constant(Constant::ofInt(out));
  }

  double l = asDouble(x), r = asDouble(y), out = 0;
  switch (e.op) {
  case BinaryOp::Add:
    out = l + r;
    break;
  case BinaryOp::Sub:
    out = l - r;
    break;
  case BinaryOp::Mul:
    out = l * r;
    break;
  case BinaryOp::Div:
    if (r == 0)
      return fail("division by zero");
    out = l / r;
    break;
  case BinaryOp::Mod:
    if (r == 0)
      return fail("division by zero");
    out = l - r * std::floor(l / r);
    break;
  default:
    return fail(std::string("operator '") + op + "' is not defined on floats");
  }
  if (!std::isfinite(out))
    return fail("the result of this arithmetic is not a finite number");
  return SValue::constant(Constant::ofFloat(out));
}

SValue Sema::evalConst(const ast::Expr &e, const Scope &scope, bool enumContext) {
  switch (e.getKind()) {
  case ast::Expr::Kind::Int:
    return SValue::constant(Constant::ofInt(cast<ast::IntExpr>(e).value));
  case ast::Expr::Kind::Float:
    return SValue::constant(Constant::ofFloat(cast<ast::FloatExpr>(e).value));
  case ast::Expr::Kind::String:
    return SValue::constant(Constant::ofString(cast<ast::StringExpr>(e).value));
  case ast::Expr::Kind::Bool:
    return SValue::constant(Constant::ofBool(cast<ast::BoolExpr>(e).value));
  case ast::Expr::Kind::Name: {
    const auto &n = cast<ast::NameExpr>(e);
    if (const SValue *v = scope.lookup(n.name))
      return *v;
    if (enumContext || isEnumWord(n.name)) {
      if (n.name == "none")
        return SValue::constant(Constant::none());
      Constant c = Constant::ofEnum(n.name);
      c.loc = n.loc;
      return SValue::constant(c);
    }
    std::vector<std::string> candidates;
    for (const Scope *s = &scope; s; s = s->parent)
      for (const auto &kv : s->names)
        candidates.push_back(kv.first);
    error(n.loc, "unknown name '" + n.name + "'" + suggest(n.name, candidates));
    return SValue::error();
  }
  case ast::Expr::Kind::Member: {
    const auto &m = cast<ast::MemberExpr>(e);
    SValue base = evalConst(*m.base, scope, false);
    if (base.isError())
      return base;
    if (base.kind != SValue::Kind::Layer) {
      error(m.memberLoc, "'." + m.member + "' needs a layer on its left, got " +
                             describe(base));
      return SValue::error();
    }
    const LayerInstance *inst = base.layer;
    for (const auto &p : inst->params)
      if (p.name == m.member) {
        SValue v;
        v.kind = SValue::Kind::Param;
        v.path = inst->path.empty() ? p.name : inst->path + "." + p.name;
        v.sig = p.sig;
        v.loc = p.loc;
        auto st = states.find(inst);
        v.repeatDepth = st == states.end() ? 0 : st->second.repeatDepth;
        return v;
      }
    for (const auto &c : inst->children)
      if (c->name == m.member) {
        SValue v;
        v.kind = SValue::Kind::Layer;
        v.layer = c.get();
        return v;
      }
    // A member that exists in the declaration but is switched off by `if`.
    auto st = states.find(inst);
    if (st != states.end() && st->second.scope)
      if (const SValue *v = st->second.scope->lookup(m.member);
          v && v->kind == SValue::Kind::Absent) {
        error(m.memberLoc, "'" + m.member + "' of '" + inst->name +
                               "' is switched off by its 'if' condition");
        return SValue::error();
      }
    std::vector<std::string> names;
    for (const auto &p : inst->params)
      names.push_back(p.name);
    for (const auto &c : inst->children)
      names.push_back(c->name);
    error(m.memberLoc, "layer '" + inst->name + "' (" + inst->layerName +
                           ") has no parameter or sub-layer '" + m.member + "'" +
                           suggest(m.member, names));
    return SValue::error();
  }
  case ast::Expr::Kind::Unary: {
    const auto &u = cast<ast::UnaryExpr>(e);
    SValue v = evalConst(*u.operand, scope, enumContext);
    if (v.isError())
      return v;
    if (u.op == ast::UnaryOp::Not) {
      if (v.kind != SValue::Kind::Const || v.c.kind != K::Bool) {
        error(u.loc, "'not' needs a bool, got " + describe(v));
        return SValue::error();
      }
      return SValue::constant(Constant::ofBool(!v.c.b));
    }
    if (v.kind == SValue::Kind::Const && v.c.kind == K::Int) {
      if (v.c.i == INT64_MIN) {
        error(u.loc, "integer overflow in negation");
        return SValue::error();
      }
      return SValue::constant(Constant::ofInt(-v.c.i));
    }
    if (v.kind == SValue::Kind::Const && v.c.kind == K::Float)
      return SValue::constant(Constant::ofFloat(-v.c.f));
    error(u.loc, "'-' needs a number here, got " + describe(v));
    return SValue::error();
  }
  case ast::Expr::Kind::Binary: {
    const auto &b = cast<ast::BinaryExpr>(e);
    SValue l = evalConst(*b.lhs, scope, enumContext);
    // Short-circuit so `x > 0 and 10 / x > 1` is safe.
    if (!l.isError() && l.kind == SValue::Kind::Const && l.c.kind == K::Bool &&
        ((b.op == ast::BinaryOp::And && !l.c.b) || (b.op == ast::BinaryOp::Or && l.c.b)))
      return l;
    SValue r = evalConst(*b.rhs, scope, enumContext);
    return evalBinaryConst(b, l, r);
  }
  case ast::Expr::Kind::List:
  case ast::Expr::Kind::Tuple: {
    bool isList = e.getKind() == ast::Expr::Kind::List;
    const auto &elems = isList ? cast<ast::ListExpr>(e).elements
                               : cast<ast::TupleExpr>(e).elements;
    Constant c;
    c.kind = isList ? K::List : K::Tuple;
    c.loc = e.loc;
    bool ok = true;
    for (const ast::ExprPtr &x : elems) {
      SValue v = evalConst(*x, scope, enumContext);
      if (v.isError()) {
        ok = false;
        continue;
      }
      if (v.kind != SValue::Kind::Const) {
        error(x->loc, "a list or tuple here holds constants, got " + describe(v));
        ok = false;
        continue;
      }
      c.elements.push_back(v.c);
    }
    return ok ? SValue::constant(c) : SValue::error();
  }
  case ast::Expr::Kind::Pair: {
    const auto &p = cast<ast::PairExpr>(e);
    SValue a = evalConst(*p.first, scope, enumContext);
    SValue b = evalConst(*p.second, scope, enumContext);
    if (a.isError() || b.isError())
      return SValue::error();
    if (a.kind != SValue::Kind::Const || b.kind != SValue::Kind::Const) {
      error(p.loc, "both sides of a pair must be constants");
      return SValue::error();
    }
    Constant c;
    c.kind = K::Pair;
    c.s = p.sep == ast::PairSep::Arrow ? "->" : ":";
    c.elements = {a.c, b.c};
    c.loc = p.loc;
    return SValue::constant(c);
  }
  case ast::Expr::Kind::Cond: {
    const auto &c = cast<ast::CondExpr>(e);
    std::optional<bool> cond = evalBool(*c.cond, scope, "an 'if' condition");
    if (!cond)
      return SValue::error();
    if (*cond)
      return evalConst(*c.value, scope, enumContext);
    if (c.elseValue)
      return evalConst(*c.elseValue, scope, enumContext);
    return SValue::constant(Constant::none());
  }
  case ast::Expr::Kind::Call: {
    // A configuration call: adamw(lr = 1e-3), normal(0.02), text("x.txt").
    const auto &call = cast<ast::CallExpr>(e);
    const auto *callee = dyn_cast<ast::NameExpr>(call.callee.get());
    if (!callee) {
      error(call.callee->loc, "only a plain name can be called here");
      return SValue::error();
    }
    if (lookupGlobal(callee->name)) {
      error(call.loc, "'" + callee->name +
                          "' is a layer: layers are instantiated as members of a "
                          "layer (name = " + callee->name + "(...))");
      return SValue::error();
    }
    Constant c;
    c.kind = K::Call;
    c.s = callee->name;
    c.loc = call.loc;
    bool ok = true;
    for (const ast::Arg &arg : call.args) {
      SValue v = evalConst(*arg.value, scope, true);
      if (v.isError()) {
        ok = false;
        continue;
      }
      if (v.kind != SValue::Kind::Const) {
        error(arg.value->loc, "arguments here must be constants, got " + describe(v));
        ok = false;
        continue;
      }
      v.c.loc = arg.value->loc;
      if (arg.keyword.empty())
        c.elements.push_back(v.c);
      else {
        for (const auto &kv : c.keywords)
          if (kv.first == arg.keyword) {
            error(arg.keywordLoc, "argument '" + arg.keyword + "' is given twice");
            ok = false;
          }
        c.keywords.emplace_back(arg.keyword, v.c);
      }
    }
    return ok ? SValue::constant(c) : SValue::error();
  }
  case ast::Expr::Kind::Ellipsis:
    error(e.loc, "'...' is only allowed as a dimension of a forward input or result");
    return SValue::error();
  case ast::Expr::Kind::Repeat:
    error(e.loc, "'repeat' is only allowed as a layer member (name = repeat(n) Layer(...))");
    return SValue::error();
  }
  return SValue::error();
}

std::optional<int64_t> Sema::evalInt(const ast::Expr &e, const Scope &scope,
                                     const char *what) {
  SValue v = evalConst(e, scope);
  if (v.isError())
    return std::nullopt;
  if (v.kind == SValue::Kind::Const && v.c.kind == K::Int)
    return v.c.i;
  if (v.kind == SValue::Kind::Const && v.c.kind == K::Float)
    error(e.loc, std::string(what) + " must be an integer, got " + v.c.str());
  else
    error(e.loc, std::string(what) + " must be an integer, got " + describe(v));
  return std::nullopt;
}

std::optional<bool> Sema::evalBool(const ast::Expr &e, const Scope &scope,
                                   const char *what) {
  SValue v = evalConst(e, scope);
  if (v.isError())
    return std::nullopt;
  if (v.kind == SValue::Kind::Const && v.c.kind == K::Bool)
    return v.c.b;
  error(e.loc, std::string(what) + " must be a bool known at compile time, got " +
                   describe(v));
  return std::nullopt;
}
