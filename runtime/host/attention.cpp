//===- host/attention.cpp - Attention over a KV cache (CPU) ---------------===//
//
// Why it is shaped like this:
//  - No T x T buffer. Work is split into items (sequence, kv head, block of up
//    to kQueryBlock queries); an item keeps its queries' scores against the
//    keys they can see ((start+rows) x kQueryBlock) in a per-thread scratch,
//    so memory grows with T, not T^2.
//  - GQA: the queries of all heads sharing a kv head are one block, so a K/V
//    row is read once for the whole group.
//  - Queries live in vector lanes: the block's queries are transposed once to
//    [headDim, kQueryBlock] and scores are stored key-major [key, query]. Then
//    q.K^T is a broadcast of K[j][d] times a lane vector (no horizontal sums,
//    no transpose of K), and the causal mask, max, exp and sum of the softmax
//    are all element-wise across lanes. Blocks of fewer than kMinLaneQueries
//    queries (decode without much GQA) use dot products instead: there the
//    lanes would be mostly empty and the kernel is bound by reading K/V.
//  - Softmax is two-pass over the stored scores (exact, no rescaling); the
//    1/sum is applied to the P.V accumulators when they are stored.
//  - With AVX-512 (the library is built -march=native) float takes register-
//    blocked intrinsic kernels and a vector exp; double, and float elsewhere,
//    take portable loops (the tests build them with -mno-avx512f too).
//  - Causal blocks are handed out last-first (they see the most keys), and
//    scheduled dynamically.
// Accumulation is in T (fp32 for float, fp64 for double).
//  - bmb-autocast's mark (args.lowp, training only): an item rounds its
//    queries and the K/V rows it reads into per-thread scratch (stride
//    headDim) and points the block at the copies, and rounds the normalized
//    probabilities in place before P.V (1/sum applied before, not after);
//    the loops and sum orders are the fp32 ones.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels.h"
#include "host/attention_lowp.h"
#include "host/host_common.h"
#include "host/simd_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#ifdef __AVX512F__
#define BMRT_ATTENTION_AVX512 1
#endif
#include "host/avx512.h"

