//===- ShapeRulesTest.cpp - The shared shape rules ------------------------===//
//
// Every rule with a passing case and its error cases, messages compared
// exactly: Sema shows them to users and the op verifiers print them, so a
// change in wording should be a deliberate one.
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/ShapeRules.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

using namespace bmb::shapes;

namespace {

Sig f32(Shape s) { return {DType::F32, std::move(s)}; }
Sig bf16(Shape s) { return {DType::BF16, std::move(s)}; }
Sig i32(Shape s) { return {DType::I32, std::move(s)}; }

/// The rule succeeded with exactly these results.
void expectOk(const Result &r, const std::vector<Sig> &want) {
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.results.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(str(r.results[i]), str(want[i])) << "result #" << i;
}
void expectOk(const Result &r, const Sig &want) {
  expectOk(r, std::vector<Sig>{want});
}

void expectError(const Result &r, const std::string &message) {
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error, message);
  EXPECT_TRUE(r.results.empty());
}

TEST(ShapeRulesTest, DTypes) {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,
                  DType::I32, DType::I64})
    EXPECT_EQ(parseDType(spelling(t)), t);
  EXPECT_EQ(parseDType("f8"), std::nullopt);
  EXPECT_EQ(parseDType("F32"), std::nullopt);
  EXPECT_TRUE(isFloat(DType::BF16));
  EXPECT_FALSE(isFloat(DType::I8));
  EXPECT_TRUE(isInteger(DType::I64));
  EXPECT_FALSE(isInteger(DType::F16));
  EXPECT_EQ(byteSize(DType::F32), 4);
  EXPECT_EQ(byteSize(DType::F64), 8);
  EXPECT_EQ(byteSize(DType::BF16), 2);
  EXPECT_EQ(byteSize(DType::F16), 2);
  EXPECT_EQ(byteSize(DType::I8), 1);
  EXPECT_EQ(byteSize(DType::I32), 4);
  EXPECT_EQ(byteSize(DType::I64), 8);
}

TEST(ShapeRulesTest, Printing) {
  EXPECT_EQ(str(Shape{8, 256, 768}), "[8, 256, 768]");
  EXPECT_EQ(str(Shape{}), "[]");
  EXPECT_EQ(str(bf16({4})), "bf16[4]");
  EXPECT_EQ(str(f32({})), "f32[]");
}

TEST(ShapeRulesTest, NumElements) {
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({8, 256, 768}), 1572864);
  EXPECT_EQ(numElements({0, 5}), 0);
  EXPECT_EQ(numElements({int64_t(1) << 62, 2}), std::nullopt);
  EXPECT_EQ(numElements({int64_t(1) << 31, int64_t(1) << 31}), int64_t(1)
                                                                   << 62);
  EXPECT_EQ(numElements({int64_t(1) << 31, int64_t(1) << 31, 2}), std::nullopt);
  EXPECT_EQ(numElements({int64_t(1) << 32, int64_t(1) << 32}), std::nullopt);
  EXPECT_EQ(numElements({std::numeric_limits<int64_t>::max(), 1}),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(numElements({3, -1}), std::nullopt);
}

TEST(ShapeRulesTest, NormalizeAxis) {
  EXPECT_EQ(normalizeAxis(-1, 3), 2);
  EXPECT_EQ(normalizeAxis(0, 3), 0);
  EXPECT_EQ(normalizeAxis(-3, 3), 0);
  EXPECT_EQ(normalizeAxis(3, 3), std::nullopt);
  EXPECT_EQ(normalizeAxis(-4, 3), std::nullopt);
  EXPECT_EQ(normalizeAxis(0, 0), std::nullopt);
}

