//===- delta_merge.cpp - LoRA merged into the weights at load -------------===//
//
// An infer job with `delta = lora(...)` (bmb-insert-deltas) runs the
// backbone's forward on merged weights: after the checkpoint is loaded,
// W += scale * B A for each ProgramInfo::merges entry, per layer for stacked
// params. The products accumulate in double, so merging in float32 rounds
// once per weight element.
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "bmrt/program.h"

#include <cstring>
#include <string>
#include <vector>

namespace bmrt {

namespace {

const ParamInfo &findParam(const ProgramInfo &program, const char *name) {
  for (int i = 0; i < program.numParams; ++i)
    if (std::strcmp(program.params[i].name, name) == 0)
      return program.params[i];
  fail(std::string("program '") + program.model + "': merged delta names no param '" + name + "'");
}

template <typename T>
void mergeOne(T *w, const T *a, const T *b, int64_t layers, int64_t out, int64_t in,
              int64_t rank, double scale) {
  for (int64_t l = 0; l < layers; ++l) {
    T *wl = w + l * out * in;
    const T *al = a + l * rank * in, *bl = b + l * out * rank;
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < in; ++i) {
        double sum = 0;
        for (int64_t r = 0; r < rank; ++r)
          sum += (double)bl[o * rank + r] * (double)al[r * in + i];
        wl[o * in + i] = (T)((double)wl[o * in + i] + scale * sum);
      }
  }
}

} // namespace

void mergeDeltas(const ProgramInfo &program, void *params) {
  for (int k = 0; k < program.numMerges; ++k) {
    const DeltaMerge &m = program.merges[k];
    const ParamInfo &w = findParam(program, m.weight), &a = findParam(program, m.a),
                    &b = findParam(program, m.b);
    int lead = w.stacked ? 1 : 0;
    bool ok = w.rank == 2 + lead && a.rank == w.rank && b.rank == w.rank &&
              w.dtype == a.dtype && w.dtype == b.dtype && a.stacked == w.stacked &&
              b.stacked == w.stacked && (!lead || (a.shape[0] == w.shape[0] && b.shape[0] == w.shape[0]));
    int64_t out = ok ? w.shape[lead] : 0, in = ok ? w.shape[lead + 1] : 0;
    int64_t rank = ok ? a.shape[lead] : 0;
    ok = ok && a.shape[lead + 1] == in && b.shape[lead] == out && b.shape[lead + 1] == rank;
    if (!ok)
      fail(std::string("program '") + program.model + "': cannot merge LoRA '" + m.a + "', '" +
           m.b + "' into '" + m.weight + "' (shapes or dtypes do not fit)");
    // Infer programs lay their params out back to back; only a training
    // program's trainable group is layer-major.
    if (w.layerStride || a.layerStride || b.layerStride)
      fail(std::string("program '") + program.model + "': cannot merge LoRA '" + m.a +
           "' into '" + m.weight + "': its layers are not back to back (a training program?)");
    int64_t layers = lead ? w.shape[0] : 1;
    char *base = (char *)params;
    if (w.dtype == DType::F32)
      mergeOne((float *)(base + w.offset), (const float *)(base + a.offset),
               (const float *)(base + b.offset), layers, out, in, rank, m.scale);
    else if (w.dtype == DType::F64)
      mergeOne((double *)(base + w.offset), (const double *)(base + a.offset),
               (const double *)(base + b.offset), layers, out, in, rank, m.scale);
    else
      fail(std::string("program '") + program.model + "': cannot merge a LoRA into the " +
           "integer param '" + m.weight + "'");
  }
}

} // namespace bmrt
