//===- host/attention_prefix.cpp - Attention with a tuned K/V prefix (CPU) -===//
//
// Prefix tuning (docs/training.md "Delta tuning"): each sequence's keys are
// [pk; k] and its values [pv; v]. Rather than teach the attention kernel a
// second key source, the prefix lives in the first P rows of the KV cache and
// the tokens after it: attention_forward then runs unchanged from start + P
// (a query at token position t sees cache rows [0, P + t]: the whole prefix,
// then its causal window). The caches are the KV cache of an infer program
// (capacity P + ctx) or the lowering's [batch, P + rows] buffers in training.
// A padding mask covers the tokens only; it is widened with P ones here (P
// zeros where the gate turns the prefix off, for a layer of a repeat whose
// prefix covers some iterations only).
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels.h"
#include "host/host_common.h"

#include <cstring>
#include <memory>
#include <string>

namespace bmrt {

template <class T>
void attention_prefix_forward(Context &ctx, const AttentionArgs &args, int64_t prefixRows,
                              const T *pk, const T *pv, const T *gate, T *out, const T *q,
                              const T *k, const T *v, T *k_cache, T *v_cache) {
  const int64_t P = prefixRows, kvDim = args.kvHeads * args.headDim, cap = args.cacheCapacity;
  if (P < 1 || P + args.start + args.rows > cap)
    fail("attention_prefix_forward: " + std::to_string(P) + " prefix rows and rows [" +
         std::to_string(args.start) + ", " + std::to_string(args.start + args.rows) +
         ") do not fit the KV cache capacity " + std::to_string(cap));
  // Every step rewrites the prefix (P rows per sequence, cheap next to the
  // attention itself): the caches need no separate initialisation.
  for (int64_t b = 0; b < args.batch; ++b) {
    std::memcpy(k_cache + b * cap * kvDim, pk, sizeof(T) * P * kvDim);
    std::memcpy(v_cache + b * cap * kvDim, pv, sizeof(T) * P * kvDim);
  }
  AttentionArgs a = args;
  a.start = args.start + P;
  const bool on = !gate || gate[0] != T(0);
  std::unique_ptr<int32_t[]> mask;
  if (args.keyMask || !on) {
    // [batch, cap]: the prefix visible (or not, gated off), then the
    // tokens' mask (or all visible).
    mask.reset(new int32_t[args.batch * cap]);
    for (int64_t b = 0; b < args.batch; ++b) {
      int32_t *row = mask.get() + b * cap;
      std::fill(row, row + P, on ? 1 : 0);
      if (args.keyMask)
        std::memcpy(row + P, args.keyMask + b * (cap - P), sizeof(int32_t) * (cap - P));
      else
        std::fill(row + P, row + cap, 1);
    }
    a.keyMask = mask.get();
  }
  attention_forward(ctx, a, out, q, k, v, k_cache, v_cache);
}

template void attention_prefix_forward<float>(Context &, const AttentionArgs &, int64_t,
                                              const float *, const float *, const float *,
                                              float *, const float *, const float *,
                                              const float *, float *, float *);
template void attention_prefix_forward<double>(Context &, const AttentionArgs &, int64_t,
                                               const double *, const double *, const double *,
                                               double *, const double *, const double *,
                                               const double *, double *, double *);

} // namespace bmrt
