//===- ZeroAuto.cpp - zero = auto: the cheapest plan that fits --------------===//
//
// See ZeroAuto.h. The compiler knows every tensor before launch (DESIGN,
// "What none of the anchors has"), so instead of estimating, it compiles each
// candidate plan of the train job - the whole train pipeline on a clone of
// the module - and reads the memory plan bmb-plan-memory wrote: params,
// grads, optimizer state and activations (and a bf16/fp16 job's weight copy:
// half the group, or under zero = 3 half the param staging, as
// bmrt::low_param_bytes sizes it). Per-rank bytes at `ranks` ranks
// follow the runtime's partitioning (bmrt::partitionOf, runtime/host/
// training_tables.cpp: partitions of ceil(elements / ranks) rounded up to
// partition_align; a change there must be mirrored here).
//
// Candidates, cheapest in time first: zero = 0 and 1 move the same bytes per
// step (an all-reduce is a reduce-scatter plus an all-gather), so ZeRO-1 is
// nearly free and comes second; ZeRO-2 moves them too, but in one
// reduce-scatter per unit that the backward waits for (not overlapped), so
// it comes third; ZeRO-3 adds an all-gather of every layer's params in the
// forward and again in the backward (each waited for), so it comes fourth;
// recomputing the checkpointed layers costs about a third of a step, so
// checkpointing comes last (again zero = 0, 1, 2, 3).
//
// offload = optimizer (bmb-offload-optimizer) takes AdamW's state out of
// device memory into the host's, at the price of copying the gradients out
// and the params back every step and updating on the CPU. It is a candidate
// only on the cuda target, after the ZeRO stages it would beat (zero = 1
// and 2 with offload, then the same with checkpointing): on the host target
// the "device" is the same RAM, so it saves nothing.
//
//===----------------------------------------------------------------------===//
#include "compiler/ZeroAuto.h"

#include "dialects/Bmb/BmbOps.h"
#include "dialects/BmbExec/BmbExecOps.h"
#include "passes/EntryLowering.h"
#include "passes/ParamStats.h"
#include "passes/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::bmb;

