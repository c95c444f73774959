//===- bmrt/kernels_backward.h - Backward kernels for training ------------===//
//
// The gradients of the forward kernels in kernels.h, for the compiler's
// autodiff pass (issue 4). Same conventions as kernels.h (row-major, `rows`
// counts the flattened leading dims, templated on T with float and double
// instantiated, numerics as arguments, bmrt::fail on user-caused problems),
// plus one rule for gradients, as in llm.c:
//
//   Every gradient output (dx, dw, db, dq, dk, dv, dtable, ...) is
//   ACCUMULATED: the kernel adds its contribution (+=). The caller zeroes a
//   gradient buffer once before its first contribution; then micro-batches
//   and tensors used more than once (residual streams, tied embeddings)
//   need nothing more. A gradient output must not alias any input.
//   Only the *_forward_save kernels overwrite (out and the statistics).
//
// Any gradient output may be null when that gradient is not needed.
// Results do not depend on the thread count: no atomics, every sum is taken
// in a fixed order (weight gradients are split over columns, not rows).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_KERNELS_BACKWARD_H
#define BMRT_KERNELS_BACKWARD_H

#include "bmrt/elementwise.h"
#include "bmrt/kernels.h"
#include "bmrt/portable.h"

#include <cstdint>

namespace bmrt {

//===----------------------------------------------------------------------===//
// Element derivatives: dx = dout * f'(x), for the activations of
// elementwise.h. __host__ __device__ like them, so the generated backward
// kernels of both backends can call them. float uses the same fast tanh/exp
// as the forward (the derivative of what the forward computes).
//===----------------------------------------------------------------------===//

// d/dx of 0.5 x (1 + tanh(c (x + 0.044715 x^3))), c = sqrt(2/pi).
template <class T> BMRT_HD T gelu_tanh_backward(T x, T dout) {
  const T c = T(0.7978845608028654);
  const T t = tanh_fast(c * (x + T(0.044715) * x * x * x));
  const T du = c * (T(1) + T(3 * 0.044715) * x * x);
  return dout * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du);
}
// d/dx of 0.5 x (1 + erf(x / sqrt(2))) = Phi(x) + x phi(x).
template <class T> BMRT_HD T gelu_erf_backward(T x, T dout) {
  const T cdf = T(0.5) * (T(1) + erf(x * T(0.7071067811865476)));
  const T pdf = T(0.3989422804014327) * exp(T(-0.5) * x * x);
  return dout * (cdf + x * pdf);
}
// d/dx of x sigmoid(x) = s (1 + x (1 - s)).
template <class T> BMRT_HD T silu_backward(T x, T dout) {
  const T s = T(1) / (T(1) + exp_fast(-x));
  return dout * (s * (T(1) + x * (T(1) - s)));
}
// 0 at x == 0, as torch.
template <class T> BMRT_HD T relu_backward(T x, T dout) { return x > T(0) ? dout : T(0); }
template <class T> BMRT_HD T tanh_backward(T x, T dout) {
  const T t = tanh_fast(x);
  return dout * (T(1) - t * t);
}

/// dx[i] += dout[i] * act'(x[i]) for i in [0, n): the backward of a GEMM
/// epilogue's activation (x is the pre-activation, i.e. a.b + bias).
/// Accumulates into dx.
template <class T>
void act_backward(Context &ctx, T *dx, const T *x, const T *dout, int64_t n, Epilogue act);

//===----------------------------------------------------------------------===//
// GEMM and row sums (the gradients of linear layers and broadcasts)
//===----------------------------------------------------------------------===//

