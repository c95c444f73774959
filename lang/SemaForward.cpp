//===- SemaForward.cpp - Forward bodies into typed graphs -----------------===//
//
// A forward body is straight-line dataflow once its compile-time `if`s are
// resolved. It is elaborated when its instance is first called, because
// input shapes come from the caller (`Linear` works on [..., in]); later
// calls of the same instance must agree. Every primitive's shape rule comes
// from dialects/Bmb/ShapeRules.h, the same code the op verifiers run.
//
//===----------------------------------------------------------------------===//
#include "lang/SemaInternal.h"

#include <algorithm>
#include <cmath>

using namespace bmb;
using namespace bmb::sema;
using llvm::cast;
using llvm::dyn_cast;
using K = Constant::Kind;
using program::kNoValue;


SValue Sema::GraphBuilder::eval(const ast::Expr &e, Scope &locals) {
  switch (e.getKind()) {
  case ast::Expr::Kind::Binary:
    return evalBinary(cast<ast::BinaryExpr>(e), locals);
  case ast::Expr::Kind::Call:
    return evalCall(cast<ast::CallExpr>(e), locals);
  case ast::Expr::Kind::Unary: {
    const auto &u = cast<ast::UnaryExpr>(e);
    SValue v = eval(*u.operand, locals);
    if (u.op == ast::UnaryOp::Neg &&
        (v.kind == SValue::Kind::Tensor || v.kind == SValue::Kind::Param)) {
      ValueId x = asTensor(v, u.operand->loc, "the operand of '-'");
      if (x == kNoValue)
        return SValue::error();
      return addNode("scale", {x}, shapes::unaryFloat(sigOf(x), "scale"), u.loc,
                     {{"factor", Constant::ofFloat(-1.0)}});
    }
    return sema.evalConst(e, locals);
  }
  case ast::Expr::Kind::Cond: {
    const auto &c = cast<ast::CondExpr>(e);
    std::optional<bool> cond = sema.evalBool(*c.cond, locals, "an 'if' condition");
    if (!cond)
      return SValue::error();
    if (*cond)
      return eval(*c.value, locals);
    if (c.elseValue)
      return eval(*c.elseValue, locals);
    return SValue::constant(Constant::none());
  }
  case ast::Expr::Kind::Repeat:
    sema.error(e.loc, "'repeat' creates layers; use it as a member of the layer "
                      "(name = repeat(n) Layer(...)), not inside forward");
    return SValue::error();
  default:
    // Names, members, literals, lists: the constant evaluator resolves them
    // through `locals`, returning tensors and layers as they are bound.
    return sema.evalConst(e, locals);
  }
}

