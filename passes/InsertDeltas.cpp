//===- InsertDeltas.cpp - Delta tuning as rewrites of the forward ---------===//
//
// bmb-insert-deltas (docs/passes.md, docs/training.md "Delta tuning"). For
// the module's job with `delta`, `freeze` or `train_only`, rewrites the
// model's @forward before bmb-attach-loss clones it:
//
//   lora(rank r, alpha, on, dropout, exclude)
//       in each selected Linear layer instance (a bmb.layer whose body is one
//       bmb.linear of a param weight): y = W x + b + (alpha/r) B (A drop(x)),
//       params <layer>.lora_a [r, in] ~ U(-1/sqrt(in), 1/sqrt(in)) (PEFT's
//       kaiming_uniform(a = sqrt(5))) and <layer>.lora_b [out, r] = 0, so the
//       initial output is the backbone's;
//   adapter(dim m, on, act, parallel, exclude)
//       after each selected layer instance y = L(x): y + up(act(down(y)))
//       (sequential) or y + up(act(down(x))) (parallel); params
//       <layer>.adapter.down.{w,b} (w ~ N(0, 0.01)) and <layer>.adapter.up.{w,b}
//       (zeros, so the initial output is the backbone's);
//   bitfit(on, exclude)
//       trains the biases (bmb.linear / bmb.layernorm bias operands) of the
//       selected layers (all by default);
//   prefix(length P, on, exclude)
//       each bmb.attention in the selected layers (default: every one) gets
//       params <layer>.prefix_key and <layer>.prefix_value [P, kv width]
//       (~ N(0, 0.02)) as its `prefix(...)` operands: every query attends
//       to the P prefix positions before its causal window (Li & Liang /
//       OpenDelta without reparameterisation; `reparameterize = true` is an
//       error, not implemented);
//
// Inside a rolled bmb.repeat the delta applies to every iteration: its
// params are stacked like the layer's own ([n, ...], `stacked k`) and read
// with the same iteration indices. A selector naming some iterations
// (`h.0.attn.q`, `h.{0,2-3}.mlp`; DeltaSelectors.h) puts the delta on those
// only, the loop staying rolled (DESIGN decision 2): its params are stacked
// over the m selected iterations ([m, ...]) and read at
// `bmb.iteration_slot %i [slots]` (slots[i] = i's entry, -1 = none); the
// delta's output is multiplied by `bmb.iteration_gate` (0 where slots[i] is
// -1), so the other iterations compute the backbone exactly and give the
// params zero gradient. LoRA (unmerged) and adapters take per-iteration
// selectors, and prefixes (the gate masks the prefix out on the other
// iterations); BitFit and merged LoRA refuse them.
//
// Then freezing: with any delta only the delta params (and bitfit's biases)
// stay trainable; `train_only = [...]` keeps the selected params trainable
// too (without a delta: only them); `freeze = [...]` freezes the selected
// params. A param is selected when a selector matches its path or the path
// of a layer instance that owns it. Selectors are DeltaSelectors.h's; one
// that matches nothing is an error listing near misses. Infer jobs (@prefill,
// @decode) get the same deltas and no freezing; their LoRA is merged into
// the weight at load (`bmb.lora_merge` on the weight param, a
// bmrt::DeltaMerge row) unless `merge = false`.
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/BmbOps.h"
#include "passes/DeltaSelectors.h"
#include "passes/EntryLowering.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <set>

namespace mlir::bmb {
#define GEN_PASS_DEF_INSERTDELTASPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb;

namespace {

/// A forward layer instance (bmb.layer or bmb.repeat) and its dotted path.
struct Site {
  Operation *op;
  std::string path;
};

/// A selected site and the iterations of its enclosing repeat it is
/// selected on (empty: all of them, or not in a repeat).
struct Selected {
  Site site;
  std::vector<int64_t> iterations;
  RepeatOp repeat; // the repeat `iterations` count, when there are any

