//===- SemaJob.cpp - Jobs, templates, verbalizers and recipes -------------===//
//
// A job's settings are checked against a schema per job kind: unknown keys
// (with a suggestion), wrong value kinds and missing required keys are
// errors at the user's line. Configuration calls (`adamw(lr = 1e-3)`,
// `text("x.txt", tokenizer = gpt2)`) are checked against their own argument
// lists. The passes and the runtime give these settings meaning; here they
// only have to be well-formed.
//
//===----------------------------------------------------------------------===//
#include "lang/SemaInternal.h"

#include <algorithm>
#include <cmath>
#include <set>

using namespace bmb;
using namespace bmb::sema;
using llvm::dyn_cast;
using K = Constant::Kind;

namespace {

/// What a value may be.
enum class VT {
  PosInt,    // an integer > 0
  NonNegInt, // an integer >= 0
  Int,       // any integer
  PosFloat,  // a number > 0
  UnitFloat, // a number in [0, 1]
  Float,     // any number
  Bool,
  String,
  Word,      // one of `words`
  Config,    // a call of one of `calls` (or a bare word among `words`)
  Names,     // a string/name or a list of them (layer paths, patterns)
  Size,      // bytes: an integer, or a string such as "6GiB"
  Zero,      // 0, 1, 2, 3 or auto
  Prompt,    // template -> verbalizer
  Pairs,     // a list of "a" : "b" pairs
};

struct ValueSpec {
  const char *key;
  VT type;
  std::vector<std::string> words; // Word, Config (bare words)
  bool required = false;
};

/// The arguments of a configuration call, positional in this order.
struct CallSpec {
  const char *name;
  std::vector<ValueSpec> args; // `required` marks required arguments
};

const std::vector<CallSpec> &callSpecs() {
  static const std::vector<CallSpec> specs = {
      // data sources
      {"text", {{"path", VT::String, {}, true}, {"tokenizer", VT::Word, {"gpt2", "bert", "byte", "llama"}}}},
      {"tokens", {{"path", VT::String, {}, true}}},
      {"jsonl", {{"path", VT::String, {}, true}, {"field", VT::String, {}}, {"tokenizer", VT::Word, {"gpt2", "bert", "byte", "llama"}}}},
      {"tsv", {{"path", VT::String, {}, true}, {"text_a", VT::NonNegInt, {}}, {"text_b", VT::NonNegInt, {}}, {"label", VT::NonNegInt, {}}}},
      // optimizers
      {"adamw", {{"lr", VT::PosFloat, {}}, {"betas", VT::Pairs, {}}, {"eps", VT::PosFloat, {}}, {"weight_decay", VT::Float, {}}, {"no_decay", VT::Names, {}}}},
      {"adam", {{"lr", VT::PosFloat, {}}, {"betas", VT::Pairs, {}}, {"eps", VT::PosFloat, {}}}},
      {"sgd", {{"lr", VT::PosFloat, {}}, {"momentum", VT::UnitFloat, {}}, {"weight_decay", VT::Float, {}}}},
      // learning-rate schedules
      {"constant", {{"warmup", VT::NonNegInt, {}}}},
      {"linear", {{"warmup", VT::NonNegInt, {}}, {"min_lr", VT::Float, {}}}},
      {"cosine", {{"warmup", VT::NonNegInt, {}}, {"min_lr", VT::Float, {}}}},
      // deltas
      {"lora", {{"rank", VT::PosInt, {}, true}, {"alpha", VT::PosFloat, {}}, {"on", VT::Names, {}}, {"dropout", VT::UnitFloat, {}}}},
      {"adapter", {{"dim", VT::PosInt, {}, true}, {"on", VT::Names, {}}}},
      {"prefix", {{"length", VT::PosInt, {}, true}}},
      {"bitfit", {}},
      // sampling
      {"greedy", {}},
      {"top_p", {{"p", VT::UnitFloat, {}, true}, {"temperature", VT::PosFloat, {}}}},
      {"top_k", {{"k", VT::PosInt, {}, true}, {"temperature", VT::PosFloat, {}}}},
  };
  return specs;
}

const CallSpec *findCall(const std::string &name) {
  for (const CallSpec &c : callSpecs())
    if (name == c.name)
      return &c;
  return nullptr;
}

std::vector<ValueSpec> jobSchema(ast::JobKind kind) {
  const std::vector<std::string> precisions = {"fp32", "bf16", "fp16"};
  std::vector<ValueSpec> s = {
      {"target", VT::Word, {"host", "cuda"}},
      {"seed", VT::Int, {}},
      {"precision", VT::Word, precisions},
  };
  auto add = [&](std::initializer_list<ValueSpec> more) { s.insert(s.end(), more); };
  bool trains = kind != ast::JobKind::Infer;
  if (trains)
    add({{"data", VT::Config, {"text", "tokens", "jsonl", "tsv"}},
         {"batch", VT::PosInt, {}, true},
         {"seq", VT::PosInt, {}, true},
         {"steps", VT::PosInt, {}},
         {"optimizer", VT::Config, {"adamw", "adam", "sgd"}},
         {"schedule", VT::Config, {"constant", "linear", "cosine"}},
         {"grad_accum", VT::PosInt, {}},
         {"clip", VT::PosFloat, {}},
         {"zero", VT::Zero, {}},
         {"checkpoint", VT::Names, {}},
         {"offload", VT::Word, {"none", "optimizer", "params"}},
         {"memory", VT::Size, {}},
         {"eval_every", VT::PosInt, {}},
         {"save_every", VT::PosInt, {}},
         {"log_every", VT::PosInt, {}}});
  if (kind == ast::JobKind::Tune)
    add({{"prompt", VT::Prompt, {}},
         {"delta", VT::Config, {"lora", "adapter", "prefix", "bitfit"}}});
  if (kind == ast::JobKind::Infer)
    add({{"batch", VT::PosInt, {}},
         {"seq", VT::PosInt, {}},
         {"quantize", VT::Word, {"none", "int8"}},
         {"memory", VT::Size, {}},
         {"sampling", VT::Config, {"greedy", "top_p", "top_k"}},
         {"max_tokens", VT::PosInt, {}}});
  return s;
}

std::optional<int64_t> parseSize(const std::string &text) {
  size_t i = 0;
  int64_t n = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, text[i] - '0', &n))
      return std::nullopt;
    ++i;
  }
  if (i == 0)
    return std::nullopt;
  std::string unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ')
    unit.erase(0, 1);
  static const std::pair<const char *, int64_t> units[] = {
      {"", 1},          {"B", 1},
      {"KiB", 1LL << 10}, {"MiB", 1LL << 20}, {"GiB", 1LL << 30}, {"TiB", 1LL << 40},
      {"KB", 1000},     {"MB", 1000000},     {"GB", 1000000000}, {"TB", 1000000000000}};
  for (const auto &[u, scale] : units)
    if (unit == u) {
      int64_t out;
      if (__builtin_mul_overflow(n, scale, &out))
        return std::nullopt;
      return out;
    }
  return std::nullopt;
}

