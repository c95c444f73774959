//===- SemaCheckpoint.cpp - Checkpoint name maps --------------------------===//
//
// `checkpoint hf for GPT2 { "transformer.wte.weight" = wte.w ... }` says how
// a model's parameters are named in a foreign checkpoint, so the runtime can
// load one unchanged and save back in its layout. Checked in two steps, like
// jobs: at the top level every map of every file is read (its model exists;
// each rule is a path, transpose(x), concat(paths, axis = k) or tied(path));
// then the maps that apply to the elaborated model are checked against its
// parameters: paths resolve, shapes agree, "{i}" matches the stacking, and
// every parameter is part of exactly one rule that is not tied. A map must be
// complete because loading through it has to set every parameter.
//
//===----------------------------------------------------------------------===//
#include "dialects/Bmb/NameRules.h"
#include "lang/SemaInternal.h"


using namespace bmb;
using namespace bmb::sema;
using llvm::dyn_cast;

namespace {

const char *const kForms =
    "a parameter path (wte.w), transpose(x), concat(a, b, axis = k) or tied(p)";

std::string quote(const std::string &s) { return program::Constant::ofString(s).str(); }

/// The dotted path written as `h.attn.q.w`; empty if `e` is not a path.
std::string pathOf(const ast::Expr &e) {
  if (const auto *n = dyn_cast<ast::NameExpr>(&e))
    return n->name;
  if (const auto *m = dyn_cast<ast::MemberExpr>(&e)) {
    std::string base = pathOf(*m->base);
    return base.empty() ? "" : base + "." + m->member;
  }
  return "";
}

bool readPart(Sema &s, const ast::Expr &e, Sema::MapRule &r) {
  std::string path = pathOf(e);
  if (path.empty()) {
    s.error(e.loc, "expected a parameter path such as h.attn.q.w here");
    return false;
  }
  r.parts.emplace_back(path, e.loc);
  return true;
}

/// Reads a rule's value into `r`. tied(...) and transpose(...) are allowed
/// only outermost (`top`), so a rule is always transpose?(concat?(parts)).
bool readValue(Sema &s, const ast::Expr &e, Sema::MapRule &r, bool top) {
  const auto *call = dyn_cast<ast::CallExpr>(&e);
  if (!call) {
    if (!pathOf(e).empty())
      return readPart(s, e, r);
    s.error(e.loc, std::string("expected ") + kForms);
    return false;
  }
  static const std::vector<std::string> functions = {"transpose", "concat", "tied"};
  const auto *callee = dyn_cast<ast::NameExpr>(call->callee.get());
  std::string name = callee ? callee->name : pathOf(*call->callee);
  if (!callee || std::find(functions.begin(), functions.end(), name) == functions.end()) {
    s.error(call->callee->loc, "unknown function '" + name + "' in a checkpoint rule (expected " +
                                   kForms + ")" + s.suggest(name, functions));
    return false;
  }
  bool ok = true;
  std::vector<const ast::Expr *> positional;
  const ast::Expr *axis = nullptr;
  for (const ast::Arg &a : call->args) {
    if (a.keyword.empty()) {
      positional.push_back(a.value.get());
    } else if (name == "concat" && a.keyword == "axis" && !axis) {
      axis = a.value.get();
    } else {
      s.error(a.keywordLoc, name != "concat" ? name + "(...) takes no keyword arguments"
                            : a.keyword == "axis"
                                ? std::string("concat's axis is given twice")
                                : "concat(...) has no argument '" + a.keyword +
                                      "' (it takes axis = k)" + s.suggest(a.keyword, {"axis"}));
      ok = false;
    }
  }
  if (name == "concat") {
    if (positional.size() < 2) {
      s.error(call->loc, "concat(...) needs at least two parameters");
      return false;
    }
    for (const ast::Expr *p : positional)
      ok &= readPart(s, *p, r);
    r.axisLoc = call->loc;
    if (axis) {
      Scope none;
      std::optional<int64_t> k = s.evalInt(*axis, none, "concat's axis");
      ok &= k.has_value();
      r.axis = k.value_or(0);
      r.axisLoc = axis->loc;
    }
    return ok;
  }
  if (positional.size() != 1) {
    s.error(call->loc, name + "(...) takes one argument, got " +
                           std::to_string(positional.size()));
    return false;
  }
  if (!top) {
    s.error(call->loc, name == "tied" ? "tied(...) is a whole rule: \"name\" = tied(param)"
                                      : "transpose(...) goes outermost: transpose(concat(...))");
    return false;
  }
  if (name == "tied") {
    r.tied = true;
    if (pathOf(*positional[0]).empty()) {
      s.error(positional[0]->loc, "tied(...) takes one parameter path: \"name\" = tied(wte.w)");
      return false;
    }
    return readPart(s, *positional[0], r) && ok;
  }
  r.transposeLoc = call->loc;
  return readValue(s, *positional[0], r, false) && ok;
}

bool isModelDecl(const ast::Decl *d) {
  if (const auto *l = dyn_cast<ast::LayerDecl>(d))
    return l->isModel;
  return llvm::isa<ast::ModelAliasDecl>(d);
}

/// The parameters of the elaborated model by symbol, each with one layer's
/// signature and the counts of the repeats it is stacked under.
void collectParams(const LayerInstance &inst, std::vector<int64_t> stack,
                   std::vector<std::string> &order,
                   std::map<std::string, namerules::Part> &out) {
  if (inst.repeat > 0)
    stack.push_back(inst.repeat);
  for (const program::Param &p : inst.params) {
    std::string name = inst.path.empty() ? p.name : inst.path + "." + p.name;
    order.push_back(name);
    out[name] = {name, p.sig, stack};
  }
  for (const auto &c : inst.children)
    collectParams(*c, stack, order, out);
}

/// The first `n` names, then how many more.
std::string listNames(const std::vector<std::string> &names, size_t n) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < n; ++i)
    s += (i ? ", " : "") + names[i];
  if (names.size() > n)
    s += ", ... (" + std::to_string(names.size() - n) + " more)";
  return s;
}