namespace {

struct Candidate {
  int64_t zero = 0;
  std::vector<std::string> checkpoint; // layer paths
  bool offload = false;                // offload = optimizer
  // Per-rank bytes, once compiled. lowCopy: precision = bf16/fp16's weight
  // copy (Buffers::lowParams), of the group, or of the param staging under
  // zero = 3 (bmrt::low_param_bytes).
  int64_t params = 0, grads = 0, optState = 0, activations = 0, lowCopy = 0;
  int64_t total() const { return params + grads + optState + activations + lowCopy; }
  /// "params X, grads Y, ...": the parts of total().
  std::string parts(std::string (*fmt)(int64_t)) const {
    std::string s = "params " + fmt(params) + ", grads " + fmt(grads) + ", optimizer state " +
                    fmt(optState);
    if (lowCopy)
      s += ", weight copy " + fmt(lowCopy);
    return s + ", activations " + fmt(activations);
  }
  std::string describe() const {
    std::string s = "zero = " + std::to_string(zero);
    if (offload)
      s += ", offload = optimizer";
    if (!checkpoint.empty()) {
      s += ", checkpoint = [";
      for (size_t i = 0; i < checkpoint.size(); ++i)
        s += (i ? ", \"" : "\"") + checkpoint[i] + "\"";
      s += "]";
    }
    return s;
  }
};

int64_t intAttr(Operation *op, StringRef name) {
  auto a = op->getAttrOfType<IntegerAttr>(name);
  return a ? a.getInt() : 0;
}

/// The job's settings with `zero` (and `checkpoint`) set to the candidate's.
DictionaryAttr withCandidate(DictionaryAttr settings, const Candidate &c) {
  Builder b(settings.getContext());
  NamedAttrList list(settings);
  list.set("zero", b.getI64IntegerAttr(c.zero));
  if (c.offload)
    list.set("offload", b.getStringAttr("optimizer"));
  if (!c.checkpoint.empty()) {
    SmallVector<Attribute> names;
    for (const std::string &n : c.checkpoint)
      names.push_back(b.getStringAttr(n));
    list.set("checkpoint", b.getArrayAttr(names));
  }
  return list.getDictionary(settings.getContext());
}

/// Compiles the module with the job's settings replaced by `c`'s and fills
/// its per-rank bytes; the diagnostics of a failing candidate are returned.
LogicalResult measure(ModuleOp module, StringRef jobName, int64_t ranks, bool cudaTarget,
                      Candidate &c, std::string &why) {
  OwningOpRef<ModuleOp> clone = module.clone();
  for (JobOp j : clone->getOps<JobOp>())
    if (j.getSymName() == jobName)
      j.setSettingsAttr(withCandidate(j.getSettings(), c));
  MLIRContext *ctx = module.getContext();
  llvm::raw_string_ostream diag(why);
  ScopedDiagnosticHandler quiet(ctx, [&](Diagnostic &d) {
    diag << d.str() << "\n";
    return success();
  });
  PassManager pm(ctx);
  populateTrainPipeline(pm);
  if (failed(pm.run(*clone)))
    return failure();
  for (auto program : clone->getOps<exec::ProgramOp>()) {
    auto train = program->getAttrOfType<DictionaryAttr>("train");
    int64_t slots = train ? train.getAs<IntegerAttr>("opt_slots").getInt() : 0;
    int64_t elems = intAttr(program, "group_elems");
    int64_t gradBytes = intAttr(program, "grad_bytes");
    int64_t elemBytes = elems > 0 ? gradBytes / elems : 4;
    int64_t align = std::max<int64_t>(intAttr(program, "partition_align"), 1);
    int64_t size = elems, total = elems;
    if (c.zero >= 1 && ranks > 1) {
      size = ((elems + ranks - 1) / ranks + align - 1) / align * align;
      total = size * ranks;
    }
    // zero = 3: the frozen params and the partition, plus the staging the
    // units are gathered into.
    c.params = c.zero == 3 ? intAttr(program, "group_param_offset") +
                                 (ranks > 1 ? size : elems) * elemBytes +
                                 intAttr(program, "param_staging_bytes")
                           : std::max(intAttr(program, "param_bytes"),
                                      intAttr(program, "group_param_offset") + total * elemBytes);
    // zero = 2 and 3: the partition only, plus the backward's staging of one unit.
    c.grads = c.zero >= 2 ? (ranks > 1 ? size : elems) * elemBytes +
                                intAttr(program, "grad_staging_bytes")
                          : total * elemBytes;
    c.optState = slots * size * elemBytes;
    // Offloaded: the state is in host memory, none of it on the device.
    if (intAttr(program, "offload_state_bytes") && cudaTarget)
      c.optState = 0;
    c.activations = intAttr(program, "activation_bytes") + intAttr(program, "state_bytes");
    if (program->hasAttr("precision"))
      c.lowCopy = c.zero == 3 ? intAttr(program, "param_staging_bytes") / 2 : 2 * elems;
  }
  return success();
}

/// The layer paths `checkpoint = ...` can name that hold most activations:
/// the model's repeats (their instance names).
std::vector<std::string> repeatPaths(ModelOp model) {
  std::vector<std::string> out;
  auto forward = dyn_cast_or_null<func::FuncOp>(model.lookupSymbol("forward"));
  if (!forward)
    return out;
  forward.walk([&](RepeatOp r) {
    if (r->getParentOfType<RepeatOp>())
      return;
    std::string path = r.getInstance().str();
    for (auto l = r->getParentOfType<LayerOp>(); l; l = l->getParentOfType<LayerOp>())
      path = l.getInstance().str() + "." + path;
    out.push_back(path);
  });
  return out;
}

std::string gib(int64_t bytes) { return formatBytes(bytes); }

} // namespace