std::string joinWords(const std::vector<std::string> &w) {
  std::string s;
  for (const std::string &x : w)
    s += (s.empty() ? "" : ", ") + x;
  return s;
}

} // namespace

namespace bmb::sema {

/// Checks one value against its spec; reports at `loc` and returns false.
class ValueChecker {
public:
  explicit ValueChecker(Sema &s) : sema(s) {}

  bool check(const ValueSpec &spec, Constant &c, Loc loc, const std::string &what) {
    auto fail = [&](const std::string &expected) {
      sema.error(loc, what + " expects " + expected + ", got " +
                          Sema::describe(SValue::constant(c)) +
                          (c.kind == K::Call || c.kind == K::None || c.kind == K::Enum
                               ? ""
                               : " (" + c.str() + ")"));
      return false;
    };
    auto number = [&](double &out) {
      if (c.kind == K::Int)
        out = static_cast<double>(c.i);
      else if (c.kind == K::Float)
        out = c.f;
      else
        return false;
      return true;
    };
    double d;
    // Real-valued settings read the same whether written 16 or 16.0.
    if ((spec.type == VT::PosFloat || spec.type == VT::UnitFloat || spec.type == VT::Float) &&
        c.kind == K::Int) {
      Loc keep = c.loc;
      c = Constant::ofFloat(static_cast<double>(c.i));
      c.loc = keep;
    }
    switch (spec.type) {
    case VT::PosInt:
      return c.kind == K::Int && c.i > 0 ? true : fail("a positive integer");
    case VT::NonNegInt:
      return c.kind == K::Int && c.i >= 0 ? true : fail("an integer >= 0");
    case VT::Int:
      return c.kind == K::Int ? true : fail("an integer");
    case VT::PosFloat:
      return number(d) && d > 0 ? true : fail("a positive number");
    case VT::UnitFloat:
      return number(d) && d >= 0 && d <= 1 ? true : fail("a number between 0 and 1");
    case VT::Float:
      return number(d) ? true : fail("a number");
    case VT::Bool:
      return c.kind == K::Bool ? true : fail("true or false");
    case VT::String:
      return c.kind == K::String ? true : fail("a string");
    case VT::Word:
      if ((c.kind == K::Enum || c.kind == K::String) &&
          std::find(spec.words.begin(), spec.words.end(), c.s) != spec.words.end()) {
        c.kind = K::Enum;
        return true;
      }
      if (c.kind == K::None &&
          std::find(spec.words.begin(), spec.words.end(), "none") != spec.words.end()) {
        c = Constant::ofEnum("none");
        return true;
      }
      return fail("one of " + joinWords(spec.words));
    case VT::Config:
      return checkConfig(spec, c, loc, what);
    case VT::Names:
      if (c.kind == K::String || c.kind == K::Enum)
        return true;
      if (c.kind == K::List) {
        for (const Constant &el : c.elements)
          if (el.kind != K::String && el.kind != K::Enum && el.kind != K::Pair)
            return fail("a name or a list of names");
        return true;
      }
      return fail("a name or a list of names");
    case VT::Size: {
      if (c.kind == K::Int && c.i > 0)
        return true;
      if (c.kind == K::String)
        if (std::optional<int64_t> n = parseSize(c.s); n && *n > 0) {
          c = Constant::ofInt(*n);
          return true;
        }
      return fail("a size such as 6GiB, 512MiB or a number of bytes");
    }
    case VT::Zero:
      if ((c.kind == K::Int && c.i >= 0 && c.i <= 3) || (c.kind == K::Enum && c.s == "auto"))
        return true;
      return fail("0, 1, 2, 3 or auto");
    case VT::Prompt:
      if (c.kind == K::Pair && c.s == "->" && c.elements[0].kind == K::Enum &&
          c.elements[1].kind == K::Enum) {
        bool ok = true;
        ok &= expectDecl<ast::TemplateDecl>(c.elements[0], "template");
        ok &= expectDecl<ast::VerbalizerDecl>(c.elements[1], "verbalizer");
        if (ok) {
          Constant call;
          call.kind = K::Call;
          call.s = "prompt";
          call.loc = c.loc;
          call.keywords = {{"template", Constant::ofString(c.elements[0].s)},
                           {"verbalizer", Constant::ofString(c.elements[1].s)}};
          c = call;
        }
        return ok;
      }
      return fail("template -> verbalizer");
    case VT::Pairs:
      if (c.kind == K::Tuple && c.elements.size() == 2) {
        for (Constant &el : c.elements) {
          double x;
          if (el.kind == K::Int)
            x = static_cast<double>(el.i);
          else if (el.kind == K::Float)
            x = el.f;
          else
            return fail("a pair of numbers such as (0.9, 0.95)");
          if (!(x >= 0 && x < 1))
            return fail("two numbers in [0, 1)");
        }
        return true;
      }
      return fail("a pair of numbers such as (0.9, 0.95)");
    }
    return false;
  }

private:
  template <typename DeclT>
  bool expectDecl(const Constant &name, const char *kind) {
    const ast::Decl *d = sema.lookupGlobal(name.s);
    if (d && llvm::isa<DeclT>(d))
      return true;
    std::vector<std::string> names;
    for (const auto &kv : sema.globals)
      if (llvm::isa<DeclT>(kv.second))
        names.push_back(kv.first);
    sema.error(name.loc, std::string("unknown ") + kind + " '" + name.s + "'" +
                             sema.suggest(name.s, names));
    return false;
  }

