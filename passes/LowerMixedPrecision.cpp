//===- LowerMixedPrecision.cpp - precision and loss scaling of a train job ===//
//
// What the train lowering does with `precision` (docs/training.md "Mixed
// precision"): bmb-autocast already marked the GEMMs, so only the program's
// table is left - TrainInfo::precision, and for fp16 the dynamic loss
// scaling the app runs (runtime/app/loss_scale.h): `loss_scale` (the initial
// scale, a power of two >= 1, default 2^16) and `loss_scale_window` (good
// steps before it doubles, default 1000). They are attributes of the
// program only when set: fp32 programs are unchanged.
//
//===----------------------------------------------------------------------===//
#include "passes/EntryLowering.h"

#include <cmath>

using namespace mlir;
using namespace mlir::bmb;

namespace {

constexpr double kDefaultLossScale = 65536;
constexpr int64_t kDefaultLossScaleWindow = 1000;

StringRef precisionOf(JobOp job) {
  auto p = job.getSettings().getAs<StringAttr>("precision");
  return p ? p.getValue() : "fp32";
}

std::optional<double> number(Attribute a) {
  if (auto f = dyn_cast_or_null<FloatAttr>(a))
    return f.getValueAsDouble();
  if (auto i = dyn_cast_or_null<IntegerAttr>(a))
    return (double)i.getInt();
  return std::nullopt;
}

} // namespace

LogicalResult mlir::bmb::checkLossScaling(JobOp job) {
  StringRef precision = precisionOf(job);
  if (!llvm::is_contained({"fp32", "fp64", "bf16", "fp16"}, precision))
    return emitError(settingLoc(job, "precision"), "precision = ")
           << precision << " is not implemented (fp32, fp64, bf16 and fp16 are)";
  DictionaryAttr settings = job.getSettings();
  for (const char *key : {"loss_scale", "loss_scale_window"})
    if (settings.get(key) && precision != "fp16")
      return emitError(settingLoc(job, key), "`")
             << key << "` applies to precision = fp16 only (this job's precision is "
             << precision << ")";
  if (Attribute a = settings.get("loss_scale")) {
    std::optional<double> s = number(a);
    int e;
    if (!s || !(*s >= 1 && *s <= 0x1p100) || std::frexp(*s, &e) != 0.5)
      return emitError(settingLoc(job, "loss_scale"),
                       "loss_scale must be a power of two in [1, 2^100] (it is halved and "
                       "doubled, and gradients are divided by it exactly)");
  }
  return success();
}

void mlir::bmb::recordMixedPrecision(JobOp job, ex::ProgramOp program) {
  StringRef precision = precisionOf(job);
  if (precision != "bf16" && precision != "fp16")
    return;
  Builder b(job.getContext());
  program->setAttr("precision", b.getStringAttr(precision));
  if (precision != "fp16")
    return;
  DictionaryAttr settings = job.getSettings();
  double scale = number(settings.get("loss_scale")).value_or(kDefaultLossScale);
  auto window = dyn_cast_or_null<IntegerAttr>(settings.get("loss_scale_window"));
  program->setAttr("loss_scale", b.getF64FloatAttr(scale));
  program->setAttr("loss_scale_window",
                   b.getI64IntegerAttr(window ? window.getInt() : kDefaultLossScaleWindow));
}
