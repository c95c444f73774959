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

#include "bmrt/context.h"

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

} // namespace shim

#endif // BMB_TEST_RUNTIME_HOST_SHIM_COMMON_H