  /// slots[i]: iteration i's entry among the selected ones, -1 if none.
  SmallVector<int64_t> slots() const {
    RepeatOp r = repeat;
    SmallVector<int64_t> out(r.getCount(), -1);
    for (auto [k, i] : llvm::enumerate(iterations))
      out[i] = k;
    return out;
  }
};

std::string siteKind(Operation *op) {
  if (auto l = dyn_cast<LayerOp>(op))
    return l.getLayer().str();
  return cast<RepeatOp>(op).getLayer().str();
}

/// The single bmb.linear of a Linear-like layer body whose weight is a
/// param read, or null.
LinearOp linearOf(Operation *op) {
  auto layer = dyn_cast<LayerOp>(op);
  if (!layer)
    return nullptr;
  LinearOp found;
  int count = 0;
  for (Operation &inner : *layer.getBodyBlock()) {
    if (isa<LayerOp, RepeatOp>(inner))
      return nullptr;
    if (auto lin = dyn_cast<LinearOp>(inner)) {
      found = lin;
      ++count;
    }
  }
  if (count != 1 || !found.getWeight().getDefiningOp<ParamGetOp>())
    return nullptr;
  return found;
}

/// The enclosing repeats of `op`, outermost first.
SmallVector<RepeatOp> enclosingRepeats(Operation *op) {
  SmallVector<RepeatOp> out;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (auto r = dyn_cast<RepeatOp>(p))
      out.insert(out.begin(), r);
  return out;
}

/// The iteration index of `repeat` as a value inside `scope`'s body (a
/// bmb.layer or the repeat itself). Layers are isolated from above, so the
/// index is threaded in as an operand where it is missing.
Value indexIn(Operation *scope, RepeatOp repeat) {
  if (scope == repeat.getOperation())
    return repeat.getInductionVar();
  auto layer = cast<LayerOp>(scope);
  Value outer = indexIn(layer->getParentOp(), repeat);
  for (auto [k, v] : llvm::enumerate(layer.getInputs()))
    if (v == outer)
      return layer.getBodyBlock()->getArgument(k);
  layer.getInputsMutable().append(outer);
  return layer.getBodyBlock()->addArgument(outer.getType(), layer.getLoc());
}

struct DeltaRewriter {
  ModuleOp module;
  JobOp job;
  ModelOp model;
  SmallVector<func::FuncOp> entries; // @forward, or an infer model's @prefill and @decode
  std::vector<Site> sites;
  llvm::StringSet<> deltaParams; // created by a delta: trainable
  llvm::StringSet<> biasParams;  // bitfit's selection: trainable
  int64_t nextRngId = 0;

  Location deltaLoc() { return settingLoc(job, "delta"); }

  void collectSites() {
    std::function<void(Block &, const std::string &)> visit = [&](Block &block,
                                                                  const std::string &prefix) {
      for (Operation &op : block) {
        StringRef instance;
        if (auto l = dyn_cast<LayerOp>(op))
          instance = l.getInstance();
        else if (auto r = dyn_cast<RepeatOp>(op))
          instance = r.getInstance();
        else
          continue;
        std::string path = prefix.empty() ? instance.str() : prefix + "." + instance.str();
        sites.push_back({&op, path});
        visit(op.getRegion(0).front(), path);
      }
    };
    for (func::FuncOp f : entries)
      visit(f.getBody().front(), "");
    // Dropouts and randoms number their draws from 0 (MLIRGen); LoRA's
    // dropouts take the next ids.
    module.walk([&](Operation *op) {
      if (auto id = op->getAttrOfType<IntegerAttr>("rng_id"))
        nextRngId = std::max(nextRngId, id.getInt() + 1);
    });
  }

  std::vector<std::string> sitePaths() {
    std::vector<std::string> paths;
    llvm::StringSet<> seen;
    for (const Site &s : sites)
      if (seen.insert(s.path).second)
        paths.push_back(s.path);
    return paths;
  }

  /// The selector strings of `attr` (a string or an array of strings).
  static SmallVector<std::string> selectors(Attribute attr) {
    SmallVector<std::string> out;
    if (auto s = dyn_cast_or_null<StringAttr>(attr))
      out.push_back(s.str());
    else if (auto a = dyn_cast_or_null<ArrayAttr>(attr))
      for (Attribute x : a)
        if (auto s = dyn_cast<StringAttr>(x))
          out.push_back(s.str());
    return out;
  }

  /// An error about one selector: malformed, per-iteration or matching
  /// nothing (with near misses among `candidates`).
  InFlightDiagnostic selectorError(Location loc, StringRef what, StringRef sel,
                                   ArrayRef<std::string> candidates, StringRef among) {
    if (std::string bad = checkSelector(sel); !bad.empty())
      return emitError(loc) << what << ": " << bad;
    if (selectsIterations(sel))
      return emitError(loc) << what << ": '" << sel
                            << "' selects some iterations of a rolled repeat; " << what
                            << " selects whole params (every iteration): iteration indices "
                               "are for a delta's `on` and `exclude`";
    auto d = emitError(loc) << what << ": '" << sel << "' matches no " << among << " of model '"
                            << model.getSymName() << "'";
    std::string near = nearMisses(sel, candidates);
    if (!near.empty())
      d << " (near misses: " << near << ")";
    return d;
  }

