//===- SemaInternal.h - Sema's state, shared by its source files -*- C++ -*-===//
//
// Sema is one class split over files by concern: SemaExpr.cpp evaluates
// compile-time expressions, SemaLayer.cpp instantiates layers, SemaForward.cpp
// elaborates forward bodies into graphs, SemaJob.cpp checks jobs, templates,
// verbalizers and recipes, SemaCheckpoint.cpp checks checkpoint name maps,
// Sema.cpp collects symbols and drives it all.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_LANG_SEMAINTERNAL_H
#define BMB_LANG_SEMAINTERNAL_H

#include "lang/Sema.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace bmb::sema {

using program::Constant;
using program::LayerInstance;
using program::ValueId;
using program::kNoValue;
using shapes::Sig;

/// A value while elaborating: a compile-time constant, a tensor of the graph
/// being built, a parameter, a child layer instance, a tuple of tensors (a
/// forward with several results), something switched off by its `if`, or
/// an error that was already reported (it propagates silently, so one
/// mistake gives one message).
struct SValue {
  enum class Kind { Error, Const, Tensor, Param, Layer, Tuple, Absent };
  Kind kind = Kind::Error;
  Constant c;                 // Const
  ValueId v = -1;             // Tensor
  std::string path;           // Param: full path; Absent: the member's name
  Sig sig;                    // Param
  int repeatDepth = 0;        // Param: enclosing repeats below the reader
  LayerInstance *layer = nullptr; // Layer
  std::vector<SValue> elems;  // Tuple
  Loc loc;                    // where it was defined (for Absent: the member)

  static SValue error() { return {}; }
  static SValue constant(Constant c) {
    SValue s;
    s.kind = Kind::Const;
    s.c = std::move(c);
    return s;
  }
  /// A member switched off by its `if`: a use says why it is missing.
  static SValue absent(std::string name, Loc where) {
    SValue s;
    s.kind = Kind::Absent;
    s.path = std::move(name);
    s.loc = where;
    return s;
  }
  static SValue tensor(ValueId v) {
    SValue s;
    s.kind = Kind::Tensor;
    s.v = v;
    return s;
  }
  bool isError() const { return kind == Kind::Error; }
};

/// Names visible at a point: a forward body's locals over its layer's scope.
struct Scope {
  const Scope *parent = nullptr;
  std::map<std::string, SValue> names;
  const SValue *lookup(const std::string &name) const {
    for (const Scope *s = this; s; s = s->parent) {
      auto it = s->names.find(name);
      if (it != s->names.end())
        return &it->second;
    }
    return nullptr;
  }
};

/// What Sema remembers about an instance until its forward is elaborated
/// (lazily, at the first call, because input shapes come from the caller).
struct InstanceState {
  const ast::LayerDecl *decl = nullptr;
  std::unique_ptr<Scope> scope;
  bool elaborating = false, elaborated = false, failed = false;
  std::vector<Sig> inputs, outputs;
  int repeatDepth = 0; // number of repeats this instance is inside (itself included)
};

class Sema {
public:
  Sema(const LoadedFiles &files, const FrontendOptions &options,
       const SourceManager &sources, DiagnosticEngine &diags)
      : files(files), options(options), sources(sources), diags(diags) {}

  std::optional<program::Program> run();

  //--- Diagnostics (Sema.cpp) ---------------------------------------------
  /// Reports an error with the current instantiation/call context as notes.
  Diagnostic &error(Loc loc, const std::string &message);
  struct ContextEntry {
    Loc loc;
    std::string note;
  };
  std::vector<ContextEntry> context;
  struct ContextGuard {
    Sema &s;
    ContextGuard(Sema &s, Loc loc, std::string note) : s(s) {
      s.context.push_back({loc, std::move(note)});
    }
    ~ContextGuard() { s.context.pop_back(); }
  };

  //--- Symbols (Sema.cpp) -------------------------------------------------
  std::map<std::string, const ast::Decl *> globals;
  const ast::Decl *lookupGlobal(const std::string &name) const;
  /// "did you mean 'x'?" for a misspelled name, or "".
  std::string suggest(const std::string &name,
                      const std::vector<std::string> &candidates) const;

  //--- Compile-time expressions (SemaExpr.cpp) ----------------------------
  /// Evaluates a compile-time expression in `scope`. Names that resolve to
  /// nothing are enum constants when `enumContext` (job settings), else an
  /// error. Tensors, layers and parameters in `scope` are returned as is.
  SValue evalConst(const ast::Expr &e, const Scope &scope, bool enumContext = false);
  /// Evaluates and requires a constant of the given kind.
  std::optional<int64_t> evalInt(const ast::Expr &e, const Scope &scope, const char *what);
  std::optional<bool> evalBool(const ast::Expr &e, const Scope &scope, const char *what);
  SValue evalBinaryConst(const ast::BinaryExpr &e, const SValue &a, const SValue &b);
  bool isEnumWord(const std::string &name) const;
  /// "an integer", "a string", "a layer", ... for messages.
  static std::string describe(const SValue &v);