  bool checkConfig(const ValueSpec &spec, Constant &c, Loc loc, const std::string &what) {
    std::string name;
    if (c.kind == K::Call)
      name = c.s;
    else if (c.kind == K::Enum)
      name = c.s; // a bare word: `schedule = cosine`
    if (name.empty() ||
        std::find(spec.words.begin(), spec.words.end(), name) == spec.words.end()) {
      sema.error(loc, what + " expects one of " + joinWords(spec.words) + ", got " +
                          (name.empty() ? Sema::describe(SValue::constant(c)) : "'" + name + "'") +
                          (name.empty() ? "" : sema.suggest(name, spec.words)));
      return false;
    }
    const CallSpec *cs = findCall(name);
    if (c.kind == K::Enum) {
      // A bare word is a call with no arguments; required ones are missing.
      c.kind = K::Call;
    }
    bool ok = true;
    std::vector<bool> given(cs->args.size(), false);
    for (size_t i = 0; i < c.elements.size(); ++i) {
      if (i >= cs->args.size()) {
        sema.error(c.elements[i].loc.valid() ? c.elements[i].loc : loc,
                   "too many arguments for " + name + "(...)");
        return false;
      }
      given[i] = true;
      ok &= check(cs->args[i], c.elements[i], c.elements[i].loc.valid() ? c.elements[i].loc : loc,
                  "argument '" + std::string(cs->args[i].key) + "' of " + name + "(...)");
    }
    for (auto &[k, v] : c.keywords) {
      auto it = std::find_if(cs->args.begin(), cs->args.end(),
                             [&](const ValueSpec &a) { return k == a.key; });
      if (it == cs->args.end()) {
        std::vector<std::string> keys;
        for (const ValueSpec &a : cs->args)
          keys.push_back(a.key);
        sema.error(v.loc.valid() ? v.loc : loc,
                   name + "(...) has no argument '" + k + "'" + sema.suggest(k, keys));
        ok = false;
        continue;
      }
      size_t idx = static_cast<size_t>(it - cs->args.begin());
      if (given[idx]) {
        sema.error(v.loc.valid() ? v.loc : loc,
                   "argument '" + k + "' of " + name + "(...) is given twice");
        ok = false;
        continue;
      }
      given[idx] = true;
      ok &= check(*it, v, v.loc.valid() ? v.loc : loc,
                  "argument '" + k + "' of " + name + "(...)");
    }
    for (size_t i = 0; i < cs->args.size(); ++i)
      if (cs->args[i].required && !given[i]) {
        sema.error(loc, name + "(...) needs the argument '" + cs->args[i].key + "'");
        ok = false;
      }
    // Normalize: every argument by name, in the spec's order, so later
    // stages read `lr` without knowing the argument positions.
    if (ok) {
      std::vector<std::pair<std::string, Constant>> named;
      for (size_t i = 0; i < cs->args.size(); ++i) {
        if (i < c.elements.size()) {
          named.emplace_back(cs->args[i].key, c.elements[i]);
          continue;
        }
        for (auto &kv : c.keywords)
          if (kv.first == cs->args[i].key)
            named.emplace_back(kv.first, kv.second);
      }
      c.elements.clear();
      c.keywords = std::move(named);
    }
    return ok;
  }

