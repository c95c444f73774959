//===- ParamStats.cpp - bmb-param-stats -----------------------------------===//
//
// Parameter counts and training memory, from the bmb.param declarations
// alone: a stacked parameter's type already holds every repeat iteration,
// so the forward graph need not be walked. Everything is int64 with checked
// arithmetic, because a mistyped hyperparameter (dim = 1e6) should give an
// error, not a negative size.
//
//===----------------------------------------------------------------------===//

#include "passes/ParamStats.h"

#include "dialects/Bmb/BmbOps.h"
#include "passes/Passes.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"

#include <algorithm>

namespace mlir::bmb {
#define GEN_PASS_DEF_PARAMSTATSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb;

std::string mlir::bmb::formatCount(int64_t n) {
  // The magnitude as unsigned, so INT64_MIN needs no special case.
  uint64_t magnitude = n < 0 ? 0 - uint64_t(n) : uint64_t(n);
  std::string digits = std::to_string(magnitude);
  std::string out = n < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

std::string mlir::bmb::formatBytes(int64_t n) {
  if (n < 1024)
    return std::to_string(n) + " B";
  static const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(n) / 1024;
  int unit = 0;
  // Round first so 1023.96 KiB prints as 1.0 MiB, not 1024.0 KiB.
  while (unit < 5 && v * 10 + 0.5 >= 1024 * 10) {
    v /= 1024;
    ++unit;
  }
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.1f ", v) << units[unit];
  return s;
}

namespace {

/// a += b, a *= b; false on int64 overflow.
bool addInto(int64_t &a, int64_t b) {
  return !__builtin_add_overflow(a, b, &a);
}
bool mulInto(int64_t &a, int64_t b) {
  return !__builtin_mul_overflow(a, b, &a);
}

/// Optimizer kind and f32 states per trainable element of a job.
std::pair<std::string, int64_t> optimizerOf(JobOp job) {
  Attribute setting = job.getSettings().get("optimizer");
  std::string kind = "adamw"; // the default of train jobs
  DictionaryAttr dict = dyn_cast_or_null<DictionaryAttr>(setting);
  if (auto str = dyn_cast_or_null<StringAttr>(setting))
    kind = str.str();
  else if (dict)
    if (auto name = dict.getAs<StringAttr>("kind"))
      kind = name.str();
  if (kind == "adamw" || kind == "adam")
    return {kind, 2}; // first and second moments
  if (kind == "sgd") {
    // Plain SGD keeps no state; with momentum it keeps one buffer.
    Attribute momentum = dict ? dict.get("momentum") : Attribute();
    bool none = false;
    if (auto f = dyn_cast_or_null<FloatAttr>(momentum))
      none = f.getValueAsDouble() == 0;
    else if (auto i = dyn_cast_or_null<IntegerAttr>(momentum))
      none = i.getValue().isZero();
    return {kind, none ? 0 : 1};
  }
  job.emitWarning("bmb-param-stats: unknown optimizer '")
      << kind << "'; counting 2 f32 states per trainable element, as AdamW";
  return {kind, 2};
}

FailureOr<ModelParamStats> computeModel(ModelOp model, ModuleOp module) {
  ModelParamStats stats;
  stats.model = model.getSymName().str();
  stats.layer = model.getLayer().str();
  llvm::StringMap<size_t> instanceIndex, dtypeIndex;
  for (ParamOp param : model.getParams()) {
    StringRef name = param.getSymName();
    RankedTensorType type = param.getTensorType();
    std::optional<shapes::Sig> sig = getSig(type);
    if (!sig)
      return param.emitError("bmb-param-stats: unsupported parameter type ")
             << type;
    std::optional<int64_t> elements = shapes::numElements(sig->shape);
    if (!elements)
      return param.emitError("bmb-param-stats: the element count of @")
             << name << " : " << type << " overflows int64";
    int64_t bytes = *elements;
    if (!mulInto(bytes, shapes::byteSize(sig->dtype)))
      return param.emitError("bmb-param-stats: the size in bytes of @")
             << name << " : " << type << " overflows int64";
    // Every other sum below is part of these two totals, so once they are
    // known not to overflow, neither do the per-instance and per-dtype sums.
    if (!addInto(stats.elements, *elements))
      return param.emitError("bmb-param-stats: the parameter count of @")
             << stats.model << " overflows int64 at @" << name;
    if (!addInto(stats.bytes, bytes))
      return param.emitError("bmb-param-stats: the parameter bytes of @")
             << stats.model << " overflow int64 at @" << name;
    if (param.isTrainable()) {
      stats.trainableElements += *elements;
      stats.trainableBytes += bytes;
    }

    int64_t repeat = 1;
    for (int64_t d : type.getShape().take_front(param.getStacked()))
      if (!mulInto(repeat, d)) // only possible with a 0 dimension after it
        repeat = INT64_MAX;
    StringRef instance = name.contains('.') ? name.rsplit('.').first : "";
    auto [row, newRow] =
        instanceIndex.try_emplace(instance, stats.instances.size());
    if (newRow)
      stats.instances.push_back({instance.str(), repeat, 0, 0});
    InstanceParamStats &inst = stats.instances[row->second];
    inst.repeat = std::max(inst.repeat, repeat);
    inst.elements += *elements;
    inst.bytes += bytes;

    auto [dt, newDType] = dtypeIndex.try_emplace(shapes::spelling(sig->dtype),
                                                 stats.dtypes.size());
    if (newDType)
      stats.dtypes.push_back({dt->first().str(), 0, 0});
    stats.dtypes[dt->second].elements += *elements;
    stats.dtypes[dt->second].bytes += bytes;
  }

  for (JobOp job : module.getOps<JobOp>()) {
    if (job.getKind() != JobKind::Train || job.getModel() != stats.model)
      continue;
    auto [optimizer, states] = optimizerOf(job);
    JobMemoryStats mem;
    mem.job = job.getSymName().str();
    mem.optimizer = optimizer;
    mem.statesPerElement = states;
    mem.paramBytes = stats.bytes;
    mem.gradBytes = stats.trainableBytes; // same dtype as the parameter
    // f32 states (the fp32 master copy of mixed precision too); an fp64
    // program keeps them in f64, as its params.
    if (auto p = job.getSettings().getAs<StringAttr>("precision"); p && p.getValue() == "fp64")
      mem.stateType = "f64";
    mem.optimizerBytes = stats.trainableElements;
    if (!mulInto(mem.optimizerBytes, states * (mem.stateType == "f64" ? 8 : 4)))
      return job.emitError("bmb-param-stats: the optimizer state of @")
             << mem.job << " (" << states << " x " << mem.stateType
             << " per trainable element) overflows int64";
    if (auto p = job.getSettings().getAs<StringAttr>("precision");
        p && (p.getValue() == "bf16" || p.getValue() == "fp16")) {
      mem.lowType = p.getValue().str();
      mem.lowCopyBytes = stats.trainableElements;
      if (!mulInto(mem.lowCopyBytes, 2))
        return job.emitError("bmb-param-stats: the weight copy of @") << mem.job
                                                                     << " overflows int64";
    }
    mem.totalBytes = mem.paramBytes;
    if (!addInto(mem.totalBytes, mem.gradBytes) ||
        !addInto(mem.totalBytes, mem.optimizerBytes) ||
        !addInto(mem.totalBytes, mem.lowCopyBytes))
      return job.emitError("bmb-param-stats: the training memory of @")
             << mem.job << " overflows int64";
    stats.jobs.push_back(mem);
  }
  return stats;
}

} // namespace

FailureOr<ParamStats> mlir::bmb::computeParamStats(ModuleOp module) {
  ParamStats stats;
  for (ModelOp model : module.getOps<ModelOp>()) {
    FailureOr<ModelParamStats> m = computeModel(model, module);
    if (failed(m))
      return failure();
    stats.models.push_back(std::move(*m));
  }
  return stats;
}

void mlir::bmb::printParamStats(const ParamStats &stats,
                                llvm::raw_ostream &os) {
  for (const ModelParamStats &m : stats.models) {
    size_t width = std::string("dtype bf16").size();
    for (const InstanceParamStats &row : m.instances)
      width = std::max(width, row.instance.size());
    auto line = [&](StringRef name, StringRef repeat, int64_t elements,
                    int64_t bytes) {
      os << "  " << llvm::left_justify(name, width) << "  "
         << llvm::right_justify(repeat, 6) << "  "
         << llvm::right_justify(formatCount(elements), 15) << "  "
         << llvm::right_justify(formatBytes(bytes), 10) << "\n";
    };
    os << "model @" << m.model << " (" << m.layer << ")\n";
    os << "  " << llvm::left_justify("instance", width) << "  "
       << llvm::right_justify("repeat", 6) << "  "
       << llvm::right_justify("parameters", 15) << "  "
       << llvm::right_justify("bytes", 10) << "\n";
    for (const InstanceParamStats &row : m.instances)
      line(row.instance.empty() ? "(model)" : row.instance,
           row.repeat > 1 ? "x" + std::to_string(row.repeat) : "", row.elements,
           row.bytes);
    os << "  " << std::string(width + 39, '-') << "\n";
    for (const DTypeParamStats &d : m.dtypes)
      line("dtype " + d.dtype, "", d.elements, d.bytes);
    line("total", "", m.elements, m.bytes);
    if (m.trainableElements != m.elements)
      line("trainable", "", m.trainableElements, m.trainableBytes);
    for (const JobMemoryStats &j : m.jobs) {
      os << "train job @" << j.job << " (" << j.optimizer << ")\n";
      auto mem = [&](StringRef what, int64_t bytes) {
        os << "  " << llvm::left_justify(what, 34)
           << llvm::right_justify(formatBytes(bytes), 10) << "\n";
      };
      mem("parameters", j.paramBytes);
      mem("gradients", j.gradBytes);
      mem("optimizer state (" + std::to_string(j.statesPerElement) + " x " + j.stateType + ")",
          j.optimizerBytes);
      if (!j.lowType.empty())
        mem(j.lowType + " weight copy (GEMM operands)", j.lowCopyBytes);
      mem("total", j.totalBytes);
    }
  }
}

namespace {
struct ParamStatsPass : mlir::bmb::impl::ParamStatsPassBase<ParamStatsPass> {
  using ParamStatsPassBase::ParamStatsPassBase;

  void runOnOperation() override {
    markAllAnalysesPreserved();
    FailureOr<ParamStats> stats = computeParamStats(getOperation());
    if (failed(stats))
      return signalPassFailure();
    if (output == "-") {
      printParamStats(*stats, llvm::outs());
      llvm::outs().flush();
      return;
    }
    std::error_code ec;
    llvm::raw_fd_ostream os(output, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      getOperation().emitError("bmb-param-stats: cannot write '")
          << output << "': " << ec.message();
      return signalPassFailure();
    }
    printParamStats(*stats, os);
  }
};
} // namespace
