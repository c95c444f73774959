//===- SemaLayer.cpp - Instantiating layers -------------------------------===//
//
// A layer is instantiated where a member is bound to a layer call
// (`ln1 = LayerNorm(dim)`): its hyperparameters are bound (positional, then
// keyword, then defaults evaluated in order so a default may use an earlier
// hyperparameter), then its members are evaluated in source order. Parameters
// get static shapes; sub-layers recurse. `repeat(n)` instantiates its layer
// once (DESIGN decision 2) and records n.
//
//===----------------------------------------------------------------------===//
#include "lang/SemaInternal.h"

#include <algorithm>
#include <set>

using namespace bmb;
using namespace bmb::sema;
using llvm::cast;
using llvm::dyn_cast;
using K = Constant::Kind;

namespace {
const std::vector<std::string> kActivations = {"gelu", "gelu_tanh", "relu",
                                               "silu", "swiglu",   "tanh"};
const std::vector<std::string> kDTypes = {"f32", "f64", "f16", "bf16",
                                          "i8",  "i32", "i64"};

std::string joinNames(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}
} // namespace

std::vector<Sema::BoundArg> Sema::evalArgs(const std::vector<ast::Arg> &args,
                                           const Scope &scope, bool &ok) {
  std::vector<BoundArg> out;
  for (const ast::Arg &a : args) {
    SValue v = evalConst(*a.value, scope);
    if (v.isError()) {
      ok = false;
      continue;
    }
    if (v.kind != SValue::Kind::Const) {
      error(a.value->loc, "layer arguments are hyperparameters and must be known at "
                          "compile time, got " + describe(v));
      ok = false;
      continue;
    }
    out.push_back({a.keyword, a.keyword.empty() ? a.value->loc : a.keywordLoc, v});
  }
  return out;
}

bool Sema::checkHyperParamType(const ast::HyperParam &hp, SValue &value, Loc loc) {
  if (value.kind != SValue::Kind::Const) {
    error(loc, "hyperparameter '" + hp.name + "' must be a constant, got " +
                   describe(value));
    return false;
  }
  const std::string &t = hp.type;
  Constant &c = value.c;
  auto mismatch = [&](const char *expected) {
    error(loc, "hyperparameter '" + hp.name + "' is " + expected + ", got " +
                   describe(value) + (c.kind == K::None ? "" : " (" + c.str() + ")"));
    return false;
  };
  if (t.empty())
    return true;
  if (t == "int")
    return c.kind == K::Int ? true : mismatch("an int");
  if (t == "float") {
    if (c.kind == K::Int) {
      c = Constant::ofFloat(static_cast<double>(c.i));
      return true;
    }
    return c.kind == K::Float ? true : mismatch("a float");
  }
  if (t == "bool")
    return c.kind == K::Bool ? true : mismatch("a bool");
  if (t == "string")
    return c.kind == K::String ? true : mismatch("a string");
  const std::vector<std::string> *words = t == "activation" ? &kActivations
                                          : t == "dtype"    ? &kDTypes
                                                            : nullptr;
  if (!words) {
    error(hp.typeLoc, "unknown hyperparameter type '" + t +
                          "' (expected int, float, bool, string, activation or dtype)");
    return false;
  }
  if (c.kind != K::Enum ||
      std::find(words->begin(), words->end(), c.s) == words->end()) {
    error(loc, "hyperparameter '" + hp.name + "' is an " + t + " (one of " +
                   joinNames(*words) + "), got " + describe(value));
    return false;
  }
  return true;
}

