//===- ParserRobustnessTest.cpp - Hostile input never crashes the parser --===//
//
// "Never a crash, assert, stack overflow or hang, whatever the input": deep
// nesting and long chains (10^5), random bytes and token soup with fixed
// seeds, mutations and every prefix of the shipped models. Each input must
// give a tree and no errors, or no tree and at least one error. The suite
// runs on the default 8 MiB stack; parsing at the nesting limit needs far
// less (see ShallowStackSuffices).
//
//===----------------------------------------------------------------------===//
#include "ParserTestHelpers.h"

#include <gtest/gtest.h>

#include <pthread.h>

#include <chrono>
#include <random>

using namespace bmb;
using namespace bmb::test;

namespace {

std::string repeat(const std::string &s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i)
    out += s;
  return out;
}

void expectRejected(const std::string &text, const std::string &message) {
  Parsed p = parseText(text);
  EXPECT_EQ(p.file, nullptr);
  EXPECT_NE(p.firstError().find(message), std::string::npos) << p.firstError();
}

constexpr size_t kHuge = 100000;

TEST(ParserRobustness, DeepBrackets) {
  expectRejected("layer A { y = " + repeat("(", kHuge) + "x" + repeat(")", kHuge) + " }",
                 "t.bmb:1:214: error: brackets nested too deeply (the limit is 200)");
  expectRejected("layer A { y = " + repeat("[", kHuge) + repeat("]", kHuge) + " }",
                 "brackets nested too deeply");
  expectRejected("layer A { forward(x) " + repeat("{", kHuge) + repeat("}", kHuge) + " }",
                 "brackets nested too deeply");
  expectRejected(repeat("(", kHuge), "brackets nested too deeply");
  expectRejected(repeat("-(", kHuge), "nested too deeply");
  // Unbalanced closers are harmless.
  Parsed p = parseText(repeat(")]}", kHuge));
  EXPECT_TRUE(consistent(p));
  EXPECT_EQ(p.file, nullptr);
}

TEST(ParserRobustness, LongPrefixChains) {
  expectRejected("layer A { y = " + repeat("-", kHuge) + "x }",
                 "expression nested too deeply (the limit is 200)");
  expectRejected("layer A { y = " + repeat("- ", kHuge) + "x }", "expression nested too deeply");
  expectRejected("layer A { y = " + repeat("not ", kHuge) + "x }", "expression nested too deeply");
  expectRejected("layer A { y = " + repeat("not -", kHuge) + "x }", "expression nested too deeply");
}

TEST(ParserRobustness, LongBinaryAndConditionalChains) {
  for (const char *op : {" + x", " * x", " and x", " or x", " - x", ".x"})
    expectRejected("layer A { y = x" + repeat(op, kHuge) + " }",
                   "expression nested too deeply (the limit is 1000)");
  expectRejected("layer A { y = x" + repeat(" if c else x", kHuge) + " }",
                 "expression nested too deeply");
  expectRejected("layer A { forward(x) { if a { }" + repeat(" else if a { }", kHuge) + " } }",
                 "expression nested too deeply");
  expectRejected("layer A { y = x" + repeat(" == x", kHuge) + " }",
                 "comparisons cannot be chained");
  // Below the limit these are fine.
  EXPECT_TRUE(parseText("layer A { y = x" + repeat(" + x", 999) + " }").file);
}

TEST(ParserRobustness, LongFlatInputs) {
  EXPECT_TRUE(parseText("layer A { y = [" + repeat("x, ", kHuge) + "] }").file);
  EXPECT_TRUE(parseText("layer A {" + repeat(" y = 1", kHuge) + " }").file);
  EXPECT_TRUE(parseText("layer A { forward(x) {" + repeat(" y = 1", kHuge) + " } }").file);
  EXPECT_TRUE(parseText("recipe r {" + repeat(" q a b 1 2 \"s\" [1]\n", kHuge / 4) + "}").file);
  EXPECT_TRUE(parseText("template t = \"" + std::string(4u << 20, 'a') + "\"").file);
  EXPECT_TRUE(parseText("layer A { y = " + std::string(4u << 20, 'a') + " }").file);
  EXPECT_TRUE(parseText("// " + std::string(4u << 20, 'a')).file);
  expectRejected("layer A {" + repeat(" $", kHuge) + " }", "unknown character '$'");
}

// Runs `fn` on a thread with a small stack: the parser's recursion at the
// nesting limit must fit comfortably in the default 8 MiB.
template <typename Fn> bool onSmallStack(size_t bytes, Fn fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, bytes);
  pthread_t thread;
  auto trampoline = [](void *arg) -> void * {
    (*static_cast<Fn *>(arg))();
    return nullptr;
  };
  bool ok = pthread_create(&thread, &attr, trampoline, &fn) == 0;
  pthread_attr_destroy(&attr);
  return ok && pthread_join(thread, nullptr) == 0;
}

TEST(ParserRobustness, ShallowStackSuffices) {
  const size_t n = 199; // the default limit, minus the layer's own '{'
  std::vector<std::string> inputs = {
      "layer A { y = " + repeat("f(", n) + "x" + repeat(")", n) + " }",
      "layer A { y = " + repeat("[a : ", n) + "x" + repeat("]", n) + " }",
      "layer A { y = " + repeat("(a, ", n) + "x" + repeat(")", n) + " }",
      "layer A { y = " + repeat("-(", 99) + "x" + repeat(")", 99) + " }",
      "layer A { forward(x) { if " + repeat("f(", n - 2) + "x" + repeat(")", n - 2) + " {} } }",
      "layer A { y = " + repeat("f(", n) + "x }", // errors at depth
  };
  for (const std::string &text : inputs) {
    bool consistentResult = false;
    ASSERT_TRUE(onSmallStack(2u << 20, [&] { consistentResult = consistent(parseText(text)); }));
    EXPECT_TRUE(consistentResult);
  }
}