TEST(ShapeRulesTest, Embedding) {
  expectOk(embedding(i32({8, 256}), f32({50257, 768})), f32({8, 256, 768}));
  expectOk(embedding(i32({}), bf16({10, 4})), bf16({4}));
  expectError(
      embedding(f32({8}), f32({10, 4})),
      "embedding: ids must have an integer dtype, got f32 (ids f32[8])");
  expectError(embedding(i32({8}), f32({4})),
              "embedding: weight must have rank 2 [num, dim], got rank 1 "
              "(weight f32[4])");
  expectError(
      embedding(i32({8}), i32({10, 4})),
      "embedding: weight must have a float dtype, got i32 (weight i32[10, 4])");
}

TEST(ShapeRulesTest, Linear) {
  Sig b({DType::F32, {2304}});
  expectOk(linear(f32({8, 256, 768}), f32({2304, 768}), &b),
           f32({8, 256, 2304}));
  expectOk(linear(f32({768}), f32({10, 768}), nullptr), f32({10}));
  expectError(
      linear(f32({8, 256, 768}), f32({2304, 512}), nullptr),
      "linear: input's last dimension 768 does not match the weight's "
      "in-dimension 512 (input f32[8, 256, 768], weight f32[2304, 512])");
  Sig badBias = f32({100});
  expectError(
      linear(f32({8, 768}), f32({2304, 768}), &badBias),
      "linear: bias shape [100] does not match the weight's out-dimension "
      "2304 (bias f32[100], weight f32[2304, 768])");
  Sig bfBias = bf16({2304});
  expectError(linear(f32({8, 768}), f32({2304, 768}), &bfBias),
              "linear: bias dtype bf16 does not match the weight's f32 "
              "(weight f32[2304, 768], bias bf16[2304])");
  expectError(linear(f32({8, 768}), bf16({16, 768}), nullptr),
              "linear: weight dtype bf16 does not match the input's f32 "
              "(input f32[8, 768], weight bf16[16, 768])");
  expectError(linear(f32({8, 768}), f32({768}), nullptr),
              "linear: weight must have rank 2 [out, in], got rank 1 (weight "
              "f32[768])");
  expectError(linear(f32({}), f32({4, 4}), nullptr),
              "linear: input must have rank >= 1, got a scalar (input f32[])");
  expectError(linear(i32({4}), f32({4, 4}), nullptr),
              "linear: input must have a float dtype, got i32 (input i32[4])");
  // lm_head is the same rule under its own name.
  expectError(linear(f32({8, 64}), f32({512, 32}), nullptr, "lm_head"),
              "lm_head: input's last dimension 64 does not match the weight's "
              "in-dimension 32 (input f32[8, 64], weight f32[512, 32])");
}

TEST(ShapeRulesTest, Norms) {
  Sig w = f32({768}), b = f32({768});
  expectOk(layerNorm(f32({8, 256, 768}), w, &b, 1e-5), f32({8, 256, 768}));
  expectOk(layerNorm(f32({768}), w, nullptr, 1e-12), f32({768}));
  expectError(layerNorm(f32({8, 768}), f32({512}), nullptr, 1e-5),
              "layernorm: weight shape [512] does not match the input's last "
              "dimension 768 (input f32[8, 768], weight f32[512])");
  Sig shortB = f32({512});
  expectError(layerNorm(f32({8, 768}), w, &shortB, 1e-5),
              "layernorm: bias shape [512] does not match the input's last "
              "dimension 768 (input f32[8, 768], bias f32[512])");
  expectError(layerNorm(f32({8, 768}), bf16({768}), nullptr, 1e-5),
              "layernorm: weight dtype bf16 does not match the input's f32 "
              "(input f32[8, 768], weight bf16[768])");
  expectError(layerNorm(f32({8, 768}), w, nullptr, 0),
              "layernorm: eps must be positive and finite, got 0");
  expectError(layerNorm(f32({8, 768}), w, nullptr,
                        std::numeric_limits<double>::infinity()),
              "layernorm: eps must be positive and finite, got inf");
  expectError(
      layerNorm(f32({}), w, nullptr, 1e-5),
      "layernorm: input must have rank >= 1, got a scalar (input f32[])");
  expectOk(rmsNorm(bf16({4, 64}), bf16({64}), 1e-6), bf16({4, 64}));
  expectError(rmsNorm(f32({4, 64}), f32({4, 64}), 1e-6),
              "rmsnorm: weight shape [4, 64] does not match the input's last "
              "dimension 64 (input f32[4, 64], weight f32[4, 64])");
  expectError(rmsNorm(f32({4, 64}), f32({64}), -1e-6),
              "rmsnorm: eps must be positive and finite, got -1e-06");
  expectError(
      rmsNorm(i32({4, 64}), f32({64}), 1e-6),
      "rmsnorm: input must have a float dtype, got i32 (input i32[4, 64])");
}