  std::string pathOf(Operation *op) {
    for (const Site &s : sites)
      if (s.op == op)
        return s.path;
    return "";
  }

  /// The repeat whose iterations `is` indexes around site `s` (null when
  /// `s` is not inside a repeat matching `is.repeat`); fails on nested
  /// repeats and out-of-range indices.
  FailureOr<RepeatOp> indexedRepeat(const Site &s, const IterationSelector &is, StringRef what,
                                    StringRef sel) {
    SmallVector<RepeatOp> repeats = enclosingRepeats(s.op);
    RepeatOp found;
    for (RepeatOp r : repeats)
      if (selectorMatches(is.repeat, pathOf(r)))
        found = r;
    if (!found)
      return RepeatOp();
    if (repeats.size() > 1)
      return (LogicalResult)(emitError(deltaLoc())
                             << what << ": '" << sel << "' selects iterations of '" << s.path
                             << "' inside nested repeats; not implemented yet");
    if (is.iterations.back() >= int64_t(found.getCount()))
      return (LogicalResult)(emitError(deltaLoc())
                             << what << ": '" << sel << "': iteration " << is.iterations.back()
                             << " is out of range for repeat '" << pathOf(found) << "' of "
                             << found.getCount() << " iterations");
    return found;
  }

  /// The sites selected by `on` (default `defaults`) minus `exclude`, each
  /// with the iterations selected (DeltaSelectors.h's index segments).
  FailureOr<std::vector<Selected>> select(DictionaryAttr delta, StringRef what,
                                          ArrayRef<std::string> defaults) {
    SmallVector<std::string> on = selectors(delta.get("on"));
    if (!delta.get("on"))
      on.assign(defaults.begin(), defaults.end());
    SmallVector<std::string> exclude = selectors(delta.get("exclude"));
    std::vector<std::string> paths = sitePaths();
    // Per site: its repeat and selected iterations; a null repeat = all.
    llvm::MapVector<Operation *, std::pair<RepeatOp, std::set<int64_t>>> chosen;
    for (bool excluding : {false, true}) {
      std::string label = excluding ? std::string(what) + " exclude" : std::string(what);
      for (const std::string &sel : excluding ? exclude : on) {
        IterationSelector is;
        if (std::string bad = parseIterations(sel, is); !bad.empty())
          return (LogicalResult)(emitError(deltaLoc()) << label << ": " << bad);
        bool any = false;
        for (const Site &s : sites) {
          if (!selectorMatches(is.layers, s.path))
            continue;
          RepeatOp r;
          if (!is.iterations.empty()) {
            auto found = indexedRepeat(s, is, label, sel);
            if (failed(found))
              return failure();
            if (!*found)
              continue;
            r = *found;
          }
          any = true;
          auto it = chosen.find(s.op);
          if (!excluding) {
            if (is.iterations.empty())
              chosen[s.op] = {RepeatOp(), {}};
            else if (it == chosen.end() || it->second.first) { // not already all
              chosen[s.op].first = r;
              chosen[s.op].second.insert(is.iterations.begin(), is.iterations.end());
            }
            continue;
          }
          if (it == chosen.end())
            continue;
          if (is.iterations.empty()) {
            chosen.erase(s.op);
            continue;
          }
          if (!it->second.first) { // all iterations so far
            it->second.first = r;
            for (int64_t i = 0; i < int64_t(r.getCount()); ++i)
              it->second.second.insert(i);
          }
          for (int64_t i : is.iterations)
            it->second.second.erase(i);
        }
        if (!any || !checkSelector(is.layers).empty())
          return selectorError(deltaLoc(), label, is.layers, paths, "layer");
      }
    }
    std::vector<Selected> out;
    for (const Site &s : sites) {
      auto it = chosen.find(s.op);
      if (it == chosen.end())
        continue;
      auto &[r, its] = it->second;
      if (r && its.empty())
        continue; // every selected iteration excluded
      Selected x{s, {}, RepeatOp()};
      if (r && int64_t(its.size()) < int64_t(r.getCount()))
        x = Selected{s, std::vector<int64_t>(its.begin(), its.end()), r};
      out.push_back(x);
    }
    return out;
  }

  /// A delta that has no per-iteration form refuses an iteration selector.
  LogicalResult refusePerIteration(ArrayRef<Selected> sel, StringRef what, StringRef why) {
    for (const Selected &x : sel)
      if (!x.iterations.empty())
        return emitError(deltaLoc()) << what << ": '" << x.site.path
                                     << "' is selected on some iterations of repeat '"
                                     << pathOf(x.repeat) << "' only; " << why;
    return success();
  }