SValue Sema::GraphBuilder::evalBinary(const ast::BinaryExpr &e, Scope &locals) {
  SValue a = eval(*e.lhs, locals);
  SValue b = eval(*e.rhs, locals);
  if (a.isError() || b.isError())
    return SValue::error();
  if (a.kind == SValue::Kind::Absent || b.kind == SValue::Kind::Absent) {
    bool left = a.kind == SValue::Kind::Absent;
    asTensor(left ? a : b, left ? e.lhs->loc : e.rhs->loc, "an operand"); // reports why
    return SValue::error();
  }
  auto isTensor = [](const SValue &v) {
    return v.kind == SValue::Kind::Tensor || v.kind == SValue::Kind::Param;
  };
  auto isNum = [](const SValue &v) {
    return v.kind == SValue::Kind::Const && (v.c.kind == K::Int || v.c.kind == K::Float);
  };
  auto num = [](const SValue &v) {
    return v.c.kind == K::Int ? static_cast<double>(v.c.i) : v.c.f;
  };
  if (!isTensor(a) && !isTensor(b))
    return sema.evalBinaryConst(e, a, b);

  using ast::BinaryOp;
  const char *op = ast::spelling(e.op);
  if (isTensor(a) && isTensor(b) &&
      (e.op == BinaryOp::Add || e.op == BinaryOp::Sub || e.op == BinaryOp::Mul)) {
    ValueId x = asTensor(a, e.lhs->loc, "the left operand");
    ValueId y = asTensor(b, e.rhs->loc, "the right operand");
    if (x == kNoValue || y == kNoValue)
      return SValue::error();
    const char *name = e.op == BinaryOp::Add ? "add" : e.op == BinaryOp::Sub ? "sub" : "mul";
    return addNode(name, {x, y}, shapes::broadcast(sigOf(x), sigOf(y), name), e.loc);
  }
  // tensor * c, c * tensor, tensor / c: a scale.
  if ((e.op == BinaryOp::Mul && (isNum(a) || isNum(b))) ||
      (e.op == BinaryOp::Div && isTensor(a) && isNum(b))) {
    const SValue &t = isTensor(a) ? a : b;
    const SValue &c = isTensor(a) ? b : a;
    double factor = num(c);
    if (e.op == BinaryOp::Div) {
      if (factor == 0) {
        sema.error(e.rhs->loc, "division of a tensor by zero");
        return SValue::error();
      }
      factor = 1.0 / factor;
    }
    ValueId x = asTensor(t, e.loc, "the tensor operand");
    if (x == kNoValue)
      return SValue::error();
    return addNode("scale", {x}, shapes::unaryFloat(sigOf(x), "scale"), e.loc,
                   {{"factor", Constant::ofFloat(factor)}});
  }
  sema.error(e.loc, std::string("operator '") + op + "' is not defined between " +
                        describe(a) + " and " + describe(b) +
                        (isNum(a) || isNum(b)
                             ? " (tensors combine with numbers only by * and /)"
                             : ""));
  return SValue::error();
}

SValue Sema::GraphBuilder::evalCall(const ast::CallExpr &e, Scope &locals) {
  // A sub-layer (`ln1(x)`, `bert.word(x)`) or a primitive (`linear(x, w, b)`).
  std::string name;
  if (const auto *n = dyn_cast<ast::NameExpr>(e.callee.get())) {
    name = n->name;
    if (!locals.lookup(name)) {
      if (sema.lookupGlobal(name)) {
        sema.error(e.loc, "'" + name + "' is a layer: instantiate it as a member "
                          "(m = " + name + "(...)) and call the member in forward");
        return SValue::error();
      }
      return callPrimitive(name, e, locals);
    }
  }
  if (const auto *m = dyn_cast<ast::MemberExpr>(e.callee.get())) {
    // Layer regions nest like the instance tree, so a layer calls only its
    // own members; `enc.emb(x)` would skip `enc`.
    sema.error(m->memberLoc, "'" + m->member + "' is a member of another layer; a forward "
                             "calls only its own members (call it inside that layer's forward)");
    return SValue::error();
  }
  SValue callee = sema.evalConst(*e.callee, locals);
  if (callee.isError())
    return callee;
  if (callee.kind == SValue::Kind::Absent) {
    sema.error(e.callee->loc, "'" + callee.path + "' is switched off by its 'if' condition")
        .note(callee.loc, "declared here");
    return SValue::error();
  }
  if (callee.kind != SValue::Kind::Layer) {
    sema.error(e.callee->loc, "only layers and primitives can be called; this is " +
                                  describe(callee));
    return SValue::error();
  }
  return callLayer(*callee.layer, e, locals);
}