  Sema &sema;
};

} // namespace bmb::sema

std::optional<program::Job> Sema::checkJob(const ast::JobDecl &decl, bool) {
  program::Job job;
  job.kind = static_cast<program::JobKind>(decl.jobKind);
  job.name = decl.name;
  job.loc = decl.loc;
  job.from = decl.from.value_or("");
  job.recipe = decl.recipe;
  bool ok = true;

  const auto *modelName = dyn_cast<ast::NameExpr>(decl.model->callee.get());
  job.modelName = modelName ? modelName->name : "";
  const ast::Decl *model = lookupGlobal(job.modelName);
  if (!model || !(llvm::isa<ast::ModelAliasDecl>(model) ||
                  (llvm::isa<ast::LayerDecl>(model) &&
                   llvm::cast<ast::LayerDecl>(model)->isModel))) {
    std::vector<std::string> names;
    for (const auto &kv : globals)
      if (llvm::isa<ast::ModelAliasDecl>(kv.second) ||
          (llvm::isa<ast::LayerDecl>(kv.second) &&
           llvm::cast<ast::LayerDecl>(kv.second)->isModel))
        names.push_back(kv.first);
    error(decl.model->callee->loc,
          (model ? "'" + job.modelName + "' is not a model"
                 : "unknown model '" + job.modelName + "'" + suggest(job.modelName, names)));
    ok = false;
  }
  if (decl.jobKind == ast::JobKind::Compress && decl.recipe.empty()) {
    error(decl.nameLoc, "a compress job needs a recipe: compress " + decl.name + " for " +
                            job.modelName + " with RECIPE { ... }");
    ok = false;
  }
  if (decl.jobKind != ast::JobKind::Compress && !decl.recipe.empty()) {
    error(decl.recipeLoc, std::string("only compress jobs take a recipe ('with ") +
                              decl.recipe + "')");
    ok = false;
  }
  if (!decl.recipe.empty()) {
    const ast::Decl *r = lookupGlobal(decl.recipe);
    if (!r || !llvm::isa<ast::RecipeDecl>(r)) {
      std::vector<std::string> names;
      for (const auto &kv : globals)
        if (llvm::isa<ast::RecipeDecl>(kv.second))
          names.push_back(kv.first);
      error(decl.recipeLoc, "unknown recipe '" + decl.recipe + "'" + suggest(decl.recipe, names));
      ok = false;
    }
  }
  if (decl.jobKind == ast::JobKind::Tune && !decl.from) {
    error(decl.nameLoc, "a tune job starts from a trained backbone: tune " + decl.name +
                            " for " + job.modelName + " from \"checkpoint\" { ... }");
    ok = false;
  }

  std::vector<ValueSpec> schema = jobSchema(decl.jobKind);
  ValueChecker checker(*this);
  std::set<std::string> seen;
  for (const ast::Setting &s : decl.settings) {
    auto it = std::find_if(schema.begin(), schema.end(),
                           [&](const ValueSpec &v) { return s.key == v.key; });
    if (it == schema.end()) {
      std::vector<std::string> keys;
      for (const ValueSpec &v : schema)
        keys.push_back(v.key);
      error(s.loc, "unknown setting '" + s.key + "' for a " + ast::spelling(decl.jobKind) +
                       " job" + suggest(s.key, keys));
      ok = false;
      continue;
    }
    if (!seen.insert(s.key).second) {
      error(s.loc, "setting '" + s.key + "' is given twice");
      ok = false;
      continue;
    }
    Scope empty;
    SValue v = evalConst(*s.value, empty, /*enumContext=*/true);
    if (v.isError()) {
      ok = false;
      continue;
    }
    if (v.kind != SValue::Kind::Const) {
      error(s.value->loc, "setting '" + s.key + "' must be a constant");
      ok = false;
      continue;
    }
    v.c.loc = s.value->loc;
    if (!checker.check(*it, v.c, s.value->loc, "setting '" + s.key + "'")) {
      ok = false;
      continue;
    }
    job.settings[s.key] = v.c;
  }
  for (const ValueSpec &v : schema)
    if (v.required && !seen.count(v.key)) {
      error(decl.nameLoc, std::string(ast::spelling(decl.jobKind)) + " job '" + decl.name +
                              "' needs the setting '" + v.key + "'");
      ok = false;
    }
  if (!ok)
    return std::nullopt;
  auto intSetting = [&](const char *k, int64_t d) {
    auto it = job.settings.find(k);
    return it == job.settings.end() ? d : it->second.i;
  };
  job.batch = intSetting("batch", 1);
  job.seq = intSetting("seq", 0); // infer: 0 = the model's ctx, bound later
  return job;
}

