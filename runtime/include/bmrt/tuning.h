//===- bmrt/tuning.h - The kernels of prompt tuning -----------------------===//
//
// What a tune program (docs/tuning.md, program.h TuneInfo) calls besides the
// training kernels:
//   - the token embedding with soft tokens: id num + k reads row k of the
//     soft table (@prompt.soft);
//   - the gather of each example's {mask} rows before the vocabulary head,
//     so the head computes B*M rows of logits, never B*T;
//   - OpenPrompt's ManualVerbalizer and the class cross-entropy, with
//     d(loss)/d(logits) in the same pass (like the fused classifier).
// Host implementations: runtime/host/tuning.cpp. Bad ids or positions fail
// (bmrt::fail) before anything is written.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_TUNING_H
#define BMRT_TUNING_H

#include "bmrt/context.h"

#include <cstdint>

namespace bmrt {

/// out[r, :] = ids[r] < num ? table[ids[r], :] : soft[ids[r] - num, :].
/// ids [rows]; table [num, dim]; soft [numSoft, dim]; out [rows, dim].
template <class T>
void soft_embedding_forward(Context &ctx, T *out, const int32_t *ids, const T *table,
                            const T *soft, int64_t rows, int64_t num, int64_t numSoft,
                            int64_t dim);

/// Backward: dtable[ids[r]] += dout[r] for ids below num, dsoft[ids[r] - num]
/// += dout[r] otherwise (accumulated, in row order); a null table is not
/// trained and its rows are skipped.
template <class T>
void soft_embedding_backward(Context &ctx, T *dtable, T *dsoft, const int32_t *ids,
                             const T *dout, int64_t rows, int64_t num, int64_t numSoft,
                             int64_t dim);

/// out[b*M + m, :] = x[b, pos[b, m], :]; x [B, T, D], pos [B, M], out [B*M, D].
template <class T>
void gather_rows_forward(Context &ctx, T *out, const T *x, const int32_t *pos, int64_t batch,
                         int64_t seq, int64_t masks, int64_t dim);

/// dx[b, pos[b, m], :] += dout[b*M + m, :] (accumulated, in (b, m) order).
template <class T>
void gather_rows_backward(Context &ctx, T *dx, const T *dout, const int32_t *pos,
                          int64_t batch, int64_t seq, int64_t masks, int64_t dim);

/// How a label word of several tokens gets one logit (OpenPrompt's
/// multi_token_handler): its first token's, the mean or the max.
enum class WordReduce : int { First, Mean, Max };

struct VerbalizerShape {
  int64_t batch = 0, masks = 0, labels = 0, words = 0, wordTokens = 0, vocab = 0;
};

/// OpenPrompt's ManualVerbalizer and cross-entropy over the classes, per
/// example b (row b*M + m of logits [B*M, V] scores mask m):
///   z[c, w]   = reduce[m] of logits[tokens of word w of class c]
///               (labelWords [M, C, W, K], -1 padding; padded words excluded)
///   p         = softmax of z over the mask's words     -> wordProbs [B, M, C, W]
///   q         = (p / calibration[m]) / sum(p / calibration[m])
///   s[m, c]   = mean over class c's words of log(q + 1e-15)
///   scores[c] = sum over m of s[m, c]                   -> scores [B, C]
///   loss      = -log_softmax(scores)[labels[b]]         -> losses [B]
/// (0 and no gradient where labels[b] == ignoreIndex). With dlogits
/// (may alias logits): dlogits = d(loss)/d(logits) * scale, every row
/// written. Computed in double.
template <class T>
void verbalizer_loss_forward_backward(Context &ctx, const VerbalizerShape &s,
                                      const WordReduce *reduce, T *losses, T *scores,
                                      T *wordProbs, T *dlogits, const T *logits,
                                      const int32_t *labels, const int32_t *labelWords,
                                      const T *calibration, int64_t ignoreIndex, double scale);

} // namespace bmrt

#endif // BMRT_TUNING_H
