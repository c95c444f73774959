//===- SemaSettings.cpp - Checking settings against a schema --------------===//
//
// The configuration calls a job may use, each with its argument list, and
// the checker that matches a constant against a value spec.
//
//===----------------------------------------------------------------------===//
#include "lang/SemaSettings.h"

#include <algorithm>

using namespace bmb;
using namespace bmb::sema;
using K = Constant::Kind;

namespace {

const std::vector<CallSpec> &callSpecs() {
  static const std::vector<CallSpec> specs = {
      // data sources
      {"text", {{"path", VT::String, {}, true}, {"tokenizer", VT::Word, {"gpt2", "bert", "byte", "llama"}}}},
      {"tokens", {{"path", VT::String, {}, true}}},
      {"jsonl", {{"path", VT::String, {}, true}, {"field", VT::String, {}}, {"tokenizer", VT::Word, {"gpt2", "bert", "byte", "llama"}}, {"labels", VT::Names, {}}}},
      {"tsv", {{"path", VT::String, {}, true}, {"text_a", VT::NonNegInt, {}}, {"text_b", VT::NonNegInt, {}}, {"label", VT::NonNegInt, {}}, {"labels", VT::Names, {}}}},
      // optimizers
      {"adamw", {{"lr", VT::PosFloat, {}}, {"betas", VT::Pairs, {}}, {"eps", VT::PosFloat, {}}, {"weight_decay", VT::Float, {}}, {"no_decay", VT::Names, {}}}},
      {"adam", {{"lr", VT::PosFloat, {}}, {"betas", VT::Pairs, {}}, {"eps", VT::PosFloat, {}}}},
      {"sgd", {{"lr", VT::PosFloat, {}}, {"momentum", VT::UnitFloat, {}}, {"weight_decay", VT::Float, {}}}},
      // training objectives (bmb-attach-loss): mask_id is the [MASK] token
      {"causal_lm", {}},
      {"masked_lm", {{"prob", VT::UnitFloat, {}}, {"mask_id", VT::NonNegInt, {}}}},
      // learning-rate schedules
      {"constant", {{"warmup", VT::NonNegInt, {}}}},
      {"linear", {{"warmup", VT::NonNegInt, {}}, {"min_lr", VT::Float, {}}}},
      {"cosine", {{"warmup", VT::NonNegInt, {}}, {"min_lr", VT::Float, {}}}},
      // deltas
      // deltas (passes/InsertDeltas.cpp): `on`/`exclude` are layer selectors
      {"lora", {{"rank", VT::PosInt, {}, true}, {"alpha", VT::PosFloat, {}}, {"on", VT::Names, {}}, {"dropout", VT::UnitFloat, {}}, {"exclude", VT::Names, {}}, {"merge", VT::Bool, {}}}},
      {"adapter", {{"dim", VT::PosInt, {}, true}, {"on", VT::Names, {}}, {"act", VT::Word, {"relu", "gelu", "gelu_tanh", "silu", "tanh"}}, {"parallel", VT::Bool, {}}, {"exclude", VT::Names, {}}}},
      {"prefix", {{"length", VT::PosInt, {}, true}, {"on", VT::Names, {}}, {"exclude", VT::Names, {}}, {"reparameterize", VT::Bool, {}}}},
      {"bitfit", {{"on", VT::Names, {}}, {"exclude", VT::Names, {}}}},
      // sampling
      {"greedy", {}},
      {"temperature", {{"temperature", VT::PosFloat, {}, true}}},
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

/// `T -> V` / `T -> [V1, V2]` as the call `prompt(template = T, KEY = VALUE)`
/// the passes read, located at the arrow.
Constant promptCall(const Constant &arrow, const char *key, Constant value) {
  Constant call;
  call.kind = K::Call;
  call.s = "prompt";
  call.loc = arrow.loc;
  call.keywords = {{"template", Constant::ofString(arrow.elements[0].s)},
                   {key, std::move(value)}};
  return call;
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

} // namespace

std::string bmb::sema::joinWords(const std::vector<std::string> &w) {
  std::string s;
  for (const std::string &x : w)
    s += (s.empty() ? "" : ", ") + x;
  return s;
}

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
    case VT::Configs:
      if (c.kind == K::List) {
        bool ok = !c.elements.empty() || fail("at least one of " + joinWords(spec.words));
        for (Constant &el : c.elements)
          ok &= checkConfig(spec, el, el.loc.valid() ? el.loc : loc, what);
        return ok;
      }
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
        if (ok)
          c = promptCall(c, "verbalizer", Constant::ofString(c.elements[1].s));
        return ok;
      }
      // `T -> [V1, V2]`: one verbalizer per {mask}, in order.
      if (c.kind == K::Pair && c.s == "->" && c.elements[0].kind == K::Enum &&
          c.elements[1].kind == K::List && !c.elements[1].elements.empty() &&
          std::all_of(c.elements[1].elements.begin(), c.elements[1].elements.end(),
                      [](const Constant &e) { return e.kind == K::Enum; })) {
        bool ok = expectDecl<ast::TemplateDecl>(c.elements[0], "template");
        Constant names;
        names.kind = K::List;
        for (const Constant &v : c.elements[1].elements) {
          ok &= expectDecl<ast::VerbalizerDecl>(v, "verbalizer");
          names.elements.push_back(Constant::ofString(v.s));
        }
        if (ok)
          c = promptCall(c, "verbalizers", names);
        return ok;
      }
      return fail("template -> verbalizer, or template -> [verbalizer, ...] (one per {mask})");
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
      // A named copy for the lambda: capturing a structured binding is C++20.
      const std::string &key = k;
      auto it = std::find_if(cs->args.begin(), cs->args.end(),
                             [&](const ValueSpec &a) { return key == a.key; });
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

bool bmb::sema::checkValue(Sema &sema, const ValueSpec &spec, Constant &c, Loc loc,
                           const std::string &what) {
  ValueChecker checker(sema);
  return checker.check(spec, c, loc, what);
}