bool Sema::checkJobAgainstModel(const ast::JobDecl &decl, program::Job &job,
                                const LayerInstance &model) {
  // `checkpoint = h` / `["h", "enc"]` names layer instances of the model.
  auto it = job.settings.find("checkpoint");
  if (it == job.settings.end())
    return true;
  std::vector<Constant> names =
      it->second.kind == K::List ? it->second.elements : std::vector<Constant>{it->second};
  bool ok = true;
  for (const Constant &n : names) {
    const LayerInstance *cur = &model;
    std::string path = n.s;
    size_t start = 0;
    while (cur && start <= path.size()) {
      size_t dot = path.find('.', start);
      std::string part = path.substr(start, dot == std::string::npos ? std::string::npos
                                                                      : dot - start);
      cur = cur->child(part);
      if (dot == std::string::npos)
        break;
      start = dot + 1;
    }
    if (!cur) {
      std::vector<std::string> names;
      for (const auto &c : model.children)
        names.push_back(c->name);
      const ast::Setting *s = nullptr;
      for (const ast::Setting &x : decl.settings)
        if (x.key == "checkpoint")
          s = &x;
      error(s ? s->value->loc : decl.loc, "checkpoint: '" + path + "' is not a layer of " +
                                              job.modelName + suggest(path, names));
      ok = false;
    }
  }
  return ok;
}

