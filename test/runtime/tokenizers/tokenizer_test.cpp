//===- tokenizer_test.cpp - Errors, file lookup and the byte tokenizer ----===//
//
// What compare_hf.py cannot check against Hugging Face: that bad input
// stops with a message naming the file and the problem, how a checkpoint
// directory is searched, and the byte tokenizer (ours alone; its contract
// is small enough to state here).
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "bmrt/tokenizer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

class TokenizerFiles : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "bmrt_tok_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir + "'").c_str()); }

  std::string write(const std::string &name, const std::string &text) {
    std::string path = dir + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  // The message of the bmrt::Error that loading `path` throws.
  std::string loadError(const std::string &path, const std::string &hint = "") {
    try {
      bmrt::loadTokenizer(path, hint);
    } catch (const bmrt::Error &e) {
      return e.what();
    }
    return "(no error)";
  }

  std::string dir;
};

const char *kTinyBpe = R"({
  "added_tokens": [{"id": 3, "content": "<|endoftext|>", "special": true,
                    "single_word": false, "lstrip": false, "rstrip": false, "normalized": false}],
  "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
  "post_processor": null,
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "<|endoftext|>": 3},
            "merges": ["a b"]}
})";

TEST_F(TokenizerFiles, LoadsAMinimalByteLevelBpe) {
  auto tok = bmrt::loadTokenizer(write("tokenizer.json", kTinyBpe), "gpt2");
  EXPECT_STREQ(tok->kind(), "gpt2-bpe");
  EXPECT_EQ(tok->encode("abab<|endoftext|>", false), (std::vector<int32_t>{2, 2, 3}));
  EXPECT_EQ(tok->decode({2, 0, 3}), "aba");
  EXPECT_EQ(tok->eosId(), 3);
  EXPECT_EQ(tok->vocabSize(), 4);
  // The directory finds the same file.
  EXPECT_STREQ(bmrt::loadTokenizer(dir, "")->kind(), "gpt2-bpe");
}

// A Replace normalizer with a Regex pattern is refused by name, not
// approximated.
TEST_F(TokenizerFiles, RegexReplaceIsRefused) {
  std::string json = kTinyBpe;
  json.replace(json.find("\"normalizer\": null"), 18,
               "\"normalizer\": {\"type\": \"Replace\", \"pattern\": {\"Regex\": \" +\"}, "
               "\"content\": \" \"}");
  std::string msg = loadError(write("tokenizer.json", json));
  EXPECT_NE(msg.find("a Replace with a Regex pattern is not supported (only String patterns)"),
            std::string::npos)
      << msg;
}

TEST_F(TokenizerFiles, OutOfRangeIdsAreErrors) {
  auto tok = bmrt::loadTokenizer(write("tokenizer.json", kTinyBpe), "");
  EXPECT_THROW(tok->decode({4}), bmrt::Error);
  EXPECT_THROW(tok->tokenBytes(-1), bmrt::Error);
}

TEST_F(TokenizerFiles, MissingPathIsNamed) {
  std::string msg = loadError(dir + "/nope");
  EXPECT_NE(msg.find(dir + "/nope: no such file or directory"), std::string::npos) << msg;
}

TEST_F(TokenizerFiles, EmptyDirectoryListsWhatWasLookedFor) {
  std::string msg = loadError(dir);
  EXPECT_NE(msg.find("no tokenizer files"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tokenizer.json"), std::string::npos) << msg;
}

TEST_F(TokenizerFiles, SentencePieceModelIsRefusedWithAdvice) {
  write("tokenizer.model", "\x0a\x05hello");
  std::string msg = loadError(dir, "llama");
  EXPECT_NE(msg.find("tokenizer.model"), std::string::npos) << msg;
  EXPECT_NE(msg.find("provide the tokenizer.json"), std::string::npos) << msg;
}

TEST_F(TokenizerFiles, BadJsonNamesTheFile) {
  std::string path = write("tokenizer.json", "{\"model\": [1, 2,");
  std::string msg = loadError(path);
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("invalid JSON"), std::string::npos) << msg;
}

TEST_F(TokenizerFiles, UnsupportedModelTypeIsNamed) {
  std::string path = write("tokenizer.json", R"({"model": {"type": "Unigram", "vocab": []}})");
  std::string msg = loadError(path);
  EXPECT_NE(msg.find(path + ": model: model type \"Unigram\" is not supported"), std::string::npos)
      << msg;
}

TEST_F(TokenizerFiles, MergeOfUnknownTokenIsNamed) {
  std::string text = kTinyBpe;
  text.replace(text.find("\"a b\""), 5, "\"a c\"");
  std::string path = write("tokenizer.json", text);
  std::string msg = loadError(path);
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("merge 1 (\"a c\") names \"c\", which is not in the vocabulary"),
            std::string::npos)
      << msg;
}

TEST_F(TokenizerFiles, BadMergesLineIsNamedWithItsLine) {
  write("vocab.json", R"({"a": 0, "b": 1, "ab": 2})");
  std::string merges = write("merges.txt", "#version: 0.2\na b\nab\n");
  std::string msg = loadError(dir);
  EXPECT_NE(msg.find(merges + ":3: expected two tokens"), std::string::npos) << msg;
}

