//===- shim_common.h - What every ctypes test shim needs -------*- C++ -*-===//
//
// The Python reference tests call the runtime through small `extern "C"`
// shims. Each entry point catches bmrt::Error into the caller's `err` buffer
// (returning 1), builds a Context with a thread count, and dispatches on
// `dtype` (0 = float, 1 = double).
//
//===----------------------------------------------------------------------===//
#ifndef BMB_TEST_RUNTIME_HOST_SHIM_COMMON_H
#define BMB_TEST_RUNTIME_HOST_SHIM_COMMON_H

#include "bmrt/kernels.h"

#include <cstdio>
#include <exception>

namespace shim {

template <class F> int guarded(char *err, int errLen, F &&body) {
  try {
    body();
    return 0;
  } catch (const std::exception &e) {
    if (err && errLen > 0)
      std::snprintf(err, errLen, "%s", e.what());
    return 1;
  }
}

inline bmrt::Context makeContext(int threads) {
  bmrt::Context ctx;
  ctx.numThreads = threads;
  return ctx;
}

// Runs body(T()) with T = float or double.
template <class F> void byDtype(int dtype, F &&body) {
  if (dtype == 0)
    body(float());
  else if (dtype == 1)
    body(double());
  else
    bmrt::fail("shim: dtype must be 0 (float) or 1 (double)");
}

// iargs: batch, rows, heads, kvHeads, headDim, qRowStride, qBatchStride,
// kvRowStride, kvBatchStride, outRowStride, outBatchStride, cacheCapacity,
// start, causal (14 values).
inline bmrt::AttentionArgs attentionArgs(const int64_t *iargs, float scale,
                                         const int32_t *keyMask) {
  bmrt::AttentionArgs a;
  a.batch = iargs[0];
  a.rows = iargs[1];
  a.heads = iargs[2];
  a.kvHeads = iargs[3];
  a.headDim = iargs[4];
  a.qRowStride = iargs[5];
  a.qBatchStride = iargs[6];
  a.kvRowStride = iargs[7];
  a.kvBatchStride = iargs[8];
  a.outRowStride = iargs[9];
  a.outBatchStride = iargs[10];
  a.cacheCapacity = iargs[11];
  a.start = iargs[12];
  a.causal = iargs[13] != 0;
  a.scale = scale;
  a.keyMask = keyMask;
  return a;
}

} // namespace shim

#endif // BMB_TEST_RUNTIME_HOST_SHIM_COMMON_H