SValue Sema::GraphBuilder::callLayer(LayerInstance &child, const ast::CallExpr &e,
                                     Scope &locals) {
  std::vector<ValueId> operands;
  std::vector<Sig> sigs;
  std::vector<Loc> argLocs;
  bool ok = true;
  for (const ast::Arg &a : e.args) {
    if (!a.keyword.empty()) {
      sema.error(a.keywordLoc, "forward takes tensors by position; '" + a.keyword +
                                   "=' is not allowed when calling a layer");
      ok = false;
      continue;
    }
    ValueId v = asTensor(eval(*a.value, locals), a.value->loc, "an input of a layer");
    if (v == kNoValue) {
      ok = false;
      continue;
    }
    operands.push_back(v);
    sigs.push_back(sigOf(v));
    argLocs.push_back(a.value->loc);
  }
  if (!ok)
    return SValue::error();
  std::optional<std::vector<Sig>> outs = sema.elaborateForward(child, sigs, e.loc, argLocs);
  if (!outs)
    return SValue::error();
  shapes::Result r;
  r.results = *outs;
  SValue v = addNode("call", operands, r, e.loc);
  g.nodes.back().callee = &child;
  return v;
}

bool Sema::GraphBuilder::run(const std::vector<ast::StmtPtr> &body, Scope &locals,
                             bool &returned) {
  bool ok = true;
  bool returnedHere = false; // a `return` of this very block ran
  for (const ast::StmtPtr &stmt : body) {
    if (sema.diags.tooManyErrors())
      return false;
    if (returnedHere) {
      sema.error(stmt->loc, "this statement comes after 'return' and never runs");
      return false;
    }
    // A compile-time `if` that returned: the rest is dead for this
    // instantiation only (`if swiglu { return ... }  return ...`).
    if (returned)
      return ok;
    if (const auto *a = dyn_cast<ast::AssignStmt>(stmt.get())) {
      SValue v = eval(*a->value, locals);
      for (size_t i = 0; i < a->targets.size(); ++i) {
        const std::string &t = a->targets[i];
        const SValue *old = locals.lookup(t);
        bool isLocal = locals.names.count(t) != 0;
        if (old && !isLocal) {
          sema.error(a->targetLocs[i], "cannot assign to '" + t + "': it is " +
                                           describe(*old) + " of " + where());
          ok = false;
        }
      }
      if (v.isError()) {
        for (const std::string &t : a->targets)
          locals.names[t] = SValue::error();
        ok = false;
        continue;
      }
      if (a->targets.size() == 1) {
        if (v.kind == SValue::Kind::Tuple) {
          sema.error(a->value->loc, "this gives " + std::to_string(v.elems.size()) +
                                        " tensors; unpack them (a, b = ...)");
          locals.names[a->targets[0]] = SValue::error();
          ok = false;
          continue;
        }
        if (v.kind == SValue::Kind::Layer) {
          sema.error(a->value->loc, "a local name cannot refer to a layer; call it instead");
          locals.names[a->targets[0]] = SValue::error();
          ok = false;
          continue;
        }
        locals.names[a->targets[0]] = v;
        continue;
      }
      if (v.kind != SValue::Kind::Tuple || v.elems.size() != a->targets.size()) {
        sema.error(a->value->loc,
                   "cannot unpack " + describe(v) +
                       (v.kind == SValue::Kind::Tuple
                            ? " (" + std::to_string(v.elems.size()) + " of them)"
                            : std::string()) +
                       " into " + std::to_string(a->targets.size()) + " names");
        for (const std::string &t : a->targets)
          locals.names[t] = SValue::error();
        ok = false;
        continue;
      }
      for (size_t i = 0; i < a->targets.size(); ++i)
        locals.names[a->targets[i]] = v.elems[i];
      continue;
    }
    if (const auto *r = dyn_cast<ast::ReturnStmt>(stmt.get())) {
      returned = returnedHere = true;
      for (const ast::ExprPtr &x : r->values) {
        SValue v = eval(*x, locals);
        if (v.kind == SValue::Kind::Tuple && r->values.size() == 1) {
          for (const SValue &el : v.elems)
            g.outputs.push_back(el.v);
          continue;
        }
        ValueId id = asTensor(v, x->loc, "a returned value");
        if (id == kNoValue) {
          ok = false;
          continue;
        }
        g.outputs.push_back(id);
      }
      continue;
    }
    const auto &i = cast<ast::IfStmt>(*stmt);
    std::optional<bool> cond = sema.evalBool(*i.cond, locals, "an 'if' condition in forward");
    if (!cond)
      return false;
    ok &= run(*cond ? i.thenBody : i.elseBody, locals, returned);
  }
  return ok;
}

