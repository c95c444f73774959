//===- host/backward_attention.cpp - Attention backward (CPU) -------------===//
//
// Why it is shaped like this (FlashAttention-2's backward, on the CPU):
//  - Work items are (sequence, kv head): one thread owns the dk/dv rows of
//    that kv head and the dq rows of every head of its group, so each
//    gradient is summed in one fixed order by one thread: no atomics, and
//    the same bits for any thread count.
//  - Inside an item, per head of the group and per block of kQueryBlock
//    query rows [r0, r0+br) against the keys they can see [0, nk):
//      S  = scale Q K^T                 [br, nk]   (recomputed: the forward
//      P  = softmax(S) (masked rows)                saves no statistics)
//      dV += P^T dO                     [nk, hd]
//      dP = dO V^T                      [br, nk]
//      dS = scale P (dP - delta_i),  delta_i = sum_j P_ij dP_ij
//      dQ += dS K                       [br, hd]
//      dK += dS^T Q                     [nk, hd]
//    Five products per block, each a single-threaded BLAS call on tiles
//    (OpenBLAS runs one thread inside an OpenMP region): the inner loops are
//    the library's register-blocked kernels, and q/k/v/dout are read in
//    place through their row strides (the fused [q | k | v] layout).
//  - Scratch per thread: S/P and dP/dS of one block, 2 x kQueryBlock x rows
//    elements (2 x 64 x 256 fp32 = 128 KiB at GPT-2's T = 256): O(rows), no
//    T x T buffer, and it stays in L2.
//  - The causal diagonal block computes its upper triangle too (P = 0
//    there): about kQueryBlock / rows of extra work.
// Softmax sums are in T (fp32 for float, fp64 for double); float's exp is
// the vectorised Cephes one (16 lanes with AVX-512, else exp_fast).
//  - bmb-autocast's mark (args.lowp): the item's K and V, the block's Q and
//    dO are rounded into per-thread scratch (stride headDim) and the tiles
//    read the copies; P is rounded into a third tile for dV = P^T dO, and
//    dS in place after it is computed (from the fp32 P and dP) for dQ and
//    dK. Same tiles, same order: off, the fp32 path is unchanged.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels_backward.h"
#include "host/attention_lowp.h"
#include "host/host_common.h"
#include "host/simd_math.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

namespace bmrt {
namespace {

using host::threadCount;

constexpr int64_t kQueryBlock = 64; // query rows per block (tile height)

void checkArgs(const AttentionArgs &a) {
  host::checkAttentionHeads("attention_backward", a);
  auto bad = [](const std::string &what) { fail("attention_backward: " + what); };
  if (a.start < 0)
    bad("start must not be negative (got " + std::to_string(a.start) + ")");
  if (a.keyMask && a.cacheCapacity < a.start + a.rows)
    bad("the key mask's row length (cacheCapacity " + std::to_string(a.cacheCapacity) +
        ") is shorter than start + rows " + std::to_string(a.start + a.rows));
}

// c[m, n] = alpha op(a) op(b) + beta c, row-major (BLAS, single-threaded
// when called inside an OpenMP region).
void tile(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
          int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void tile(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double *a,
          int64_t lda, const double *b, int64_t ldb, double beta, double *c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// s[j] = exp(s[j] - m) for j in [0, n), 0 where s[j] is -inf (masked);
// returns the sum. exp_fast clamps its argument (a masked -inf would give
// ~1e-38, not 0), so masked entries are zeroed explicitly.
template <class T> T expInPlace(T *s, int64_t n, T m) {
  const T negInf = -std::numeric_limits<T>::infinity();
  T sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < n; ++j) {
    const T e = s[j] == negInf ? T(0) : exp_fast(s[j] - m);
    s[j] = e;
    sum += e;
  }
  return sum;
}
#ifdef __AVX512F__
// float in 16 lanes (GCC vectorises the loop above with 8): expNonPositive
// gives 0 for -inf by itself.
float expInPlace(float *s, int64_t n, float m) {
  const __m512 mv = _mm512_set1_ps(m);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 k = n - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - j)) - 1);
    const __m512 e = host::expNonPositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, s + j), mv));
    _mm512_mask_storeu_ps(s + j, k, e);
    acc = _mm512_mask_add_ps(acc, k, acc, e);
  }
  return _mm512_reduce_add_ps(acc);
}
#endif

// One row of scores s[0, nk) -> probabilities in place: keys [0, limit)
// not masked out are visible, every other entry becomes 0. Returns false
// (row all zeros) when no key is visible.
template <class T>
bool softmaxRow(T *s, int64_t limit, int64_t nk, const int32_t *mask) {
  const T negInf = -std::numeric_limits<T>::infinity();
  T m = negInf;
  if (mask) {
    for (int64_t j = 0; j < limit; ++j)
      s[j] = mask[j] != 0 ? s[j] : negInf;
  }
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < limit; ++j)
    m = std::max(m, s[j]);
  if (m == negInf) {
    std::fill(s, s + nk, T(0));
    return false;
  }
  const T sum = expInPlace(s, limit, m);
  const T inv = T(1) / sum;
#pragma omp simd
  for (int64_t j = 0; j < limit; ++j)
    s[j] *= inv;
  std::fill(s + limit, s + nk, T(0));
  return true;
}

} // namespace

