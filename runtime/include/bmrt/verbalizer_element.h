//===- bmrt/verbalizer_element.h - The verbalizer loss of one example -*- C++ -*-===//
//
// The one definition of bmrt::verbalizer_loss_forward_backward's arithmetic
// (bmrt/tuning.h), one example at a time, called by the host kernel
// (host/tuning.cpp: every example in a loop) and by the device kernel
// (cuda/tuning.cu: one block per example, its thread 0 here), so the two
// backends make the same operations in the same order, in double.
// `__host__ __device__` (BMRT_HD); no allocation: the caller hands in the
// scratch (VerbalizerScratch: host vectors, or a slice of the device's
// scratch buffer per example).
//
// The work is M*C*W*K reads of the logits per example (a few dozen): one
// thread does it serially, in the host's order. Only clearing the gradient
// rows (M*V values per example) is wide, and the device kernel spreads
// that over its block.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_VERBALIZER_ELEMENT_H
#define BMRT_VERBALIZER_ELEMENT_H

#include "bmrt/portable.h"
#include "bmrt/tuning.h"

#include <cmath>
#include <cstdint>

namespace bmrt {

/// What the input checks found (the host fails with its message, a device
/// kernel records it in the device's error slot).
enum class VerbalizerIssueKind : int { None = 0, BadLabel, BadWordToken, NoWords };
struct VerbalizerIssue {
  VerbalizerIssueKind kind = VerbalizerIssueKind::None;
  int64_t value = 0; // the label / the token / the class
  int64_t at = 0;    // the example / - / the mask
  int64_t limit = 0; // C / V / -
};

/// Per example intermediates: z, p, q and argmax [M*C*W]; R [M]; sc, g [C];
/// dq, dp [C*W]. wordsOf [M*C] is the number of real words per (mask, class),
/// the same for every example (verbalizer_check fills it).
struct VerbalizerScratch {
  double *z, *p, *q, *R, *sc, *g, *dq, *dp;
  int32_t *argmax;
};

/// The doubles VerbalizerScratch needs (argmax's int32 apart).
BMRT_HD int64_t verbalizer_scratch_doubles(const VerbalizerShape &s) {
  const int64_t CW = s.labels * s.words;
  return 3 * s.masks * CW + s.masks + 2 * s.labels + 2 * CW;
}

/// Points `w` at `doubles` (verbalizer_scratch_doubles of them) and `ints`
/// (M*C*W of them).
BMRT_HD VerbalizerScratch verbalizer_scratch(const VerbalizerShape &s, double *doubles,
                                             int32_t *ints) {
  const int64_t MCW = s.masks * s.labels * s.words, CW = s.labels * s.words;
  VerbalizerScratch w;
  w.z = doubles;
  w.p = w.z + MCW;
  w.q = w.p + MCW;
  w.R = w.q + MCW;
  w.sc = w.R + s.masks;
  w.g = w.sc + s.labels;
  w.dq = w.g + s.labels;
  w.dp = w.dq + CW;
  w.argmax = ints;
  return w;
}

/// Token k of word j (= c*W + w) of mask m: labelWords [M, C*W, K].
BMRT_HD int32_t verbalizer_token(const VerbalizerShape &s, const int32_t *labelWords, int64_t m,
                                 int64_t j, int64_t k) {
  return labelWords[(m * s.labels * s.words + j) * s.wordTokens + k];
}

/// The checks, in the host kernel's order: every label a class or the
/// ignore index, then every label word's tokens in the vocabulary, then
/// every (mask, class) with a word. Fills wordsOf [M*C].
BMRT_HD VerbalizerIssue verbalizer_check(const VerbalizerShape &s, const int32_t *labels,
                                         const int32_t *labelWords, int64_t ignoreIndex,
                                         int64_t *wordsOf) {
  const int64_t B = s.batch, M = s.masks, C = s.labels, W = s.words, K = s.wordTokens,
                V = s.vocab, CW = C * W;
  VerbalizerIssue issue;
  for (int64_t b = 0; b < B; ++b)
    if (labels[b] != ignoreIndex && (labels[b] < 0 || labels[b] >= C)) {
      issue.kind = VerbalizerIssueKind::BadLabel;
      issue.value = labels[b], issue.at = b, issue.limit = C;
      return issue;
    }
  for (int64_t i = 0; i < M * C; ++i)
    wordsOf[i] = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t j = 0; j < CW; ++j) {
      if (verbalizer_token(s, labelWords, m, j, 0) < 0)
        continue;
      ++wordsOf[m * C + j / W];
      for (int64_t k = 0; k < K && verbalizer_token(s, labelWords, m, j, k) >= 0; ++k)
        if (verbalizer_token(s, labelWords, m, j, k) >= V) {
          issue.kind = VerbalizerIssueKind::BadWordToken;
          issue.value = verbalizer_token(s, labelWords, m, j, k), issue.limit = V;
          return issue;
        }
    }
  for (int64_t i = 0; i < M * C; ++i)
    if (wordsOf[i] == 0) {
      issue.kind = VerbalizerIssueKind::NoWords;
      issue.value = i % C, issue.at = i / C;
      return issue;
    }
  return issue;
}

