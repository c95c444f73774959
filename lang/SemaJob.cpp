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
#include "lang/SemaSettings.h"

#include <algorithm>
#include <cmath>
#include <set>

using namespace bmb;
using namespace bmb::sema;
using llvm::dyn_cast;
using K = Constant::Kind;

namespace {

std::vector<ValueSpec> jobSchema(ast::JobKind kind) {
  const std::vector<std::string> precisions = {"fp32", "fp64", "bf16", "fp16"};
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
         {"objective", VT::Config, {"causal_lm", "masked_lm"}},
         {"schedule", VT::Config, {"constant", "linear", "cosine"}},
         {"grad_accum", VT::PosInt, {}},
         {"clip", VT::PosFloat, {}},
         {"zero", VT::Zero, {}},
         {"checkpoint", VT::Names, {}},
         {"offload", VT::Word, {"none", "optimizer", "params"}},
         {"memory", VT::Size, {}},
         {"ranks", VT::PosInt, {}},
         {"eval_every", VT::PosInt, {}},
         {"save_every", VT::PosInt, {}},
         {"log_every", VT::PosInt, {}},
         {"loss_scale", VT::PosFloat, {}},
         {"loss_scale_window", VT::PosInt, {}}});
  // Delta tuning (passes/InsertDeltas.cpp): train and tune jobs add deltas
  // and freeze by layer/param selectors; an infer job names the deltas its
  // checkpoint was trained with.
  if (kind == ast::JobKind::Train || kind == ast::JobKind::Tune ||
      kind == ast::JobKind::Infer)
    add({{"delta", VT::Configs, {"lora", "adapter", "prefix", "bitfit"}}});
  if (trains)
    add({{"freeze", VT::Names, {}}, {"train_only", VT::Names, {}}});
  if (kind == ast::JobKind::Tune)
    add({{"prompt", VT::Prompt, {}},
         {"truncate", VT::Word, {"head", "tail", "balanced"}}});
  if (kind == ast::JobKind::Infer)
    add({{"batch", VT::PosInt, {}},
         {"seq", VT::PosInt, {}},
         {"quantize", VT::Word, {"none", "int8"}},
         {"memory", VT::Size, {}},
         {"sampling", VT::Config, {"greedy", "temperature", "top_p", "top_k"}},
         {"tokenizer", VT::Word, {"gpt2", "bert", "byte", "llama"}},
         {"max_tokens", VT::PosInt, {}}});
  return s;
}

} // namespace

std::optional<program::Job> Sema::checkJob(const ast::JobDecl &decl) {
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
  std::set<std::string> seen;
  for (const ast::Setting &s : decl.settings) {
    auto it = std::find_if(schema.begin(), schema.end(),
                           [&](const ValueSpec &v) { return s.key == v.key; });
    if (it == schema.end()) {
      std::vector<std::string> keys;
      for (const ValueSpec &v : schema)
        keys.push_back(v.key);
      error(s.loc, "unknown setting '" + s.key + "' for " +
                       (decl.jobKind == ast::JobKind::Infer ? "an " : "a ") +
                       ast::spelling(decl.jobKind) + " job" + suggest(s.key, keys));
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
    if (!checkValue(*this, *it, v.c, s.value->loc, "setting '" + s.key + "'")) {
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
  if (seen.count("freeze") && seen.count("train_only")) {
    for (const ast::Setting &s : decl.settings)
      if (s.key == "train_only")
        error(s.loc, "'freeze' and 'train_only' exclude each other: give one of them");
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