/// c[m, n] = op(a)[m, k] . op(b)[k, n], plus the old c when `accumulate`.
/// Trans::T means stored transposed: op(a) = a^T with a stored [k, m], op(b)
/// = b^T with b stored [n, k]. Leading dimensions are those of the stored
/// matrices. For y = x . w^T (w [out, in]) the gradients are
///   dx[rows, in]  += dy[rows, out] . w[out, in]    gemm_ex(N, N, rows, in, out, ...)
///   dw[out, in]   += dy^T . x                      gemm_ex(T, N, out, in, rows, ...)
/// Unlike gemm(), no epilogue, no matrix-vector path, and c must not alias a
/// or b. As gemm()'s, the bits are OpenBLAS's: fixed for a given thread count.
template <class T>
void gemm_ex(Context &ctx, Trans transA, Trans transB, int64_t m, int64_t n, int64_t k,
             const T *a, int64_t lda, const T *b, int64_t ldb, T *c, int64_t ldc,
             bool accumulate);

/// out[C] += sum over r of x[r, :] (x [rows, C]): the gradient of a bias or
/// of any operand broadcast over leading dims. Rows are added in order
/// 0..rows-1, threads split C: same bits for any thread count.
template <class T>
void sum_rows(Context &ctx, T *out, const T *x, int64_t rows, int64_t C);

/// x[0, n) = 0 (gradient buffers before their first contribution).
template <class T> void fill_zero(Context &ctx, T *x, int64_t n);

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

/// layernorm_forward (bit-identical out) that also saves, per row,
/// mean[rows] and rstd[rows] = 1 / sqrt(var + eps) for the backward.
/// Overwrites out, mean, rstd.
template <class T>
void layernorm_forward_save(Context &ctx, T *out, T *mean, T *rstd, const T *x, const T *w,
                            const T *b, int64_t rows, int64_t C, float eps);

/// Backward of out = (x - mean) * rstd * w + b, per row of C.
///   dx   [rows, C]  accumulated
///   dw   [C]        accumulated (may be null)
///   db   [C]        accumulated (may be null; the forward had no bias)
///   dout [rows, C], x [rows, C], w [C]
///   mean [rows], rstd [rows]: from layernorm_forward_save; both null =
///   recomputed from x and eps (eps is unused when they are given).
/// The residual form's backward is this one with dx added to both inputs'
/// gradients (and the residual stream's own gradient passing through).
template <class T>
void layernorm_backward(Context &ctx, T *dx, T *dw, T *db, const T *dout, const T *x,
                        const T *w, const T *mean, const T *rstd, int64_t rows, int64_t C,
                        float eps);

/// rmsnorm_forward (bit-identical out) that also saves rstd[rows] =
/// 1 / sqrt(mean(x^2) + eps). Overwrites out, rstd.
template <class T>
void rmsnorm_forward_save(Context &ctx, T *out, T *rstd, const T *x, const T *w,
                          int64_t rows, int64_t C, float eps);

/// Backward of out = x * rstd * w, per row of C.
///   dx [rows, C] accumulated; dw [C] accumulated (may be null)
///   dout [rows, C], x [rows, C], w [C]
///   rstd [rows] from rmsnorm_forward_save, or null = recomputed with eps.
template <class T>
void rmsnorm_backward(Context &ctx, T *dx, T *dw, const T *dout, const T *x, const T *w,
                      const T *rstd, int64_t rows, int64_t C, float eps);

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Backward of attention_forward at training shapes: query row r is key row
/// args.start + r (start > 0: keys [0, start) are seen by every query, as
/// prefix tuning's prefix) and k/v hold start + rows rows (no cache): key j
/// of sequence b,
/// kv head g is k[b * kvBatchStride + j * kvRowStride + g * headDim ...].
/// Same masking as the forward (causal or bidirectional, keyMask
/// [batch, cacheCapacity] with 0 = padding, cacheCapacity >= start+rows only
/// the mask's row length here), same GQA mapping; dk/dv of a kv head sum over
/// the heads of its group. A query row with no visible key gets no gradient.
///   dq   uses q's strides   (qRowStride, qBatchStride)      accumulated
///   dk   uses k's strides   (kvRowStride, kvBatchStride)    accumulated
///   dv   uses v's strides   (kvRowStride, kvBatchStride)    accumulated
///   dout uses out's strides (outRowStride, outBatchStride)
/// so dq/dk/dv may be the three parts of one fused [q | k | v] gradient buffer.
/// The softmax is recomputed from q and k, one block of 64 query rows of
/// one head at a time (no T x T buffer: per thread, a 64 x rows tile of
/// scores and one of their gradients, plus the block's logsumexp and
/// dout . out per query row).
/// args.lowp (float only): the operands of the four matmuls are rounded to
/// args.lowPrecision - dP = dO V^T and dV = P^T dO (P the probabilities,
/// rounded as the forward's P.V rounds them), dQ = dS K and dK = dS^T Q -
/// while S, softmax, delta and dS = scale P (dP - delta) stay fp32.
template <class T>
void attention_backward(Context &ctx, const AttentionArgs &args, T *dq, T *dk, T *dv,
                        const T *dout, const T *q, const T *k, const T *v);