  //--- Layers (SemaLayer.cpp) ---------------------------------------------
  /// Binds `args` to `decl`'s hyperparameters and instantiates its params and
  /// sub-layers. Returns null after reporting errors.
  struct BoundArg {
    std::string keyword;
    Loc loc;
    SValue value;
  };
  std::unique_ptr<LayerInstance>
  instantiate(const ast::LayerDecl &decl, const std::vector<BoundArg> &args,
              const std::string &name, const std::string &path,
              const LayerInstance *parent, Loc loc, int64_t repeat,
              int repeatDepth, unsigned depth);
  bool bindHyperParams(const ast::LayerDecl &decl, const std::vector<BoundArg> &args,
                       Loc loc, Scope &scope, LayerInstance &inst);
  bool checkHyperParamType(const ast::HyperParam &hp, SValue &value, Loc loc);
  std::optional<Sig> evalTensorType(const ast::TensorTypeExpr &t, const Scope &scope);
  std::optional<program::Init> evalInit(const ast::Expr *e, const Scope &scope);
  /// Evaluates call arguments as constants (layer hyperparameters).
  std::vector<BoundArg> evalArgs(const std::vector<ast::Arg> &args, const Scope &scope,
                                 bool &ok);
  /// Resolves a model name, following aliases, into its declaration and the
  /// hyperparameter overrides accumulated along the way.
  const ast::LayerDecl *resolveModel(const std::string &name, Loc loc,
                                     std::vector<BoundArg> &args, bool requireModel);

  std::map<const LayerInstance *, InstanceState> states;
  std::vector<std::unique_ptr<LayerInstance>> graveyard; // failed instances
  std::vector<const ast::LayerDecl *> instStack;         // catches self-containment
  static constexpr int64_t kMaxInstances = 100000;
  int64_t instanceCount = 0;
  Scope globalScope;                                     // B and T
  int64_t batch = 1, seq = 1; // bound to B and T

  //--- Forward bodies (SemaForward.cpp) -----------------------------------
  /// Elaborates `inst`'s forward for the given input signatures (once; later
  /// calls must agree). Returns the output signatures, or nullopt.
  std::optional<std::vector<Sig>> elaborateForward(LayerInstance &inst,
                                                   const std::vector<Sig> &inputs,
                                                   Loc callLoc,
                                                   const std::vector<Loc> &argLocs = {});
  struct GraphBuilder;

  //--- Jobs and the rest (SemaJob.cpp) ------------------------------------
  std::optional<program::Job> checkJob(const ast::JobDecl &job);
  void checkTemplate(const ast::TemplateDecl &t, program::Program &p);
  void checkVerbalizer(const ast::VerbalizerDecl &v, program::Program &p);
  void checkRecipe(const ast::RecipeDecl &r, program::Program &p);
  /// After the model exists: settings that depend on it (infer's default
  /// seq = ctx, checkpoint = layer names).
  bool checkJobAgainstModel(const ast::JobDecl &decl, program::Job &job,
                            const LayerInstance &model);
  /// `precision = fp64`: every f32 tensor of the elaborated model becomes
  /// f64 (SemaPrecision.cpp).
  void applyPrecision(const program::Job &job, LayerInstance &root);

  //--- Checkpoint name maps (SemaCheckpoint.cpp) --------------------------
  /// A rule as read at the top level: its parts by path, not yet resolved.
  struct MapRule {
    const ast::NameRule *rule = nullptr;
    std::vector<std::pair<std::string, Loc>> parts; // "h.attn.q.w", where written
    int64_t axis = 0;
    Loc axisLoc;      // the axis value, or the concat call
    Loc transposeLoc; // valid when transposed
    bool tied = false;
  };
  struct MapDecl {
    const ast::CheckpointDecl *decl = nullptr;
    std::vector<MapRule> rules;
    bool ok = true;
  };
  std::vector<MapDecl> checkpointMaps; // every map of every file, in load order
  /// Top-level checks of one map, needing no model: the model exists, each
  /// rule is well-formed, map names are unique per model, and unconditional
  /// rules have distinct external names.
  void checkCheckpoint(const ast::CheckpointDecl &decl);
  /// Checks the maps that apply to `modelName` (declared for it or for a
  /// model it aliases) against the elaborated model `root`, whose scope
  /// evaluates the rules' conditions, and adds them to `p`.
  bool elaborateCheckpoints(const std::string &modelName, const LayerInstance &root,
                            const Scope &rootScope, program::Program &p);

