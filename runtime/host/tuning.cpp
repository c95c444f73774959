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
  const int64_t B = s.batch, M = s.masks, C = s.labels, W = s.words, K = s.wordTokens,
                V = s.vocab, CW = C * W;
  auto tokenAt = [&](int64_t m, int64_t j, int64_t k) { return labelWords[(m * CW + j) * K + k]; };
  // Checks first: nothing is written on bad input.
  for (int64_t b = 0; b < B; ++b)
    if (labels[b] != ignoreIndex && (labels[b] < 0 || labels[b] >= C))
      fail("verbalizer_loss: label " + std::to_string(labels[b]) + " of example " +
           std::to_string(b) + " is not a class index in [0, " + std::to_string(C) + ")");
  std::vector<int64_t> wordsOf(M * C, 0); // valid words per (mask, class)
  for (int64_t m = 0; m < M; ++m)
    for (int64_t j = 0; j < CW; ++j) {
      if (tokenAt(m, j, 0) < 0)
        continue;
      ++wordsOf[m * C + j / W];
      for (int64_t k = 0; k < K && tokenAt(m, j, k) >= 0; ++k)
        if (tokenAt(m, j, k) >= V)
          fail("verbalizer_loss: label word token " + std::to_string(tokenAt(m, j, k)) +
               " is outside the vocabulary [0, " + std::to_string(V) + ")");
    }
  for (int64_t i = 0; i < M * C; ++i)
    if (wordsOf[i] == 0)
      fail("verbalizer_loss: class " + std::to_string(i % C) + " has no label words at mask " +
           std::to_string(i / C));

  // Per example: each mask's word logits z, probabilities p, calibrated and
  // renormalised q (and its normaliser R), and the token that gave a max.
  std::vector<double> z(M * CW), p(M * CW), q(M * CW), R(M), sc(C), g(C);
  std::vector<int32_t> argmax(M * CW);
  for (int64_t b = 0; b < B; ++b) {
    std::fill(sc.begin(), sc.end(), 0.0);
    for (int64_t m = 0; m < M; ++m) {
      const T *row = logits + (b * M + m) * V;
      double zmax = -INFINITY;
      for (int64_t j = 0; j < CW; ++j) {
        const int64_t at = m * CW + j;
        if (tokenAt(m, j, 0) < 0)
          continue;
        double v = row[tokenAt(m, j, 0)];
        argmax[at] = tokenAt(m, j, 0);
        int64_t n = 1;
        for (int64_t k = 1; k < K && tokenAt(m, j, k) >= 0; ++k, ++n) {
          const double x = row[tokenAt(m, j, k)];
          if (reduce[m] == WordReduce::Mean)
            v += x;
          else if (reduce[m] == WordReduce::Max && x > v)
            v = x, argmax[at] = tokenAt(m, j, k);
        }
        if (reduce[m] == WordReduce::Mean)
          v /= (double)n;
        z[at] = v;
        zmax = std::max(zmax, v);
      }
      double sum = 0;
      for (int64_t j = 0; j < CW; ++j)
        if (tokenAt(m, j, 0) >= 0)
          sum += (p[m * CW + j] = std::exp(z[m * CW + j] - zmax));
      double r = 0;
      for (int64_t j = 0; j < CW; ++j) {
        const int64_t at = m * CW + j;
        const bool valid = tokenAt(m, j, 0) >= 0;
        p[at] = valid ? p[at] / sum : 0.0;
        wordProbs[(b * M + m) * CW + j] = (T)p[at];
        q[at] = valid ? p[at] / (double)calibration[at] : 0.0;
        r += q[at];
      }
      R[m] = r;
      for (int64_t j = 0; j < CW; ++j) {
        const int64_t at = m * CW + j;
        q[at] /= r;
        if (tokenAt(m, j, 0) >= 0)
          sc[j / W] += std::log(q[at] + 1e-15) / (double)wordsOf[m * C + j / W];
      }
    }
    for (int64_t c = 0; c < C; ++c)
      scores[b * C + c] = (T)sc[c];
    const bool counted = labels[b] != ignoreIndex;
    double lse = -INFINITY;
    if (counted) {
      const double smax = *std::max_element(sc.begin(), sc.end());
      double e = 0;
      for (int64_t c = 0; c < C; ++c)
        e += std::exp(sc[c] - smax);
      lse = smax + std::log(e);
      losses[b] = (T)(lse - sc[labels[b]]);
    } else {
      losses[b] = (T)0;
    }
    if (!dlogits)
      continue;
    T *drows = dlogits + b * M * V;
    std::fill(drows, drows + M * V, (T)0);
    if (!counted)
      continue;
    for (int64_t c = 0; c < C; ++c)
      g[c] = (std::exp(sc[c] - lse) - (c == labels[b] ? 1.0 : 0.0)) * scale;
    for (int64_t m = 0; m < M; ++m) {
      // Back through log, the renormalisation, the calibration, the softmax
      // and the reduce of each word's tokens.
      std::vector<double> dq(CW, 0.0), dp(CW, 0.0);
      double dot = 0;
      for (int64_t j = 0; j < CW; ++j) {
        const int64_t at = m * CW + j;
        if (tokenAt(m, j, 0) < 0)
          continue;
        dq[j] = g[j / W] / (double)wordsOf[m * C + j / W] / (q[at] + 1e-15);
        dot += dq[j] * q[at];
      }
      double pd = 0;
      for (int64_t j = 0; j < CW; ++j) {
        const int64_t at = m * CW + j;
        if (tokenAt(m, j, 0) < 0)
          continue;
        dp[j] = (dq[j] - dot) / R[m] / (double)calibration[at];
        pd += p[at] * dp[j];
      }
      T *drow = drows + m * V;
      for (int64_t j = 0; j < CW; ++j) {
        const int64_t at = m * CW + j;
        if (tokenAt(m, j, 0) < 0)
          continue;
        const double dz = p[at] * (dp[j] - pd);
        if (reduce[m] == WordReduce::First) {
          drow[tokenAt(m, j, 0)] += (T)dz;
        } else if (reduce[m] == WordReduce::Max) {
          drow[argmax[at]] += (T)dz;
        } else {
          int64_t n = 0;
          while (n < K && tokenAt(m, j, n) >= 0)
            ++n;
          for (int64_t k = 0; k < n; ++k)
            drow[tokenAt(m, j, k)] += (T)(dz / (double)n);
        }
      }
    }
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