TEST(ShapeRulesTest, Attention) {
  Sig q = f32({2, 16, 64}), kv = f32({2, 16, 32}), mask = i32({2, 16});
  expectOk(attention(q, q, q, nullptr, 4, 4), q);
  expectOk(attention(q, kv, kv, &mask, 4, 2), q); // grouped-query
  expectOk(attention(q, f32({2, 8, 64}), f32({2, 8, 64}), nullptr, 4, 4),
           q); // S != T
  expectError(attention(q, q, q, nullptr, 0, 1),
              "attention: heads must be positive, got 0");
  expectError(attention(q, q, q, nullptr, 4, 0),
              "attention: kv_heads must be positive, got 0");
  expectError(attention(q, q, q, nullptr, 4, 3),
              "attention: heads 4 is not a multiple of kv_heads 3");
  expectError(
      attention(f32({16, 64}), q, q, nullptr, 4, 4),
      "attention: query must have rank 3 [B, T, heads * head_dim], got rank 2 "
      "(query f32[16, 64])");
  expectError(
      attention(q, f32({16, 64}), q, nullptr, 4, 4),
      "attention: key must have rank 3 [B, S, kv_heads * head_dim], got rank 2 "
      "(key f32[16, 64])");
  expectError(attention(i32({2, 16, 64}), q, q, nullptr, 4, 4),
              "attention: query must have a float dtype, got i32 (query i32[2, "
              "16, 64])");
  expectError(attention(q, bf16({2, 16, 64}), q, nullptr, 4, 4),
              "attention: key dtype bf16 does not match the query's f32 "
              "(query f32[2, 16, 64], key bf16[2, 16, 64])");
  expectError(attention(q, q, bf16({2, 16, 64}), nullptr, 4, 4),
              "attention: value dtype bf16 does not match the key's f32 "
              "(key f32[2, 16, 64], value bf16[2, 16, 64])");
  expectError(
      attention(f32({2, 16, 66}), q, q, nullptr, 4, 4),
      "attention: query's last dimension 66 is not divisible by heads 4 "
      "(query f32[2, 16, 66])");
  expectError(attention(q, f32({3, 16, 64}), f32({3, 16, 64}), nullptr, 4, 4),
              "attention: key's batch dimension 3 does not match the query's 2 "
              "(query f32[2, 16, 64], key f32[3, 16, 64])");
  expectError(
      attention(q, q, q, nullptr, 4, 2),
      "attention: key's last dimension 64 does not match kv_heads * head_dim "
      "= 2 * 16 = 32 (query f32[2, 16, 64], key f32[2, 16, 64])");
  expectError(
      attention(q, q, f32({2, 8, 64}), nullptr, 4, 4),
      "attention: value shape [2, 8, 64] does not match the key's [2, 16, 64] "
      "(key f32[2, 16, 64], value f32[2, 8, 64])");
  Sig shortMask = i32({2, 8});
  expectError(attention(q, q, q, &shortMask, 4, 4),
              "attention: mask must have shape [B, S] = [2, 16], got [2, 8] "
              "(query f32[2, 16, 64], key f32[2, 16, 64], mask i32[2, 8])");
  Sig floatMask = f32({2, 16});
  expectError(
      attention(q, q, q, &floatMask, 4, 4),
      "attention: mask must have an integer dtype, got f32 (mask f32[2, 16])");
}

