//===- host/classifier.cpp - Fused softmax cross-entropy, MSE -------------===//
//
// Why it is shaped like this (training.h has the contract):
//  - llm.c's fused classifier: one row at a time, the max, then the
//    exponentials written straight into dlogits while their sum is taken,
//    then one scaling pass turns them into (p - onehot) * scale. The [rows, V]
//    probabilities are never materialized separately, and when dlogits
//    aliases logits the logit of the target is read before it is overwritten.
//  - float: exponentials are computed in float (as torch and llm.c do) but
//    summed, logged and scaled in double, so the loss of a 50k-vocabulary row
//    does not lose digits in the sum.
//  - Targets are validated before any row is touched, so a bad id fails with
//    its row and no exception crosses an OpenMP region.
//
//===----------------------------------------------------------------------===//
#include "bmrt/elementwise.h"
#include "bmrt/training.h"
#include "host/host_common.h"
#include "host/simd_math.h"

#include <cmath>
#include <string>

namespace bmrt {
namespace {

using host::threadCount;

// Below this many elements an element-wise pass runs on one thread.
constexpr int64_t kParallelElements = 1 << 15;

// max of x[0, V).
template <class T> T rowMax(const T *x, int64_t V) {
  T mx = x[0];
#pragma omp simd reduction(max : mx)
  for (int64_t i = 1; i < V; ++i)
    mx = x[i] > mx ? x[i] : mx;
  return mx;
}

// sum of e_i = exp(x[i] - mx) over [0, V) in double; d[i] = e_i unless d is
// null (d may be x). exp_fast is elementwise.h's vectorisable exp (libm's
// expf is a call that keeps the loop scalar).
template <class T> double expSum(const T *x, T *d, int64_t V, T mx) {
  double sum = 0;
  if (d) {
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < V; ++i) {
      const T e = exp_fast(x[i] - mx); // <= 1: no overflow
      sum += double(e);
      d[i] = e;
    }
  } else {
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < V; ++i)
      sum += double(exp_fast(x[i] - mx));
  }
  return sum;
}

#ifdef __AVX512F__
// expSum for float with 16-lane vectors: GCC vectorises the loop above with
// 8 lanes (its preference on this target), and the exp pass over a 50k-logit
// row is compute-bound (the max pass is bound by memory: it stays portable).
double expSum(const float *x, float *d, int64_t V, float mx) {
  const __m512 m = _mm512_set1_ps(mx);
  __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
  for (int64_t i = 0; i < V; i += 16) {
    const __mmask16 k = V - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (V - i)) - 1);
    const __m512 e = _mm512_maskz_mov_ps(
        k, host::expNonPositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), m)));
    if (d)
      _mm512_mask_storeu_ps(d + i, k, e);
    s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
    s1 = _mm512_add_pd(s1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(
                               _mm512_castps_pd(e), 1))));
  }
  return _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));
}
#endif

} // namespace

// count_targets (a count over the app's host arrays): training_tables.cpp.

template <class T>
void fused_classifier_forward_backward(Context &ctx, T *losses, T *dlogits,
                                       const T *logits, const int32_t *targets,
                                       int64_t rows, int64_t V, int64_t ignoreIndex,
                                       double dlossScale) {
  ProfileScope profile(ctx, KernelKind::Loss);
  if (rows < 0 || V < 1)
    fail("fused_classifier_forward_backward: needs rows >= 0 and V >= 1 (got rows " +
         std::to_string(rows) + ", V " + std::to_string(V) + ")");
  if (rows == 0)
    return;
  if (!losses || !logits || !targets)
    fail("fused_classifier_forward_backward: null losses, logits or targets");
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = targets[r];
    if (t != ignoreIndex && (t < 0 || t >= V))
      fail("fused_classifier_forward_backward: target " + std::to_string(t) + " of row " +
           std::to_string(r) + " is outside [0, " + std::to_string(V) +
           ") and is not the ignore index " + std::to_string(ignoreIndex));
  }
#pragma omp parallel for num_threads(threadCount(ctx)) schedule(static) if (rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const T *x = logits + r * V;
    T *d = dlogits ? dlogits + r * V : nullptr;
    const int64_t t = targets[r];
    if (t == ignoreIndex) {
      losses[r] = T(0);
      if (d)
        for (int64_t i = 0; i < V; ++i)
          d[i] = T(0);
      continue;
    }
    const T mx = rowMax(x, V);
    // Read before d (which may be x) is overwritten.
    const double shiftedTarget = double(x[t]) - double(mx);
    const double sum = expSum(x, d, V, mx);
    losses[r] = T(std::log(sum) - shiftedTarget);
    if (d) {
      const double et = double(d[t]);
      const double s = dlossScale / sum;
#pragma omp simd
      for (int64_t i = 0; i < V; ++i)
        d[i] = T(double(d[i]) * s);
      d[t] = T((et / sum - 1.0) * dlossScale);
    }
  }
}

template <class T>
void mse_forward_backward(Context &ctx, T *loss, T *dpred, const T *pred, const T *target,
                          int64_t n, double dlossScale) {
  ProfileScope profile(ctx, KernelKind::Loss);
  if (n < 1)
    fail("mse_forward_backward: needs n >= 1 (got " + std::to_string(n) + ")");
  if (!loss || !pred || !target)
    fail("mse_forward_backward: null loss, pred or target");
  const double gradScale = 2.0 * dlossScale / double(n);
  double sum = 0;
#pragma omp parallel for num_threads(threadCount(ctx)) schedule(static) \
    reduction(+ : sum) if (n >= kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    const double diff = double(pred[i]) - double(target[i]);
    sum += diff * diff;
    if (dpred)
      dpred[i] = T(diff * gradScale);
  }
  *loss = T(sum / double(n));
}

#define BMRT_INSTANTIATE(T)                                                              \
  template void fused_classifier_forward_backward<T>(Context &, T *, T *, const T *,     \
                                                     const int32_t *, int64_t, int64_t,  \
                                                     int64_t, double);                   \
  template void mse_forward_backward<T>(Context &, T *, T *, const T *, const T *,       \
                                        int64_t, double);
BMRT_INSTANTIATE(float)
BMRT_INSTANTIATE(double)
#undef BMRT_INSTANTIATE

} // namespace bmrt