namespace bmrt {
namespace {

constexpr int kQueryBlock = 32;    // queries per work item = lanes of the scores
constexpr int kMinLaneQueries = 8; // fewer queries: dot products
constexpr int kKeyGroup = 8;       // keys per register block of q.K^T

// Consecutive K/V rows of one head are kvHeads*headDim elements apart
// (kilobytes), a stride the hardware prefetchers follow poorly (decode got
// ~20% faster with this): fetch the rows kPrefetchRows ahead explicitly.
constexpr int64_t kPrefetchRows = 8;
template <class T> inline void prefetchRow(const T *row, int64_t hd) {
  for (int64_t byte = 0; byte < hd * (int64_t)sizeof(T); byte += 64)
    __builtin_prefetch((const char *)row + byte);
}

using host::threadCount;

void checkArgs(const AttentionArgs &a) {
  host::checkAttentionHeads("attention_forward", a);
  auto bad = [](const std::string &what) { fail("attention_forward: " + what); };
  if (a.start < 0 || a.start + a.rows > a.cacheCapacity)
    bad("rows [" + std::to_string(a.start) + ", " + std::to_string(a.start + a.rows) +
        ") do not fit the KV cache capacity " + std::to_string(a.cacheCapacity));
  if (a.cacheCapacity > std::numeric_limits<int32_t>::max())
    bad("cache capacity " + std::to_string(a.cacheCapacity) + " exceeds int32");
}

// One work item: up to kQueryBlock queries of one (sequence, kv head).
template <class T> struct QueryBlock {
  int count = 0;              // queries in the block; lanes [count, 32) are unused
  int64_t keyLimit = 0;       // keys any query may see: [0, keyLimit)
  int64_t minLimit = 0;       // keys every query sees: [0, minLimit)
  const T *q[kQueryBlock];    // each [headDim]
  T *out[kQueryBlock];        // each [headDim]
  int32_t limit[kQueryBlock]; // lane i sees keys [0, limit[i]); 0 for unused lanes
  T inv[kQueryBlock];         // 1 / softmax denominator; 0 when nothing is visible
  const T *kc = nullptr;      // k_cache rows of this (sequence, kv head), stride kvDim
  const T *vc = nullptr;      // v_cache rows, same layout
  const int32_t *mask = nullptr; // [cacheCapacity] or null
};

#ifdef BMRT_ATTENTION_AVX512
using host::expNonPositive;

// st[j, lanes] = sum_d K[j][d] * qt[d, lanes] for U keys, NQ vectors of lanes.
template <int U, int NQ>
inline void scoresLanesAvx512(const float *k, int64_t kvDim, int64_t hd, const float *qt,
                              float *st) {
  __m512 acc[U][NQ];
  for (int u = 0; u < U; ++u)
    for (int t = 0; t < NQ; ++t)
      acc[u][t] = _mm512_setzero_ps();
  for (int64_t d = 0; d < hd; ++d) {
    __m512 qv[NQ];
    for (int t = 0; t < NQ; ++t)
      qv[t] = _mm512_loadu_ps(qt + d * kQueryBlock + 16 * t);
    for (int u = 0; u < U; ++u) {
      const __m512 kb = _mm512_set1_ps(k[u * kvDim + d]);
      for (int t = 0; t < NQ; ++t)
        acc[u][t] = _mm512_fmadd_ps(kb, qv[t], acc[u][t]);
    }
  }
  for (int u = 0; u < U; ++u)
    for (int t = 0; t < NQ; ++t)
      _mm512_storeu_ps(st + u * kQueryBlock + 16 * t, acc[u][t]);
}

template <int NQ>
void scoresLanesKeys(const QueryBlock<float> &blk, int64_t hd, int64_t kvDim,
                     const float *qt, float *st) {
  int64_t j = 0;
  for (; j + kKeyGroup <= blk.keyLimit; j += kKeyGroup) {
    for (int u = 0; u < kKeyGroup; ++u)
      prefetchRow(blk.kc + (j + kPrefetchRows + u) * kvDim, hd);
    scoresLanesAvx512<kKeyGroup, NQ>(blk.kc + j * kvDim, kvDim, hd, qt,
                                     st + j * kQueryBlock);
  }
  for (; j < blk.keyLimit; ++j)
    scoresLanesAvx512<1, NQ>(blk.kc + j * kvDim, kvDim, hd, qt, st + j * kQueryBlock);
}

void scoresLanes(const QueryBlock<float> &blk, int64_t hd, int64_t kvDim, const float *qt,
                 float *st) {
  if (blk.count > 16)
    scoresLanesKeys<2>(blk, hd, kvDim, qt, st);
  else
    scoresLanesKeys<1>(blk, hd, kvDim, qt, st);
}
#endif

// Portable q.K^T in lanes: 4 keys at a time against all 32 lanes.
template <class T>
void scoresLanes(const QueryBlock<T> &blk, int64_t hd, int64_t kvDim, const T *qt, T *st) {
  for (int64_t j0 = 0; j0 < blk.keyLimit; j0 += 4) {
    const int nk = (int)std::min<int64_t>(4, blk.keyLimit - j0);
    T acc[4][kQueryBlock] = {};
    for (int64_t d = 0; d < hd; ++d) {
      const T *qd = qt + d * kQueryBlock;
      for (int u = 0; u < nk; ++u) {
        const T kv = blk.kc[(j0 + u) * kvDim + d];
#pragma omp simd
        for (int i = 0; i < kQueryBlock; ++i)
          acc[u][i] += kv * qd[i];
      }
    }
    std::memcpy(st + j0 * kQueryBlock, acc, nk * kQueryBlock * sizeof(T));
  }
}

template <class T> inline T dotRow(const T *a, const T *b, int64_t n) {
  T s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t d = 0; d < n; ++d)
    s += a[d] * b[d];
  return s;
}
#ifdef BMRT_ATTENTION_AVX512
inline float dotRow(const float *a, const float *b, int64_t n) {
  __m512 acc = _mm512_setzero_ps();
  int64_t d = 0;
  for (; d + 16 <= n; d += 16)
    acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + d), _mm512_loadu_ps(b + d), acc);
  if (d < n) {
    const __mmask16 m = (__mmask16)((1u << (n - d)) - 1);
    acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + d), _mm512_maskz_loadu_ps(m, b + d),
                          acc);
  }
  return _mm512_reduce_add_ps(acc);
}
#endif

// Few queries: st[j, i] = scale * q_i . k_j as dot products, key-major so a
// K row is read once for all of them. Lanes past limit[i] are left unset
// (maskScores overwrites them).
template <class T>
void scoresDot(const QueryBlock<T> &blk, int64_t hd, int64_t kvDim, T scale, T *st) {
  for (int64_t j = 0; j < blk.keyLimit; ++j) {
    const T *krow = blk.kc + j * kvDim;
    prefetchRow(krow + kPrefetchRows * kvDim, hd);
    for (int i = 0; i < blk.count; ++i) {
      if (j >= blk.limit[i])
        continue;
      st[j * kQueryBlock + i] = dotRow(blk.q[i], krow, hd) * scale;
    }
  }
}

