//===- tuning_test.cpp - The prompt-tuning kernels (bmrt/tuning.h) --------===//
//
// The soft embedding and the mask-row gather by hand; the verbalizer loss's
// dlogits against central finite differences of its own loss (in double),
// padding examples, and the error messages of bad labels, label words and
// ids. Against OpenPrompt's semantics in torch: test/e2e/check_tune.py.
//
//===----------------------------------------------------------------------===//
#include "bmrt/tuning.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

using bmrt::Context;
using bmrt::WordReduce;

template <class F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const bmrt::Error &e) {
    return e.what();
  }
  return "";
}

TEST(Tuning, SoftEmbeddingReadsIdsPastTheVocabularyFromTheSoftTable) {
  Context ctx;
  const std::vector<float> table = {0, 1, 10, 11, 20, 21}; // 3 x 2
  const std::vector<float> soft = {100, 101, 200, 201};    // 2 x 2
  const int32_t ids[3] = {2, 4, 3};
  std::vector<float> out(6, -1);
  bmrt::soft_embedding_forward(ctx, out.data(), ids, table.data(), soft.data(), 3, 3, 2, 2);
  EXPECT_EQ(out, (std::vector<float>{20, 21, 200, 201, 100, 101}));
  std::vector<float> dtable(6, 0), dsoft(4, 0);
  const std::vector<float> dy = {1, 2, 3, 4, 5, 6};
  bmrt::soft_embedding_backward(ctx, dtable.data(), dsoft.data(), ids, dy.data(), 3, 3, 2, 2);
  EXPECT_EQ(dtable, (std::vector<float>{0, 0, 0, 0, 1, 2}));
  EXPECT_EQ(dsoft, (std::vector<float>{5, 6, 3, 4}));
  // A frozen table gets nothing; the soft rows still do.
  bmrt::soft_embedding_backward<float>(ctx, nullptr, dsoft.data(), ids, dy.data(), 3, 3, 2, 2);
  EXPECT_EQ(dsoft, (std::vector<float>{10, 12, 6, 8}));
  const int32_t bad[2] = {1, 5};
  EXPECT_EQ(errorOf([&] {
              bmrt::soft_embedding_forward(ctx, out.data(), bad, table.data(), soft.data(), 2, 3,
                                           2, 2);
            }),
            "soft_embedding_forward: id 5 at row 1 is outside [0, 5) (vocabulary plus soft "
            "tokens)");
}

TEST(Tuning, GatherRowsTakesEachExamplesMaskRowsAndScattersBack) {
  Context ctx;
  std::vector<float> x(2 * 3 * 2); // [B=2, T=3, D=2]
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = (float)i;
  const int32_t pos[4] = {2, 0, 1, 1}; // [B, M=2]
  std::vector<float> rows(8);
  bmrt::gather_rows_forward(ctx, rows.data(), x.data(), pos, 2, 3, 2, 2);
  EXPECT_EQ(rows, (std::vector<float>{4, 5, 0, 1, 8, 9, 8, 9}));
  std::vector<float> dx(12, 0);
  const std::vector<float> dr = {1, 1, 2, 2, 3, 3, 4, 4};
  bmrt::gather_rows_backward(ctx, dx.data(), dr.data(), pos, 2, 3, 2, 2);
  EXPECT_EQ(dx, (std::vector<float>{2, 2, 0, 0, 1, 1, 0, 0, 7, 7, 0, 0}));
  const int32_t bad[4] = {0, 3, 1, 1};
  EXPECT_EQ(errorOf([&] { bmrt::gather_rows_forward(ctx, rows.data(), x.data(), bad, 2, 3, 2, 2); }),
            "gather_rows_forward: mask position 3 of example 0 is outside [0, 3)");
}