TEST(ShapeRulesTest, Rotary) {
  expectOk(rotary(f32({4, 64, 64}), i32({64}), 4), f32({4, 64, 64}));
  expectError(
      rotary(f32({2, 16, 60}), i32({16}), 4),
      "rotary: head_dim 15 must be even (input f32[2, 16, 60], heads 4)");
  expectError(rotary(f32({2, 16, 64}), i32({8}), 4),
              "rotary: positions must have shape [T] = [16], got [8] "
              "(input f32[2, 16, 64], positions i32[8])");
  expectError(rotary(f32({2, 16, 64}), f32({16}), 4),
              "rotary: positions must have an integer dtype, got f32 "
              "(positions f32[16])");
  expectError(rotary(f32({2, 16, 66}), i32({16}), 4),
              "rotary: input's last dimension 66 is not divisible by heads 4 "
              "(input f32[2, 16, 66])");
  expectError(
      rotary(f32({16, 64}), i32({16}), 4),
      "rotary: input must have rank 3 [B, T, heads * head_dim], got rank 2 "
      "(input f32[16, 64])");
  expectError(rotary(f32({2, 16, 64}), i32({16}), 0),
              "rotary: heads must be positive, got 0");
}

TEST(ShapeRulesTest, ElementWise) {
  expectOk(unaryFloat(bf16({3, 4}), "gelu"), bf16({3, 4}));
  expectOk(unaryFloat(f32({}), "tanh"), f32({}));
  expectError(unaryFloat(i32({8}), "gelu"),
              "gelu: input must have a float dtype, got i32 (input i32[8])");
  expectOk(softmax(f32({8, 16}), -1), f32({8, 16}));
  expectError(softmax(f32({8, 16}), 2),
              "softmax: axis 2 is out of range for rank 2 (input f32[8, 16])");
  expectError(softmax(f32({}), 0),
              "softmax: input must have rank >= 1, got a scalar (input f32[])");
  expectOk(dropout(f32({8}), 0.0), f32({8}));
  expectOk(dropout(f32({8}), 0.1), f32({8}));
  expectError(dropout(f32({8}), 1.0), "dropout: p must be in [0, 1), got 1");
  expectError(dropout(f32({8}), -0.5),
              "dropout: p must be in [0, 1), got -0.5");
  expectError(dropout(i32({8}), 0.1),
              "dropout: input must have a float dtype, got i32 (input i32[8])");
}

TEST(ShapeRulesTest, Broadcast) {
  expectOk(broadcast(f32({8, 256, 768}), f32({256, 768}), "add"),
           f32({8, 256, 768}));
  expectOk(broadcast(f32({8, 1, 768}), f32({256, 1}), "mul"),
           f32({8, 256, 768}));
  expectOk(broadcast(f32({}), f32({3}), "sub"), f32({3}));
  expectOk(broadcast(i32({4}), i32({4}), "add"), i32({4}));
  expectError(
      broadcast(f32({8, 256, 768}), f32({256, 512}), "add"),
      "add: lhs dimension 768 does not match rhs dimension 512 and neither "
      "is 1 (lhs f32[8, 256, 768], rhs f32[256, 512])");
  expectError(
      broadcast(f32({8}), bf16({8}), "mul"),
      "mul: operand dtypes differ: f32 and bf16 (lhs f32[8], rhs bf16[8])");
}

TEST(ShapeRulesTest, CrossEntropy) {
  expectOk(crossEntropy(bf16({8, 256, 512}), i32({8, 256})), f32({}));
  // An f64 program (precision = fp64) keeps its loss in f64.
  expectOk(crossEntropy(Sig{DType::F64, {8, 256, 512}}, i32({8, 256})), Sig{DType::F64, {}});
  expectError(
      crossEntropy(f32({8, 256, 512}), i32({8, 128})),
      "cross_entropy: targets shape [8, 128] does not match the logits' "
      "leading dimensions [8, 256] (logits f32[8, 256, 512], targets i32[8, "
      "128])");
  expectError(crossEntropy(f32({8, 512}), f32({8})),
              "cross_entropy: targets must have an integer dtype, got f32 "
              "(targets f32[8])");
  expectError(crossEntropy(i32({8, 512}), i32({8})),
              "cross_entropy: logits must have a float dtype, got i32 (logits "
              "i32[8, 512])");
}

