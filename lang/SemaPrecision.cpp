//===- SemaPrecision.cpp - The job's `precision` on the elaborated model --===//
//
// A model declares its tensors without an element type: parameters default
// to f32 and every float value takes its operands' type. The job decides the
// precision: `precision = fp64` makes every f32 tensor of the elaborated
// model (parameters, activations; the passes derive gradients and optimizer
// state from them) f64. It is applied here, once, on the program that
// MLIRGen maps 1:1, so the IR of an fp64 job is plainly f64 from its first
// dump on and no pass has to know the setting. fp64 exists for checking
// gradients by finite differences (test/e2e/check_fd.py), not for speed.
//
// `bf16` and `fp16` (mixed precision) leave the model f32: the params are
// the fp32 master weights, and which ops compute on reduced inputs is
// bmb-autocast's decision (passes/Autocast.cpp), made on the IR before
// autodiff. fp16 (it needs dynamic loss scaling) and reduced-precision
// infer programs are errors of the lowerings.
//
//===----------------------------------------------------------------------===//
#include "lang/SemaInternal.h"

using namespace bmb;
using namespace bmb::sema;

namespace {

void widen(Sig &s) {
  if (s.dtype == shapes::DType::F32)
    s.dtype = shapes::DType::F64;
}

void widen(LayerInstance &inst) {
  for (program::Param &p : inst.params)
    widen(p.sig);
  for (program::ValueInfo &v : inst.forward.values)
    widen(v.sig);
  for (const auto &c : inst.children)
    widen(*c);
}

} // namespace

void Sema::applyPrecision(const program::Job &job, LayerInstance &root) {
  auto it = job.settings.find("precision");
  if (it != job.settings.end() && it->second.s == "fp64")
    widen(root);
}
