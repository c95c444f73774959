//===- prompt_test.cpp - Prompt input assembly on the byte tokenizer ------===//
//
// The byte tokenizer has no special tokens, so its ids are the bytes: every
// expectation below is spelled out by hand. Mask tokens need a tokenizer
// that has one; that case (and framing) is covered against Hugging Face in
// compare_hf.py, and here only as the error the byte tokenizer gives.
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "bmrt/prompt.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

using namespace bmrt;
using K = PromptSegment::Kind;

namespace {

std::vector<int32_t> bytes(const std::string &s) { return {s.begin(), s.end()}; }

PromptTemplate twoFields(Truncate policy, int64_t maxLen) {
  // "{text_a} | {soft} {text_b}."
  PromptTemplate t;
  t.segments = {{K::Field, "text_a", false, true},
                {K::Text, " |", false, false},
                {K::Soft, "", true, false},
                {K::Field, "text_b", true, true},
                {K::Text, ".", false, false}};
  t.truncate = policy;
  t.maxLen = maxLen;
  return t;
}

PromptExample example(const std::string &a, const std::string &b) {
  return {{{"text_a", a}, {"text_b", b}}, "ex.jsonl:3"};
}

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(Prompt, FitsUntouched) {
  auto tok = makeByteTokenizer(false);
  AssembledPrompt a = assemblePrompt(twoFields(Truncate::Tail, 0), example("ab", "cd"), *tok);
  // "ab" " |" [soft=0] " cd" "."
  std::vector<int32_t> want = bytes("ab |");
  want.push_back(0);
  for (int32_t c : bytes(" cd."))
    want.push_back(c);
  EXPECT_EQ(a.ids, want);
  ASSERT_EQ(a.softSlots.size(), 1u);
  EXPECT_EQ(a.softSlots[0], std::make_pair(int64_t(4), int64_t(0)));
  EXPECT_EQ(a.truncated, 0);
}

TEST(Prompt, TailCutsTheLastShortenableFieldFirst) {
  auto tok = makeByteTokenizer(false);
  // 5 + 2 + 1 + 4 (" xyz") + 1 = 13 tokens; max 9 removes 4: all of " xyz".
  AssembledPrompt a = assemblePrompt(twoFields(Truncate::Tail, 9), example("abcde", "xyz"), *tok);
  std::vector<int32_t> want = bytes("abcde |");
  want.push_back(0);
  want.push_back('.');
  EXPECT_EQ(a.ids, want);
  EXPECT_EQ(a.truncated, 4);
  // max 7 removes 6: " xyz" and then "de".
  a = assemblePrompt(twoFields(Truncate::Tail, 7), example("abcde", "xyz"), *tok);
  want = bytes("abc |");
  want.push_back(0);
  want.push_back('.');
  EXPECT_EQ(a.ids, want);
}

TEST(Prompt, HeadCutsTheFirstShortenableFieldFromItsStart) {
  auto tok = makeByteTokenizer(false);
  AssembledPrompt a = assemblePrompt(twoFields(Truncate::Head, 10), example("abcde", "xyz"), *tok);
  std::vector<int32_t> want = bytes("de |");
  want.push_back(0);
  for (int32_t c : bytes(" xyz."))
    want.push_back(c);
  EXPECT_EQ(a.ids, want);
  EXPECT_EQ(a.softSlots[0].first, 4);
}

TEST(Prompt, BalancedCutsTheLongestFieldTiesTheLater) {
  auto tok = makeByteTokenizer(false);
  // 14 tokens; max 10 removes 4, one at a time from the longer field
  // ("abcdef" 6, " xyz" 4): [6,4] -> [5,4] -> [4,4] -> tie, the later: [4,3] -> [3,3].
  AssembledPrompt a =
      assemblePrompt(twoFields(Truncate::Balanced, 10), example("abcdef", "xyz"), *tok);
  std::vector<int32_t> want = bytes("abc |");
  want.push_back(0);
  for (int32_t c : bytes(" xy."))
    want.push_back(c);
  EXPECT_EQ(a.ids, want);
  EXPECT_EQ(a.truncated, 4);
}

TEST(Prompt, FixedFieldsAreNeverCut) {
  auto tok = makeByteTokenizer(false);
  PromptTemplate t = twoFields(Truncate::Tail, 8);
  t.segments[3].shortenable = false; // {text_b: fixed}
  // 12 tokens; max 8 removes 4, all from text_a.
  AssembledPrompt a = assemblePrompt(t, example("abcde", "xy"), *tok);
  std::vector<int32_t> want = bytes("a |");
  want.push_back(0);
  for (int32_t c : bytes(" xy."))
    want.push_back(c);
  EXPECT_EQ(a.ids, want);
  EXPECT_EQ(errorOf([&] { assemblePrompt(t, example("a", "xyzxyz"), *tok); }),
            "ex.jsonl:3: the prompt is 12 tokens, longer than max_len 8, and only 1 of them are "
            "in shortenable fields");
}

TEST(Prompt, ContentFreeInputHasEmptyFields) {
  auto tok = makeByteTokenizer(false);
  PromptTemplate t = twoFields(Truncate::Tail, 0);
  AssembledPrompt a = assemblePrompt(t, contentFreeExample(t), *tok);
  std::vector<int32_t> want = bytes(" |");
  want.push_back(0);
  want.push_back('.');
  EXPECT_EQ(a.ids, want);
}

TEST(Prompt, LabelWordsTakeTheMasksSpace) {
  auto tok = makeByteTokenizer(false);
  PromptTemplate t;
  t.segments = {{K::Field, "text_a", false, true}, {K::Mask, "", true, false}};
  PromptVerbalizer v{{"neg", "pos"}, {{"no"}, {"ok", "yes"}}};
  auto ids = labelWordIds(v, t, *tok);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0], (std::vector<std::vector<int32_t>>{bytes(" no")}));
  EXPECT_EQ(ids[1], (std::vector<std::vector<int32_t>>{bytes(" ok"), bytes(" yes")}));
  t.segments[1].space = false;
  EXPECT_EQ(labelWordIds(v, t, *tok)[0][0], bytes("no"));
  // A second mask without a space: its verbalizer's words have none.
  t.segments = {{K::Field, "text_a", false, true}, {K::Mask, "", true, false},
                {K::Text, ",", false, false}, {K::Mask, "", false, false}};
  EXPECT_EQ(labelWordIds(v, t, *tok, 0)[0][0], bytes(" no"));
  EXPECT_EQ(labelWordIds(v, t, *tok, 1)[0][0], bytes("no"));
  EXPECT_EQ(errorOf([&] { labelWordIds(v, t, *tok, 2); }),
            "prompt: the template has 2 {mask}s, no mask number 2 for a verbalizer");
}

