//===- Sema.cpp - Symbols, diagnostics and the driver of Sema -------------===//
#include "lang/SemaInternal.h"

#include <algorithm>
#include <functional>

using namespace bmb;
using namespace bmb::sema;
using llvm::dyn_cast;

Diagnostic &Sema::error(Loc loc, const std::string &message) {
  Diagnostic &d = diags.error(loc, message);
  // Innermost context first; a few levels are enough to find the place.
  constexpr size_t maxNotes = 8;
  size_t shown = 0;
  for (auto it = context.rbegin(); it != context.rend() && shown < maxNotes; ++it) {
    if (it->loc.line == loc.line && it->loc.file == loc.file && it->loc.col == loc.col)
      continue;
    d.note(it->loc, it->note);
    ++shown;
  }
  return d;
}

const ast::Decl *Sema::lookupGlobal(const std::string &name) const {
  auto it = globals.find(name);
  return it == globals.end() ? nullptr : it->second;
}

/// Edit distance counting a swap of neighbours as one edit (`bacth`).
static size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string Sema::suggest(const std::string &name,
                          const std::vector<std::string> &candidates) const {
  if (name.size() > 64)
    return "";
  std::string best;
  size_t bestDist = std::max<size_t>(1, name.size() / 3) + 1;
  for (const std::string &c : candidates) {
    if (c == name || c.size() > 64)
      continue;
    size_t d = editDistance(name, c);
    if (d < bestDist) {
      bestDist = d;
      best = c;
    }
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

static const char *declKind(const ast::Decl &d) {
  switch (d.getKind()) {
  case ast::Decl::Kind::Layer:
    return static_cast<const ast::LayerDecl &>(d).isModel ? "model" : "layer";
  case ast::Decl::Kind::ModelAlias:
    return "model";
  case ast::Decl::Kind::Job:
    return "job";
  case ast::Decl::Kind::Template:
    return "template";
  case ast::Decl::Kind::Verbalizer:
    return "verbalizer";
  case ast::Decl::Kind::Recipe:
    return "recipe";
  case ast::Decl::Kind::Import:
    return "import";
  case ast::Decl::Kind::Checkpoint:
    return "checkpoint map";
  }
  return "declaration";
}

std::optional<program::Program> Sema::run() {
  // 1. Every top-level name, across all files, is unique. Imports first, so
  // a clash is reported in the file that redefines a name (usually the
  // user's, shadowing the stdlib). Checkpoint maps are named per model, not
  // globally.
  std::vector<const ast::File *> order;
  for (size_t i = 1; i < files.files.size(); ++i)
    order.push_back(files.files[i].get());
  order.push_back(files.files.front().get());
  for (const ast::File *file : order)
    for (const ast::DeclPtr &d : file->decls) {
      if (llvm::isa<ast::ImportDecl, ast::CheckpointDecl>(d.get()))
        continue;
      auto [it, inserted] = globals.emplace(d->name, d.get());
      if (!inserted)
        error(d->nameLoc, std::string("redefinition of ") + declKind(*d) + " '" + d->name + "'")
            .note(it->second->nameLoc, std::string("previous definition (a ") +
                                           declKind(*it->second) + ") is here");
    }

  program::Program prog;
  // 2. Declarations that need no model: checked in every file.
  for (const auto &file : files.files)
    for (const ast::DeclPtr &d : file->decls) {
      if (const auto *t = dyn_cast<ast::TemplateDecl>(d.get()))
        checkTemplate(*t, prog);
      else if (const auto *v = dyn_cast<ast::VerbalizerDecl>(d.get()))
        checkVerbalizer(*v, prog);
      else if (const auto *r = dyn_cast<ast::RecipeDecl>(d.get()))
        checkRecipe(*r, prog);
      else if (const auto *c = dyn_cast<ast::CheckpointDecl>(d.get()))
        checkCheckpoint(*c);
    }

  // 3. Which job (or model) to elaborate.
  const ast::File &main = *files.files.front();
  std::vector<const ast::JobDecl *> jobs;
  std::vector<const ast::Decl *> models;
  for (const ast::DeclPtr &d : main.decls) {
    if (const auto *j = dyn_cast<ast::JobDecl>(d.get()))
      jobs.push_back(j);
    else if (const auto *l = dyn_cast<ast::LayerDecl>(d.get()); l && l->isModel)
      models.push_back(l);
    else if (llvm::isa<ast::ModelAliasDecl>(d.get()))
      models.push_back(d.get());
  }
  Loc fileLoc; // file-level errors: the message names the file
  auto names = [](const auto &decls) {
    std::string s;
    for (const auto *d : decls)
      s += (s.empty() ? "" : ", ") + d->name;
    return s;
  };

  // Every job in the main file has its settings checked, selected or not.
  std::map<const ast::JobDecl *, program::Job> checkedJobs;
  for (const ast::JobDecl *j : jobs)
    if (std::optional<program::Job> job = checkJob(*j))
      checkedJobs.emplace(j, std::move(*job));

  const ast::JobDecl *job = nullptr;
  std::string modelName;
  Loc modelLoc;
  std::vector<BoundArg> modelArgs;
  if (!options.job.empty()) {
    auto it = std::find_if(jobs.begin(), jobs.end(),
                           [&](const ast::JobDecl *j) { return j->name == options.job; });
    if (it == jobs.end()) {
      std::vector<std::string> jobNames;
      for (const auto *j : jobs)
        jobNames.push_back(j->name);
      diags.error(fileLoc, "no job named '" + options.job + "' in " +
                               sources.path(main.fileId) +
                               (jobs.empty() ? " (it has no jobs)"
                                             : " (its jobs: " + names(jobs) + ")" +
                                                   suggest(options.job, jobNames)));
      return std::nullopt;
    }
    job = *it;
  } else if (jobs.size() == 1 && options.model.empty()) {
    job = jobs.front();
  } else if (jobs.size() > 1 && options.model.empty()) {
    diags.error(fileLoc, sources.path(main.fileId) + " has " + std::to_string(jobs.size()) +
                             " jobs; choose one with --job (" + names(jobs) +
                             ") or a model with --model");
    return std::nullopt;
  }

  if (job) {
    modelName = llvm::cast<ast::NameExpr>(*job->model->callee).name;
    modelLoc = job->model->callee->loc;
    bool ok = true;
    modelArgs = evalArgs(job->model->args, globalScope, ok);
    if (!ok)
      return std::nullopt;
    auto it = checkedJobs.find(job);
    if (it == checkedJobs.end())
      return std::nullopt; // its settings were wrong: already reported
    prog.job = it->second;
    batch = prog.job->batch;
    seq = prog.job->seq;
  } else {
    if (!options.model.empty()) {
      modelName = options.model;
    } else if (models.size() == 1) {
      modelName = models.front()->name;
    } else {
      diags.error(fileLoc, models.empty()
                               ? sources.path(main.fileId) + " declares no model or job to compile"
                               : sources.path(main.fileId) + " declares " +
                                     std::to_string(models.size()) +
                                     " models; choose one with --model (" + names(models) + ")");
      return std::nullopt;
    }
    modelLoc = fileLoc;
    if (const ast::Decl *d = lookupGlobal(modelName))
      modelLoc = d->nameLoc;
    batch = options.defaultBatch;
    seq = options.defaultSeq;
  }
  if (diags.hasErrors())
    return std::nullopt;

  const ast::LayerDecl *decl = resolveModel(modelName, modelLoc, modelArgs, true);
  if (!decl)
    return std::nullopt;

  // B and T are visible in every layer; a hyperparameter or member of the
  // same name shadows them.
  globalScope.names["B"] = SValue::constant(program::Constant::ofInt(batch));
  if (seq <= 0) {
    // T defaults to the model's context length. Its value is known before
    // instantiation when it is passed (aliases and `for M(...)` arrive as
    // keywords here) or declared as a literal default, so parameters may
    // use T: `param pos: [T, dim]`.
    for (const BoundArg &a : modelArgs)
      if (a.keyword == "ctx" && a.value.kind == SValue::Kind::Const &&
          a.value.c.kind == program::Constant::Kind::Int)
        seq = a.value.c.i;
    if (seq <= 0)
      for (const ast::HyperParam &hp : decl->hyperParams)
        if (hp.name == "ctx" && hp.defaultValue)
          if (const auto *lit = dyn_cast<ast::IntExpr>(hp.defaultValue.get()))
            seq = lit->value;
    if (seq > 0 && prog.job)
      prog.job->seq = seq;
  }
  if (options.seqOverride > 0)
    seq = options.seqOverride;
  if (seq > 0)
    globalScope.names["T"] = SValue::constant(program::Constant::ofInt(seq));
  std::unique_ptr<LayerInstance> root =
      instantiate(*decl, modelArgs, modelName, "", nullptr, modelLoc, 0, 0, 0);
  if (!root)
    return std::nullopt;
  if (seq <= 0) {
    // No job (or an infer job without seq): T is the model's context length.
    for (const auto &[k, v] : root->hyperParams)
      if (k == "ctx" && v.kind == program::Constant::Kind::Int)
        seq = v.i;
    if (seq <= 0) {
      diags.error(modelLoc, "cannot bind T: the job sets no 'seq' and the model has no "
                            "'ctx' hyperparameter");
      return std::nullopt;
    }
    globalScope.names["T"] = SValue::constant(program::Constant::ofInt(seq));
    if (prog.job)
      prog.job->seq = seq;
  }
  if (job && !checkJobAgainstModel(*job, *prog.job, *root))
    return std::nullopt;
  for (const auto &[k, v] : root->hyperParams)
    if (k == "ctx" && v.kind == program::Constant::Kind::Int && seq > v.i) {
      Loc where = modelLoc;
      if (prog.job)
        if (auto it = prog.job->settings.find("seq"); it != prog.job->settings.end())
          where = it->second.loc;
      error(where, "seq = " + std::to_string(seq) + " is longer than the model's context "
                   "length ctx = " + std::to_string(v.i));
      return std::nullopt;
    }

  // The root's inputs need full shapes: they are the program's inputs.
  if (!decl->forward) {
    error(decl->nameLoc, "model '" + decl->name + "' has no forward");
    return std::nullopt;
  }
  std::vector<shapes::Sig> inputs;
  bool ok = true;
  const Scope &rootScope = *states[root.get()].scope;
  for (const ast::ForwardInput &in : decl->forward->inputs) {
    if (!in.type) {
      error(in.loc, "the inputs of a model's forward need a type, e.g. " + in.name +
                        ": i32[B, T]");
      ok = false;
      continue;
    }
    std::optional<shapes::Sig> s = evalTensorType(*in.type, rootScope);
    if (!s) {
      ok = false;
      continue;
    }
    inputs.push_back(*s);
  }
  if (!ok)
    return std::nullopt;
  if (!elaborateForward(*root, inputs, modelLoc) || diags.hasErrors())
    return std::nullopt;
  if (!elaborateCheckpoints(modelName, *root, rootScope, prog))
    return std::nullopt;
  // MLIRGen gives every call its own region, so a layer called k times from
  // a layer called k times ... multiplies. Count before generating.
  constexpr int64_t kMaxOps = 2000000;
  std::map<const LayerInstance *, int64_t> expanded;
  std::function<int64_t(const LayerInstance &)> count = [&](const LayerInstance &inst) {
    auto it = expanded.find(&inst);
    if (it != expanded.end())
      return it->second;
    int64_t n = 0;
    for (const program::Node &node : inst.forward.nodes) {
      n += 1 + (node.callee ? count(*node.callee) : 0);
      if (n > kMaxOps)
        break;
    }
    n = std::min(n, kMaxOps + 1);
    expanded[&inst] = n;
    return n;
  };
  if (count(*root) > kMaxOps) {
    diags.error(modelLoc, "the forward of '" + modelName + "' expands to more than " +
                              std::to_string(kMaxOps) +
                              " ops (layers called many times from layers called many "
                              "times)");
    return std::nullopt;
  }
  if (prog.job)
    applyPrecision(*prog.job, *root);
  prog.model = std::move(root);
  return prog;
}

std::optional<program::Program> bmb::analyze(const LoadedFiles &files,
                                             const FrontendOptions &options,
                                             const SourceManager &sources,
                                             DiagnosticEngine &diags) {
  if (files.files.empty())
    return std::nullopt;
  Sema sema(files, options, sources, diags);
  return sema.run();
}
