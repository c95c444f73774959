//===- bmrt/kernels.h - The declared kernel list --------------------------===//
//
// Every op of an execution plan that is not a generated bmb_exec.kernel is one
// of these calls (DESIGN: "One source, two backends"). The compiler's fusion
// may only produce a generated kernel or a kernel on this list, so the forms
// here (GEMM with bias/activation/residual epilogue, residual + layernorm)
// are exactly what fusion targets.
//
// Conventions:
//  - Row-major; `rows` counts rows of the flattened leading dims, so a
//    [B, T, C] tensor is rows = B*T of C. At inference rows is a run-time
//    value (the prompt length, 1 in decode): shapes stay static (the buffers
//    are planned at capacity), lengths are scalars (DESIGN decision 1).
//  - Templated on the element type T; float is instantiated now, double for
//    gradient checks; bf16 storage comes later.
//  - Numerics are arguments (eps, scale, GELU approximation), never defaults.
//  - A user-caused problem (a token id out of range) calls bmrt::fail.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_KERNELS_H
#define BMRT_KERNELS_H

#include "bmrt/context.h"
#include "bmrt/portable.h"

#include <cstdint>

namespace bmrt {

/// The activation a GEMM epilogue applies after the bias.
enum class Epilogue : int { None, GeluTanh, GeluErf, Relu, Silu, Tanh };

/// How B is stored: Trans::T means B is [n, k] (our weights, nn.Linear's
/// layout); Trans::N means B is [k, n].
enum class Trans : int { N, T };

/// c[m, n] = act(a[m, k] . op(b) + bias[n]) + residual[m, n]
/// bias and residual may be null; residual has leading dimension ldc and may
/// alias c (in-place residual add). The one place that handles layouts and
/// transposes; m == 1 (and other small m) goes to the matrix-vector path.
template <class T>
void gemm(Context &ctx, int64_t m, int64_t n, int64_t k, const T *a, int64_t lda,
          const T *b, int64_t ldb, Trans transB, T *c, int64_t ldc, const T *bias,
          Epilogue act, const T *residual);

/// The reduced types of mixed precision (bmrt/lowp.h has the conversions).
enum class LowPrecision : int { BF16, FP16 };

/// Attention over a KV cache; see attention_forward.
struct AttentionArgs {
  int64_t batch = 1;          // sequences
  int64_t rows = 0;           // new (query) rows per sequence, valid ones only
  int64_t heads = 0, kvHeads = 0, headDim = 0;
  // Element strides: between rows, and between sequences.
  int64_t qRowStride = 0, qBatchStride = 0;     // q   [batch, *, heads*headDim]
  int64_t kvRowStride = 0, kvBatchStride = 0;   // k,v [batch, *, kvHeads*headDim]
  int64_t outRowStride = 0, outBatchStride = 0; // out [batch, *, heads*headDim]
  int64_t cacheCapacity = 0;  // rows of k_cache/v_cache per sequence
  int64_t start = 0;          // absolute position of the first query row
  bool causal = true;
  float scale = 1.0f;
  const int32_t *keyMask = nullptr; // [batch, cacheCapacity], 0 = padding; null = none
  // bmb-autocast's mark (train jobs with precision = bf16 / fp16; float
  // only): the inputs of the two matmuls (forward: q, k, v and the
  // probabilities P before P.V; backward: see attention_backward) are
  // rounded to `lowPrecision`, the products accumulated in fp32. Softmax and
  // the scaling stay fp32. Off: the fp32 kernels, bit for bit.
  bool lowp = false;
  LowPrecision lowPrecision = LowPrecision::BF16;
};

/// Writes the new k/v rows of every sequence into k_cache/v_cache rows
/// [start, start+rows) (a no-op when k == k_cache + start*row, i.e. the
/// projections were written into the cache in place), then for each query row
/// r (absolute position start+r) and head h computes
///   out = softmax_j(scale * q . k_cache[j]) . v_cache[j]
/// over keys j in [0, start+rows), restricted to j <= start+r when causal
/// and to keyMask[j] != 0 when a mask is given. GQA: head h reads kv head
/// h / (heads / kvHeads). A row with no key to attend to gets zeros.
/// Caches are [batch, cacheCapacity, kvHeads*headDim], rows contiguous.
/// args.lowp (float only): q, k, v are rounded to args.lowPrecision before
/// q . k (the scale is applied in fp32 after the rounding of q), and the
/// normalized probabilities before they weight v; the caches keep fp32.
template <class T>
void attention_forward(Context &ctx, const AttentionArgs &args, T *out, const T *q,
                       const T *k, const T *v, T *k_cache, T *v_cache);

/// Prefix tuning's attention: writes pk/pv ([P, kvHeads*headDim], P =
/// prefixRows) into rows [0, P) of every sequence's k_cache/v_cache, then
/// runs attention_forward with the tokens at cache rows P + start + r, so
/// every query sees the P prefix rows before its causal window.
/// args.cacheCapacity counts the P rows; args.keyMask, if any, covers the
/// tokens only ([batch, cacheCapacity - P]): the prefix is never masked.
/// gate (one element, or null = 1): where gate[0] == 0 the prefix rows are
/// masked out instead (a layer of a repeat without the prefix).
template <class T>
void attention_prefix_forward(Context &ctx, const AttentionArgs &args, int64_t prefixRows,
                              const T *pk, const T *pv, const T *gate, T *out, const T *q,
                              const T *k, const T *v, T *k_cache, T *v_cache);

/// out = (x - mean) / sqrt(var + eps) * w + b, per row of C (b may be null).
template <class T>
void layernorm_forward(Context &ctx, T *out, const T *x, const T *w, const T *b,
                       int64_t rows, int64_t C, float eps);

/// sum = a + r; out = layernorm(sum). `sum` may alias a or r.
template <class T>
void residual_layernorm_forward(Context &ctx, T *sum, T *out, const T *a, const T *r,
                                const T *w, const T *b, int64_t rows, int64_t C,
                                float eps);

/// out = x / sqrt(mean(x^2) + eps) * w, per row of C.
template <class T>
void rmsnorm_forward(Context &ctx, T *out, const T *x, const T *w, int64_t rows,
                     int64_t C, float eps);

/// sum = a + r; out = rmsnorm(sum). `sum` may alias a or r.
template <class T>
void residual_rmsnorm_forward(Context &ctx, T *sum, T *out, const T *a, const T *r,
                              const T *w, int64_t rows, int64_t C, float eps);

/// Softmax over the last dim (C) of each row, numerically stable.
template <class T>
void softmax_forward(Context &ctx, T *out, const T *x, int64_t rows, int64_t C);

/// Rotary position embedding, Hugging Face Llama convention (rotate_half:
/// element i pairs with i + headDim/2), inv_freq[i] = base^(-2i/headDim).
/// x and out are [rows, heads*headDim] with row stride `rowStride`;
/// pos[r] is the absolute position of row r. out may alias x.
template <class T>
void rotary_forward(Context &ctx, T *out, const T *x, const int32_t *pos, int64_t rows,
                    int64_t heads, int64_t headDim, int64_t rowStride, float base);

/// out[r, :] = table[ids[r], :]; fails (bmrt::fail) on an id outside [0, vocab).
template <class T>
void embedding_forward(Context &ctx, T *out, const int32_t *ids, const T *table,
                       int64_t rows, int64_t vocab, int64_t C);

/// out[r] = start + r for r in [0, rows).
void positions_forward(Context &ctx, int32_t *out, int64_t rows, int64_t start);

/// out[o, :] = x[o * xOuterStride + xOffset + (0 .. inner)], o in [0, outer):
/// a strided gather of one slice per outer index (`take` along an axis).
template <class T>
void copy_strided(Context &ctx, T *out, const T *x, int64_t outer, int64_t inner,
                  int64_t xOuterStride, int64_t xOffset);

} // namespace bmrt

#endif // BMRT_KERNELS_H