// -inf where a key is invisible: padding (a whole key row) or past a lane's
// causal limit (only keys in [minLimit, keyLimit) can be).
template <class T> void maskScores(const QueryBlock<T> &blk, T *st) {
  const T negInf = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < blk.keyLimit; ++j) {
    T *s = st + j * kQueryBlock;
    if (blk.mask && blk.mask[j] == 0) {
      std::fill(s, s + kQueryBlock, negInf);
    } else if (j >= blk.minLimit) {
#pragma omp simd
      for (int i = 0; i < kQueryBlock; ++i)
        s[i] = j < blk.limit[i] ? s[i] : negInf;
    }
  }
}

// Scores -> unnormalized probabilities exp(s - max) in place, per lane; the
// reciprocal of each lane's sum goes to blk.inv (0 if it saw no key).
template <class T> void softmaxLanes(QueryBlock<T> &blk, T *st) {
  const T negInf = -std::numeric_limits<T>::infinity();
  T m[kQueryBlock], sum[kQueryBlock];
  std::fill(m, m + kQueryBlock, negInf);
  std::fill(sum, sum + kQueryBlock, T(0));
  for (int64_t j = 0; j < blk.keyLimit; ++j) {
    const T *s = st + j * kQueryBlock;
#pragma omp simd
    for (int i = 0; i < kQueryBlock; ++i)
      m[i] = std::max(m[i], s[i]);
  }
  for (int i = 0; i < kQueryBlock; ++i)
    m[i] = m[i] == negInf ? T(0) : m[i]; // all -inf: exp(-inf - 0) = 0, no NaN
  for (int64_t j = 0; j < blk.keyLimit; ++j) {
    T *s = st + j * kQueryBlock;
    for (int i = 0; i < blk.count; ++i) {
      s[i] = std::exp(s[i] - m[i]);
      sum[i] += s[i];
    }
  }
  for (int i = 0; i < kQueryBlock; ++i)
    blk.inv[i] = sum[i] > T(0) ? T(1) / sum[i] : T(0);
}

#ifdef BMRT_ATTENTION_AVX512
void softmaxLanes(QueryBlock<float> &blk, float *st) {
  const int nq = (blk.count + 15) / 16;
  for (int t = 0; t < nq; ++t) {
    __m512 m = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    for (int64_t j = 0; j < blk.keyLimit; ++j)
      m = _mm512_max_ps(m, _mm512_loadu_ps(st + j * kQueryBlock + 16 * t));
    m = _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(m, _mm512_set1_ps(-INFINITY), _CMP_EQ_OQ),
                           _mm512_setzero_ps());
    __m512 sum = _mm512_setzero_ps();
    for (int64_t j = 0; j < blk.keyLimit; ++j) {
      float *s = st + j * kQueryBlock + 16 * t;
      const __m512 e = expNonPositive(_mm512_sub_ps(_mm512_loadu_ps(s), m));
      _mm512_storeu_ps(s, e);
      sum = _mm512_add_ps(sum, e);
    }
    const __mmask16 seen = _mm512_cmp_ps_mask(sum, _mm512_setzero_ps(), _CMP_GT_OQ);
    _mm512_storeu_ps(blk.inv + 16 * t,
                     _mm512_maskz_div_ps(seen, _mm512_set1_ps(1.0f), sum));
  }
}

// out_i[d0, d0 + 16*NV) = inv_i * sum_j p[j, i] v_j[...] for the R queries
// i0.. (the last vector masked by `last`).
template <int R, int NV>
void weightedSumAvx512(const QueryBlock<float> &blk, int64_t kvDim, const float *p, int i0,
                       int64_t d0, __mmask16 last) {
  int64_t n = 0;
  for (int ii = 0; ii < R; ++ii)
    n = std::max<int64_t>(n, blk.limit[i0 + ii]);
  __m512 acc[R][NV];
  for (int ii = 0; ii < R; ++ii)
    for (int t = 0; t < NV; ++t)
      acc[ii][t] = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; ++j) {
    const float *vrow = blk.vc + j * kvDim + d0;
    prefetchRow(vrow + kPrefetchRows * kvDim, 16 * NV);
    __m512 v[NV];
    for (int t = 0; t < NV; ++t)
      v[t] = t + 1 < NV ? _mm512_loadu_ps(vrow + 16 * t)
                        : _mm512_maskz_loadu_ps(last, vrow + 16 * t);
    const float *pj = p + j * kQueryBlock + i0;
    for (int ii = 0; ii < R; ++ii) {
      const __m512 w = _mm512_set1_ps(pj[ii]);
      for (int t = 0; t < NV; ++t)
        acc[ii][t] = _mm512_fmadd_ps(w, v[t], acc[ii][t]);
    }
  }
  for (int ii = 0; ii < R; ++ii) {
    const __m512 inv = _mm512_set1_ps(blk.inv[i0 + ii]);
    float *o = blk.out[i0 + ii] + d0;
    for (int t = 0; t < NV; ++t) {
      const __m512 r = _mm512_mul_ps(acc[ii][t], inv);
      if (t + 1 < NV)
        _mm512_storeu_ps(o + 16 * t, r);
      else
        _mm512_mask_storeu_ps(o + 16 * t, last, r);
    }
  }
}

