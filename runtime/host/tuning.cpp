//===- host/tuning.cpp - Soft embedding, mask rows, verbalizer loss -------===//
//
// bmrt/tuning.h on the host. These touch B*T rows (the embedding), B*M rows
// (the gather) and B*M*C*W*K logits (the verbalizer): small next to the
// model's GEMMs, so they are plain loops, one thread, in a fixed order
// (bitwise the same for any thread count). Ids, positions and labels are
// checked before anything is written.
//
//===----------------------------------------------------------------------===//
#include "bmrt/tuning.h"
#include "bmrt/verbalizer_element.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace bmrt {

namespace {

void checkIds(const char *what, const int32_t *ids, int64_t rows, int64_t limit) {
  for (int64_t r = 0; r < rows; ++r)
    if (ids[r] < 0 || ids[r] >= limit)
      fail(std::string(what) + ": id " + std::to_string(ids[r]) + " at row " +
           std::to_string(r) + " is outside [0, " + std::to_string(limit) +
           ") (vocabulary plus soft tokens)");
}

void checkPositions(const char *what, const int32_t *pos, int64_t batch, int64_t seq,
                    int64_t masks) {
  for (int64_t i = 0; i < batch * masks; ++i)
    if (pos[i] < 0 || pos[i] >= seq)
      fail(std::string(what) + ": mask position " + std::to_string(pos[i]) + " of example " +
           std::to_string(i / masks) + " is outside [0, " + std::to_string(seq) + ")");
}

} // namespace

template <class T>
void soft_embedding_forward(Context &, T *out, const int32_t *ids, const T *table, const T *soft,
                            int64_t rows, int64_t num, int64_t numSoft, int64_t dim) {
  checkIds("soft_embedding_forward", ids, rows, num + numSoft);
  for (int64_t r = 0; r < rows; ++r) {
    const T *src = ids[r] < num ? table + ids[r] * dim : soft + (ids[r] - num) * dim;
    std::copy(src, src + dim, out + r * dim);
  }
}

template <class T>
void soft_embedding_backward(Context &, T *dtable, T *dsoft, const int32_t *ids, const T *dout,
                             int64_t rows, int64_t num, int64_t numSoft, int64_t dim) {
  checkIds("soft_embedding_backward", ids, rows, num + numSoft);
  for (int64_t r = 0; r < rows; ++r) {
    T *dst = ids[r] < num ? (dtable ? dtable + ids[r] * dim : nullptr)
                          : (dsoft ? dsoft + (ids[r] - num) * dim : nullptr);
    if (!dst)
      continue;
    for (int64_t i = 0; i < dim; ++i)
      dst[i] += dout[r * dim + i];
  }
}

template <class T>
void gather_rows_forward(Context &, T *out, const T *x, const int32_t *pos, int64_t batch,
                         int64_t seq, int64_t masks, int64_t dim) {
  checkPositions("gather_rows_forward", pos, batch, seq, masks);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t m = 0; m < masks; ++m) {
      const T *src = x + (b * seq + pos[b * masks + m]) * dim;
      std::copy(src, src + dim, out + (b * masks + m) * dim);
    }
}

template <class T>
void gather_rows_backward(Context &, T *dx, const T *dout, const int32_t *pos, int64_t batch,
                          int64_t seq, int64_t masks, int64_t dim) {
  checkPositions("gather_rows_backward", pos, batch, seq, masks);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t m = 0; m < masks; ++m) {
      T *dst = dx + (b * seq + pos[b * masks + m]) * dim;
      const T *src = dout + (b * masks + m) * dim;
      for (int64_t i = 0; i < dim; ++i)
        dst[i] += src[i];
    }
}

template <class T>
void verbalizer_loss_forward_backward(Context &, const VerbalizerShape &s,
                                      const WordReduce *reduce, T *losses, T *scores,
                                      T *wordProbs, T *dlogits, const T *logits,
                                      const int32_t *labels, const int32_t *labelWords,
                                      const T *calibration, int64_t ignoreIndex, double scale) {
  const int64_t B = s.batch, M = s.masks, C = s.labels, V = s.vocab;
  // Checks first: nothing is written on bad input.
  std::vector<int64_t> wordsOf(M * C, 0); // valid words per (mask, class)
  const VerbalizerIssue issue = verbalizer_check(s, labels, labelWords, ignoreIndex,
                                                 wordsOf.data());
  if (issue.kind == VerbalizerIssueKind::BadLabel)
    fail("verbalizer_loss: label " + std::to_string(issue.value) + " of example " +
         std::to_string(issue.at) + " is not a class index in [0, " + std::to_string(C) + ")");
  if (issue.kind == VerbalizerIssueKind::BadWordToken)
    fail("verbalizer_loss: label word token " + std::to_string(issue.value) +
         " is outside the vocabulary [0, " + std::to_string(V) + ")");
  if (issue.kind == VerbalizerIssueKind::NoWords)
    fail("verbalizer_loss: class " + std::to_string(issue.value) +
         " has no label words at mask " + std::to_string(issue.at));

  // One example at a time (bmrt/verbalizer_element.h, the device kernel's
  // arithmetic too), its intermediates in one scratch reused.
  std::vector<double> doubles((size_t)verbalizer_scratch_doubles(s));
  std::vector<int32_t> argmax((size_t)(M * C * s.words));
  const VerbalizerScratch w = verbalizer_scratch(s, doubles.data(), argmax.data());
  for (int64_t b = 0; b < B; ++b) {
    verbalizer_forward_example(s, reduce, b, logits, labelWords, calibration, wordsOf.data(), w,
                               wordProbs, scores);
    const bool counted = labels[b] != ignoreIndex;
    const double lse = counted ? verbalizer_lse(s, w) : 0.0;
    losses[b] = counted ? (T)(lse - w.sc[labels[b]]) : (T)0;
    if (!dlogits)
      continue;
    T *drows = dlogits + b * M * V; // may be logits' rows: read above, cleared now
    std::fill(drows, drows + M * V, (T)0);
    if (counted)
      verbalizer_backward_example(s, reduce, labels[b], lse, labelWords, calibration,
                                  wordsOf.data(), w, scale, drows);
  }
}

#define BMRT_TUNING_INSTANTIATE(T)                                                           \
  template void soft_embedding_forward<T>(Context &, T *, const int32_t *, const T *,       \
                                          const T *, int64_t, int64_t, int64_t, int64_t);   \
  template void soft_embedding_backward<T>(Context &, T *, T *, const int32_t *, const T *, \
                                           int64_t, int64_t, int64_t, int64_t);             \
  template void gather_rows_forward<T>(Context &, T *, const T *, const int32_t *, int64_t, \
                                       int64_t, int64_t, int64_t);                          \
  template void gather_rows_backward<T>(Context &, T *, const T *, const int32_t *,         \
                                        int64_t, int64_t, int64_t, int64_t);                \
  template void verbalizer_loss_forward_backward<T>(                                        \
      Context &, const VerbalizerShape &, const WordReduce *, T *, T *, T *, T *, const T *, \
      const int32_t *, const int32_t *, const T *, int64_t, double);
BMRT_TUNING_INSTANTIATE(float)
BMRT_TUNING_INSTANTIATE(double)

} // namespace bmrt