// Two examples, two masks (reduce first / mean, then max), 3 classes with
// up to 2 words of up to 3 tokens, calibration on the second mask.
struct Case {
  bmrt::VerbalizerShape s;
  std::vector<WordReduce> reduce;
  std::vector<int32_t> labels, words;
  std::vector<double> calibration, logits;
  Case(WordReduce r0, WordReduce r1) {
    s.batch = 2, s.masks = 2, s.labels = 3, s.words = 2, s.wordTokens = 3, s.vocab = 7;
    reduce = {r0, r1};
    labels = {2, 0};
    words.assign(2 * 3 * 2 * 3, -1);
    auto word = [&](int m, int c, int w, std::vector<int32_t> t) {
      for (size_t k = 0; k < t.size(); ++k)
        words[((m * 3 + c) * 2 + w) * 3 + k] = t[k];
    };
    word(0, 0, 0, {1}), word(0, 0, 1, {2, 3}), word(0, 1, 0, {4, 5, 6}), word(0, 2, 0, {0, 3});
    word(1, 0, 0, {6}), word(1, 1, 0, {5, 1}), word(1, 1, 1, {2}), word(1, 2, 0, {4, 4, 0});
    calibration = {1, 1, 1, 1, 1, 1, 0.5, 1, 0.2, 0.7, 0.9, 1};
    for (int i = 0; i < 2 * 2 * 7; ++i)
      logits.push_back(std::sin(1.7 * i) * 2.0);
  }
  double loss(const std::vector<double> &l, std::vector<double> *dlogits) const {
    Context ctx;
    std::vector<double> losses(2), scores(6), wp(2 * 2 * 3 * 2);
    if (dlogits)
      dlogits->assign(l.size(), 0);
    bmrt::verbalizer_loss_forward_backward<double>(
        ctx, s, reduce.data(), losses.data(), scores.data(), wp.data(),
        dlogits ? dlogits->data() : nullptr, l.data(), labels.data(), words.data(),
        calibration.data(), -100, 0.5);
    return (losses[0] + losses[1]) * 0.5;
  }
};

TEST(Tuning, VerbalizerLossGradientMatchesFiniteDifferences) {
  for (WordReduce r0 : {WordReduce::First, WordReduce::Mean})
    for (WordReduce r1 : {WordReduce::Max, WordReduce::Mean}) {
      Case c(r0, r1);
      std::vector<double> d;
      c.loss(c.logits, &d);
      const double h = 1e-6;
      for (size_t i = 0; i < c.logits.size(); ++i) {
        std::vector<double> p = c.logits, m = c.logits;
        p[i] += h, m[i] -= h;
        const double fd = (c.loss(p, nullptr) - c.loss(m, nullptr)) / (2 * h);
        EXPECT_NEAR(d[i], fd, 1e-7) << "logit " << i << " reduce " << (int)r0 << "/" << (int)r1;
      }
    }
}

TEST(Tuning, VerbalizerWordProbabilitiesSumToOneAndPaddingIsIgnored) {
  Case c(WordReduce::First, WordReduce::Max);
  c.labels = {1, -100};
  Context ctx;
  std::vector<double> losses(2), scores(6), wp(24), d(c.logits.size(), 7.0);
  bmrt::verbalizer_loss_forward_backward<double>(ctx, c.s, c.reduce.data(), losses.data(),
                                                 scores.data(), wp.data(), d.data(),
                                                 c.logits.data(), c.labels.data(), c.words.data(),
                                                 c.calibration.data(), -100, 1.0);
  for (int bm = 0; bm < 4; ++bm) {
    double sum = 0;
    for (int j = 0; j < 6; ++j)
      sum += wp[bm * 6 + j];
    EXPECT_NEAR(sum, 1.0, 1e-12);
  }
  EXPECT_EQ(wp[3], 0.0) << "a padded word (class 1, word 1 at mask 0) has probability 0";
  EXPECT_EQ(losses[1], 0.0);
  for (int i = 14; i < 28; ++i)
    EXPECT_EQ(d[i], 0.0) << "the padding example's rows get no gradient";
  EXPECT_GT(losses[0], 0.0);
}

TEST(Tuning, VerbalizerErrorsNameTheLabelAndTheWord) {
  Case c(WordReduce::First, WordReduce::Max);
  auto run = [&] { return errorOf([&] { c.loss(c.logits, nullptr); }); };
  c.labels = {3, 0};
  EXPECT_EQ(run(), "verbalizer_loss: label 3 of example 0 is not a class index in [0, 3)");
  c.labels = {0, 0};
  c.words[((1 * 3 + 1) * 2 + 1) * 3] = 9;
  EXPECT_EQ(run(), "verbalizer_loss: label word token 9 is outside the vocabulary [0, 7)");
  Case e(WordReduce::First, WordReduce::Max);
  for (int w = 0; w < 2; ++w)
    e.words[((0 * 3 + 2) * 2 + w) * 3] = -1, e.words[((0 * 3 + 2) * 2 + w) * 3 + 1] = -1;
  EXPECT_EQ(errorOf([&] { e.loss(e.logits, nullptr); }),
            "verbalizer_loss: class 2 has no label words at mask 0");
}

} // namespace