// Output chunks of 64, then of 16 (the last one masked), for R queries.
template <int R>
void weightedSumQueries(const QueryBlock<float> &blk, int64_t hd, int64_t kvDim,
                        const float *p, int i0) {
  int64_t d0 = 0;
  for (; d0 + 64 <= hd; d0 += 64)
    weightedSumAvx512<R, 4>(blk, kvDim, p, i0, d0, 0xFFFF);
  for (; d0 < hd; d0 += 16) {
    const int64_t w = std::min<int64_t>(16, hd - d0);
    weightedSumAvx512<R, 1>(blk, kvDim, p, i0, d0, (__mmask16)((1u << w) - 1));
  }
}

void weightedSum(const QueryBlock<float> &blk, int64_t hd, int64_t kvDim, const float *p) {
  int i0 = 0;
  for (; i0 + 4 <= blk.count; i0 += 4)
    weightedSumQueries<4>(blk, hd, kvDim, p, i0);
  switch (blk.count - i0) {
  case 3:
    weightedSumQueries<3>(blk, hd, kvDim, p, i0);
    break;
  case 2:
    weightedSumQueries<2>(blk, hd, kvDim, p, i0);
    break;
  case 1:
    weightedSumQueries<1>(blk, hd, kvDim, p, i0);
    break;
  }
}
#endif

// Portable P.V: out_i = inv_i * sum_j p[j, i] v_j, one query at a time.
template <class T>
void weightedSum(const QueryBlock<T> &blk, int64_t hd, int64_t kvDim, const T *p) {
  for (int i = 0; i < blk.count; ++i) {
    T *o = blk.out[i];
    std::fill(o, o + hd, T(0));
    for (int64_t j = 0; j < blk.limit[i]; ++j) {
      const T *vrow = blk.vc + j * kvDim;
      prefetchRow(vrow + kPrefetchRows * kvDim, hd);
      const T w = p[j * kQueryBlock + i];
#pragma omp simd
      for (int64_t d = 0; d < hd; ++d)
        o[d] += w * vrow[d];
    }
    for (int64_t d = 0; d < hd; ++d)
      o[d] *= blk.inv[i];
  }
}

template <class T>
void appendToCache(const AttentionArgs &a, const T *src, T *cache, int64_t kvDim) {
  const int64_t total = a.batch * a.rows;
#pragma omp for schedule(static)
  for (int64_t t = 0; t < total; ++t) {
    const int64_t b = t / a.rows, r = t % a.rows;
    const T *from = src + b * a.kvBatchStride + r * a.kvRowStride;
    T *to = cache + (b * a.cacheCapacity + a.start + r) * kvDim;
    if (from != to) // the projection may have been written in place
      std::memmove(to, from, kvDim * sizeof(T));
  }
}

// bmb-autocast: P normalized and rounded to p in place, as torch.autocast
// rounds softmax's output before P.V; weightedSum's 1/sum becomes 1.
template <class T> void roundProbabilities(QueryBlock<T> &blk, LowPrecision p, T *st) {
  for (int64_t j = 0; j < blk.keyLimit; ++j)
    for (int i = 0; i < blk.count; ++i)
      st[j * kQueryBlock + i] = T(round_to(p, float(st[j * kQueryBlock + i] * blk.inv[i])));
  for (int i = 0; i < blk.count; ++i)
    blk.inv[i] = blk.inv[i] > T(0) ? T(1) : T(0);
}

} // namespace