void Sema::checkTemplate(const ast::TemplateDecl &t, program::Program &p) {
  static const std::set<std::string> known = {"text_a", "text_b", "mask", "soft", "label"};
  program::Template out{t.name, t.text, {}, t.loc};
  const std::string &s = t.text;
  bool ok = true;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '}') {
      if (i + 1 < s.size() && s[i + 1] == '}') {
        ++i;
        continue;
      }
      error(t.textLoc, "template '" + t.name + "': unmatched '}' (write '}}' for a brace)");
      ok = false;
      break;
    }
    if (s[i] != '{')
      continue;
    if (i + 1 < s.size() && s[i + 1] == '{') {
      ++i;
      continue;
    }
    size_t close = s.find('}', i);
    if (close == std::string::npos) {
      error(t.textLoc, "template '" + t.name + "': '{' without a closing '}'");
      ok = false;
      break;
    }
    std::string name = s.substr(i + 1, close - i - 1);
    if (!known.count(name)) {
      error(t.textLoc, "template '" + t.name + "': unknown placeholder '{" + name +
                           "}' (expected {text_a}, {text_b}, {mask}, {soft} or {label})");
      ok = false;
    }
    out.placeholders.push_back(name);
    i = close;
  }
  if (ok && std::count(out.placeholders.begin(), out.placeholders.end(), "mask") > 1) {
    error(t.textLoc, "template '" + t.name + "' has more than one {mask}");
    ok = false;
  }
  if (ok)
    p.templates.push_back(std::move(out));
}

void Sema::checkVerbalizer(const ast::VerbalizerDecl &v, program::Program &p) {
  program::Verbalizer out{v.name, {}, v.loc};
  std::set<std::string> labels;
  bool ok = true;
  if (v.labels.empty()) {
    error(v.nameLoc, "verbalizer '" + v.name + "' has no labels");
    ok = false;
  }
  for (const auto &l : v.labels) {
    if (!labels.insert(l.name).second) {
      error(l.loc, "label '" + l.name + "' appears twice in verbalizer '" + v.name + "'");
      ok = false;
    }
    if (l.words.empty()) {
      error(l.loc, "label '" + l.name + "' has no label words");
      ok = false;
    }
    for (size_t i = 0; i < l.words.size(); ++i)
      if (l.words[i].empty()) {
        error(l.wordLocs[i], "a label word cannot be empty");
        ok = false;
      }
    out.labels.emplace_back(l.name, l.words);
  }
  if (ok)
    p.verbalizers.push_back(std::move(out));
}