TEST(ParserRobustness, RandomBytes) {
  std::mt19937 rng(12345);
  for (int i = 0; i < 2000; ++i) {
    std::string text(rng() % 300, '\0');
    for (char &c : text)
      c = static_cast<char>(rng());
    EXPECT_TRUE(consistent(parseText(text))) << i;
  }
}

TEST(ParserRobustness, RandomPrintableText) {
  std::mt19937 rng(777);
  const std::string alphabet = " \n\t(){}[],:;=<>+-*/%.\"\\#$@'0123456789eEabcxyzBGi_";
  for (int i = 0; i < 2000; ++i) {
    std::string text(rng() % 300, ' ');
    for (char &c : text)
      c = alphabet[rng() % alphabet.size()];
    Parsed p = parseText(text);
    EXPECT_TRUE(consistent(p)) << text;
    EXPECT_FALSE(hasAntlrWording(p)) << p.output;
  }
}

TEST(ParserRobustness, RandomTokenSoup) {
  const std::vector<std::string> vocab = {
      "import",     "layer",  "model",       "train",  "tune",    "compress", "infer", "template",
      "verbalizer", "recipe", "param",       "frozen", "forward", "return",   "if",    "else",
      "for",        "from",   "with",        "on",     "repeat",  "true",     "false", "and",
      "or",         "not",    "(",           ")",      "[",       "]",        "{",     "}",
      ",",          ":",      ";",           "=",      "->",      "@",        "...",   ".",
      "==",         "!=",     "<",           "<=",     ">",       ">=",       "+",     "-",
      "*",          "/",      "%",           "x",      "B",       "dim",      "42",    "1e-5",
      "6GiB",       "\"s\"",  "\"\\u{41}\"", "\n",     "i32",     "Block",    "//c\n", "/*c*/"};
  std::mt19937 rng(4242);
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    size_t n = rng() % 80;
    for (size_t k = 0; k < n; ++k)
      text += vocab[rng() % vocab.size()] + (rng() % 3 ? " " : "");
    Parsed p = parseText(text);
    EXPECT_TRUE(consistent(p)) << text;
    EXPECT_FALSE(hasAntlrWording(p)) << p.output;
  }
}

std::vector<std::string> shippedFiles() {
  return {"stdlib/nn.bmb", "models/gpt2.bmb", "models/bert.bmb", "models/llama.bmb",
          "test/lit/lang/Inputs/design-sketch.bmb"};
}

TEST(ParserRobustness, EveryPrefixOfGpt2) {
  std::string text = readFile(sourcePath("models/gpt2.bmb"));
  ASSERT_FALSE(text.empty());
  for (size_t len = 0; len <= text.size(); ++len)
    EXPECT_TRUE(consistent(parseText(text.substr(0, len)))) << len;
}

TEST(ParserRobustness, PrefixesOfEveryShippedFile) {
  for (const std::string &rel : shippedFiles()) {
    std::string text = readFile(sourcePath(rel));
    ASSERT_FALSE(text.empty()) << rel;
    for (size_t len = 0; len <= text.size(); len += 7)
      EXPECT_TRUE(consistent(parseText(text.substr(0, len)))) << rel << " " << len;
  }
}

TEST(ParserRobustness, MutatedShippedFiles) {
  std::mt19937 rng(99);
  const std::string inserts = "(){}[],:;=\"-.\n x0";
  for (const std::string &rel : shippedFiles()) {
    const std::string original = readFile(sourcePath(rel));
    for (int i = 0; i < 300; ++i) {
      std::string text = original;
      for (int edits = 1 + rng() % 3; edits > 0 && !text.empty(); --edits) {
        size_t at = rng() % text.size();
        switch (rng() % 4) {
        case 0:
          text.erase(at, 1 + rng() % 8);
          break;
        case 1:
          text.insert(at, 1, inserts[rng() % inserts.size()]);
          break;
        case 2:
          text[at] = static_cast<char>(rng());
          break;
        default:
          text.insert(at, text.substr(rng() % text.size(), rng() % 40));
          break;
        }
      }
      Parsed p = parseText(text);
      EXPECT_TRUE(consistent(p)) << rel << " mutation " << i;
      EXPECT_FALSE(hasAntlrWording(p)) << p.output;
    }
  }
}

TEST(ParserRobustness, TokenLimit) {
  // A file of commas stops at the token limit, not at the end of memory.
  Parsed p = parseText(std::string(3u << 20, ','));
  EXPECT_EQ(p.firstError(), "t.bmb:1:1000001: error: file has too many tokens "
                            "(the limit is 1000000)");
  ParseLimits limits;
  limits.maxTokens = 5;
  EXPECT_FALSE(parseText("layer A { y = 1 }", limits).file);
  EXPECT_TRUE(parseText("layer A {} // a comment is no token", limits).file);
}

TEST(ParserRobustness, LargeValidFileIsFast) {
  // About 2 MiB of real declarations (some 600k tokens).
  std::string unit = readFile(sourcePath("stdlib/nn.bmb"));
  std::string text = repeat(unit, (2u << 20) / unit.size());
  auto start = std::chrono::steady_clock::now();
  Parsed p = parseText(text);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(p.file) << p.firstError();
  EXPECT_LT(seconds, 60.0); // a hang guard, not a benchmark
}

} // namespace