  /// Where a per-iteration delta reads its params: iteration `iv`'s slot.
  Value slotIndex(OpBuilder &b, Location loc, const Selected &x, Value iv) {
    return b.create<IterationSlotOp>(loc, b.getIndexType(), iv, b.getDenseI64ArrayAttr(x.slots()));
  }

  /// `d` times the per-iteration gate of `x` at iteration `iv` (0 where the
  /// delta is not selected); `d` itself for a delta on every iteration.
  Value gated(OpBuilder &b, Location loc, const Selected &x, Value iv, Value d) {
    if (x.iterations.empty())
      return d;
    auto t = RankedTensorType::get({1}, cast<RankedTensorType>(d.getType()).getElementType());
    Value g = b.create<IterationGateOp>(loc, t, iv, b.getDenseI64ArrayAttr(x.slots()));
    return b.create<MulOp>(loc, d.getType(), d, g);
  }

  /// Declares the delta param `<site path>.<suffix>` after the params of the
  /// site's layer (declaration order groups it with its layer), stacked
  /// over `repeats`.
  /// A per-iteration delta's params stack the selected `iterations` only.
  FailureOr<ParamOp> addParam(const Site &site, StringRef suffix, ArrayRef<int64_t> slice,
                              Type elem, InitAttr init, ArrayRef<RepeatOp> repeats,
                              ArrayRef<int64_t> iterations = {}) {
    std::string name = site.path + "." + suffix.str();
    if (model.lookupSymbol(name))
      return (LogicalResult)(emitError(deltaLoc())
                             << "delta: model '" << model.getSymName()
                             << "' already has a param '" << name
                             << "' (two deltas on the same layer?)");
    SmallVector<int64_t> shape;
    for (RepeatOp r : repeats)
      shape.push_back(r.getCount());
    if (!iterations.empty())
      shape.back() = iterations.size(); // one enclosing repeat (select checked)
    shape.append(slice.begin(), slice.end());
    Operation *after = nullptr;
    for (ParamOp p : model.getParams())
      if (p.getSymName().starts_with(site.path + "."))
        after = p;
    OpBuilder b(model.getContext());
    if (after)
      b.setInsertionPointAfter(after);
    else
      b.setInsertionPoint(entries.front());
    auto p = b.create<ParamOp>(site.op->getLoc(), name, RankedTensorType::get(shape, elem), init,
                               /*frozen=*/false, repeats.size());
    p->setAttr("bmb.delta", b.getUnitAttr()); // ParamInfo::delta at run time
    deltaParams.insert(name);
    return p;
  }

  Value read(OpBuilder &b, Location loc, ParamOp p, ValueRange indices) {
    return b.create<ParamGetOp>(loc, p, indices);
  }

  static RankedTensorType withLastDim(Value v, int64_t dim) {
    auto t = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(t.getShape());
    shape.back() = dim;
    return RankedTensorType::get(shape, t.getElementType());
  }

