//===- host/backward_attention.cpp - Attention backward (CPU) -------------===//
//
// Why it is shaped like this (FlashAttention-2's backward, on the CPU):
//  - No T x T buffer. Per query row i of head h the softmax is recomputed
//    from q and k; two numbers per row live for the call: lse_i (log of the
//    softmax denominator, with the max folded in) and delta_i = sum_j P_ij
//    dP_ij = dout_i . out_i. With them any P_ij = exp(s_ij - lse_i) and
//    dS_ij = P_ij (dout_i . v_j - delta_i) can be recomputed from one q row
//    and one k/v row.
//  - Pass 1, over query rows (b, h, i): computes lse_i, delta_i and dq_i
//    (a row of scratch per thread). dq_i belongs to that row alone.
//  - Pass 2, over key rows (b, kv head, j): dv_j += sum P_ij dout_i and
//    dk_j += scale sum dS_ij q_i over the queries of every head in the GQA
//    group. dk_j/dv_j belong to that key row alone: no atomics, and each sum
//    is taken in a fixed order (same bits for any thread count).
//  - Plain loops with omp simd dot products: this serves training at the
//    sizes the tests and small models use; the GPU backend is where the
//    speed goes (issue 7).
// Accumulation is in T (fp32 for float, fp64 for double).
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels_backward.h"
#include "host/host_common.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace bmrt {
namespace {

using host::threadCount;

void checkArgs(const AttentionArgs &a) {
  host::checkAttentionHeads("attention_backward", a);
  auto bad = [](const std::string &what) { fail("attention_backward: " + what); };
  if (a.start != 0)
    bad("start must be 0 at training shapes (got " + std::to_string(a.start) + ")");
  if (a.keyMask && a.cacheCapacity < a.rows)
    bad("the key mask's row length (cacheCapacity " + std::to_string(a.cacheCapacity) +
        ") is shorter than rows " + std::to_string(a.rows));
}

template <class T> inline T dotRow(const T *a, const T *b, int64_t n) {
  T s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t d = 0; d < n; ++d)
    s += a[d] * b[d];
  return s;
}

template <class T> inline void axpyRow(T *y, T alpha, const T *x, int64_t n) {
#pragma omp simd
  for (int64_t d = 0; d < n; ++d)
    y[d] += alpha * x[d];
}

} // namespace