bool Sema::bindHyperParams(const ast::LayerDecl &decl,
                           const std::vector<BoundArg> &args, Loc loc,
                           Scope &scope, LayerInstance &inst) {
  const auto &hps = decl.hyperParams;
  std::vector<const BoundArg *> given(hps.size(), nullptr);
  bool ok = true;
  size_t positional = 0;
  for (const BoundArg &a : args) {
    if (a.keyword.empty()) {
      if (positional >= hps.size()) {
        std::vector<std::string> names;
        for (const auto &h : hps)
          names.push_back(h.name);
        error(a.loc, "too many arguments for '" + decl.name + "': it takes " +
                         std::to_string(hps.size()) +
                         (hps.empty() ? "" : " (" + joinNames(names) + ")"));
        ok = false;
        break;
      }
      given[positional++] = &a;
      continue;
    }
    auto it = std::find_if(hps.begin(), hps.end(),
                           [&](const ast::HyperParam &h) { return h.name == a.keyword; });
    if (it == hps.end()) {
      std::vector<std::string> names;
      for (const auto &h : hps)
        names.push_back(h.name);
      error(a.loc, "'" + decl.name + "' has no hyperparameter '" + a.keyword + "'" +
                       suggest(a.keyword, names))
          .note(decl.nameLoc, "'" + decl.name + "' is declared here");
      ok = false;
      continue;
    }
    size_t idx = static_cast<size_t>(it - hps.begin());
    if (given[idx]) {
      error(a.loc, "hyperparameter '" + a.keyword + "' of '" + decl.name +
                       "' is given twice");
      ok = false;
      continue;
    }
    given[idx] = &a;
  }
  for (size_t i = 0; i < hps.size(); ++i) {
    const ast::HyperParam &hp = hps[i];
    SValue v;
    Loc where = loc;
    if (given[i]) {
      v = given[i]->value;
      where = given[i]->loc;
    } else if (hp.defaultValue) {
      v = evalConst(*hp.defaultValue, scope);
      where = hp.defaultValue->loc;
    } else {
      error(loc, "missing hyperparameter '" + hp.name + "' of '" + decl.name + "'")
          .note(hp.loc, "'" + hp.name + "' is declared here without a default");
      ok = false;
      scope.names[hp.name] = SValue::error();
      continue;
    }
    if (v.isError() || !checkHyperParamType(hp, v, where)) {
      ok = false;
      scope.names[hp.name] = SValue::error();
      continue;
    }
    scope.names[hp.name] = v;
    inst.hyperParams.emplace_back(hp.name, v.c);
  }
  return ok;
}

std::optional<Sig> Sema::evalTensorType(const ast::TensorTypeExpr &t,
                                        const Scope &scope) {
  Sig sig;
  bool ok = true;
  if (!t.dtype.empty()) {
    std::optional<shapes::DType> d = shapes::parseDType(t.dtype);
    // `param g: dt[dim]` with a hyperparameter `dt: dtype`.
    if (const SValue *v = scope.lookup(t.dtype);
        !d && v && v->kind == SValue::Kind::Const && v->c.kind == Constant::Kind::Enum)
      d = shapes::parseDType(v->c.s);
    if (!d) {
      error(t.dtypeLoc, "unknown element type '" + t.dtype + "' (expected " +
                            joinNames(kDTypes) + ")");
      ok = false;
    } else {
      sig.dtype = *d;
    }
  }
  for (size_t i = 0; i < t.dims.size(); ++i) {
    const ast::Expr &d = *t.dims[i];
    if (llvm::isa<ast::EllipsisExpr>(d)) {
      error(d.loc, "'...' is only allowed in the inputs and results of forward");
      ok = false;
      continue;
    }
    std::optional<int64_t> v = evalInt(d, scope, "a dimension");
    if (!v) {
      ok = false;
      continue;
    }
    if (*v <= 0) {
      error(d.loc, "dimension " + std::to_string(i) + " must be positive, got " +
                       std::to_string(*v));
      ok = false;
      continue;
    }
    sig.shape.push_back(*v);
  }
  if (ok && !shapes::numElements(sig.shape)) {
    error(t.loc, "this shape has more elements than fit in 64 bits: " +
                     shapes::str(sig.shape));
    ok = false;
  }
  if (!ok)
    return std::nullopt;
  return sig;
}

std::optional<program::Init> Sema::evalInit(const ast::Expr *e, const Scope &scope) {
  program::Init init;
  if (!e)
    return init;
  SValue v = evalConst(*e, scope, /*enumContext=*/true);
  if (v.isError())
    return std::nullopt;
  auto bad = [&](const std::string &msg) -> std::optional<program::Init> {
    error(e->loc, msg);
    return std::nullopt;
  };
  if (v.kind != SValue::Kind::Const)
    return bad("an initializer must be zeros, ones, normal(std), uniform(low, high) "
               "or a number, got " + describe(v));
  const Constant &c = v.c;
  auto number = [](const Constant &x, double &out) {
    if (x.kind == K::Int)
      out = static_cast<double>(x.i);
    else if (x.kind == K::Float)
      out = x.f;
    else
      return false;
    return true;
  };
  double num;
  if (number(c, num)) {
    init.kind = program::Init::Kind::Constant;
    init.a = num;
    return init;
  }
  if (c.kind == K::Enum && (c.s == "zeros" || c.s == "ones")) {
    init.kind = c.s == "zeros" ? program::Init::Kind::Zeros : program::Init::Kind::Ones;
    return init;
  }
  if (c.kind == K::Call && (c.s == "normal" || c.s == "uniform")) {
    bool isNormal = c.s == "normal";
    std::vector<double> xs;
    for (const Constant &x : c.elements) {
      if (!number(x, num))
        return bad("arguments of " + c.s + "(...) must be numbers");
      xs.push_back(num);
    }
    for (const auto &[k, x] : c.keywords) {
      if (!number(x, num))
        return bad("arguments of " + c.s + "(...) must be numbers");
      if (isNormal && k == "std" && xs.empty())
        xs.push_back(num);
      else if (!isNormal && k == "low" && xs.empty())
        xs.push_back(num);
      else if (!isNormal && k == "high" && xs.size() == 1)
        xs.push_back(num);
      else
        return bad("unexpected argument '" + k + "' of " + c.s + "(...)");
    }
    if (isNormal) {
      if (xs.size() != 1 || !(xs[0] > 0))
        return bad("normal(std) takes one positive standard deviation");
      init.kind = program::Init::Kind::Normal;
      init.a = xs[0];
    } else {
      if (xs.size() != 2 || !(xs[0] < xs[1]))
        return bad("uniform(low, high) takes two numbers with low < high");
      init.kind = program::Init::Kind::Uniform;
      init.a = xs[0];
      init.b = xs[1];
    }
    return init;
  }
  return bad("unknown initializer " + c.str() +
             " (expected zeros, ones, normal(std), uniform(low, high) or a number)");
}