  LogicalResult applyLora(DictionaryAttr delta) {
    auto sel = select(delta, "lora", {"attn.q", "attn.v"});
    if (failed(sel))
      return failure();
    int64_t rank = delta.getAs<IntegerAttr>("rank").getInt();
    double alpha = rank;
    if (auto a = delta.getAs<FloatAttr>("alpha"))
      alpha = a.getValueAsDouble();
    double dropout = 0;
    if (auto d = delta.getAs<FloatAttr>("dropout"))
      dropout = d.getValueAsDouble();
    // Inference merges the LoRA into the weight at load by default: the
    // forward stays the backbone's, the runtime adds (alpha/r) B A to W.
    bool merge = job.getKind() == JobKind::Infer;
    if (auto m = delta.getAs<BoolAttr>("merge"))
      merge = merge && m.getValue();
    if (merge && failed(refusePerIteration(*sel, "lora",
                                           "merging it into the weights at load is not "
                                           "implemented yet (use merge = false)")))
      return failure();
    bool anyLinear = false;
    llvm::StringMap<std::pair<ParamOp, ParamOp>> made; // a layer applied twice shares them
    for (const Selected &x : *sel) {
      const Site &s = x.site;
      LinearOp lin = linearOf(s.op);
      if (!lin)
        continue;
      anyLinear = true;
      auto wget = lin.getWeight().getDefiningOp<ParamGetOp>();
      auto w = cast<RankedTensorType>(wget.getType());
      int64_t out = w.getDimSize(0), in = w.getDimSize(1);
      SmallVector<RepeatOp> repeats = enclosingRepeats(s.op);
      if (wget.getIndices().size() != repeats.size())
        return emitError(lin.getLoc())
               << "lora: the weight of '" << s.path
               << "' is not stacked over its enclosing repeats; not supported";
      if (!made.count(s.path)) {
        double bound = 1.0 / std::sqrt(double(in));
        auto a = addParam(s, "lora_a", {rank, in}, w.getElementType(),
                          InitAttr::get(module.getContext(), InitKind::Uniform, -bound, bound),
                          repeats, x.iterations);
        if (failed(a))
          return failure();
        auto bb = addParam(s, "lora_b", {out, rank}, w.getElementType(),
                           InitAttr::get(module.getContext(), InitKind::Zeros), repeats,
                           x.iterations);
        if (failed(bb))
          return failure();
        made[s.path] = {*a, *bb};
      }
      auto [pa, pb] = made[s.path];
      if (merge) {
        auto weight = model.lookupSymbol<ParamOp>(wget.getParam());
        OpBuilder b(lin.getContext());
        weight->setAttr("bmb.lora_merge",
                        b.getDictionaryAttr({b.getNamedAttr("a", pa.getSymNameAttr()),
                                             b.getNamedAttr("b", pb.getSymNameAttr()),
                                             b.getNamedAttr("scale", b.getF64FloatAttr(alpha / rank))}));
        continue;
      }
      OpBuilder b(lin.getContext());
      b.setInsertionPointAfter(lin);
      Location loc = lin.getLoc();
      Value xin = lin.getInput();
      if (dropout > 0)
        xin = b.create<DropoutOp>(loc, xin.getType(), xin, b.getF64FloatAttr(dropout),
                                  b.getI64IntegerAttr(nextRngId++));
      SmallVector<Value> indices(wget.getIndices());
      Value iv = indices.empty() ? Value() : indices.back();
      if (!x.iterations.empty())
        indices.back() = slotIndex(b, loc, x, iv);
      Value av = read(b, loc, pa, indices);
      Value bv = read(b, loc, pb, indices);
      Value h = b.create<LinearOp>(loc, withLastDim(xin, rank), xin, av, Value());
      Value d = b.create<LinearOp>(loc, lin.getType(), h, bv, Value());
      Value sc = b.create<ScaleOp>(loc, d.getType(), d, b.getF64FloatAttr(alpha / rank));
      sc = gated(b, loc, x, iv, sc);
      auto sum = b.create<AddOp>(loc, lin.getType(), lin.getResult(), sc);
      lin.getResult().replaceAllUsesExcept(sum, sum);
    }
    if (!anyLinear) {
      std::string kinds;
      for (const Selected &x : *sel)
        kinds += (kinds.empty() ? "" : ", ") + x.site.path + " (" + siteKind(x.site.op) + ")";
      // Suggest a Linear inside the selection, as in `attn` -> `attn.q`.
      std::string inside;
      for (const Site &s : sites)
        for (const Selected &chosen : *sel)
          if (inside.empty() && StringRef(s.path).starts_with(chosen.site.path + ".") &&
              linearOf(s.op))
            inside = s.path;
      auto d = emitError(deltaLoc())
               << "lora: the selected layers have no linear layer to adapt: " << kinds
               << "; lora applies to layers whose body is one linear";
      if (!inside.empty())
        d << " (such as '" << inside << "')";
      return d;
    }
    return success();
  }

  /// The path of the innermost layer instance holding `op` ("" at top level).
  std::string ownerPath(Operation *op) {
    for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
      for (const Site &s : sites)
        if (s.op == p)
          return s.path;
    return "";
  }