/// Example b's forward: each mask's word logits z (and the token a max
/// took), probabilities p (-> wordProbs [B, M, C, W]), calibrated and
/// renormalised q (its normaliser R), and the class scores (-> scores
/// [B, C], and w.sc). logits [B*M, V].
template <class T>
BMRT_HD void verbalizer_forward_example(const VerbalizerShape &s, const WordReduce *reduce,
                                        int64_t b, const T *logits, const int32_t *labelWords,
                                        const T *calibration, const int64_t *wordsOf,
                                        VerbalizerScratch w, T *wordProbs, T *scores) {
  const int64_t M = s.masks, C = s.labels, W = s.words, K = s.wordTokens, V = s.vocab,
                CW = C * W;
  for (int64_t c = 0; c < C; ++c)
    w.sc[c] = 0.0;
  for (int64_t m = 0; m < M; ++m) {
    const T *row = logits + (b * M + m) * V;
    double zmax = -INFINITY;
    for (int64_t j = 0; j < CW; ++j) {
      const int64_t at = m * CW + j;
      const int32_t first = verbalizer_token(s, labelWords, m, j, 0);
      if (first < 0)
        continue;
      double v = row[first];
      w.argmax[at] = first;
      int64_t n = 1;
      for (int64_t k = 1; k < K && verbalizer_token(s, labelWords, m, j, k) >= 0; ++k, ++n) {
        const double x = row[verbalizer_token(s, labelWords, m, j, k)];
        if (reduce[m] == WordReduce::Mean)
          v += x;
        else if (reduce[m] == WordReduce::Max && x > v)
          v = x, w.argmax[at] = verbalizer_token(s, labelWords, m, j, k);
      }
      if (reduce[m] == WordReduce::Mean)
        v /= (double)n;
      w.z[at] = v;
      zmax = zmax < v ? v : zmax; // std::max's choice
    }
    double sum = 0;
    for (int64_t j = 0; j < CW; ++j)
      if (verbalizer_token(s, labelWords, m, j, 0) >= 0)
        sum += (w.p[m * CW + j] = std::exp(w.z[m * CW + j] - zmax));
    double r = 0;
    for (int64_t j = 0; j < CW; ++j) {
      const int64_t at = m * CW + j;
      const bool valid = verbalizer_token(s, labelWords, m, j, 0) >= 0;
      w.p[at] = valid ? w.p[at] / sum : 0.0;
      wordProbs[(b * M + m) * CW + j] = (T)w.p[at];
      w.q[at] = valid ? w.p[at] / (double)calibration[at] : 0.0;
      r += w.q[at];
    }
    w.R[m] = r;
    for (int64_t j = 0; j < CW; ++j) {
      const int64_t at = m * CW + j;
      w.q[at] /= r;
      if (verbalizer_token(s, labelWords, m, j, 0) >= 0)
        w.sc[j / W] += std::log(w.q[at] + 1e-15) / (double)wordsOf[m * C + j / W];
    }
  }
  for (int64_t c = 0; c < C; ++c)
    scores[b * C + c] = (T)w.sc[c];
}

/// log(sum(exp(scores))) of the example w.sc holds (max-shifted).
BMRT_HD double verbalizer_lse(const VerbalizerShape &s, VerbalizerScratch w) {
  double smax = w.sc[0]; // std::max_element's: the first largest
  for (int64_t c = 1; c < s.labels; ++c)
    if (smax < w.sc[c])
      smax = w.sc[c];
  double e = 0;
  for (int64_t c = 0; c < s.labels; ++c)
    e += std::exp(w.sc[c] - smax);
  return smax + std::log(e);
}

/// Example b's backward into its gradient rows drows [M, V], which hold
/// zeros: back through the cross-entropy (label, lse = verbalizer_lse),
/// log, the renormalisation, the calibration, the softmax and the reduce of
/// each word's tokens, times scale.
template <class T>
BMRT_HD void verbalizer_backward_example(const VerbalizerShape &s, const WordReduce *reduce,
                                         int32_t label, double lse, const int32_t *labelWords,
                                         const T *calibration, const int64_t *wordsOf,
                                         VerbalizerScratch w, double scale, T *drows) {
  const int64_t M = s.masks, C = s.labels, W = s.words, K = s.wordTokens, V = s.vocab,
                CW = C * W;
  for (int64_t c = 0; c < C; ++c)
    w.g[c] = (std::exp(w.sc[c] - lse) - (c == label ? 1.0 : 0.0)) * scale;
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t j = 0; j < CW; ++j)
      w.dq[j] = 0.0, w.dp[j] = 0.0;
    double dot = 0;
    for (int64_t j = 0; j < CW; ++j) {
      const int64_t at = m * CW + j;
      if (verbalizer_token(s, labelWords, m, j, 0) < 0)
        continue;
      w.dq[j] = w.g[j / W] / (double)wordsOf[m * C + j / W] / (w.q[at] + 1e-15);
      dot += w.dq[j] * w.q[at];
    }
    double pd = 0;
    for (int64_t j = 0; j < CW; ++j) {
      const int64_t at = m * CW + j;
      if (verbalizer_token(s, labelWords, m, j, 0) < 0)
        continue;
      w.dp[j] = (w.dq[j] - dot) / w.R[m] / (double)calibration[at];
      pd += w.p[at] * w.dp[j];
    }
    T *drow = drows + m * V;
    for (int64_t j = 0; j < CW; ++j) {
      const int64_t at = m * CW + j;
      if (verbalizer_token(s, labelWords, m, j, 0) < 0)
        continue;
      const double dz = w.p[at] * (w.dp[j] - pd);
      if (reduce[m] == WordReduce::First) {
        drow[verbalizer_token(s, labelWords, m, j, 0)] += (T)dz;
      } else if (reduce[m] == WordReduce::Max) {
        drow[w.argmax[at]] += (T)dz;
      } else {
        int64_t n = 0;
        while (n < K && verbalizer_token(s, labelWords, m, j, n) >= 0)
          ++n;
        for (int64_t k = 0; k < n; ++k)
          drow[verbalizer_token(s, labelWords, m, j, k)] += (T)(dz / (double)n);
      }
    }
  }
}

} // namespace bmrt

#endif // BMRT_VERBALIZER_ELEMENT_H
