//===- host/backward_attention_prefix.cpp - Prefix attention backward (CPU) ===//
//
// The backward of attention_prefix_forward at training shapes. The keys of
// sequence b are [pk; k[b]]: they are assembled into contiguous scratch
// [batch, P + rows, kv width] buffers (k/v may be strided parts of a fused
// [q | k | v] buffer), attention_backward runs with start = P (query row r is
// key row P + r), and its key/value gradients are split again: rows [P, P+R)
// into dk/dv, rows [0, P) summed over the batch (in batch order, so the
// same bits for any thread count) into dpk/dpv.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels_backward.h"
#include "host/host_common.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

namespace bmrt {

template <class T>
void attention_prefix_backward(Context &ctx, const AttentionArgs &args, int64_t prefixRows,
                               const T *pk, const T *pv, const T *gate, T *dpk, T *dpv, T *dq,
                               T *dk, T *dv, const T *dout, const T *q, const T *k,
                               const T *v) {
  const int64_t P = prefixRows, R = args.rows, B = args.batch;
  const int64_t kvDim = args.kvHeads * args.headDim, NK = P + R;
  if (P < 1 || args.start != 0)
    fail("attention_prefix_backward: needs prefixRows >= 1 and start 0 (got " +
         std::to_string(P) + ", " + std::to_string(args.start) + ")");
  const int64_t n = B * NK * kvDim;
  std::unique_ptr<T[]> scratch(new T[4 * n]);
  T *kc = scratch.get(), *vc = kc + n, *dkc = vc + n, *dvc = dkc + n;
  std::fill(dkc, dkc + 2 * n, T(0));
  for (int64_t b = 0; b < B; ++b) {
    std::memcpy(kc + b * NK * kvDim, pk, sizeof(T) * P * kvDim);
    std::memcpy(vc + b * NK * kvDim, pv, sizeof(T) * P * kvDim);
    for (int64_t r = 0; r < R; ++r) {
      const int64_t src = b * args.kvBatchStride + r * args.kvRowStride;
      std::memcpy(kc + (b * NK + P + r) * kvDim, k + src, sizeof(T) * kvDim);
      std::memcpy(vc + (b * NK + P + r) * kvDim, v + src, sizeof(T) * kvDim);
    }
  }
  AttentionArgs a = args;
  a.start = P;
  a.kvRowStride = kvDim;
  a.kvBatchStride = NK * kvDim;
  a.cacheCapacity = NK;
  const bool on = !gate || gate[0] != T(0);
  std::unique_ptr<int32_t[]> mask;
  if (args.keyMask || !on) {
    // [batch, P + R]: the prefix visible (unless gated off), then the
    // tokens' mask (whose rows are args.cacheCapacity long) or all visible.
    mask.reset(new int32_t[B * NK]);
    for (int64_t b = 0; b < B; ++b) {
      int32_t *row = mask.get() + b * NK;
      std::fill(row, row + P, on ? 1 : 0);
      if (args.keyMask)
        std::memcpy(row + P, args.keyMask + b * args.cacheCapacity, sizeof(int32_t) * R);
      else
        std::fill(row + P, row + NK, 1);
    }
    a.keyMask = mask.get();
  }
  attention_backward(ctx, a, dq, dkc, dvc, dout, q, kc, vc);
  for (int64_t b = 0; b < B; ++b) {
    const T *dkb = dkc + b * NK * kvDim, *dvb = dvc + b * NK * kvDim;
    for (int64_t i = 0; i < P * kvDim; ++i) {
      dpk[i] += dkb[i];
      dpv[i] += dvb[i];
    }
    for (int64_t r = 0; r < R; ++r) {
      const int64_t dst = b * args.kvBatchStride + r * args.kvRowStride;
      for (int64_t i = 0; i < kvDim; ++i) {
        dk[dst + i] += dkb[(P + r) * kvDim + i];
        dv[dst + i] += dvb[(P + r) * kvDim + i];
      }
    }
  }
}

template void attention_prefix_backward<float>(Context &, const AttentionArgs &, int64_t,
                                               const float *, const float *, const float *,
                                               float *, float *, float *, float *, float *,
                                               const float *, const float *, const float *,
                                               const float *);
template void attention_prefix_backward<double>(Context &, const AttentionArgs &, int64_t,
                                                const double *, const double *, const double *,
                                                double *, double *, double *, double *,
                                                double *, const double *, const double *,
                                                const double *, const double *);

} // namespace bmrt