  LogicalResult applyPrefix(DictionaryAttr delta) {
    if (auto r = delta.getAs<BoolAttr>("reparameterize"); r && r.getValue())
      return emitError(deltaLoc())
             << "prefix: reparameterize = true (OpenDelta's Embedding -> Linear -> tanh -> "
                "Linear) is not implemented yet; the prefixes are trained directly";
    int64_t length = delta.getAs<IntegerAttr>("length").getInt();
    // The attentions to prefix: inside the selected layers (on the selected
    // iterations), or all of them.
    llvm::MapVector<Operation *, Selected> attentions;
    auto collect = [&](Operation *root, const Selected &x) {
      root->walk([&](AttentionOp a) { attentions.insert({a, x}); });
    };
    if (delta.get("on") || delta.get("exclude")) {
      auto sel = select(delta, "prefix", {});
      if (failed(sel))
        return failure();
      for (const Selected &x : *sel)
        collect(x.site.op, x);
      if (attentions.empty()) {
        std::string kinds;
        for (const Selected &x : *sel)
          kinds += (kinds.empty() ? "" : ", ") + x.site.path + " (" + siteKind(x.site.op) + ")";
        return emitError(deltaLoc()) << "prefix: the selected layers have no attention: " << kinds
                                     << "; prefix applies to layers with an attention";
      }
    } else {
      for (func::FuncOp f : entries)
        collect(f, Selected{});
      if (attentions.empty())
        return emitError(deltaLoc())
               << "prefix: model '" << model.getSymName() << "' has no attention";
    }
    llvm::StringMap<std::pair<ParamOp, ParamOp>> made; // prefill and decode share them
    for (auto &[op, x] : attentions) {
      auto attn = cast<AttentionOp>(op);
      if (attn.getPrefixKey())
        return emitError(deltaLoc()) << "prefix: an attention of '" << ownerPath(op)
                                     << "' already has a prefix (two prefix deltas?)";
      std::string path = ownerPath(op);
      if (path.empty())
        return emitError(deltaLoc())
               << "prefix: an attention outside any layer has no name for its prefix params";
      auto k = cast<RankedTensorType>(attn.getKey().getType());
      SmallVector<RepeatOp> repeats = enclosingRepeats(op);
      Site site{nullptr, path};
      for (const Site &s : sites)
        if (s.path == path)
          site = s;
      if (!made.count(path)) {
        MLIRContext *ctx = module.getContext();
        SmallVector<ParamOp> ps;
        for (StringRef suffix : {"prefix_key", "prefix_value"}) {
          auto p = addParam(site, suffix, {length, k.getShape().back()}, k.getElementType(),
                            InitAttr::get(ctx, InitKind::Normal, 0.02), repeats, x.iterations);
          if (failed(p))
            return failure();
          ps.push_back(*p);
        }
        made[path] = {ps[0], ps[1]};
      }
      auto [pk, pv] = made[path];
      Operation *scope = op->getParentOp();
      SmallVector<Value> indices;
      for (RepeatOp r : repeats)
        indices.push_back(indexIn(scope, r));
      OpBuilder b(op);
      Location loc = attn.getLoc();
      if (!x.iterations.empty()) {
        // On some iterations: read the iteration's slot; the gate turns the
        // prefix off (masks it out) on the others.
        Value iv = indices.back();
        indices.back() = slotIndex(b, loc, x, iv);
        auto t = RankedTensorType::get({1}, k.getElementType());
        attn.getPrefixGateMutable().assign(
            b.create<IterationGateOp>(loc, t, iv, b.getDenseI64ArrayAttr(x.slots())));
      }
      attn.getPrefixKeyMutable().assign(read(b, loc, pk, indices));
      attn.getPrefixValueMutable().assign(read(b, loc, pv, indices));
    }
    return success();
  }

  Value activate(OpBuilder &b, Location loc, StringRef act, Value x) {
    if (act == "relu")
      return b.create<ReluOp>(loc, x.getType(), x);
    if (act == "silu")
      return b.create<SiluOp>(loc, x.getType(), x);
    if (act == "tanh")
      return b.create<TanhOp>(loc, x.getType(), x);
    return b.create<GeluOp>(loc, x.getType(), x,
                            act == "gelu" ? GeluApproximation::None : GeluApproximation::Tanh);
  }

