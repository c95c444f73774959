//===- json_test.cpp - bmrt::json::parse on valid and malformed input ------===//
//
// Expected values are written from RFC 8259 by hand (the UTF-8 bytes of the
// surrogate-pair escapes are the standard encodings of U+1F600 and U+10FFFF),
// and every error case asserts the byte offset and the named problem, so a
// regression in the error text a user sees fails here.
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "bmrt/json.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

using bmrt::json::parse;
using bmrt::json::Value;

namespace {

// The message of the bmrt::Error that parsing `text` throws ("" if none).
std::string errorOf(const std::string &text) {
  try {
    parse(text, "t.json");
  } catch (const bmrt::Error &e) {
    return e.what();
  }
  return "";
}

TEST(Json, Scalars) {
  EXPECT_TRUE(parse("null", "t").isNull());
  EXPECT_EQ(parse(" true ", "t").kind, Value::Kind::Bool);
  EXPECT_TRUE(parse("true", "t").boolean);
  EXPECT_FALSE(parse("false", "t").boolean);
  EXPECT_EQ(parse("\"x\"", "t").string, "x");
}

TEST(Json, Numbers) {
  EXPECT_EQ(parse("0", "t").number, 0.0);
  EXPECT_EQ(parse("-0", "t").number, 0.0);
  EXPECT_EQ(parse("42", "t").number, 42.0);
  EXPECT_EQ(parse("-17", "t").number, -17.0);
  EXPECT_EQ(parse("3.25", "t").number, 3.25);
  EXPECT_EQ(parse("1e3", "t").number, 1000.0);
  EXPECT_EQ(parse("2.5E-1", "t").number, 0.25);
  EXPECT_EQ(parse("1e+2", "t").number, 100.0);
  // Integers are exact up to 2^53 (safetensors offsets of large files).
  EXPECT_EQ(parse("9007199254740992", "t").number, 9007199254740992.0);
  EXPECT_EQ(parse("123456789012", "t").number, 123456789012.0);
  // Underflow is zero, not an error.
  EXPECT_EQ(parse("1e-400", "t").number, 0.0);
}

TEST(Json, BadNumbers) {
  EXPECT_EQ(errorOf("01"), "t.json: invalid JSON at byte 0: leading zero in a number");
  EXPECT_EQ(errorOf("[1.]"),
            "t.json: invalid JSON at byte 3: expected digits after '.' in a number, found ']'");
  EXPECT_EQ(errorOf("-"),
            "t.json: invalid JSON at byte 1: expected digits in a number, found end of input");
  EXPECT_EQ(errorOf("1e"), "t.json: invalid JSON at byte 2: expected digits in the exponent "
                           "of a number, found end of input");
  EXPECT_EQ(errorOf("+1"), "t.json: invalid JSON at byte 0: expected a value, found '+'");
  EXPECT_EQ(errorOf("1e999"), "t.json: invalid JSON at byte 0: number out of range of a double");
  EXPECT_EQ(errorOf("NaN"), "t.json: invalid JSON at byte 0: expected a value, found 'N'");
}

TEST(Json, Escapes) {
  EXPECT_EQ(parse(R"("a\"b\\c\/d\b\f\n\r\t")", "t").string, "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(parse(R"("\u0041\u00e9\u20AC")", "t").string, "A\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(parse(R"("\u0000")", "t").string, std::string(1, '\0'));
  // Surrogate pairs: U+1F600 and U+10FFFF.
  EXPECT_EQ(parse(R"("\ud83d\ude00")", "t").string, "\xF0\x9F\x98\x80");
  EXPECT_EQ(parse(R"("\uDBFF\uDFFF")", "t").string, "\xF4\x8F\xBF\xBF");
  // Raw UTF-8 passes through unchanged (GPT-2's byte-level vocab: "Ġ").
  EXPECT_EQ(parse("\"\xC4\xA0the\"", "t").string, "\xC4\xA0the");
}

TEST(Json, BadEscapes) {
  EXPECT_EQ(errorOf(R"("\ud83d")"), "t.json: invalid JSON at byte 1: high surrogate in "
                                    "\\u escape not followed by a low surrogate");
  EXPECT_EQ(errorOf(R"("\ud83d\u0041")"), "t.json: invalid JSON at byte 1: high surrogate in "
                                          "\\u escape not followed by a low surrogate");
  EXPECT_EQ(errorOf(R"("ab\ude00")"),
            "t.json: invalid JSON at byte 3: lone low surrogate in \\u escape");
  EXPECT_EQ(errorOf(R"("\u12G4")"), "t.json: invalid JSON at byte 5: bad hex digit in \\u escape");
  EXPECT_EQ(errorOf(R"("\u12)"), "t.json: invalid JSON at byte 3: truncated \\u escape");
  EXPECT_EQ(errorOf(R"("\x")"), "t.json: invalid JSON at byte 1: unknown escape '\\x'");
  EXPECT_EQ(errorOf("\"a\nb\""),
            "t.json: invalid JSON at byte 2: control character in a string (must be escaped)");
  EXPECT_EQ(errorOf("[\"abc"), "t.json: invalid JSON at byte 1: unterminated string");
}

TEST(Json, Nesting) {
  Value v = parse(R"( {"a": [1, {"b": null}, "s"], "c": {}, "d": [], "a2": true} )", "t");
  ASSERT_EQ(v.kind, Value::Kind::Object);
  ASSERT_EQ(v.object.size(), 4u);
  // File order is kept.
  EXPECT_EQ(v.object[0].first, "a");
  EXPECT_EQ(v.object[3].first, "a2");
  const Value *a = v.get("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->array.size(), 3u);
  EXPECT_EQ(a->array[0].number, 1.0);
  ASSERT_NE(a->array[1].get("b"), nullptr);
  EXPECT_TRUE(a->array[1].get("b")->isNull());
  EXPECT_EQ(a->array[2].string, "s");
  EXPECT_EQ(v.get("c")->kind, Value::Kind::Object);
  EXPECT_TRUE(v.get("c")->object.empty());
  EXPECT_TRUE(v.get("d")->array.empty());
  EXPECT_EQ(v.get("missing"), nullptr);
  EXPECT_EQ(a->get("x"), nullptr); // get on a non-object
}

TEST(Json, NestingLimit) {
  // 512 levels are accepted, 513 are refused (and nothing overflows the stack).
  std::string ok = std::string(512, '[') + std::string(512, ']');
  EXPECT_EQ(parse(ok, "t").kind, Value::Kind::Array);
  std::string deep = std::string(513, '[') + std::string(513, ']');
  EXPECT_EQ(errorOf(deep), "t.json: invalid JSON at byte 512: nesting deeper than 512 levels");
  std::string veryDeep(1000000, '[');
  EXPECT_EQ(errorOf(veryDeep), "t.json: invalid JSON at byte 512: nesting deeper than 512 levels");
  // Objects count too: the 513th '{' is at byte 512 * 5.
  std::string objects;
  for (int i = 0; i < 600; ++i)
    objects += "{\"a\":";
  EXPECT_EQ(errorOf(objects), "t.json: invalid JSON at byte 2560: nesting deeper than 512 levels");
}

TEST(Json, StructureErrors) {
  EXPECT_EQ(errorOf(""), "t.json: invalid JSON at byte 0: expected a value, found end of input");
  EXPECT_EQ(errorOf("   "), "t.json: invalid JSON at byte 3: expected a value, found end of input");
  EXPECT_EQ(errorOf("{\"a\":1,}"),
            "t.json: invalid JSON at byte 7: expected a string key, found '}'");
  EXPECT_EQ(errorOf("[1,]"), "t.json: invalid JSON at byte 3: expected a value, found ']'");
  EXPECT_EQ(errorOf("{\"a\" 1}"),
            "t.json: invalid JSON at byte 5: expected ':' after an object key, found '1'");
  EXPECT_EQ(errorOf("{\"a\":1 \"b\":2}"),
            "t.json: invalid JSON at byte 7: expected ',' or '}' in an object, found '\"'");
  EXPECT_EQ(errorOf("[1 2]"),
            "t.json: invalid JSON at byte 3: expected ',' or ']' in an array, found '2'");
  EXPECT_EQ(errorOf("{1:2}"), "t.json: invalid JSON at byte 1: expected a string key, found '1'");
  EXPECT_EQ(errorOf("[1] x"),
            "t.json: invalid JSON at byte 4: unexpected 'x' after the top-level value");
  EXPECT_EQ(errorOf("tru"), "t.json: invalid JSON at byte 0: expected a value, found 't'");
  EXPECT_EQ(errorOf("[\x01]"), "t.json: invalid JSON at byte 1: expected a value, found byte 0x01");
  EXPECT_EQ(errorOf("{\"a\":"), "t.json: invalid JSON at byte 5: expected a value, found end of input");
}

TEST(Json, LargeObjectIsLinear) {
  // A vocab.json-sized object (50k entries; GPT-2's is 50257) parses quickly.
  std::string text = "{";
  for (int i = 0; i < 50257; ++i) {
    if (i)
      text += ", ";
    text += "\"tok\\u00e9n" + std::to_string(i) + "\": " + std::to_string(i);
  }
  text += "}";
  auto start = std::chrono::steady_clock::now();
  Value v = parse(text, "vocab.json");
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(v.object.size(), 50257u);
  EXPECT_EQ(v.object[50256].first, "tok\xC3\xA9n50256");
  EXPECT_EQ(v.object[50256].second.number, 50256.0);
  EXPECT_LT(seconds, 1.0) << "parsing 50k entries took " << seconds << " s";
}

} // namespace