/// Checks the maps of one model against its parameters.
class MapChecker {
public:
  MapChecker(Sema &sema, const std::string &modelName, const Scope &scope,
             const LayerInstance &root)
      : sema(sema), modelName(modelName), scope(scope) {
    collectParams(root, {}, order, params);
  }

  std::optional<program::CheckpointMap> run(const Sema::MapDecl &m) {
    const ast::CheckpointDecl &d = *m.decl;
    program::CheckpointMap out{d.name, {}, d.loc};
    std::map<std::string, Loc> externals, covered;
    bool ok = true;
    for (const Sema::MapRule &r : m.rules) {
      if (r.rule->cond) {
        std::optional<bool> on =
            sema.evalBool(*r.rule->cond, scope, "the condition of a checkpoint rule");
        if (!on)
          ok = false;
        if (!on || !*on)
          continue;
      }
      program::NameRule nr;
      if (!rule(r, nr)) {
        ok = false;
        continue;
      }
      if (auto [it, inserted] = externals.emplace(nr.external, nr.loc); !inserted) {
        sema.error(nr.loc, "checkpoint name " + quote(nr.external) + " appears twice in map '" +
                               d.name + "'")
            .note(it->second, "the first is here");
        ok = false;
        continue;
      }
      for (size_t k = 0; k < nr.parts.size() && !nr.tied; ++k) {
        auto [it, inserted] = covered.emplace(nr.parts[k], r.parts[k].second);
        if (!inserted) {
          sema.error(r.parts[k].second,
                     "parameter '" + nr.parts[k] + "' is already mapped by another rule; each "
                     "parameter is part of exactly one rule (tied(" + nr.parts[k] +
                     ") names a second copy)")
              .note(it->second, "mapped here");
          ok = false;
        }
      }
      out.rules.push_back(std::move(nr));
    }
    std::vector<std::string> missing;
    for (const std::string &p : order)
      if (!covered.count(p))
        missing.push_back(p);
    if (ok && !missing.empty()) {
      sema.error(d.nameLoc, "checkpoint map '" + d.name + "' leaves " +
                                std::to_string(missing.size()) + " parameter" +
                                (missing.size() == 1 ? "" : "s") + " of " + modelName +
                                " unmapped: " + listNames(missing, 12) +
                                " (every parameter must be part of one rule that is not tied)");
      ok = false;
    }
    if (!ok)
      return std::nullopt;
    return out;
  }

private:
  /// Resolves a rule's parts and checks that they form the external tensor.
  bool rule(const Sema::MapRule &r, program::NameRule &out) {
    const ast::NameRule &src = *r.rule;
    std::vector<namerules::Part> parts;
    bool ok = true;
    for (const auto &[path, loc] : r.parts) {
      auto it = params.find(path);
      if (it == params.end()) {
        std::vector<std::string> under;
        for (const std::string &p : order)
          if (p.compare(0, path.size() + 1, path + ".") == 0)
            under.push_back(p);
        if (!under.empty())
          sema.error(loc, "'" + path + "' is a layer of " + modelName +
                              ", not a parameter; its parameters: " + listNames(under, 6));
        else
          sema.error(loc, "unknown parameter '" + path + "' of " + modelName +
                              sema.suggest(path, order));
        ok = false;
        continue;
      }
      if (std::find(out.parts.begin(), out.parts.end(), path) != out.parts.end()) {
        sema.error(loc, "parameter '" + path + "' appears twice in this rule");
        ok = false;
        continue;
      }
      parts.push_back(it->second);
      out.parts.push_back(path);
    }
    if (!ok)
      return false;
    bool transpose = r.transposeLoc.valid();
    namerules::Problem problem = namerules::check(src.external, parts, r.axis, transpose);
    if (!problem.ok()) {
      using At = namerules::Problem::At;
      Loc where = problem.at == At::Part        ? r.parts[problem.part].second
                  : problem.at == At::Axis      ? r.axisLoc
                  : problem.at == At::Transpose ? r.transposeLoc
                                                : src.loc;
      sema.error(where, problem.message);
      return false;
    }
    out.external = src.external;
    out.axis = r.axis;
    out.transpose = transpose;
    out.tied = r.tied;
    out.loc = src.loc;
    return true;
  }