/// Backward of attention_prefix_forward at training shapes (args.start 0,
/// args.cacheCapacity = rows; k/v/dk/dv with args' strides): the keys of
/// sequence b are [pk; k[b]] and its values [pv; v[b]], P = prefixRows rows
/// of prefix seen by every query, never masked (keyMask [batch, rows] covers
/// the tokens). dq, dk, dv accumulated as attention_backward's; dpk, dpv
/// [P, kvHeads*headDim] accumulate the prefixes' gradients summed over the
/// batch (in batch order). gate as attention_prefix_forward's (where 0 the
/// prefix is masked out and dpk, dpv get nothing). Scratch: four
/// [batch, P+rows, kv width] buffers.
template <class T>
void attention_prefix_backward(Context &ctx, const AttentionArgs &args, int64_t prefixRows,
                               const T *pk, const T *pv, const T *gate, T *dpk, T *dpv, T *dq,
                               T *dk, T *dv, const T *dout, const T *q, const T *k,
                               const T *v);

//===----------------------------------------------------------------------===//
// Row ops
//===----------------------------------------------------------------------===//

/// Backward of out = softmax(x) per row of C, from the forward's output:
///   dx[r, i] += out[r, i] * (dout[r, i] - sum_j dout[r, j] out[r, j])
/// dx [rows, C] accumulated; out [rows, C]; dout [rows, C].
template <class T>
void softmax_backward(Context &ctx, T *dx, const T *out, const T *dout, int64_t rows,
                      int64_t C);

/// Backward of rotary_forward: dx += the inverse rotation of dout (same
/// angles, same float/double precision rules as the forward).
/// dx and dout are [rows, heads*headDim] with row stride rowStride; pos [rows].
/// dx accumulated.
template <class T>
void rotary_backward(Context &ctx, T *dx, const T *dout, const int32_t *pos, int64_t rows,
                     int64_t heads, int64_t headDim, int64_t rowStride, float base);

/// Backward of embedding_forward: dtable[ids[r], :] += dout[r, :].
/// dtable [vocab, C] accumulated; ids [rows]; dout [rows, C]. Repeated ids
/// add in row order (threads split C, not rows: deterministic). Fails on an
/// id outside [0, vocab) before touching dtable.
template <class T>
void embedding_backward(Context &ctx, T *dtable, const int32_t *ids, const T *dout,
                        int64_t rows, int64_t vocab, int64_t C);

/// Backward of copy_strided (take):
///   dx[o * xOuterStride + xOffset + i] += dout[o * inner + i]
/// dx is x's buffer (accumulated), dout [outer, inner].
template <class T>
void copy_strided_backward(Context &ctx, T *dx, const T *dout, int64_t outer,
                           int64_t inner, int64_t xOuterStride, int64_t xOffset);

} // namespace bmrt

#endif // BMRT_KERNELS_BACKWARD_H