template <class T>
void attention_forward(Context &ctx, const AttentionArgs &args, T *out, const T *q,
                       const T *k, const T *v, T *k_cache, T *v_cache) {
  ProfileScope profile(ctx, KernelKind::Attention);
  checkArgs(args);
  host::checkAttentionLowp<T>("attention_forward", args);
  if (args.rows == 0)
    return;
  const AttentionArgs a = args;
  const int64_t hd = a.headDim, kvDim = a.kvHeads * hd, group = a.heads / a.kvHeads;
  const int64_t keyCount = a.start + a.rows;
  const int64_t queriesPerKv = a.rows * group;
  const int64_t blocksPerKv = (queriesPerKv + kQueryBlock - 1) / kQueryBlock;
  const int64_t items = a.batch * a.kvHeads * blocksPerKv;
  const T scale = T(a.scale);

#pragma omp parallel num_threads(threadCount(ctx))
  {
    appendToCache(a, k, k_cache, kvDim);
    appendToCache(a, v, v_cache, kvDim); // implicit barrier: caches complete

    // Per-thread scratch: transposed scaled queries, then the scores.
    // (Not zeroed: every element is written before it is read.)
    // Under a.lowp also the rounded queries and K/V rows of an item.
    const int64_t lowpSize = a.lowp ? hd * kQueryBlock + 2 * keyCount * hd : 0;
    std::unique_ptr<T[]> scratch(new T[hd * kQueryBlock + keyCount * kQueryBlock + lowpSize]);
    T *qt = scratch.get();
    T *st = qt + hd * kQueryBlock;
    T *qr = st + keyCount * kQueryBlock, *kr = qr + hd * kQueryBlock, *vr = kr + keyCount * hd;
    QueryBlock<T> blk;

#pragma omp for schedule(dynamic, 1)
    for (int64_t item = 0; item < items; ++item) {
      // Last blocks first: under a causal mask they see the most keys.
      const int64_t blkIdx = blocksPerKv - 1 - item % blocksPerKv;
      const int64_t kvh = (item / blocksPerKv) % a.kvHeads;
      const int64_t b = item / (blocksPerKv * a.kvHeads);
      const int64_t first = blkIdx * kQueryBlock;
      blk.count = (int)std::min<int64_t>(kQueryBlock, queriesPerKv - first);
      blk.kc = k_cache + b * a.cacheCapacity * kvDim + kvh * hd;
      blk.vc = v_cache + b * a.cacheCapacity * kvDim + kvh * hd;
      blk.mask = a.keyMask ? a.keyMask + b * a.cacheCapacity : nullptr;
      blk.keyLimit = 0;
      blk.minLimit = keyCount;
      // Query index = row * group + head-in-group: a block covers whole rows
      // of the group, so its causal limits are close together.
      for (int i = 0; i < kQueryBlock; ++i) {
        if (i >= blk.count) {
          blk.limit[i] = 0;
          continue;
        }
        const int64_t r = (first + i) / group, h = kvh * group + (first + i) % group;
        blk.q[i] = q + b * a.qBatchStride + r * a.qRowStride + h * hd;
        blk.out[i] = out + b * a.outBatchStride + r * a.outRowStride + h * hd;
        blk.limit[i] = (int32_t)(a.causal ? a.start + r + 1 : keyCount);
        blk.keyLimit = std::max<int64_t>(blk.keyLimit, blk.limit[i]);
        blk.minLimit = std::min<int64_t>(blk.minLimit, blk.limit[i]);
      }
      if (blk.count < kQueryBlock)
        blk.minLimit = 0; // unused lanes hold stale scores: mask every key row

      int64_t kvStride = kvDim; // between K/V rows as the kernels read them
      if (a.lowp) {
        for (int i = 0; i < blk.count; ++i) {
          host::roundRows(a.lowPrecision, blk.q[i], hd, qr + i * hd, 1, hd);
          blk.q[i] = qr + i * hd;
        }
        host::roundRows(a.lowPrecision, blk.kc, kvDim, kr, blk.keyLimit, hd);
        host::roundRows(a.lowPrecision, blk.vc, kvDim, vr, blk.keyLimit, hd);
        blk.kc = kr;
        blk.vc = vr;
        kvStride = hd;
      }
      if (blk.count >= kMinLaneQueries) {
        for (int64_t d = 0; d < hd; ++d)
          for (int i = 0; i < kQueryBlock; ++i)
            qt[d * kQueryBlock + i] = i < blk.count ? blk.q[i][d] * scale : T(0);
        scoresLanes(blk, hd, kvStride, qt, st);
      } else {
        scoresDot(blk, hd, kvStride, scale, st);
      }
      maskScores(blk, st);
      softmaxLanes(blk, st);
      if (a.lowp)
        roundProbabilities(blk, a.lowPrecision, st);
      weightedSum(blk, hd, kvStride, st); // this block reads no q any more
    }
  }
}

template void attention_forward<float>(Context &, const AttentionArgs &, float *,
                                       const float *, const float *, const float *,
                                       float *, float *);
template void attention_forward<double>(Context &, const AttentionArgs &, double *,
                                        const double *, const double *, const double *,
                                        double *, double *);

} // namespace bmrt