/// Checks an actual signature against a declared forward type such as
/// `[..., in]` or `i32[B, T]`.
static std::string matchType(Sema &sema, const ast::TensorTypeExpr &t,
                             const Sig &actual, const Scope &scope, bool &evalFailed) {
  evalFailed = false;
  std::string declared = t.dtype.empty() ? "" : t.dtype;
  std::vector<std::string> dimText;
  std::vector<std::optional<int64_t>> dims;
  int ellipsis = -1;
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (llvm::isa<ast::EllipsisExpr>(*t.dims[i])) {
      ellipsis = static_cast<int>(i);
      dims.push_back(std::nullopt);
      dimText.push_back("...");
      continue;
    }
    std::optional<int64_t> v = sema.evalInt(*t.dims[i], scope, "a dimension");
    if (!v) {
      evalFailed = true;
      return "";
    }
    dims.push_back(v);
    dimText.push_back(std::to_string(*v));
  }
  std::string want = declared + "[";
  for (size_t i = 0; i < dimText.size(); ++i)
    want += (i ? ", " : "") + dimText[i];
  want += "]";
  bool dtypeOk = t.dtype.empty() ? shapes::isFloat(actual.dtype)
                                 : shapes::parseDType(t.dtype) == actual.dtype;
  if (!dtypeOk)
    return t.dtype.empty() ? "a floating-point tensor " + want : want;
  size_t rank = actual.shape.size();
  size_t fixed = dims.size() - (ellipsis >= 0 ? 1 : 0);
  if (ellipsis < 0 ? rank != fixed : rank < fixed)
    return want;
  size_t e = ellipsis < 0 ? dims.size() : static_cast<size_t>(ellipsis);
  for (size_t i = 0; i < e; ++i)
    if (*dims[i] != actual.shape[i])
      return want;
  for (size_t i = e + (ellipsis >= 0 ? 1 : 0), j = rank - (dims.size() - i);
       i < dims.size(); ++i, ++j)
    if (*dims[i] != actual.shape[j])
      return want;
  return "";
}