  const LoadedFiles &files;
  const FrontendOptions &options;
  const SourceManager &sources;
  DiagnosticEngine &diags;
};

/// Builds one instance's forward graph (SemaForward.cpp, SemaPrimitives.cpp).
struct Sema::GraphBuilder {
  Sema &sema;
  LayerInstance &inst;
  InstanceState &state;
  program::Graph &g;
  std::map<std::string, ValueId> paramValues;

  ValueId newValue(const Sig &sig, Loc loc) {
    g.values.push_back({sig, loc});
    return static_cast<ValueId>(g.values.size() - 1);
  }
  const Sig &sigOf(ValueId v) const { return g.values[v].sig; }

  std::string where() const {
    return "'" + inst.layerName + "'" +
           (inst.path.empty() ? std::string() : " (as '" + inst.path + "')");
  }

  /// A tensor operand from a value: parameters become `param` nodes (once
  /// per graph). Reports and returns kNoValue for anything else.
  ValueId asTensor(const SValue &v, Loc loc, const std::string &what) {
    switch (v.kind) {
    case SValue::Kind::Tensor:
      return v.v;
    case SValue::Kind::Param: {
      if (v.repeatDepth > state.repeatDepth) {
        sema.error(loc, "parameter '" + v.path +
                            "' belongs to a repeated layer and is stacked over its "
                            "iterations; it can only be used inside that layer");
        return kNoValue;
      }
      auto it = paramValues.find(v.path);
      if (it != paramValues.end())
        return it->second;
      program::Node n;
      n.op = "param";
      n.paramPath = v.path;
      n.loc = loc;
      ValueId id = newValue(v.sig, v.loc);
      n.results.push_back(id);
      g.nodes.push_back(std::move(n));
      paramValues[v.path] = id;
      return id;
    }
    case SValue::Kind::Error:
      return kNoValue;
    case SValue::Kind::Absent:
      sema.error(loc, "'" + v.path + "' is switched off by its 'if' condition")
          .note(v.loc, "declared here");
      return kNoValue;
    default:
      sema.error(loc, what + " must be a tensor, got " + describe(v));
      return kNoValue;
    }
  }

  /// Adds a node; `rule` already checked the operands.
  SValue addNode(const std::string &op, std::vector<ValueId> operands,
                 const shapes::Result &rule, Loc loc,
                 std::vector<std::pair<std::string, Constant>> attrs = {}) {
    if (!rule.ok()) {
      // Say where each operand came from: a mismatch is usually decided
      // far from the op that detects it.
      Diagnostic &d = sema.error(loc, rule.error);
      size_t at = 0; // before the instantiation context
      for (size_t i = 0; i < operands.size() && i < 4; ++i) {
        ValueId v = operands[i];
        if (v == kNoValue || !g.values[v].loc.valid())
          continue;
        d.notes.insert(d.notes.begin() + static_cast<long>(at++),
                       {g.values[v].loc, "operand " + std::to_string(i + 1) + " (" +
                                             shapes::str(g.values[v].sig) +
                                             ") comes from here"});
      }
      return SValue::error();
    }
    program::Node n;
    n.op = op;
    n.operands = std::move(operands);
    std::sort(attrs.begin(), attrs.end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });
    n.attrs = std::move(attrs);
    n.loc = loc;
    for (const Sig &s : rule.results)
      n.results.push_back(newValue(s, loc));
    g.nodes.push_back(n);
    if (n.results.size() == 1)
      return SValue::tensor(n.results[0]);
    SValue t;
    t.kind = SValue::Kind::Tuple;
    for (ValueId r : n.results)
      t.elems.push_back(SValue::tensor(r));
    return t;
  }

  SValue eval(const ast::Expr &e, Scope &locals);
  SValue evalBinary(const ast::BinaryExpr &e, Scope &locals);
  SValue evalCall(const ast::CallExpr &e, Scope &locals);
  SValue callLayer(LayerInstance &child, const ast::CallExpr &e, Scope &locals);
  SValue callPrimitive(const std::string &name, const ast::CallExpr &e, Scope &locals);
  /// Runs statements; sets `returned` when a return was executed.
  bool run(const std::vector<ast::StmtPtr> &body, Scope &locals, bool &returned);
};


} // namespace bmb::sema

#endif // BMB_LANG_SEMAINTERNAL_H
