//===- cuda/kernels_cuda.h - The device kernels of the CUDA backend -------===//
//
// The CUDA forms of bmrt/kernels.h and bmrt/kernels_backward.h, on device
// pointers, queued on the device's compute stream (never a host
// synchronisation). Same conventions and numerics contracts as the host
// kernels (row-major, `rows` = flattened leading dims, eps and the
// activation as arguments); results differ from the host's in rounding only
// (other summation orders, fused multiply-adds). Kept in namespace
// bmrt::cuda so a test can link them beside the host libbmrt and compare;
// api_kernels.cpp binds the bmrt:: API of emitted programs to them.
//
// A bad index (a token id outside the vocabulary, a target outside the
// classes) cannot throw inside a kernel: the kernel leaves that row at zero,
// records the index in the device's error slot, and checkDeviceErrors
// (device.h) reports it with the host kernels' message at the next
// synchronisation. fp64 programs are refused by bmbc for the cuda target.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_KERNELS_CUDA_H
#define BMRT_CUDA_KERNELS_CUDA_H

#include "bmrt/kernels.h"
#include "bmrt/lowp.h"
#include "bmrt/sampling.h"
#include "cuda/device.h"

#include <library_types.h>

#include <cstdint>

namespace bmrt::cuda {

//===--- GEMMs (gemm.cpp): cuBLASLt, fp32 accumulation ---------------------===//

/// One cuBLASLt matmul in our row-major terms, any operand type cuBLASLt
/// takes with fp32 compute (CUDA_R_32F, CUDA_R_16BF, CUDA_R_16F for a and b;
/// c is CUDA_R_32F or a's type):
///   c[m, n] = alpha * op(a)[m, k] . op(b)[k, n] + beta * c  (then the epilogue)
/// `batch` > 1 repeats it with the strides (elements) between operands: the
/// attention's per-head products in one call.
struct Matmul {
  Trans transA = Trans::N, transB = Trans::N;
  int64_t m = 0, n = 0, k = 0;
  const void *a = nullptr;
  int64_t lda = 0;
  const void *b = nullptr;
  int64_t ldb = 0;
  void *c = nullptr;
  int64_t ldc = 0;
  cudaDataType_t abType = CUDA_R_32F, cType = CUDA_R_32F;
  float alpha = 1, beta = 0;
  const float *bias = nullptr;     // [n], fp32; the BIAS epilogues
  Epilogue act = Epilogue::None;   // GeluTanh and Relu run in cuBLASLt's epilogue
  int64_t batch = 1, strideA = 0, strideB = 0, strideC = 0;
};

/// Runs `mm` on the compute stream. Activations cuBLASLt has no epilogue
/// for (GeluErf, Silu, Tanh) are refused here: gemm() applies them with
/// activation_residual after a bias-only matmul.
void matmul(Device &dev, const Matmul &mm);
/// matmul, but returns false instead of failing when cuBLASLt's heuristic
/// offers no algorithm (an epilogue the GPU or type lacks: the caller falls
/// back to a separate pass).
bool tryMatmul(Device &dev, const Matmul &mm);

/// mm (c fp32, ldc also the residual's) followed by bmrt::gemm's epilogue:
/// c = act(mm + bias) + residual. Shared by the fp32 and reduced-input GEMMs.
void gemm_epilogue(Device &dev, Matmul mm, Epilogue act, const float *residual);

/// bmrt::gemm on the device: c = act(a . op(b) + bias) + residual, fp32.
void gemm(Device &dev, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
          const float *b, int64_t ldb, Trans transB, float *c, int64_t ldc, const float *bias,
          Epilogue act, const float *residual);

/// bmrt::gemm_ex on the device: c = op(a) . op(b) (+ c when accumulate), fp32.
void gemm_ex(Device &dev, Trans transA, Trans transB, int64_t m, int64_t n, int64_t k,
             const float *a, int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc,
             bool accumulate);

//===--- Reduced-precision inputs (lowp.cu): bmrt/lowp.h on the device ---===//

/// The inputs rounded to bf16/fp16 (packed into scratch; a `_w` weight is
/// already 16-bit), multiplied on the tensor cores with fp32 accumulation;
/// bias, residual and c fp32. The host computes the same products exactly
/// in fp32 from the rounded values.
void gemm_lowp(Device &dev, LowPrecision p, int64_t m, int64_t n, int64_t k, const float *a,
               int64_t lda, const void *b, int64_t ldb, bool bIsLow, Trans transB, float *c,
               int64_t ldc, const float *bias, Epilogue act, const float *residual);
void gemm_ex_lowp(Device &dev, LowPrecision p, Trans transA, Trans transB, int64_t m, int64_t n,
                  int64_t k, const float *a, int64_t lda, const void *b, int64_t ldb,
                  bool bIsLow, float *c, int64_t ldc, bool accumulate);
/// out[i] = in[i] converted (to_bf16 / to_fp16 / to_float of bmrt/lowp.h).
void convert(Device &dev, LowPrecision p, uint16_t *out, const float *in, int64_t n);
void convert(Device &dev, LowPrecision p, float *out, const uint16_t *in, int64_t n);

//===--- Row kernels (rows.cu): one block per row, CUB BlockReduce ---------===//

/// layernorm_forward; mean and rstd ([rows]) saved when non-null.
void layernorm_forward(Device &dev, float *out, float *mean, float *rstd, const float *x,
                       const float *w, const float *b, int64_t rows, int64_t C, float eps);
/// sum = a + r, out = layernorm(sum); sum may alias a or r.
void residual_layernorm_forward(Device &dev, float *sum, float *out, const float *a,
                                const float *r, const float *w, const float *b, int64_t rows,
                                int64_t C, float eps);
/// rmsnorm_forward; rstd ([rows]) saved when non-null.
void rmsnorm_forward(Device &dev, float *out, float *rstd, const float *x, const float *w,
                     int64_t rows, int64_t C, float eps);
void residual_rmsnorm_forward(Device &dev, float *sum, float *out, const float *a,
                              const float *r, const float *w, int64_t rows, int64_t C,
                              float eps);
void softmax_forward(Device &dev, float *out, const float *x, int64_t rows, int64_t C);

//===--- Norm and softmax backward, classifier (rows_backward.cu) ---------===//

/// kernels_backward.h's contracts (gradients accumulate; mean/rstd saved or
/// both null = recomputed). dw/db and sum_rows add 32-row chunks in order.
void layernorm_backward(Device &dev, float *dx, float *dw, float *db, const float *dout,
                        const float *x, const float *w, const float *mean, const float *rstd,
                        int64_t rows, int64_t C, float eps);
void rmsnorm_backward(Device &dev, float *dx, float *dw, const float *dout, const float *x,
                      const float *w, const float *rstd, int64_t rows, int64_t C, float eps);
void sum_rows(Device &dev, float *out, const float *x, int64_t rows, int64_t C);
void softmax_backward(Device &dev, float *dx, const float *out, const float *dout, int64_t rows,
                      int64_t C);
/// training.h's fused classifier (exponentials summed in double).
void fused_classifier_forward_backward(Device &dev, float *losses, float *dlogits,
                                       const float *logits, const int32_t *targets,
                                       int64_t rows, int64_t V, int64_t ignoreIndex,
                                       double dlossScale);

/// training.h's MSE: *loss (device) = mean squared error, in double; one
/// block (the outputs it serves are small: a regression head).
void mse_forward_backward(Device &dev, float *loss, float *dpred, const float *pred,
                          const float *target, int64_t n, double dlossScale);

//===--- Attention (attention.cu): batched GEMMs, fused masked softmax ----===//

/// What attention_forward throws when a step with its position in device
/// memory meets keys or values written into the cache in place (their place
/// was chosen with the host's position): decode_graph.cpp then decodes with
/// host positions.
struct NeedsHostPosition : Error {
  using Error::Error;
};

/// With dev.stepStart set (the decode step as a graph): the first position
/// is read from there, the new rows are written to the cache there, and
/// attention_decode reads the keys [0, start + rows) only (the plain path's
/// formula; its sums are in another order than the GEMMs', so its rounding
/// may differ from the plain path's). args.start is then only checked; k
/// and v must not be the cache's own rows (that place depends on the
/// host's start). That decode step's attention (attention_decode.cu,
/// declared in attention_keys.h) has a grid sized by the arguments and
/// decides and loops over the visible keys on the device, so a captured
/// graph replays it at any position and its work grows with the position,
/// not the capacity.
void attention_forward(Device &dev, const AttentionArgs &args, float *out, const float *q,
                       const float *k, const float *v, float *kCache, float *vCache);
void attention_backward(Device &dev, const AttentionArgs &args, float *dq, float *dk, float *dv,
                        const float *dout, const float *q, const float *k, const float *v);

//===--- Prefix tuning's attention (attention_prefix.cu) -------------------===//

/// bmrt::attention_prefix_forward: pk/pv ([P, kv width]) into cache rows
/// [0, P) of every sequence, then attention_forward over the tokens at rows
/// P + start + r (a rectangular rows x (P + start + rows) score tile, the
/// causal limit offset by P). The prefix keys are not copied into a widened
/// mask: the softmax reads the rule (attention_keys.h), the gate (device
/// memory) included. With dev.stepStart set (a decode step as a graph) the
/// device's position counts tokens, as the host's start does.
void attention_prefix_forward(Device &dev, const AttentionArgs &args, int64_t prefixRows,
                              const float *pk, const float *pv, const float *gate, float *out,
                              const float *q, const float *k, const float *v, float *kCache,
                              float *vCache);
/// bmrt::attention_prefix_backward: the keys [pk; k[b]] and values
/// [pv; v[b]] assembled into scratch, attention_backward's products over the
/// R x (P + R) tile with query r at key P + r, then the key/value gradients
/// split: rows [P, P + R) added into dk/dv, rows [0, P) summed over the
/// batch in batch order (one thread per element: the host's order) into
/// dpk/dpv. Scratch: four [batch, P + R, kv width] buffers and two score
/// tiles.
void attention_prefix_backward(Device &dev, const AttentionArgs &args, int64_t prefixRows,
                               const float *pk, const float *pv, const float *gate, float *dpk,
                               float *dpv, float *dq, float *dk, float *dv, const float *dout,
                               const float *q, const float *k, const float *v);

//===--- Gathers, scatters, rotary (indexing.cu) ---------------------------===//

void embedding_forward(Device &dev, float *out, const int32_t *ids, const float *table,
                       int64_t rows, int64_t vocab, int64_t C);
void embedding_backward(Device &dev, float *dtable, const int32_t *ids, const float *dout,
                        int64_t rows, int64_t vocab, int64_t C);
void copy_strided(Device &dev, float *out, const float *x, int64_t outer, int64_t inner,
                  int64_t xOuterStride, int64_t xOffset);
void copy_strided_backward(Device &dev, float *dx, const float *dout, int64_t outer,
                           int64_t inner, int64_t xOuterStride, int64_t xOffset);
void rotary_forward(Device &dev, float *out, const float *x, const int32_t *pos, int64_t rows,
                    int64_t heads, int64_t headDim, int64_t rowStride, float base);
void rotary_backward(Device &dev, float *dx, const float *dout, const int32_t *pos, int64_t rows,
                     int64_t heads, int64_t headDim, int64_t rowStride, float base);

//===--- Sampling (sampling.cu) --------------------------------------------===//

/// The next token for a logits row [vocab] in device memory, drawn as
/// bmrt::sampleToken does in every mode (the same Philox uniform at (seed,
/// step); top_k and top_p sort the row first: sampling_sorted.cu); one
/// synchronisation, the token to the host.
int32_t sample_token(Device &dev, const SamplingConfig &config, const float *logits,
                     int64_t vocab, uint64_t step);

//===--- Element-wise (elementwise_ops.cu) ---------------------------------===//

/// c[i, j] = act(c[i, j]) + residual[i, j] (residual may be null or c) over
/// an m x n block with leading dimension ldc, act from bmrt/elementwise.h.
void activation_residual(Device &dev, float *c, int64_t ldc, int64_t m, int64_t n,
                         Epilogue act, const float *residual);
/// out[r] = start + r; start read from dev.stepStart when that is set (the
/// decode step's position in device memory; `start` is then only checked).
void positions_forward(Device &dev, int32_t *out, int64_t rows, int64_t start);
/// x[0, n) = 0.
void fill_zero(Device &dev, float *x, int64_t n);
/// torch.optim.AdamW's update (training.h's adamw_update contract), with
/// the scalars torch computes in Python computed on the host in double.
void adamw_update(Device &dev, float *params, const float *grads, float *m, float *v, int64_t n,
                  double lr, double beta1, double beta2, double eps, double weightDecay,
                  int64_t step);
/// torch.optim.SGD (training.h's sgd_update contract).
void sgd_update(Device &dev, float *params, const float *grads, float *momentumBuf, int64_t n,
                double lr, double momentum, double weightDecay, int64_t step);
/// dx += dout * act'(x), the element derivatives of bmrt/kernels_backward.h.
void act_backward(Device &dev, float *dx, const float *x, const float *dout, int64_t n,
                  Epilogue act);
void scale_inplace(Device &dev, float *x, int64_t n, double s);
/// x[i] = x[i] + y[i] in float (zero = 2's add_unit_grads: a summed piece
/// into the partition's gradients, the host's arithmetic exactly).
void add_inplace(Device &dev, float *x, const float *y, int64_t n);
/// The sum of squares in double, to the host (one synchronisation: the
/// caller decides on it). A fixed grid and order: the same bits every run.
double grad_norm_squared(Device &dev, const float *grads, int64_t n);
/// Whether some x[i] is inf or NaN (fp16's loss scaler): a CUB device
/// reduction, then one synchronisation for the answer (nonfinite.cu).
bool any_nonfinite(Device &dev, const float *x, int64_t n);
/// out[c] (host) = the sum of squares, in double, of chunk c of grads[0, n)
/// (chunks of `chunk` elements, the last may be short): one launch, one
/// synchronisation. grad_norm_part's per-chunk sums.
void chunk_squares(Device &dev, double *out, const float *grads, int64_t n, int64_t chunk);

} // namespace bmrt::cuda

#endif // BMRT_CUDA_KERNELS_CUDA_H