template <class T>
void attention_backward(Context &ctx, const AttentionArgs &args, T *dq, T *dk, T *dv,
                        const T *dout, const T *q, const T *k, const T *v) {
  ProfileScope profile(ctx, KernelKind::Attention);
  checkArgs(args);
  if (args.rows == 0)
    return;
  const AttentionArgs a = args;
  const int64_t hd = a.headDim, R = a.rows, group = a.heads / a.kvHeads;
  const T scale = T(a.scale);
  const T inf = std::numeric_limits<T>::infinity();
  const int64_t queryRows = a.batch * a.heads * R; // index (b * heads + h) * R + i
  const int64_t keyRows = a.batch * a.kvHeads * R; // index (b * kvHeads + g) * R + j
  std::vector<T> lse(queryRows), delta(queryRows);

#pragma omp parallel num_threads(threadCount(ctx))
  {
    std::vector<T> scratch(2 * R); // p then dp of one query row
    T *p = scratch.data(), *dp = scratch.data() + R;

    // Pass 1: softmax statistics and dq, per query row.
#pragma omp for schedule(dynamic, 4)
    for (int64_t t = 0; t < queryRows; ++t) {
      const int64_t i = t % R, h = (t / R) % a.heads, b = t / (R * a.heads);
      const int64_t g = h / group;
      const T *qi = q + b * a.qBatchStride + i * a.qRowStride + h * hd;         // [hd]
      const T *doi = dout + b * a.outBatchStride + i * a.outRowStride + h * hd; // [hd]
      const T *kb = k + b * a.kvBatchStride + g * hd; // rows j: kb + j * kvRowStride
      const T *vb = v + b * a.kvBatchStride + g * hd; // rows j: vb + j * kvRowStride
      const int32_t *mask = a.keyMask ? a.keyMask + b * a.cacheCapacity : nullptr;
      const int64_t limit = a.causal ? i + 1 : R; // keys [0, limit)

      T m = -inf;
      for (int64_t j = 0; j < limit; ++j) {
        p[j] = (mask && mask[j] == 0) ? -inf : scale * dotRow(qi, kb + j * a.kvRowStride, hd);
        m = std::max(m, p[j]);
      }
      if (m == -inf) { // nothing visible: the forward wrote zeros
        lse[t] = inf;  // every exp(s - lse) is 0 in pass 2
        delta[t] = 0;
        continue;
      }
      T sum = 0;
      for (int64_t j = 0; j < limit; ++j) {
        p[j] = std::exp(p[j] - m); // masked keys: exp(-inf) = 0
        sum += p[j];
      }
      lse[t] = m + std::log(sum);
      const T inv = T(1) / sum;
      T dl = 0; // delta_i = sum_j P_ij dP_ij
      for (int64_t j = 0; j < limit; ++j) {
        p[j] *= inv;
        dp[j] = p[j] != T(0) ? dotRow(doi, vb + j * a.kvRowStride, hd) : T(0);
        dl += p[j] * dp[j];
      }
      delta[t] = dl;
      if (dq) {
        T *dqi = dq + b * a.qBatchStride + i * a.qRowStride + h * hd; // [hd]
        for (int64_t j = 0; j < limit; ++j)
          if (p[j] != T(0))
            axpyRow(dqi, scale * p[j] * (dp[j] - dl), kb + j * a.kvRowStride, hd);
      }
    }
    // (implicit barrier: lse and delta complete)

    // Pass 2: dk and dv, per key row, summed over the heads of the group.
    if (dk || dv) {
#pragma omp for schedule(dynamic, 4)
      for (int64_t t = 0; t < keyRows; ++t) {
        const int64_t j = t % R, g = (t / R) % a.kvHeads, b = t / (R * a.kvHeads);
        if (a.keyMask && a.keyMask[b * a.cacheCapacity + j] == 0)
          continue; // a padding key gets no gradient
        const T *kj = k + b * a.kvBatchStride + j * a.kvRowStride + g * hd; // [hd]
        const T *vj = v + b * a.kvBatchStride + j * a.kvRowStride + g * hd; // [hd]
        T *dkj = dk ? dk + b * a.kvBatchStride + j * a.kvRowStride + g * hd : nullptr;
        T *dvj = dv ? dv + b * a.kvBatchStride + j * a.kvRowStride + g * hd : nullptr;
        for (int64_t hh = 0; hh < group; ++hh) {
          const int64_t h = g * group + hh;
          for (int64_t i = a.causal ? j : 0; i < R; ++i) { // queries that see key j
            const int64_t row = (b * a.heads + h) * R + i;
            if (lse[row] == inf)
              continue;
            const T *qi = q + b * a.qBatchStride + i * a.qRowStride + h * hd;         // [hd]
            const T *doi = dout + b * a.outBatchStride + i * a.outRowStride + h * hd; // [hd]
            const T pij = std::exp(scale * dotRow(qi, kj, hd) - lse[row]);
            if (pij == T(0))
              continue;
            if (dvj)
              axpyRow(dvj, pij, doi, hd);
            if (dkj)
              axpyRow(dkj, scale * pij * (dotRow(doi, vj, hd) - delta[row]), qi, hd);
          }
        }
      }
    }
  }
}

template void attention_backward<float>(Context &, const AttentionArgs &, float *, float *,
                                        float *, const float *, const float *,
                                        const float *, const float *);
template void attention_backward<double>(Context &, const AttentionArgs &, double *,
                                         double *, double *, const double *,
                                         const double *, const double *, const double *);

} // namespace bmrt