void Sema::checkRecipe(const ast::RecipeDecl &r, program::Program &p) {
  static const std::vector<std::string> verbs = {"distill", "prune", "quantize", "moefy"};
  program::Recipe out{r.name, {}, r.loc};
  bool ok = true;
  Scope empty;
  for (const ast::Directive &d : r.directives) {
    if (std::find(verbs.begin(), verbs.end(), d.verb) == verbs.end()) {
      error(d.loc, "unknown recipe step '" + d.verb + "' (expected distill, prune, quantize "
                   "or moefy)" + suggest(d.verb, verbs));
      ok = false;
      continue;
    }
    program::Directive pd{d.verb, {}, d.loc};
    std::vector<Constant> args;
    for (const ast::ExprPtr &a : d.args) {
      SValue v = evalConst(*a, empty, true);
      if (v.isError() || v.kind != SValue::Kind::Const) {
        ok = false;
        continue;
      }
      v.c.loc = a->loc;
      args.push_back(v.c);
    }
    std::map<std::string, VT> keys;
    auto argError = [&](const std::string &msg) {
      error(d.loc, d.verb + ": " + msg);
      ok = false;
    };
    if (d.verb == "distill") {
      if (!d.fromModel) {
        argError("needs a teacher: distill from MODEL [@ \"checkpoint\"] { ... }");
      } else {
        const auto *n = dyn_cast<ast::NameExpr>(d.fromModel->callee.get());
        const ast::Decl *m = n ? lookupGlobal(n->name) : nullptr;
        if (!m || !(llvm::isa<ast::LayerDecl>(m) || llvm::isa<ast::ModelAliasDecl>(m))) {
          error(d.fromModel->loc, "distill: unknown teacher model '" + (n ? n->name : "") + "'");
          ok = false;
        } else {
          pd.options["from"] = Constant::ofString(n->name);
        }
      }
      if (d.fromPath)
        pd.options["checkpoint"] = Constant::ofString(*d.fromPath);
      if (!args.empty())
        argError("takes no positional arguments");
      keys = {{"kl", VT::Float}, {"ce", VT::Float}, {"mse_hidden", VT::Names},
              {"temperature", VT::PosFloat}};
    } else if (d.verb == "prune") {
      if (args.size() != 1) {
        argError("expects one pattern: N:M (such as 2:4), heads, layers or unstructured");
      } else if (args[0].kind == K::Pair && args[0].s == ":") {
        const Constant &n = args[0].elements[0], &m = args[0].elements[1];
        if (n.kind != K::Int || m.kind != K::Int || n.i <= 0 || m.i <= n.i)
          argError("an N:M pattern needs integers with 0 < N < M, got " + args[0].str());
        pd.options["pattern"] = args[0];
      } else if (args[0].kind == K::Enum &&
                 (args[0].s == "heads" || args[0].s == "layers" || args[0].s == "unstructured")) {
        pd.options["pattern"] = args[0];
      } else {
        argError("unknown pruning pattern " + args[0].str() +
                 " (expected N:M, heads, layers or unstructured)");
      }
      keys = {{"sparsity", VT::UnitFloat}, {"steps", VT::PosInt}};
    } else if (d.verb == "quantize") {
      if (args.empty() || args.size() > 2 || args[0].kind != K::Enum ||
          (args[0].s != "int8" && args[0].s != "int4"))
        argError("expects a format (int8 or int4) and optionally qat or ptq");
      else {
        pd.options["format"] = args[0];
        if (args.size() == 2) {
          if (args[1].kind != K::Enum || (args[1].s != "qat" && args[1].s != "ptq"))
            argError("the mode is qat or ptq, got " + args[1].str());
          pd.options["mode"] = args[1];
        }
      }
    } else if (d.verb == "moefy") {
      if (args.size() != 1 || args[0].kind != K::String)
        argError("expects the layers to split as a pattern string, e.g. moefy \"*.mlp\"");
      else
        pd.options["pattern"] = args[0];
      keys = {{"experts", VT::PosInt}, {"top", VT::PosInt}};
    }
    if (d.on) {
      SValue v = evalConst(*d.on, empty, true);
      if (!v.isError() && v.kind == SValue::Kind::Const)
        pd.options["on"] = v.c;
      else
        ok = false;
    }
    ValueChecker checker(*this);
    for (const ast::Setting &s : d.settings) {
      auto it = keys.find(s.key);
      if (it == keys.end()) {
        std::vector<std::string> names;
        for (const auto &kv : keys)
          names.push_back(kv.first);
        error(s.loc, d.verb + " has no option '" + s.key + "'" + suggest(s.key, names));
        ok = false;
        continue;
      }
      SValue v = evalConst(*s.value, empty, true);
      if (v.isError() || v.kind != SValue::Kind::Const) {
        ok = false;
        continue;
      }
      ValueSpec spec{s.key.c_str(), it->second, {}};
      if (!checker.check(spec, v.c, s.value->loc, d.verb + " option '" + s.key + "'")) {
        ok = false;
        continue;
      }
      pd.options[s.key] = v.c;
    }
    if (d.verb == "moefy" && pd.options.count("experts") && pd.options.count("top") &&
        pd.options["top"].i > pd.options["experts"].i)
      argError("top (" + std::to_string(pd.options["top"].i) +
               ") cannot exceed experts (" + std::to_string(pd.options["experts"].i) + ")");
    out.directives.push_back(std::move(pd));
  }
  if (ok)
    p.recipes.push_back(std::move(out));
}
