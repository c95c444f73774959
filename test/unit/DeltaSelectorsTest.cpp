//===- DeltaSelectorsTest.cpp - Selectors of delta tuning -----------------===//
//
// passes/DeltaSelectors.h: suffix, glob and `re:` matching on dotted paths,
// per-iteration selectors, malformed ones and near misses.
//
//===----------------------------------------------------------------------===//
#include "passes/DeltaSelectors.h"

#include <gtest/gtest.h>

using namespace mlir::bmb;

TEST(DeltaSelectors, SuffixOnSegmentBoundaries) {
  EXPECT_TRUE(selectorMatches("attn.q", "h.attn.q"));
  EXPECT_TRUE(selectorMatches("attn.q", "attn.q"));
  EXPECT_TRUE(selectorMatches("q", "h.attn.q"));
  EXPECT_FALSE(selectorMatches("attn.q", "h.xattn.q"));
  EXPECT_FALSE(selectorMatches("attn", "h.attn.q"));
  EXPECT_FALSE(selectorMatches("h.attn.q", "attn.q"));
}

TEST(DeltaSelectors, Globs) {
  EXPECT_TRUE(selectorMatches("*.attn.*", "h.attn.q"));
  EXPECT_FALSE(selectorMatches("*.attn.*", "enc.h.attn.q"));
  EXPECT_TRUE(selectorMatches("**.attn.*", "enc.h.attn.q"));
  EXPECT_TRUE(selectorMatches("h.*", "h.mlp"));
  EXPECT_FALSE(selectorMatches("h.*", "h.mlp.up"));
}

TEST(DeltaSelectors, RegularExpressionsMatchTheWholePath) {
  EXPECT_TRUE(selectorMatches("re:h\\.attn\\.(q|v)", "h.attn.v"));
  EXPECT_FALSE(selectorMatches("re:h\\.attn\\.(q|v)", "h.attn.k"));
  EXPECT_FALSE(selectorMatches("re:attn", "h.attn"));
  EXPECT_FALSE(selectorMatches("re:(", "h.attn"));
  EXPECT_NE(checkSelector("re:("), "");
  EXPECT_EQ(checkSelector("re:.*"), "");
  EXPECT_NE(checkSelector(""), "");
}

TEST(DeltaSelectors, IterationIndices) {
  EXPECT_TRUE(selectsIterations("h.0.attn.q"));
  EXPECT_FALSE(selectsIterations("h.attn.q"));
  EXPECT_FALSE(selectsIterations("re:h\\.[0-9]+"));
  EXPECT_TRUE(selectsIterations("h.{0,3}.attn.*"));
}

TEST(DeltaSelectors, ParseIterations) {
  IterationSelector is;
  EXPECT_EQ(parseIterations("h.{3,0,1-2,2}.attn.*", is), "");
  EXPECT_EQ(is.layers, "h.attn.*");
  EXPECT_EQ(is.repeat, "h");
  EXPECT_EQ(is.iterations, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(parseIterations("model.h.1.mlp", is), "");
  EXPECT_EQ(is.layers, "model.h.mlp");
  EXPECT_EQ(is.repeat, "model.h");
  EXPECT_EQ(is.iterations, (std::vector<int64_t>{1}));
  EXPECT_EQ(parseIterations("attn.q", is), "");
  EXPECT_EQ(is.layers, "attn.q");
  EXPECT_TRUE(is.iterations.empty());
  EXPECT_EQ(parseIterations("0.attn", is), "'0.attn': an iteration index must follow a repeat's name");
  EXPECT_EQ(parseIterations("h.1.blk.2.q", is),
            "'h.1.blk.2.q' indexes the iterations of more than one repeat; one index segment is "
            "supported");
  EXPECT_EQ(parseIterations("h.{3-1}.q", is), "'h.{3-1}.q': empty iteration range '3-1'");
  EXPECT_EQ(parseIterations("h.{a}.q", is),
            "'h.{a}.q': malformed iteration index 'a' (a number or a range A-B)");
}

TEST(DeltaSelectors, NearMisses) {
  std::vector<std::string> paths = {"h.attn.q", "h.attn.k", "h.mlp.up", "wte"};
  EXPECT_EQ(nearMisses("attn.qq", paths), "'h.attn.q' or 'h.attn.k'");
  EXPECT_EQ(nearMisses("mlp.upp", paths), "'h.mlp.up'");
  EXPECT_EQ(nearMisses("zzzzzzzzzz", paths), "");
}
