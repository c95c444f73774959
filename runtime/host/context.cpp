//===- host/context.cpp - Errors, kernel kind names and the profile -------===//
//
// The small shared pieces every runtime call leans on. fail() throws rather
// than exits so the executables' main decides how to report (and tests can
// catch). Profiling is opt-in per Context: when ctx.profile is false a
// ProfileScope reads no clock, so the decode loop pays one branch per call.
// The profile is a plain table on stderr so it never mixes with generated
// text on stdout.
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace bmrt {

void fail(const std::string &message) { throw Error(message); }

const char *kernelKindName(KernelKind k) {
  switch (k) {
  case KernelKind::Gemm:
    return "gemm";
  case KernelKind::Gemv:
    return "gemv";
  case KernelKind::Attention:
    return "attention";
  case KernelKind::Norm:
    return "norm";
  case KernelKind::Softmax:
    return "softmax";
  case KernelKind::Rotary:
    return "rotary";
  case KernelKind::Embedding:
    return "embedding";
  case KernelKind::Generated:
    return "generated";
  case KernelKind::Copy:
    return "copy";
  case KernelKind::Sampling:
    return "sampling";
  case KernelKind::Loss:
    return "loss";
  case KernelKind::Optimizer:
    return "optimizer";
  case KernelKind::Comm:
    return "comm";
  case KernelKind::Count:
    break;
  }
  return "unknown";
}

// Seconds on a monotonic clock: wall-clock adjustments must not show up as
// negative kernel times.
static double nowSeconds() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

ProfileScope::ProfileScope(Context &ctx, KernelKind kind) : ctx_(ctx), kind_(kind) {
  if (ctx_.profile)
    start_ = nowSeconds();
}

ProfileScope::~ProfileScope() {
  if (!ctx_.profile)
    return;
  ctx_.seconds[(int)kind_] += nowSeconds() - start_;
  ctx_.calls[(int)kind_] += 1;
}

void printProfile(const Context &ctx) {
  const int count = (int)KernelKind::Count;
  int order[(int)KernelKind::Count];
  double total = 0;
  for (int i = 0; i < count; i++) {
    order[i] = i;
    total += ctx.seconds[i];
  }
  std::stable_sort(order, order + count,
                   [&](int x, int y) { return ctx.seconds[x] > ctx.seconds[y]; });
  std::fprintf(stderr, "%-10s %10s %12s %7s\n", "kernel", "calls", "seconds", "share");
  for (int j = 0; j < count; j++) {
    int i = order[j];
    if (ctx.calls[i] == 0)
      continue;
    double share = total > 0 ? 100.0 * ctx.seconds[i] / total : 0.0;
    std::fprintf(stderr, "%-10s %10lld %12.6f %6.1f%%\n", kernelKindName((KernelKind)i),
                 (long long)ctx.calls[i], ctx.seconds[i], share);
  }
  std::fprintf(stderr, "%-10s %10s %12.6f %6.1f%%\n", "total", "", total,
               total > 0 ? 100.0 : 0.0);
}

} // namespace bmrt