  LogicalResult applyAdapter(DictionaryAttr delta) {
    auto sel = select(delta, "adapter", {"attn", "mlp"});
    if (failed(sel))
      return failure();
    int64_t dim = delta.getAs<IntegerAttr>("dim").getInt();
    StringRef act = "gelu_tanh";
    if (auto a = delta.getAs<StringAttr>("act"))
      act = a.getValue();
    bool parallel = false;
    if (auto p = delta.getAs<BoolAttr>("parallel"))
      parallel = p.getValue();
    llvm::StringMap<SmallVector<ParamOp>> made;
    for (const Selected &x : *sel) {
      const Site &s = x.site;
      auto layer = dyn_cast<LayerOp>(s.op);
      if (!layer)
        return emitError(deltaLoc())
               << "adapter: '" << s.path << "' is a repeat; select a layer inside it (such as '"
               << s.path << ".mlp')";
      auto yield = cast<YieldOp>(layer.getBodyBlock()->getTerminator());
      if (yield.getValues().empty())
        return emitError(deltaLoc()) << "adapter: '" << s.path << "' has no output";
      Value y = yield.getValues()[0];
      Value in = parallel && !layer.getInputs().empty() ? layer.getBodyBlock()->getArgument(0) : y;
      auto yt = dyn_cast<RankedTensorType>(y.getType());
      auto it = dyn_cast<RankedTensorType>(in.getType());
      if (!yt || !it || !isa<FloatType>(yt.getElementType()) ||
          it.getElementType() != yt.getElementType() || yt.getRank() < 1)
        return emitError(deltaLoc()) << "adapter: '" << s.path << "' (" << siteKind(s.op)
                                     << ") does not map float features to float features";
      int64_t out = yt.getShape().back(), inDim = it.getShape().back();
      SmallVector<RepeatOp> repeats = enclosingRepeats(s.op);
      if (!made.count(s.path)) {
        MLIRContext *ctx = module.getContext();
        Type e = yt.getElementType();
        SmallVector<ParamOp> ps;
        for (auto [suffix, shape, init] :
             {std::make_tuple("down.w", SmallVector<int64_t>{dim, inDim},
                              InitAttr::get(ctx, InitKind::Normal, 0.01)),
              std::make_tuple("down.b", SmallVector<int64_t>{dim}, InitAttr::get(ctx, InitKind::Zeros)),
              std::make_tuple("up.w", SmallVector<int64_t>{out, dim}, InitAttr::get(ctx, InitKind::Zeros)),
              std::make_tuple("up.b", SmallVector<int64_t>{out}, InitAttr::get(ctx, InitKind::Zeros))}) {
          auto p = addParam(s, std::string("adapter.") + suffix, shape, e, init, repeats,
                            x.iterations);
          if (failed(p))
            return failure();
          ps.push_back(*p);
        }
        made[s.path] = ps;
      }
      SmallVector<Value> indices;
      for (RepeatOp r : repeats)
        indices.push_back(indexIn(layer, r));
      SmallVector<ParamOp> &ps = made[s.path];
      OpBuilder b(yield);
      Location loc = yield.getLoc();
      Value iv = indices.empty() ? Value() : indices.back();
      if (!x.iterations.empty())
        indices.back() = slotIndex(b, loc, x, iv);
      Value dw = read(b, loc, ps[0], indices), db = read(b, loc, ps[1], indices);
      Value uw = read(b, loc, ps[2], indices), ub = read(b, loc, ps[3], indices);
      Value h = b.create<LinearOp>(loc, withLastDim(in, dim), in, dw, db);
      Value a = activate(b, loc, act, h);
      Value u = gated(b, loc, x, iv, b.create<LinearOp>(loc, yt, a, uw, ub));
      Value sum = b.create<AddOp>(loc, yt, y, u);
      yield->setOperand(0, sum);
    }
    return success();
  }

  LogicalResult applyBitfit(DictionaryAttr delta) {
    FailureOr<std::vector<Selected>> sel = std::vector<Selected>{};
    if (delta.get("on") || delta.get("exclude")) {
      sel = select(delta, "bitfit", {});
      if (failed(sel) ||
          failed(refusePerIteration(*sel, "bitfit",
                                    "BitFit trains whole bias params (stacked over every "
                                    "iteration); select every iteration")))
        return failure();
    }
    auto collect = [&](Operation *root) {
      root->walk([&](Operation *op) {
        Value bias;
        if (auto l = dyn_cast<LinearOp>(op))
          bias = l.getBias();
        else if (auto n = dyn_cast<LayerNormOp>(op))
          bias = n.getBias();
        if (auto get = bias ? bias.getDefiningOp<ParamGetOp>() : ParamGetOp())
          biasParams.insert(get.getParam());
      });
    };
    if (!delta.get("on") && !delta.get("exclude")) {
      for (func::FuncOp f : entries)
        collect(f);
    } else {
      for (const Selected &x : *sel)
        collect(x.site.op);
    }
    if (biasParams.empty())
      return emitError(deltaLoc()) << "bitfit: the selected layers of model '"
                                   << model.getSymName() << "' have no biases";
    return success();
  }

  /// Every param selected by `key`'s selectors (path or owning layer path).
  FailureOr<llvm::StringSet<>> selectParams(StringRef key) {
    llvm::StringSet<> out;
    std::vector<std::string> candidates = sitePaths();
    for (ParamOp p : model.getParams())
      candidates.push_back(p.getSymName().str());
    for (const std::string &sel : selectors(job.getSettings().get(key))) {
      bool any = false;
      for (ParamOp p : model.getParams()) {
        StringRef path = p.getSymName();
        bool hit = false;
        for (StringRef prefix = path; !prefix.empty() && !hit;) {
          hit = selectorMatches(sel, prefix);
          size_t dot = prefix.rfind('.');
          prefix = dot == StringRef::npos ? StringRef() : prefix.take_front(dot);
        }
        if (hit) {
          out.insert(path);
          any = true;
        }
      }
      if (!any || !checkSelector(sel).empty())
        return (LogicalResult)selectorError(settingLoc(job, key), key, sel, candidates,
                                            "param or layer");
    }
    return out;
  }

