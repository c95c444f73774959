//===- Program.h - What Sema hands to MLIRGen -------------------*- C++ -*-===//
//
// The elaborated program: a model instantiated with concrete hyperparameters
// (B and T bound by the job, DESIGN decision 1), as a tree of layer instances.
// Each instance owns its parameters (static shapes) and its forward body as a
// small typed dataflow graph of primitive ops and calls to child instances.
// `repeat(n)` stays rolled (decision 2): one instance with `repeat = n`, whose
// parameters MLIRGen stacks as [n, ...].
//
// Everything here is checked: MLIRGen maps it to the `bmb` dialect 1:1 and
// never reports user errors.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_LANG_PROGRAM_H
#define BMB_LANG_PROGRAM_H

#include "dialects/Bmb/ShapeRules.h"
#include "lang/Diagnostics.h"

#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace bmb::program {

using shapes::DType;
using shapes::Sig;

/// A compile-time value in a job setting, an op attribute or an init:
/// none, int, float, bool, string, enum constant, list, tuple, or a
/// configuration call such as `adamw(lr = 1e-3)`.
struct Constant {
  enum class Kind { None, Int, Float, Bool, String, Enum, List, Tuple, Call, Pair };
  Kind kind = Kind::None;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;                     // String, Enum name, Call name, Pair separator (":" or "->")
  std::vector<Constant> elements;    // List, Tuple, Call positional args, Pair's two sides
  std::vector<std::pair<std::string, Constant>> keywords; // Call keyword args
  Loc loc;

  static Constant none() { return {}; }
  static Constant ofInt(int64_t v);
  static Constant ofFloat(double v);
  static Constant ofBool(bool v);
  static Constant ofString(std::string v);
  static Constant ofEnum(std::string v);
  /// Source-like rendering: 8, 6.0e-04, true, "x", gelu, [1, 2], (0.9, 0.95),
  /// adamw(lr = 1.0e-03).
  std::string str() const;
};

/// How a parameter is initialized.
struct Init {
  enum class Kind { Zeros, Ones, Normal, Uniform, Constant } kind = Kind::Zeros;
  double a = 0; // Normal: std; Uniform: low; Constant: value
  double b = 0; // Uniform: high
};

struct Param {
  std::string name; // local name within its layer: "w"
  Sig sig;          // per-iteration signature inside a repeat
  Init init;
  bool trainable = true;
  Loc loc;          // the `param` declaration
};

/// A value in a forward graph: an index into Graph::values.
using ValueId = int32_t;
constexpr ValueId kNoValue = -1;

struct ValueInfo {
  Sig sig;
  Loc loc;
};

struct LayerInstance;

/// One op of a forward graph.
struct Node {
  /// The primitive, spelled as the `bmb` op without its prefix: "linear",
  /// "lm_head", "embedding", "layernorm", "rmsnorm", "attention", "rotary",
  /// "gelu", "relu", "silu", "tanh", "add", "sub", "mul", "scale", "softmax",
  /// "dropout", "cross_entropy", "arange", "take", "split", "reshape",
  /// "transpose"; or
  ///   "param": reads the parameter `paramPath` (its full dotted path from
  ///            the model root, e.g. "h.attn.q.w"), no operands; inside a
  ///            repeat body it reads the current iteration's slice;
  ///   "call":  runs child instance `callee` on the operands.
  std::string op;
  std::vector<ValueId> operands; // kNoValue for an absent optional operand
  std::vector<ValueId> results;
  std::vector<std::pair<std::string, Constant>> attrs; // sorted by name
  std::string paramPath;
  const LayerInstance *callee = nullptr;
  Loc loc; // the call in the user's source
};

struct Graph {
  std::vector<ValueInfo> values;
  std::vector<ValueId> inputs;
  std::vector<std::string> inputNames; // as declared: "tokens", "mask"
  std::vector<Node> nodes; // in execution order
  std::vector<ValueId> outputs;
};

struct LayerInstance {
  std::string name;      // member name in the parent ("h", "ln_f"); the model's name at the root
  std::string path;      // dotted path from the root ("h.attn.q"); empty at the root
  const LayerInstance *parent = nullptr;
  std::string layerName; // the declaration instantiated: "Block"
  Loc loc;               // where it was instantiated (the root: the model declaration)
  Loc declLoc;           // the layer declaration
  /// > 0: the forward body is iterated `repeat` times with stacked parameters;
  /// the first `carried` inputs flow from one iteration to the next (they are
  /// the outputs), the remaining inputs are the same for every iteration.
  int64_t repeat = 0;
  int32_t carried = 0;
  /// Hyperparameters as bound, in declaration order (for dumps and stats).
  std::vector<std::pair<std::string, Constant>> hyperParams;
  std::vector<Param> params; // Param::name is local; the symbol is path + "." + name
  std::vector<std::unique_ptr<LayerInstance>> children;
  Graph forward;

  const LayerInstance *child(const std::string &n) const {
    for (const auto &c : children)
      if (c->name == n)
        return c.get();
    return nullptr;
  }
};

enum class JobKind { Train, Tune, Compress, Infer };

struct Job {
  JobKind kind = JobKind::Train;
  std::string name;
  std::string modelName;     // as written after `for`, e.g. "GPT2Tiny"
  std::string from;          // checkpoint path, may be empty
  std::string recipe;        // recipe name, may be empty
  /// Every setting after defaults are applied, sorted by key.
  std::map<std::string, Constant> settings;
  int64_t batch = 0, seq = 0; // the values bound to B and T
  Loc loc;
};

struct Template {
  std::string name, text;
  std::vector<std::string> placeholders; // "text_a", "mask", ... in order
  Loc loc;
};

struct Verbalizer {
  std::string name;
  std::vector<std::pair<std::string, std::vector<std::string>>> labels;
  std::string reduce = "mean"; // how a multi-token word's logits become one: mean, first, max
  bool soft = false;           // trained label embeddings (WARP-style) instead of fixed words
  bool calibrate = false;      // divide by the label probabilities of a content-free input
  Loc loc;
};

struct Directive {
  std::string verb; // distill, prune, quantize, moefy
  std::map<std::string, Constant> options; // normalized: "pattern", "on", "from", ...
  Loc loc;
};

struct Recipe {
  std::string name;
  std::vector<Directive> directives;
  Loc loc;
};

/// One rule of a checkpoint name map: the external tensor `external` is
/// transpose?(concat(parts, axis)) of our parameters, per layer slice when
/// the parts are stacked ("{i}" in `external` is the layer index). A `tied`
/// rule names a tensor the file may omit (the same data as its one part).
struct NameRule {
  std::string external;
  std::vector<std::string> parts; // parameter symbols: "h.attn.q.w"
  int64_t axis = 0;
  bool transpose = false;
  bool tied = false;
  Loc loc;
};

/// A checkpoint name map that applies to the elaborated model, with the
/// rules whose `if` holds for its hyperparameters. Complete: every
/// parameter is a part of exactly one rule that is not tied.
struct CheckpointMap {
  std::string name;      // "hf"
  std::vector<NameRule> rules;
  Loc loc;
};

/// The result of Sema for one job (or for one model, with no job).
struct Program {
  std::unique_ptr<LayerInstance> model;
  std::optional<Job> job;
  std::vector<Template> templates;
  std::vector<Verbalizer> verbalizers;
  std::vector<Recipe> recipes;
  std::vector<CheckpointMap> checkpointMaps; // of the model, in source order
};

} // namespace bmb::program

#endif // BMB_LANG_PROGRAM_H