std::optional<std::vector<Sig>>
Sema::elaborateForward(LayerInstance &inst, const std::vector<Sig> &inputs,
                       Loc callLoc, const std::vector<Loc> &argLocs) {
  InstanceState &state = states[&inst];
  std::string who = "'" + inst.layerName + "'" +
                    (inst.path.empty() ? std::string() : " (as '" + inst.path + "')");
  if (state.failed)
    return std::nullopt;
  if (state.elaborated) {
    if (inputs == state.inputs)
      return state.outputs;
    std::string was, now;
    for (const Sig &s : state.inputs)
      was += (was.empty() ? "" : ", ") + shapes::str(s);
    for (const Sig &s : inputs)
      now += (now.empty() ? "" : ", ") + shapes::str(s);
    error(callLoc, who + " was called before with (" + was + ") and now with (" + now +
                       "); one layer instance has one signature");
    return std::nullopt;
  }
  if (state.elaborating) {
    error(callLoc, who + " calls itself");
    return std::nullopt;
  }
  const ast::LayerDecl &decl = *state.decl;
  if (!decl.forward) {
    error(callLoc, who + " has no forward and cannot be called")
        .note(decl.nameLoc, "declared here");
    state.failed = true;
    return std::nullopt;
  }
  const ast::ForwardDecl &fwd = *decl.forward;
  ContextGuard guard(*this, callLoc, "in the forward of " + who + ", called here");
  if (fwd.inputs.size() != inputs.size()) {
    std::string names;
    for (const auto &in : fwd.inputs)
      names += (names.empty() ? "" : ", ") + in.name;
    error(callLoc, who + " takes " + std::to_string(fwd.inputs.size()) + " input" +
                       (fwd.inputs.size() == 1 ? "" : "s") + " (" + names + "), got " +
                       std::to_string(inputs.size()))
        .note(fwd.loc, "forward is declared here");
    state.failed = true;
    return std::nullopt;
  }

  state.elaborating = true;
  Scope locals;
  locals.parent = state.scope.get();
  GraphBuilder b{*this, inst, state, inst.forward, {}};
  bool ok = true;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ast::ForwardInput &in = fwd.inputs[i];
    if (in.type) {
      bool evalFailed = false;
      std::string want = matchType(*this, *in.type, inputs[i], locals, evalFailed);
      if (evalFailed) {
        ok = false;
      } else if (!want.empty()) {
        Diagnostic &d = error(callLoc, "input '" + in.name + "' of " + who + " is " +
                                           shapes::str(inputs[i]) + ", but forward expects " +
                                           want);
        // Where each side came from: the argument, then the declaration.
        if (i < argLocs.size() && argLocs[i].valid())
          d.notes.insert(d.notes.begin(),
                         {argLocs[i], "the argument (" + shapes::str(inputs[i]) +
                                          ") comes from here"});
        d.note(in.loc, "'" + in.name + "' is declared here as " + want);
        ok = false;
      }
    }
    if (locals.names.count(in.name)) {
      error(in.loc, "input '" + in.name + "' is declared twice");
      ok = false;
    }
    ValueId v = b.newValue(inputs[i], in.loc);
    inst.forward.inputs.push_back(v);
    inst.forward.inputNames.push_back(in.name);
    locals.names[in.name] = SValue::tensor(v);
  }
  bool returned = false;
  if (ok)
    ok = b.run(fwd.body, locals, returned);
  if (ok && !returned) {
    error(fwd.loc, "the forward of " + who + " does not return a value");
    ok = false;
  }
  std::vector<Sig> outs;
  for (ValueId v : inst.forward.outputs)
    outs.push_back(b.sigOf(v));
  if (ok && !fwd.results.empty()) {
    if (fwd.results.size() != outs.size()) {
      error(fwd.loc, "forward of " + who + " declares " + std::to_string(fwd.results.size()) +
                         " results but returns " + std::to_string(outs.size()));
      ok = false;
    }
    for (size_t i = 0; ok && i < outs.size(); ++i) {
      bool evalFailed = false;
      std::string want = matchType(*this, fwd.results[i], outs[i], locals, evalFailed);
      if (evalFailed) {
        ok = false;
      } else if (!want.empty()) {
        error(inst.forward.values[inst.forward.outputs[i]].loc,
              "forward of " + who + " returns " + shapes::str(outs[i]) +
                  ", but declares " + want)
            .note(fwd.results[i].loc, "the result type is declared here");
        ok = false;
      }
    }
  }
  if (ok && inst.repeat > 0) {
    // A repeated body maps its first inputs to its outputs, one iteration to
    // the next; the remaining inputs are shared by all iterations.
    if (outs.size() > inputs.size()) {
      error(fwd.loc, "the body of repeat '" + inst.path + "' returns " +
                         std::to_string(outs.size()) + " tensors but takes only " +
                         std::to_string(inputs.size()) + " inputs");
      ok = false;
    }
    for (size_t i = 0; ok && i < outs.size(); ++i)
      if (!(outs[i] == inputs[i])) {
        error(callLoc, "the body of repeat '" + inst.path + "' (" + inst.layerName +
                           ") must return what it takes: result " + std::to_string(i) +
                           " is " + shapes::str(outs[i]) + " but input " +
                           std::to_string(i) + " is " + shapes::str(inputs[i]));
        ok = false;
      }
    inst.carried = static_cast<int32_t>(outs.size());
  }
  state.elaborating = false;
  if (!ok) {
    state.failed = true;
    return std::nullopt;
  }
  state.elaborated = true;
  state.inputs = inputs;
  state.outputs = outs;
  return outs;
}