TEST(ShapeRulesTest, Arange) {
  expectOk(arange(256), i32({256}));
  expectError(arange(0), "arange: length must be positive, got 0");
}

TEST(ShapeRulesTest, Take) {
  expectOk(take(f32({8, 128, 768}), 0, 1), f32({8, 768}));
  expectOk(take(f32({8, 128, 768}), -1, -2), f32({8, 768}));
  expectError(take(f32({8, 4, 16}), 4, 1),
              "take: index 4 is out of range for axis 1 of size 4 (input "
              "f32[8, 4, 16])");
  expectError(take(f32({8, 4}), 0, 2),
              "take: axis 2 is out of range for rank 2 (input f32[8, 4])");
  expectError(take(f32({}), 0, 0),
              "take: input must have rank >= 1, got a scalar (input f32[])");
}

TEST(ShapeRulesTest, Split) {
  expectOk(split(f32({8, 2304}), 3, -1),
           {f32({8, 768}), f32({8, 768}), f32({8, 768})});
  expectError(split(f32({8, 10}), 3, 1),
              "split: axis 1 of size 10 does not split into 3 equal parts "
              "(input f32[8, 10])");
  expectError(split(f32({8, 10}), 0, 1),
              "split: parts must be positive, got 0");
  expectError(split(f32({8, 10}), 2, 5),
              "split: axis 5 is out of range for rank 2 (input f32[8, 10])");
}

TEST(ShapeRulesTest, Reshape) {
  expectOk(reshape(f32({8, 256, 768}), {8, 256, 12, 64}),
           f32({8, 256, 12, 64}));
  expectOk(reshape(f32({8, 256, 768}), {-1, 768}), f32({2048, 768}));
  expectOk(reshape(f32({1, 1}), {}), f32({}));
  expectError(reshape(f32({8, 256, 768}), {8, 256, 12, 63}),
              "reshape: cannot reshape 1572864 elements into [8, 256, 12, 63] "
              "(1548288 elements) (input f32[8, 256, 768])");
  expectError(reshape(f32({8}), {-1, -1}),
              "reshape: at most one dimension may be -1, got [-1, -1]");
  expectError(reshape(f32({8}), {-2, 4}),
              "reshape: dimension -2 in [-2, 4] must be >= 0 or -1");
  expectError(reshape(f32({10}), {3, -1}),
              "reshape: cannot infer the -1 in [3, -1] from 10 elements (input "
              "f32[10])");
  expectError(reshape(f32({int64_t(1) << 32, int64_t(1) << 32}), {-1}),
              "reshape: the input's element count overflows int64 "
              "(input f32[4294967296, 4294967296])");
  expectError(
      reshape(f32({8}), {int64_t(1) << 32, int64_t(1) << 32}),
      "reshape: the element count of [4294967296, 4294967296] overflows int64");
}

TEST(ShapeRulesTest, Transpose) {
  expectOk(transpose(f32({8, 256, 12, 64}), {0, 2, 1, 3}),
           f32({8, 12, 256, 64}));
  expectOk(transpose(f32({}), {}), f32({}));
  expectError(transpose(f32({2, 3, 4}), {0, 0, 1}),
              "transpose: perm [0, 0, 1] is not a permutation of [0, 3) (input "
              "f32[2, 3, 4])");
  expectError(transpose(f32({2, 3}), {0, 1, 2}),
              "transpose: perm [0, 1, 2] is not a permutation of [0, 2) (input "
              "f32[2, 3])");
  expectError(transpose(f32({2, 3}), {-1, 0}),
              "transpose: perm [-1, 0] is not a permutation of [0, 2) (input "
              "f32[2, 3])");
}

} // namespace