LogicalResult mlir::bmb::resolveZeroAuto(ModuleOp module, bool cudaTarget,
                                         llvm::raw_ostream &notes) {
  for (JobOp job : module.getOps<JobOp>()) {
    if (job.getKind() != JobKind::Train)
      continue;
    DictionaryAttr settings = job.getSettings();
    auto zero = settings.getAs<StringAttr>("zero");
    if (!zero || zero.getValue() != "auto") {
      if (settings.get("memory") || settings.get("ranks"))
        return emitError(settingLoc(job, settings.get("memory") ? "memory" : "ranks"),
                         "`memory` and `ranks` are the budget of zero = auto; set zero = auto "
                         "or remove them");
      continue;
    }
    auto memory = settings.getAs<IntegerAttr>("memory");
    auto ranksAttr = settings.getAs<IntegerAttr>("ranks");
    if (!memory || !ranksAttr)
      return emitError(settingLoc(job, "zero"),
                       "zero = auto plans for a memory budget per rank and a world size: set "
                       "memory = ... (e.g. 16GiB) and ranks = N");
    int64_t budget = memory.getInt(), ranks = ranksAttr.getInt();
    auto model = SymbolTable::lookupNearestSymbolFrom<ModelOp>(job, job.getModelAttr());
    if (!model)
      return job.emitError("zero = auto: the job's model is missing");
    // Offload is a candidate where it saves device memory (the cuda
    // target), for AdamW (what bmb-offload-optimizer does), unless the job
    // already chose it or its absence.
    auto optimizer = settings.getAs<DictionaryAttr>("optimizer");
    auto optKind = optimizer ? optimizer.getAs<StringAttr>("kind") : StringAttr();
    bool tryOffload = cudaTarget && !settings.get("offload") &&
                      !(optKind && optKind.getValue() == "sgd");
    std::vector<Candidate> candidates = {{0, {}}, {1, {}}, {2, {}}, {3, {}}};
    if (tryOffload)
      for (int64_t zero : {1, 2})
        candidates.push_back({zero, {}, true});
    if (!settings.get("checkpoint")) {
      std::vector<std::string> repeats = repeatPaths(model);
      if (!repeats.empty()) {
        for (int64_t zero : {0, 1, 2, 3})
          candidates.push_back({zero, repeats});
        if (tryOffload)
          for (int64_t zero : {1, 2})
            candidates.push_back({zero, repeats, true});
      }
    }
    auto offloadNote = [&]() -> std::string {
      if (cudaTarget)
        return "";
      return "; offload = optimizer was not considered: on --target=host the optimizer state "
             "would stay in the same RAM";
    };
    std::vector<Candidate> measured;
    for (Candidate &c : candidates) {
      std::string why;
      bool compiled = succeeded(measure(module, job.getSymName(), ranks, cudaTarget, c, why));
      // zero = 2 and 3 need a backward that finishes one unit at a time
      // (bmb-zero says why not); the other plans remain.
      if (!compiled && c.zero >= 2)
        continue;
      if (!compiled)
        return emitError(settingLoc(job, "zero"), "zero = auto: the candidate ")
               << c.describe() << " does not compile:\n"
               << why;
      measured.push_back(c);
      if (c.total() <= budget) {
        job.setSettingsAttr(withCandidate(settings, c));
        notes << "bmbc: note: job " << job.getSymName() << ": zero = auto chose "
              << c.describe() << ": " << gib(c.total()) << " per rank of memory = "
              << gib(budget) << " at ranks = " << ranks << " (" << c.parts(gib) << ")";
        for (const Candidate &m : measured)
          if (&m != &measured.back())
            notes << "; " << m.describe() << " needs " << gib(m.total());
        notes << offloadNote() << "\n";
        return success();
      }
    }
    const Candidate &best = *std::min_element(
        measured.begin(), measured.end(),
        [](const Candidate &a, const Candidate &b) { return a.total() < b.total(); });
    return emitError(settingLoc(job, "memory"), "memory = ")
                           << gib(budget) << " per rank is too small at ranks = " << ranks
                           << ": the smallest plan, " << best.describe() << ", needs "
                           << gib(best.total()) << " (" << best.parts(gib)
                           << "); raise memory or ranks"
                           << (cudaTarget ? "" : " (offload = optimizer saves no memory on "
                                                 "--target=host)");
  }
  return success();
}