const ast::LayerDecl *Sema::resolveModel(const std::string &name, Loc loc,
                                         std::vector<BoundArg> &args,
                                         bool requireModel) {
  std::vector<std::string> seen;
  std::string current = name;
  Loc currentLoc = loc;
  while (true) {
    const ast::Decl *d = lookupGlobal(current);
    if (!d) {
      std::vector<std::string> names;
      for (const auto &kv : globals)
        if (llvm::isa<ast::LayerDecl>(kv.second) || llvm::isa<ast::ModelAliasDecl>(kv.second))
          names.push_back(kv.first);
      error(currentLoc, std::string(requireModel ? "unknown model '" : "unknown layer '") +
                            current + "'" + suggest(current, names));
      return nullptr;
    }
    if (const auto *layer = dyn_cast<ast::LayerDecl>(d)) {
      if (requireModel && !layer->isModel) {
        error(currentLoc, "'" + current + "' is a layer, not a model")
            .note(layer->nameLoc, "declared here");
        return nullptr;
      }
      // Positional arguments of an alias chain become keywords here so later
      // overrides (the job's `for Model(k = v)`) replace them by name.
      std::vector<BoundArg> named;
      size_t pos = 0;
      for (const BoundArg &a : args) {
        if (!a.keyword.empty()) {
          named.push_back(a);
          continue;
        }
        if (pos >= layer->hyperParams.size()) {
          std::vector<std::string> names;
          for (const auto &h : layer->hyperParams)
            names.push_back(h.name);
          error(a.loc, "too many arguments for '" + layer->name + "': it takes " +
                           std::to_string(names.size()) +
                           (names.empty() ? "" : " (" + joinNames(names) + ")"))
              .note(layer->nameLoc, "'" + layer->name + "' is declared here");
          return nullptr;
        }
        BoundArg k = a;
        k.keyword = layer->hyperParams[pos++].name;
        named.push_back(k);
      }
      // Later entries (closer to the use) override earlier ones.
      std::vector<BoundArg> merged;
      for (auto it = named.rbegin(); it != named.rend(); ++it)
        if (it->keyword.empty() ||
            std::none_of(merged.begin(), merged.end(),
                         [&](const BoundArg &m) { return m.keyword == it->keyword; }))
          merged.push_back(*it);
      std::reverse(merged.begin(), merged.end());
      args = std::move(merged);
      return layer;
    }
    const auto *alias = dyn_cast<ast::ModelAliasDecl>(d);
    if (!alias) {
      error(currentLoc, "'" + current + "' is not a layer or model")
          .note(d->nameLoc, "declared here");
      return nullptr;
    }
    if (std::find(seen.begin(), seen.end(), current) != seen.end() || seen.size() > 32) {
      error(alias->nameLoc, "model alias '" + current + "' refers to itself");
      return nullptr;
    }
    seen.push_back(current);
    Scope globalsOnly;
    bool ok = true;
    std::vector<BoundArg> aliasArgs = evalArgs(alias->target->args, globalsOnly, ok);
    if (!ok)
      return nullptr;
    // The alias's own arguments come first; what the user passed overrides.
    aliasArgs.insert(aliasArgs.end(), args.begin(), args.end());
    // Positional arguments given to an alias have no defined meaning.
    for (const BoundArg &a : args)
      if (a.keyword.empty()) {
        error(a.loc, "arguments to the alias '" + current + "' must be named");
        return nullptr;
      }
    args = std::move(aliasArgs);
    const auto *callee = dyn_cast<ast::NameExpr>(alias->target->callee.get());
    if (!callee) {
      error(alias->target->loc, "an alias must name a model");
      return nullptr;
    }
    current = callee->name;
    currentLoc = callee->loc;
  }
}

