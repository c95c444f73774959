//===- cuda/sampling_sorted.h - top_k and top_p on the GPU ----------------===//
//
// The sorted sampling modes of sample_token (kernels_cuda.h), apart so a
// test can see how many tokens the cut kept. sampling_sorted.cu has the
// method and its rounding.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_SAMPLING_SORTED_H
#define BMRT_CUDA_SAMPLING_SORTED_H

#include "bmrt/sampling.h"
#include "cuda/device.h"

#include <cstdint>

namespace bmrt::cuda {

/// What the device's draw found (sample_token turns the errors into the
/// host's messages).
struct SortedDraw {
  long long token;    // -1 on an error below
  long long badIndex; // lowest NaN/+inf id, LLONG_MAX if none
  int badIsNan;
  int allNegInf;      // every logit is -inf
  long long kept;     // tokens the top_k / top_p cut kept (0 on an error)
};

/// top_k or top_p (config.mode) over logits [vocab] in device memory with
/// the uniform `u`: one radix sort and one block on the compute stream,
/// then one synchronisation for the result.
SortedDraw sorted_draw(Device &dev, const SamplingConfig &config, const float *logits,
                       int64_t vocab, double u);

} // namespace bmrt::cuda

#endif // BMRT_CUDA_SAMPLING_SORTED_H