  LogicalResult run() {
    for (StringRef f : {"loss", "train_step"})
      if (model.lookupSymbol(f))
        return job.emitError("bmb-insert-deltas: model @")
               << model.getSymName() << " already has @" << f
               << "; deltas are inserted before bmb-attach-loss";
    collectSites();
    SmallVector<DictionaryAttr> deltas;
    if (Attribute a = job.getSettings().get("delta")) {
      if (auto d = dyn_cast<DictionaryAttr>(a))
        deltas.push_back(d);
      else if (auto arr = dyn_cast<ArrayAttr>(a))
        for (Attribute x : arr)
          if (auto d = dyn_cast<DictionaryAttr>(x))
            deltas.push_back(d);
    }
    for (DictionaryAttr d : deltas) {
      StringRef kind = d.getAs<StringAttr>("kind").getValue();
      LogicalResult r = failure();
      if (kind == "lora")
        r = applyLora(d);
      else if (kind == "adapter")
        r = applyAdapter(d);
      else if (kind == "bitfit")
        r = applyBitfit(d);
      else if (kind == "prefix")
        r = applyPrefix(d);
      else
        return emitError(deltaLoc()) << "unknown delta '" << kind
                                     << "' (lora, adapter, bitfit, prefix)";
      if (failed(r))
        return failure();
    }
    if (job.getKind() == JobKind::Infer)
      return success();

    // Freezing.
    DictionaryAttr settings = job.getSettings();
    llvm::StringSet<> trainOnly, frozen;
    if (settings.get("train_only")) {
      auto s = selectParams("train_only");
      if (failed(s))
        return failure();
      trainOnly = std::move(*s);
    }
    if (settings.get("freeze")) {
      auto s = selectParams("freeze");
      if (failed(s))
        return failure();
      frozen = std::move(*s);
    }
    // A tune job trains its deltas and prompt params (bmb-lower-prompts'
    // @prompt.soft, @prompt.labels): its backbone is frozen unless
    // train_only names some of it.
    bool tune = job.getKind() == JobKind::Tune;
    bool restrict = !deltas.empty() || settings.get("train_only") || tune;
    bool anyTrainable = false;
    for (ParamOp p : model.getParams()) {
      StringRef n = p.getSymName();
      bool train = p.isTrainable();
      if (restrict)
        train = train && (deltaParams.contains(n) || biasParams.contains(n) ||
                          trainOnly.contains(n) || (tune && n.starts_with("prompt.")));
      if (frozen.contains(n))
        train = false;
      if (!train)
        p.setFrozen(true);
      anyTrainable |= train;
    }
    if (!anyTrainable && tune)
      return job.emitError("bmb-insert-deltas: tune job @")
             << job.getSymName() << " trains nothing: its backbone is frozen; add a delta "
             << "(delta = lora(...)), a soft token ({soft} in the template), a soft verbalizer "
             << "(soft = true) or train_only = [...]";
    if (!anyTrainable)
      return emitError(settingLoc(job, settings.get("freeze") ? "freeze" : "delta"))
             << "every param of model '" << model.getSymName()
             << "' is frozen: nothing to train";
    return success();
  }
};

struct InsertDeltasPass : mlir::bmb::impl::InsertDeltasPassBase<InsertDeltasPass> {
  void runOnOperation() override {
    for (JobOp job : getOperation().getOps<JobOp>()) {
      DictionaryAttr s = job.getSettings();
      if (!s.get("delta") && !s.get("freeze") && !s.get("train_only") &&
          job.getKind() != JobKind::Tune)
        continue;
      auto model = SymbolTable::lookupNearestSymbolFrom<ModelOp>(job, job.getModelAttr());
      if (!model)
        continue; // the job's verifier reports it
      SmallVector<func::FuncOp> entries;
      for (StringRef name : {"forward", "prefill", "decode"})
        if (auto f = dyn_cast_or_null<func::FuncOp>(model.lookupSymbol(name)))
          entries.push_back(f);
      if (entries.empty()) {
        job.emitError("bmb-insert-deltas: model @") << model.getSymName() << " has no @forward";
        return signalPassFailure();
      }
      DeltaRewriter rw{getOperation(), job, model, entries, {}, {}, {}, 0};
      if (failed(rw.run()))
        return signalPassFailure();
    }
  }
};

} // namespace