TEST(Prompt, CausalMaskIsScoredFromTheTokenBeforeIt) {
  // The byte tokenizer has no mask token: "{text_a} It was {mask}." reads
  // "ab It was." and the mask is scored at "s", the token before it.
  auto tok = makeByteTokenizer(false);
  PromptTemplate t;
  t.segments = {{K::Field, "text_a", false, true},
                {K::Text, " It was", false, false},
                {K::Mask, "", true, false},
                {K::Text, ".", false, false}};
  AssembledPrompt a = assemblePrompt(t, example("ab", ""), *tok);
  EXPECT_EQ(a.ids, bytes("ab It was."));
  EXPECT_EQ(a.maskPositions, std::vector<int64_t>{8});
  EXPECT_EQ(maskTokenId(*tok), std::nullopt);
}

TEST(Prompt, SoftInitWords) {
  auto tok = makeByteTokenizer(false);
  PromptTemplate t;
  t.segments = {{K::Soft, "", false, false}, {K::Soft, "hi", true, false}};
  auto init = softInitIds(t, *tok);
  ASSERT_EQ(init.size(), 2u);
  EXPECT_TRUE(init[0].empty());
  EXPECT_EQ(init[1], bytes(" hi"));
}

TEST(Prompt, Errors) {
  auto tok = makeByteTokenizer(false);
  PromptTemplate t = twoFields(Truncate::Tail, 0);
  EXPECT_EQ(errorOf([&] { assemblePrompt(t, {{{"text_a", "x"}}, "d.jsonl:7"}, *tok); }),
            "d.jsonl:7: no field 'text_b' (the prompt template reads {text_b})");
  PromptTemplate m;
  m.segments = {{K::Mask, "", false, false}, {K::Field, "text_a", true, true}};
  EXPECT_EQ(errorOf([&] { assemblePrompt(m, {{{"text_a", "x"}}, "d.jsonl:1"}, *tok); }),
            "d.jsonl:1: nothing precedes the {mask}, so a causal LM (the byte tokenizer has no "
            "mask token) has no logits to predict it from");
}

} // namespace

