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
#include "cuda/sampling_draw.h"

#include <cstdint>

namespace bmrt::cuda {

/// What the device's draw found (sample_token turns the errors into the
/// host's messages; `kept` is the tokens the cut kept).
using SortedDraw = DrawResult;

/// top_k or top_p (config.mode) over logits [vocab] in device memory, the
/// draw of token `step` (the Philox counter): drawToken for the sorted
/// modes only.
SortedDraw sorted_draw(Device &dev, const SamplingConfig &config, const float *logits,
                       int64_t vocab, uint64_t step);

/// The sorted path's launches (enqueueDraw's, sampling_draw.h): a radix sort
/// of the row, then one block for the cut and the draw, settings from
/// `params`, the result to `result` (device memory).
void launchSortedDraw(Device &dev, const DrawParams *params, const float *logits,
                      int64_t vocab, DrawResult *result);

} // namespace bmrt::cuda

#endif // BMRT_CUDA_SAMPLING_SORTED_H