std::unique_ptr<LayerInstance>
Sema::instantiate(const ast::LayerDecl &decl, const std::vector<BoundArg> &args,
                  const std::string &name, const std::string &path,
                  const LayerInstance *parent, Loc loc, int64_t repeat,
                  int repeatDepth, unsigned depth) {
  if (depth > options.maxInstantiationDepth) {
    error(loc, "layers are nested more than " +
                   std::to_string(options.maxInstantiationDepth) + " deep");
    return nullptr;
  }
  // Wide trees multiply: ten members of ten members of ... would never
  // finish. repeat(n) counts once, so real models stay far below this.
  if (++instanceCount > kMaxInstances) {
    if (instanceCount == kMaxInstances + 1)
      error(loc, "the model has more than " + std::to_string(kMaxInstances) +
                     " layer instances");
    return nullptr;
  }
  if (std::find(instStack.begin(), instStack.end(), &decl) != instStack.end()) {
    error(loc, "layer '" + decl.name + "' contains itself");
    return nullptr;
  }
  instStack.push_back(&decl);
  struct PopGuard {
    std::vector<const ast::LayerDecl *> &s;
    ~PopGuard() { s.pop_back(); }
  } popGuard{instStack};
  ContextGuard guard(*this, loc,
                     "in '" + decl.name + "'" +
                         (path.empty() ? std::string() : " (as '" + path + "')") +
                         " instantiated here");

  auto inst = std::make_unique<LayerInstance>();
  inst->name = name;
  inst->path = path;
  inst->parent = parent;
  inst->layerName = decl.name;
  inst->loc = loc;
  inst->declLoc = decl.nameLoc;
  inst->repeat = repeat;
  InstanceState &state = states[inst.get()];
  state.decl = &decl;
  state.repeatDepth = repeatDepth;
  state.scope = std::make_unique<Scope>();
  state.scope->parent = &globalScope;
  Scope &scope = *state.scope;

  bool ok = bindHyperParams(decl, args, loc, scope, *inst);
  std::map<std::string, Loc> defined;
  for (const ast::HyperParam &hp : decl.hyperParams)
    defined.emplace(hp.name, hp.loc);
  auto define = [&](const std::string &n, Loc l) {
    auto [it, inserted] = defined.emplace(n, l);
    if (!inserted) {
      error(l, "'" + n + "' is already defined in '" + decl.name + "'")
          .note(it->second, "previous definition is here");
      ok = false;
    }
    return inserted;
  };

  for (const ast::LayerItem &item : decl.items) {
    if (diags.tooManyErrors()) {
      ok = false;
      break;
    }
    if (item.kind == ast::LayerItem::Kind::Param) {
      const ast::ParamDecl &p = *item.param;
      if (!define(p.name, p.loc))
        continue;
      if (p.cond) {
        std::optional<bool> on = evalBool(*p.cond, scope, "the condition of a parameter");
        if (!on) {
          ok = false;
          scope.names[p.name] = SValue::error();
          continue;
        }
        if (!*on) {
          scope.names[p.name] = SValue::absent(p.name, p.loc);
          continue;
        }
      }
      std::optional<Sig> sig = evalTensorType(p.type, scope);
      std::optional<program::Init> init = evalInit(p.init.get(), scope);
      if (!sig || !init) {
        ok = false;
        scope.names[p.name] = SValue::error();
        continue;
      }
      if (!shapes::isFloat(sig->dtype)) {
        error(p.type.loc, "parameters are floating point, got " + shapes::str(*sig));
        ok = false;
        scope.names[p.name] = SValue::error();
        continue;
      }
      inst->params.push_back({p.name, *sig, *init, !p.frozen, p.loc});
      SValue v;
      v.kind = SValue::Kind::Param;
      v.path = path.empty() ? p.name : path + "." + p.name;
      v.sig = *sig;
      v.loc = p.loc;
      v.repeatDepth = repeatDepth;
      scope.names[p.name] = v;
      continue;
    }

    const ast::Binding &b = *item.binding;
    if (!define(b.name, b.loc))
      continue;
    const ast::Expr *value = b.value.get();
    // `member = X(...) if cond [else Y(...)]`: the condition is known now, so
    // the member is one branch. A member switched off (no else) is
    // remembered so a use can say why it is missing.
    bool condFailed = false, switchedOff = false;
    while (const auto *c = dyn_cast<ast::CondExpr>(value)) {
      std::optional<bool> on = evalBool(*c->cond, scope, "the condition of a member");
      if (!on) {
        condFailed = true;
        break;
      }
      if (*on) {
        value = c->value.get();
      } else if (c->elseValue) {
        value = c->elseValue.get();
      } else {
        switchedOff = true;
        break;
      }
    }
    if (condFailed) {
      ok = false;
      scope.names[b.name] = SValue::error();
      continue;
    }
    if (switchedOff) {
      scope.names[b.name] = SValue::absent(b.name, b.loc);
      continue;
    }
    if (const auto *n = dyn_cast<ast::NameExpr>(value);
        n && !scope.lookup(n->name) && lookupGlobal(n->name) &&
        (llvm::isa<ast::LayerDecl>(lookupGlobal(n->name)) ||
         llvm::isa<ast::ModelAliasDecl>(lookupGlobal(n->name)))) {
      error(n->loc, "'" + n->name + "' is a layer; write " + n->name +
                        "(...) to instantiate it");
      ok = false;
      scope.names[b.name] = SValue::error();
      continue;
    }

    int64_t count = 0;
    const ast::CallExpr *call = dyn_cast<ast::CallExpr>(value);
    if (const auto *r = dyn_cast<ast::RepeatExpr>(value)) {
      std::optional<int64_t> n = evalInt(*r->count, scope, "a repeat count");
      call = dyn_cast<ast::CallExpr>(r->layer.get());
      if (!n || !call) {
        if (n && !call)
          error(r->layer->loc, "'repeat(n)' must be followed by a layer, e.g. repeat(n) Block(dim)");
        ok = false;
        scope.names[b.name] = SValue::error();
        continue;
      }
      if (*n <= 0 || *n > 1000000) {
        error(r->count->loc, "a repeat count must be between 1 and 1000000, got " +
                                 std::to_string(*n));
        ok = false;
        scope.names[b.name] = SValue::error();
        continue;
      }
      count = *n;
    }
    const ast::NameExpr *callee =
        call ? dyn_cast<ast::NameExpr>(call->callee.get()) : nullptr;
    const ast::Decl *target = callee ? lookupGlobal(callee->name) : nullptr;
    bool isLayerCall = target && (llvm::isa<ast::LayerDecl>(target) ||
                                  llvm::isa<ast::ModelAliasDecl>(target));
    if (count > 0 && !isLayerCall) {
      error(call->callee->loc, "'repeat(n)' must be followed by a layer; '" +
                                   (callee ? callee->name : std::string("this")) +
                                   "' is not one");
      ok = false;
      scope.names[b.name] = SValue::error();
      continue;
    }
    if (!isLayerCall && callee && !scope.lookup(callee->name)) {
      // `a = Linaer(dim)`: members that call something are layers.
      std::vector<BoundArg> none;
      resolveModel(callee->name, callee->loc, none, false);
      ok = false;
      scope.names[b.name] = SValue::error();
      continue;
    }
    if (!isLayerCall) {
      SValue v = evalConst(*value, scope);
      if (!v.isError() && v.kind != SValue::Kind::Const) {
        error(value->loc, "a member is a layer or a constant; '" + b.name + "' would be " +
                              describe(v));
        v = SValue::error();
      }
      ok &= !v.isError();
      scope.names[b.name] = v;
      continue;
    }

    bool argsOk = true;
    std::vector<BoundArg> childArgs = evalArgs(call->args, scope, argsOk);
    const ast::LayerDecl *childDecl =
        argsOk ? resolveModel(callee->name, callee->loc, childArgs, false) : nullptr;
    if (!childDecl) {
      ok = false;
      scope.names[b.name] = SValue::error();
      continue;
    }
    std::string childPath = path.empty() ? b.name : path + "." + b.name;
    std::unique_ptr<LayerInstance> child =
        instantiate(*childDecl, childArgs, b.name, childPath, inst.get(), call->loc,
                    count, repeatDepth + (count > 0 ? 1 : 0), depth + 1);
    if (!child) {
      ok = false;
      scope.names[b.name] = SValue::error();
      continue;
    }
    SValue v;
    v.kind = SValue::Kind::Layer;
    v.layer = child.get();
    v.loc = b.loc;
    scope.names[b.name] = v;
    inst->children.push_back(std::move(child));
  }
  if (!ok) {
    // Keep failed instances alive: `states` is keyed by their address.
    graveyard.push_back(std::move(inst));
    return nullptr;
  }
  return inst;
}
