//===- kernels_errors_test.cpp - Error messages of the host kernels -------===//
//
// A user can cause these (a token id outside the vocabulary, a prompt longer
// than the KV cache); the message is all they see, so it must name the bad
// value, where it is, and the limit. Numerics are checked against torch in
// kernels_reference_test.py.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using bmrt::Context;

// The message of the bmrt::Error thrown by f ("" when nothing is thrown).
template <class F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const bmrt::Error &e) {
    return e.what();
  }
  return "";
}

TEST(KernelsErrors, EmbeddingNamesTheBadIdItsRowAndTheVocab) {
  Context ctx;
  const int64_t vocab = 5, C = 3;
  std::vector<float> table(vocab * C, 1.0f), out(4 * C, 0.0f);
  const int32_t ids[4] = {0, 4, 7, 1};
  const std::string msg = errorOf(
      [&] { bmrt::embedding_forward(ctx, out.data(), ids, table.data(), 4, vocab, C); });
  EXPECT_EQ(msg, "token id 7 at row 2 is outside the vocabulary [0, 5)");
  for (float x : out) // nothing is written before the ids are validated
    EXPECT_EQ(x, 0.0f);
}

TEST(KernelsErrors, EmbeddingRejectsNegativeIds) {
  Context ctx;
  std::vector<double> table(6, 0.0), out(2, 0.0);
  const int32_t ids[1] = {-1};
  EXPECT_EQ(errorOf([&] {
              bmrt::embedding_forward(ctx, out.data(), ids, table.data(), 1, 3, 2);
            }),
            "token id -1 at row 0 is outside the vocabulary [0, 3)");
}

TEST(KernelsErrors, EmbeddingAcceptsTheLastId) {
  Context ctx;
  std::vector<float> table = {1, 2, 3, 4, 5, 6}, out(2, 0.0f);
  const int32_t ids[1] = {2};
  bmrt::embedding_forward(ctx, out.data(), ids, table.data(), 1, 3, 2);
  EXPECT_EQ(out[0], 5.0f);
  EXPECT_EQ(out[1], 6.0f);
}

TEST(KernelsErrors, AttentionPastTheCacheCapacity) {
  Context ctx;
  bmrt::AttentionArgs a;
  a.rows = 4;
  a.heads = a.kvHeads = 1;
  a.headDim = 2;
  a.cacheCapacity = 8;
  a.start = 6;
  std::vector<float> buf(64, 0.0f);
  EXPECT_EQ(errorOf([&] {
              bmrt::attention_forward(ctx, a, buf.data(), buf.data(), buf.data(),
                                      buf.data(), buf.data(), buf.data());
            }),
            "attention_forward: rows [6, 10) do not fit the KV cache capacity 8");
}

TEST(KernelsErrors, AttentionHeadsNotAMultipleOfKvHeads) {
  Context ctx;
  bmrt::AttentionArgs a;
  a.rows = 1;
  a.heads = 6;
  a.kvHeads = 4;
  a.headDim = 2;
  a.cacheCapacity = 1;
  std::vector<float> buf(64, 0.0f);
  EXPECT_EQ(errorOf([&] {
              bmrt::attention_forward(ctx, a, buf.data(), buf.data(), buf.data(),
                                      buf.data(), buf.data(), buf.data());
            }),
            "attention_forward: heads (6) is not a multiple of kvHeads (4)");
}

TEST(KernelsErrors, RotaryOddHeadDim) {
  Context ctx;
  std::vector<float> x(6, 0.0f);
  const int32_t pos[1] = {0};
  EXPECT_EQ(errorOf([&] {
              bmrt::rotary_forward(ctx, x.data(), x.data(), pos, 1, 2, 3, 6, 10000.0f);
            }),
            "rotary_forward: head dimension must be even and >= 2 (got 3)");
}

} // namespace