TEST_F(TokenizerFiles, VocabJsonWithoutMergesIsRefused) {
  write("vocab.json", R"({"a": 0})");
  std::string msg = loadError(dir);
  EXPECT_NE(msg.find("vocab.json but no merges.txt"), std::string::npos) << msg;
}

TEST_F(TokenizerFiles, UnsupportedPipelinePartsAreNamed) {
  std::string text = kTinyBpe;
  text.replace(text.find("\"normalizer\": null"), 18, "\"normalizer\": {\"type\": \"NFKC\"}");
  std::string msg = loadError(write("tokenizer.json", text));
  EXPECT_NE(msg.find("normalizer type \"NFKC\" is not supported"), std::string::npos) << msg;
}

TEST_F(TokenizerFiles, RandomEncodingsAreRefused) {
  std::string text = kTinyBpe;
  text.replace(text.find("\"type\": \"BPE\","), 14, "\"type\": \"BPE\", \"dropout\": 0.1,");
  std::string msg = loadError(write("tokenizer.json", text));
  EXPECT_NE(msg.find("model.dropout: BPE dropout is not supported"), std::string::npos) << msg;
}

TEST_F(TokenizerFiles, PostProcessorIdsMustBeTokens) {
  std::string text = kTinyBpe;
  text.replace(text.find("\"post_processor\": null"), 22,
               R"("post_processor": {"type": "BertProcessing", "cls": ["[CLS]", 7], "sep": ["b", 1]})");
  std::string msg = loadError(write("tokenizer.json", text));
  EXPECT_NE(msg.find("the post-processor adds id 7, which is not a token"), std::string::npos) << msg;
}

TEST_F(TokenizerFiles, ConfigSpecialTokensMustExist) {
  write("tokenizer.json", kTinyBpe);
  std::string config = write("tokenizer_config.json", R"({"eos_token": {"content": "</s>"}})");
  std::string msg = loadError(dir);
  EXPECT_NE(msg.find(config + ": eos_token \"</s>\" is not a token"), std::string::npos) << msg;
  write("tokenizer_config.json", R"({"eos_token": "b", "bos_token": null})");
  auto tok = bmrt::loadTokenizer(dir, "");
  EXPECT_EQ(tok->eosId(), 1);
  EXPECT_EQ(tok->bosId(), 3); // not named: <|endoftext|> as without a config
}

TEST_F(TokenizerFiles, HintMustAgreeWithTheFiles) {
  write("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n");
  std::string msg = loadError(dir, "gpt2");
  EXPECT_NE(msg.find("holds a wordpiece tokenizer, but the job asks for gpt2"), std::string::npos)
      << msg;
  EXPECT_NE(loadError(dir, "roberta").find("unknown tokenizer \"roberta\""), std::string::npos);
  auto tok = bmrt::loadTokenizer(dir, "bert");
  EXPECT_EQ(tok->encode("Hello", true), (std::vector<int32_t>{2, 4, 3}));
}

TEST_F(TokenizerFiles, BertVocabNeedsItsFramingTokens) {
  std::string path = write("vocab.txt", "[UNK]\nhello\n");
  std::string msg = loadError(path);
  EXPECT_NE(msg.find(path + ": no [CLS] or no [SEP] token"), std::string::npos) << msg;
}

TEST(ByteTokenizer, BytesAreIds) {
  auto tok = bmrt::makeByteTokenizer(true);
  std::string text("h\xC3\xA9\0\xFF", 5); // é, NUL, an invalid byte
  std::vector<int32_t> ids = tok->encode(text, true);
  EXPECT_EQ(ids, (std::vector<int32_t>{'h', 0xC3, 0xA9, 0, 0xFF}));
  EXPECT_EQ(tok->vocabSize(), 257);
  EXPECT_EQ(tok->eosId(), 256);
  ids.push_back(256);
  // decode: EOS skipped, the invalid byte becomes U+FFFD; tokenBytes: raw.
  EXPECT_EQ(tok->decode(ids), std::string("h\xC3\xA9\0\xEF\xBF\xBD", 7));
  EXPECT_EQ(tok->tokenBytes(0xFF), "\xFF");
  EXPECT_EQ(tok->tokenBytes(256), "");
  EXPECT_THROW(tok->decode({257}), bmrt::Error);
  auto noEos = bmrt::makeByteTokenizer(false);
  EXPECT_EQ(noEos->vocabSize(), 256);
  EXPECT_FALSE(noEos->eosId().has_value());
  EXPECT_THROW(noEos->tokenBytes(256), bmrt::Error);
  EXPECT_STREQ(bmrt::loadTokenizer("", "byte")->kind(), "byte");
}

TEST(LoadTokenizer, FamilyWithoutFilesIsAnError) {
  try {
    bmrt::loadTokenizer("", "gpt2");
    FAIL() << "no error";
  } catch (const bmrt::Error &e) {
    EXPECT_NE(std::string(e.what()).find("gpt2 tokenizer needs its files"), std::string::npos)
        << e.what();
  }
}

} // namespace
