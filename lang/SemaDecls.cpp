//===- SemaDecls.cpp - Templates, verbalizers and recipes -----------------===//
//
// Declarations that need no model: checked in every loaded file. Later
// passes (prompt lowering, compression) give them meaning.
//
//===----------------------------------------------------------------------===//
#include "dialects/Bmb/TemplateRules.h"
#include "lang/SemaSettings.h"

#include <algorithm>
#include <set>

using namespace bmb;
using namespace bmb::sema;
using llvm::dyn_cast;
using K = Constant::Kind;

void Sema::checkTemplate(const ast::TemplateDecl &t, program::Program &p) {
  program::Template out{t.name, t.text, {}, t.loc};
  templates::Plan plan = templates::plan(t.text);
  if (!plan.error.empty()) {
    // Point at the offending brace: past the opening quote, counting the
    // characters the source had to escape (\" \\ \n \r) twice.
    Loc at = t.textLoc;
    at.col += 1 + plan.errorOffset;
    for (size_t i = 0; i < plan.errorOffset && i < t.text.size(); ++i)
      at.col += std::string_view("\"\\\n\r").find(t.text[i]) != std::string_view::npos;
    error(at, "template '" + t.name + "': " + plan.error);
    return;
  }
  for (const templates::Segment &s : plan.segments)
    if (s.kind != templates::Segment::Kind::Text)
      out.placeholders.push_back(s.kind == templates::Segment::Kind::Field ? s.text
                                                                         : templates::kindName(s.kind));
  p.templates.push_back(std::move(out));
}

void Sema::checkVerbalizer(const ast::VerbalizerDecl &v, program::Program &p) {
  program::Verbalizer out{v.name, {}, "mean", false, false, v.loc};
  std::set<std::string> labels;
  bool ok = true;
  for (const auto &l : v.labels) {
    if (!l.option)
      continue;
    const std::string &value = *l.option;
    auto flag = [&](bool &to) {
      if (value == "true" || value == "false")
        to = value == "true";
      else {
        error(l.loc, "verbalizer '" + v.name + "': " + l.name + " is true or false, got '" + value + "'");
        ok = false;
      }
    };
    if (l.name == "reduce") {
      if (value == "mean" || value == "first" || value == "max")
        out.reduce = value;
      else {
        error(l.loc, "verbalizer '" + v.name + "': reduce is mean, first or max (how a label "
                     "word of several tokens is scored), got '" + value + "'");
        ok = false;
      }
    } else if (l.name == "soft") {
      flag(out.soft);
    } else if (l.name == "calibrate") {
      flag(out.calibrate);
    } else {
      error(l.loc, "verbalizer '" + v.name + "': unknown option '" + l.name +
                       "' (options are reduce, soft and calibrate; a label's words are strings: " +
                       l.name + " = [\"" + value + "\"])");
      ok = false;
    }
  }
  bool anyLabel = false;
  for (const auto &l : v.labels) {
    if (l.option)
      continue;
    anyLabel = true;
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
  if (!anyLabel) {
    error(v.nameLoc, "verbalizer '" + v.name + "' has no labels");
    ok = false;
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
        bool argsOk = true;
        std::vector<BoundArg> args = evalArgs(d.fromModel->args, empty, argsOk);
        const ast::LayerDecl *teacher =
            n && argsOk ? resolveModel(n->name, n->loc, args, /*requireModel=*/true) : nullptr;
        if (!teacher) {
          ok = false;
        } else {
          // The teacher is instantiated by the distillation pass; its
          // hyperparameter names are checked now.
          Constant from;
          from.kind = K::Call;
          from.s = n->name;
          for (const BoundArg &a : args) {
            bool known = false;
            std::vector<std::string> names;
            for (const ast::HyperParam &hp : teacher->hyperParams) {
              known |= hp.name == a.keyword;
              names.push_back(hp.name);
            }
            if (!known) {
              error(a.loc, "'" + teacher->name + "' has no hyperparameter '" + a.keyword +
                               "'" + suggest(a.keyword, names));
              ok = false;
              continue;
            }
            from.keywords.emplace_back(a.keyword, a.value.c);
          }
          pd.options["from"] = Constant::ofString(n->name);
          if (!from.keywords.empty()) {
            // Overrides of the teacher's hyperparameters, by name.
            from.s = "hyperparameters";
            pd.options["teacher"] = from;
          }
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
      if (!checkValue(*this, spec, v.c, s.value->loc, d.verb + " option '" + s.key + "'")) {
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