template <class T>
void attention_backward(Context &ctx, const AttentionArgs &args, T *dq, T *dk, T *dv,
                        const T *dout, const T *q, const T *k, const T *v) {
  ProfileScope profile(ctx, KernelKind::Attention);
  checkArgs(args);
  host::checkAttentionLowp<T>("attention_backward", args);
  if (args.rows == 0 || (!dq && !dk && !dv))
    return;
  const AttentionArgs a = args;
  // Query row r is key row S0 + r: keys [0, S0) (prefix tuning's prefix)
  // are visible to every query.
  const int64_t hd = a.headDim, R = a.rows, S0 = a.start, NK = S0 + R;
  const int64_t group = a.heads / a.kvHeads;
  const int64_t ldq = a.qRowStride, ldkv = a.kvRowStride, ldo = a.outRowStride;
  const T scale = T(a.scale);
  const int64_t items = a.batch * a.kvHeads; // (sequence, kv head)
  const int64_t blocks = (R + kQueryBlock - 1) / kQueryBlock;

  // The tiles' BLAS calls must run on the calling thread, so that their bits
  // never depend on the thread count. Inside an active parallel region
  // OpenBLAS does that by itself; a team of one thread is not active, so
  // each thread also sets its own (region-scoped) thread count to 1.
  // (Fewer items than threads leaves threads idle: batch x kvHeads is the
  // parallelism, 48 at GPT-2 small's B = 4.)
#pragma omp parallel num_threads(threadCount(ctx))
  {
    omp_set_num_threads(1);
    // S/P then dP/dS of one block of queries, [kQueryBlock, NK] each.
    // Under a.lowp also the rounded P, K, V, Q and dO the tiles read.
    const int64_t lowpSize = a.lowp ? kQueryBlock * NK + 2 * NK * hd + 2 * kQueryBlock * hd : 0;
    std::unique_ptr<T[]> scratch(new T[2 * kQueryBlock * NK + lowpSize]);
    T *P = scratch.get(), *dP = P + kQueryBlock * NK;
    T *Pr = dP + kQueryBlock * NK, *Kr = Pr + kQueryBlock * NK, *Vr = Kr + NK * hd;
    T *Qr = Vr + NK * hd, *dOr = Qr + kQueryBlock * hd;

#pragma omp for schedule(dynamic, 1)
    for (int64_t item = 0; item < items; ++item) {
      const int64_t b = item / a.kvHeads, g = item % a.kvHeads;
      const T *kb = k + b * a.kvBatchStride + g * hd; // [NK, hd], row stride ldk
      const T *vb = v + b * a.kvBatchStride + g * hd;
      int64_t ldk = ldkv;
      if (a.lowp) {
        host::roundRows(a.lowPrecision, kb, ldkv, Kr, NK, hd);
        host::roundRows(a.lowPrecision, vb, ldkv, Vr, NK, hd);
        kb = Kr;
        vb = Vr;
        ldk = hd;
      }
      T *dkb = dk ? dk + b * a.kvBatchStride + g * hd : nullptr;
      T *dvb = dv ? dv + b * a.kvBatchStride + g * hd : nullptr;
      const int32_t *mask = a.keyMask ? a.keyMask + b * a.cacheCapacity : nullptr;
      for (int64_t h = g * group; h < (g + 1) * group; ++h) {
        for (int64_t blk = 0; blk < blocks; ++blk) {
          const int64_t r0 = blk * kQueryBlock, br = std::min(kQueryBlock, R - r0);
          const int64_t nk = a.causal ? S0 + r0 + br : NK; // keys any row of the block sees
          const T *qi = q + b * a.qBatchStride + r0 * ldq + h * hd;         // [br, hd]
          const T *doi = dout + b * a.outBatchStride + r0 * ldo + h * hd;   // [br, hd]
          int64_t ldqi = ldq, ldoi = ldo;
          if (a.lowp) {
            host::roundRows(a.lowPrecision, qi, ldq, Qr, br, hd);
            host::roundRows(a.lowPrecision, doi, ldo, dOr, br, hd);
            qi = Qr;
            doi = dOr;
            ldqi = ldoi = hd;
          }

          // S = scale Q K^T, then P = softmax row by row.
          tile(false, true, br, nk, hd, scale, qi, ldqi, kb, ldk, T(0), P, nk);
          bool any = false;
          for (int64_t i = 0; i < br; ++i)
            any |= softmaxRow(P + i * nk, a.causal ? S0 + r0 + i + 1 : NK, nk, mask);
          if (!any)
            continue; // every row of the block is masked out: no gradient

          if (dvb) { // dV += P^T dO
            if (a.lowp)
              host::roundRows(a.lowPrecision, P, nk, Pr, br, nk);
            tile(true, false, nk, hd, br, T(1), a.lowp ? Pr : P, nk, doi, ldoi, T(1), dvb, ldkv);
          }
          if (!dq && !dkb)
            continue;
          // dP = dO V^T, then dS = scale P (dP - delta) in place.
          tile(false, true, br, nk, hd, T(1), doi, ldoi, vb, ldk, T(0), dP, nk);
          for (int64_t i = 0; i < br; ++i) {
            const T *p = P + i * nk;
            T *ds = dP + i * nk;
            T delta = 0;
#pragma omp simd reduction(+ : delta)
            for (int64_t j = 0; j < nk; ++j)
              delta += p[j] * ds[j];
#pragma omp simd
            for (int64_t j = 0; j < nk; ++j)
              ds[j] = scale * p[j] * (ds[j] - delta);
          }
          if (a.lowp) // dS rounded in place: only the two matmuls read it
            host::roundRows(a.lowPrecision, dP, nk, dP, br, nk);
          if (dq) // dQ += dS K
            tile(false, false, br, hd, nk, T(1), dP, nk, kb, ldk, T(1),
                 dq + b * a.qBatchStride + r0 * ldq + h * hd, ldq);
          if (dkb) // dK += dS^T Q
            tile(true, false, nk, hd, br, T(1), dP, nk, qi, ldqi, T(1), dkb, ldkv);
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
