//===- cuda/indexing.cu - Embedding, strided copies and rotary on the GPU --===//
//
// Why it is shaped like this:
//  - Gathers (embedding, copy_strided) run one thread per output element,
//    consecutive threads along a row: coalesced reads and writes.
//  - Their backward scatter-adds are deterministic without atomics, as on
//    the host: one thread per column adds the rows in order 0..rows-1, so
//    repeated token ids sum in row order and the bits do not depend on the
//    launch. Parallelism is the row width (C), which is enough for a first
//    version; a sort-by-id form would parallelise over ids too.
//  - A token id outside the vocabulary cannot throw on the device: the row
//    is left at zero (forward) or skipped (backward) and the id is
//    recorded in the device's error slot (checkDeviceErrors reports it with
//    the host kernels' message).
//  - Rotary reuses the host's argument checks and inverse frequencies
//    (host/host_common.h: HF's fp32 rounding), passed by value to the
//    kernel; angles and their cos/sin are computed per element in fp32.
//
//===----------------------------------------------------------------------===//
#include "cuda/check.h"
#include "cuda/kernels_cuda.h"
#include "cuda/launch.cuh"
#include "host/host_common.h"

#include <string>

namespace bmrt::cuda {
namespace {

__global__ void embeddingKernel(float *out, const int32_t *ids, const float *table, int64_t rows,
                                int64_t vocab, int64_t C, DeviceErrorSlot *errors) {
  BMRT_GRID_STRIDE(e, rows * C) {
    const int64_t r = e / C, c = e % C;
    const int32_t id = ids[r];
    if (id < 0 || id >= vocab) {
      out[e] = 0.0f;
      if (c == 0)
        reportBadIndex(errors, kBadTokenId, id, r, vocab, 0);
      continue;
    }
    out[e] = table[(int64_t)id * C + c];
  }
}

__global__ void embeddingBackwardKernel(float *dtable, const int32_t *ids, const float *dout,
                                        int64_t rows, int64_t vocab, int64_t C,
                                        DeviceErrorSlot *errors) {
  BMRT_GRID_STRIDE(c, C) {
    for (int64_t r = 0; r < rows; ++r) {
      const int32_t id = ids[r];
      if (id < 0 || id >= vocab) {
        if (c == 0)
          reportBadIndex(errors, kBadTokenId, id, r, vocab, 0);
        continue;
      }
      dtable[(int64_t)id * C + c] += dout[r * C + c];
    }
  }
}

__global__ void copyStridedKernel(float *out, const float *x, int64_t outer, int64_t inner,
                                  int64_t xOuterStride, int64_t xOffset, bool backward) {
  BMRT_GRID_STRIDE(e, outer * inner) {
    const int64_t o = e / inner, i = e % inner;
    if (backward) // out is dx, x is dout: every dx element has one source
      out[o * xOuterStride + xOffset + i] += x[e];
    else
      out[e] = x[o * xOuterStride + xOffset + i];
  }
}

constexpr int kMaxHalf = 256; // head dimensions up to 512
struct InvFreq {
  float v[kMaxHalf];
};

template <bool Backward>
__global__ void rotaryKernel(float *out, const float *x, const int32_t *pos, int64_t rows,
                             int64_t heads, int64_t half, int64_t rowStride, InvFreq inv) {
  BMRT_GRID_STRIDE(e, rows * heads * half) {
    const int64_t i = e % half, h = (e / half) % heads, r = e / (half * heads);
    const float angle = (float)pos[r] * inv.v[i]; // rounded in fp32 first, as HF
    const float c = cosf(angle), s = sinf(angle);
    const int64_t at = r * rowStride + h * 2 * half + i;
    const float a = x[at], b = x[at + half]; // both read before either is written
    if (!Backward) {
      out[at] = a * c - b * s;
      out[at + half] = b * c + a * s;
    } else { // the transpose of the rotation, accumulated
      out[at] += a * c + b * s;
      out[at + half] += b * c - a * s;
    }
  }
}

void checkShape(const char *what, int64_t rows, int64_t C) {
  if (rows < 0 || C < 1)
    fail(std::string(what) + ": needs rows >= 0 and C >= 1 (got rows " + std::to_string(rows) +
         ", C " + std::to_string(C) + ")");
}

template <bool Backward>
void rotary(Device &dev, const char *what, float *out, const float *x, const int32_t *pos,
            int64_t rows, int64_t heads, int64_t headDim, int64_t rowStride, float base) {
  host::checkRotaryArgs(what, rows, heads, headDim, rowStride, base);
  const int64_t half = headDim / 2;
  if (half > kMaxHalf)
    fail(std::string(what) + ": the cuda backend takes head dimensions up to " +
         std::to_string(2 * kMaxHalf) + " (got " + std::to_string(headDim) + ")");
  InvFreq inv;
  host::inverseFrequencies(inv.v, headDim, base);
  if (rows == 0)
    return;
  rotaryKernel<Backward><<<blocksFor(rows * heads * half), kThreads, 0, dev.compute>>>(
      out, x, pos, rows, heads, half, rowStride, inv);
  BMRT_CUDA_CHECK_LAUNCH("rotaryKernel");
}

} // namespace

void embedding_forward(Device &dev, float *out, const int32_t *ids, const float *table,
                       int64_t rows, int64_t vocab, int64_t C) {
  checkShape("embedding_forward", rows, C);
  if (rows == 0)
    return;
  embeddingKernel<<<blocksFor(rows * C), kThreads, 0, dev.compute>>>(out, ids, table, rows,
                                                                     vocab, C, dev.errors);
  BMRT_CUDA_CHECK_LAUNCH("embeddingKernel");
}

void embedding_backward(Device &dev, float *dtable, const int32_t *ids, const float *dout,
                        int64_t rows, int64_t vocab, int64_t C) {
  checkShape("embedding_backward", rows, C);
  if (rows == 0 || !dtable)
    return;
  embeddingBackwardKernel<<<blocksFor(C), kThreads, 0, dev.compute>>>(dtable, ids, dout, rows,
                                                                      vocab, C, dev.errors);
  BMRT_CUDA_CHECK_LAUNCH("embeddingBackwardKernel");
}

void copy_strided(Device &dev, float *out, const float *x, int64_t outer, int64_t inner,
                  int64_t xOuterStride, int64_t xOffset) {
  if (outer <= 0 || inner <= 0)
    return;
  copyStridedKernel<<<blocksFor(outer * inner), kThreads, 0, dev.compute>>>(
      out, x, outer, inner, xOuterStride, xOffset, false);
  BMRT_CUDA_CHECK_LAUNCH("copyStridedKernel");
}

void copy_strided_backward(Device &dev, float *dx, const float *dout, int64_t outer,
                           int64_t inner, int64_t xOuterStride, int64_t xOffset) {
  if (outer < 0 || inner < 0 || xOffset < 0)
    fail("copy_strided_backward: bad shape (outer " + std::to_string(outer) + ", inner " +
         std::to_string(inner) + ", offset " + std::to_string(xOffset) + ")");
  // Overlapping slices would need their adds in order; one thread per
  // element cannot give that.
  if (outer > 1 && xOuterStride < inner)
    fail("copy_strided_backward: overlapping slices (stride " + std::to_string(xOuterStride) +
         " < slice " + std::to_string(inner) + ") are not supported on the cuda backend");
  if (outer == 0 || inner == 0 || !dx)
    return;
  copyStridedKernel<<<blocksFor(outer * inner), kThreads, 0, dev.compute>>>(
      dx, dout, outer, inner, xOuterStride, xOffset, true);
  BMRT_CUDA_CHECK_LAUNCH("copyStridedKernel");
}

void rotary_forward(Device &dev, float *out, const float *x, const int32_t *pos, int64_t rows,
                    int64_t heads, int64_t headDim, int64_t rowStride, float base) {
  rotary<false>(dev, "rotary_forward", out, x, pos, rows, heads, headDim, rowStride, base);
}

void rotary_backward(Device &dev, float *dx, const float *dout, const int32_t *pos, int64_t rows,
                     int64_t heads, int64_t headDim, int64_t rowStride, float base) {
  if (!dx)
    return;
  rotary<true>(dev, "rotary_backward", dx, dout, pos, rows, heads, headDim, rowStride, base);
}

} // namespace bmrt::cuda