// A Llama tokenizer.json of the legacy conversion, by hand: the normalizer
// prepends "▁" to every text, so " good" alone is "▁▁good" = "▁", "▁good".
// segmentText drops the segment's own space (the "▁" stands for it): the
// label words are "▁bad" and "▁good", one token each, told apart by their
// first token. (compare_hf.py checks the same against Hugging Face.)
TEST(Prompt, SentencePieceSpaceIsTheTokenizersPrefix) {
  const char *json = R"({
    "added_tokens": [
      {"id": 0, "content": "<unk>", "special": true, "single_word": false, "lstrip": false,
       "rstrip": false, "normalized": false},
      {"id": 1, "content": "<s>", "special": true, "single_word": false, "lstrip": false,
       "rstrip": false, "normalized": false}],
    "normalizer": {"type": "Sequence", "normalizers": [
      {"type": "Prepend", "prepend": "\u2581"},
      {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
    "pre_tokenizer": null,
    "post_processor": {"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                 {"Sequence": {"id": "A", "type_id": 0}}],
      "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
      "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
    "decoder": {"type": "Sequence", "decoders": [
      {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
      {"type": "ByteFallback"}, {"type": "Fuse"},
      {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
    "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
      "vocab": {"<unk>": 0, "<s>": 1, "\u2581": 2, "a": 3, "b": 4, "d": 5, "g": 6, "o": 7,
                "\u2581b": 8, "\u2581ba": 9, "\u2581bad": 10, "\u2581g": 11, "\u2581go": 12,
                "\u2581goo": 13, "\u2581good": 14},
      "merges": ["\u2581 b", "\u2581b a", "\u2581ba d", "\u2581 g", "\u2581g o", "\u2581go o",
                 "\u2581goo d"]}
  })";
  std::string dir = ::testing::TempDir() + "bmrt_prompt_spm_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::ofstream(dir + "/tokenizer.json") << json;
  auto tok = loadTokenizer(dir, "llama");
  EXPECT_EQ(tok->encode(" good", false), (std::vector<int32_t>{2, 14})); // the hazard
  EXPECT_EQ(segmentText(*tok, " good"), "good");
  EXPECT_EQ(segmentText(*tok, "good"), "good");
  auto bytesTok = makeByteTokenizer(false); // its spaces are bytes: kept
  EXPECT_EQ(segmentText(*bytesTok, " good"), " good");

  PromptTemplate t; // "{text_a} {mask}"
  t.segments = {{K::Field, "text_a", false, true}, {K::Mask, "", true, false}};
  PromptVerbalizer v{{"negative", "positive"}, {{"bad"}, {"good"}}};
  EXPECT_EQ(labelWordIds(v, t, *tok),
            (std::vector<std::vector<std::vector<int32_t>>>{{{10}}, {{14}}}));
  // A field owning a space: "▁good", not "▁", "▁good"; <s> first.
  t.segments = {{K::Field, "text_a", true, true}, {K::Mask, "", true, false}};
  AssembledPrompt a = assemblePrompt(t, {{{"text_a", "good"}}, "ex.jsonl:1"}, *tok);
  EXPECT_EQ(a.ids, (std::vector<int32_t>{1, 14}));
  EXPECT_EQ(a.maskPositions, (std::vector<int64_t>{1})); // a causal LM: the token before
  std::system(("rm -rf '" + dir + "'").c_str());
}