  Sema &sema;
  const std::string &modelName;
  const Scope &scope;
  std::vector<std::string> order; // parameter symbols in declaration order
  std::map<std::string, namerules::Part> params;
};

} // namespace

void Sema::checkCheckpoint(const ast::CheckpointDecl &decl) {
  MapDecl m;
  m.decl = &decl;
  const ast::Decl *model = lookupGlobal(decl.model);
  if (!model || !isModelDecl(model)) {
    std::vector<std::string> names;
    for (const auto &kv : globals)
      if (isModelDecl(kv.second))
        names.push_back(kv.first);
    if (!model)
      error(decl.modelLoc, "unknown model '" + decl.model + "'" + suggest(decl.model, names));
    else
      error(decl.modelLoc, "'" + decl.model + "' is not a model; a checkpoint map is for a "
                           "model or a model alias")
          .note(model->nameLoc, "declared here");
    m.ok = false;
  }
  for (const MapDecl &other : checkpointMaps)
    if (other.decl->model == decl.model && other.decl->name == decl.name) {
      error(decl.nameLoc, "checkpoint map '" + decl.name + "' for " + decl.model +
                              " is declared twice")
          .note(other.decl->nameLoc, "the first is here");
      m.ok = false;
      break;
    }
  // Names are unique among the rules that always apply; conditional rules
  // are compared once their conditions are known.
  std::map<std::string, Loc> unconditional;
  for (const ast::NameRule &r : decl.rules) {
    MapRule rule;
    rule.rule = &r;
    if (std::string problem = namerules::checkExternal(r.external); !problem.empty()) {
      error(r.loc, problem);
      m.ok = false;
    }
    if (!r.cond && !r.external.empty())
      if (auto [it, inserted] = unconditional.emplace(r.external, r.loc); !inserted) {
        error(r.loc, "checkpoint name " + quote(r.external) + " appears twice in map '" +
                         decl.name + "'")
            .note(it->second, "the first is here");
        m.ok = false;
      }
    m.ok &= readValue(*this, *r.value, rule, true);
    m.rules.push_back(std::move(rule));
  }
  checkpointMaps.push_back(std::move(m));
}

bool Sema::elaborateCheckpoints(const std::string &modelName, const LayerInstance &root,
                                const Scope &rootScope, program::Program &p) {
  // The model and every model it aliases: a map for GPT2 applies to
  // `model GPT2Nano = GPT2(...)` too. Bounded in case of an alias cycle
  // (reported when the model was resolved).
  std::vector<std::string> chain{modelName};
  while (chain.size() <= globals.size()) {
    const auto *alias = llvm::dyn_cast_or_null<ast::ModelAliasDecl>(lookupGlobal(chain.back()));
    const auto *target = alias ? dyn_cast<ast::NameExpr>(alias->target->callee.get()) : nullptr;
    if (!target)
      break;
    chain.push_back(target->name);
  }
  std::optional<MapChecker> checker;
  std::map<std::string, const ast::CheckpointDecl *> names;
  bool ok = true;
  for (const MapDecl &m : checkpointMaps) {
    const ast::CheckpointDecl &d = *m.decl;
    if (!m.ok || std::find(chain.begin(), chain.end(), d.model) == chain.end())
      continue;
    if (auto [it, inserted] = names.emplace(d.name, &d); !inserted) {
      error(d.nameLoc, "two checkpoint maps named '" + d.name + "' apply to " + modelName +
                           " (one for " + it->second->model + ", one for " + d.model + ")")
          .note(it->second->nameLoc, "the other is here");
      ok = false;
      continue;
    }
    if (!checker)
      checker.emplace(*this, modelName, rootScope, root);
    std::optional<program::CheckpointMap> out = checker->run(m);
    if (!out) {
      ok = false;
      continue;
    }
    p.checkpointMaps.push_back(std::move(*out));
  }
  return ok;
}
