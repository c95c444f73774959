//===- cuda/attention_keys.h - Which keys a query row sees (attention inside) ===//
//
// The device attention (attention.cu, attention_decode.cu) and prefix
// tuning's (attention_prefix.cu) share one path: scores, a masked softmax,
// products. What differs is which keys of a sequence a query may see
// besides its causal limit:
//  - plain attention: key j where keyMask[b * cacheCapacity + j] != 0 (or
//    every key without a mask);
//  - prefix tuning (bmrt::attention_prefix_forward): keys [0, P) are the
//    learned prefix, seen by every query unless the layer's gate (device
//    memory, set by bmrt::iteration_gate) is 0; the key mask covers the
//    tokens only, key j >= P at mask column j - P.
// The host widens its mask into a new [batch, P + ...] buffer
// (host/attention_prefix.cpp); the kernels here read the rule instead, so
// nothing is allocated per call, and the gate is read on the device, so a
// decode step with a prefix is still one replayable graph.
//
// With the step's position in device memory (Device::stepStart, the decode
// step as a graph), the position counts tokens: the first query's cache row
// is *stepStart + prefix. Otherwise AttentionArgs::start is that row (the
// host kernel's convention: attention_prefix_forward calls
// attention_forward with start + P).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_ATTENTION_KEYS_H
#define BMRT_CUDA_ATTENTION_KEYS_H

#include "bmrt/kernels.h"
#include "cuda/device.h"

#include <cstdint>

namespace bmrt::cuda {

/// Which keys are visible (a launch argument of the softmax kernels).
struct KeyVisibility {
  const int32_t *mask = nullptr; // [batch, maskStride] over the tokens' keys; null = all
  int64_t maskStride = 0;
  int64_t prefix = 0;            // keys [0, prefix) are a prefix (not in the mask)
  const float *gate = nullptr;   // device, one element: the prefix hidden where it is 0
};

/// Plain attention's keys: the mask over the whole cache row, no prefix.
inline KeyVisibility plainKeys(const AttentionArgs &a) {
  KeyVisibility k;
  k.mask = a.keyMask;
  k.maskStride = a.cacheCapacity;
  return k;
}

#ifdef __CUDACC__
/// Whether the prefix is on (read once per block: the gate is one element).
__device__ inline bool prefixOpen(const KeyVisibility &k) {
  return k.prefix == 0 || !k.gate || k.gate[0] != 0.0f;
}
/// Key j of sequence b, its causal limit aside (open = prefixOpen(k)).
__device__ inline bool keyVisible(const KeyVisibility &k, bool open, int64_t b, int64_t j) {
  if (j < k.prefix)
    return open;
  return !k.mask || k.mask[b * k.maskStride + (j - k.prefix)] != 0;
}
#endif

/// attention_forward (kernels_cuda.h) with the keys `keys` sees: writes the
/// new rows into the caches at row args.start (or *dev.stepStart +
/// keys.prefix), then attends over cache rows [0, start + rows).
void attention_forward_keys(Device &dev, const AttentionArgs &args, const KeyVisibility &keys,
                            float *out, const float *q, const float *k, const float *v,
                            float *kCache, float *vCache);

/// The decode step's attention with its position in device memory, after
/// the cache write (attention_decode.cu).
void attention_decode(Device &dev, const AttentionArgs &args, const KeyVisibility &keys,
                      float *out, const float *q, const float *kCache, const float *vCache);

/// attention_backward (kernels_cuda.h) with the keys `keys` sees, at
/// training shapes with any args.start >= 0: query row r is key row
/// start + r, and k/v (args' kv strides) hold start + rows rows. p and dp
/// are the caller's [batch, rows, start + rows] score tiles (scratch).
void attention_backward_keys(Device &dev, const AttentionArgs &args, const KeyVisibility &keys,
                             float *p, float *dp, float *dq, float *dk, float *dv,
                             const float *dout, const float *q, const float *k, const float *v);

} // namespace bmrt::cuda

#endif // BMRT_CUDA_ATTENTION_KEYS_H
