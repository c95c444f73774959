//===- ParserErrorTest.cpp - Every diagnostic the parser words -------------===//
//
// One test per kind of message, with its exact text and position: these are
// the parser's user interface. No message may show ANTLR's own wording
// ("mismatched input", "extraneous input", "expecting {...}").
//
//===----------------------------------------------------------------------===//
#include "ParserTestHelpers.h"

#include <gtest/gtest.h>

using namespace bmb;
using namespace bmb::test;

namespace {

/// Parses `text`, expects failure, and returns the first error line.
std::string firstError(const std::string &text, const ParseLimits &limits = {}) {
  Parsed p = parseText(text, limits);
  EXPECT_EQ(p.file, nullptr) << text;
  EXPECT_GE(p.errors, 1u) << text;
  EXPECT_FALSE(hasAntlrWording(p)) << p.output;
  return p.firstError();
}

TEST(ParserErrors, MissingCloser) {
  EXPECT_EQ(firstError("layer A(x: int) {\n  y = f(a, b\n}\n"),
            "t.bmb:3:1: error: expected ',' or ')' to close the call opened at 2:8");
  EXPECT_EQ(firstError("layer A { y = [1, 2 }"),
            "t.bmb:1:21: error: expected ',' or ']' to close the list opened at 1:15");
  EXPECT_EQ(firstError("layer A { param w: [3, 4 }"),
            "t.bmb:1:26: error: expected ',' or ']' to close the shape opened at 1:20");
  EXPECT_EQ(firstError("layer A(x: int y) { }"),
            "t.bmb:1:16: error: expected ',' or ')' to close the parameter list opened at 1:8");
  EXPECT_EQ(firstError("verbalizer v { a = [\"x\" \"y\"] }"),
            "t.bmb:1:25: error: expected ',' or ']' to close the word list opened at 1:20");
  EXPECT_EQ(firstError("layer A { y = (a b) }"),
            "t.bmb:1:18: error: expected ',' or ')' to close the '(' opened at 1:15");
}

TEST(ParserErrors, MissingBraceAtEndOfFile) {
  EXPECT_EQ(firstError("layer Block(x: int) {\n  y = 1\n"),
            "t.bmb:3:1: error: expected '}' to close the body of layer 'Block' opened at 1:21");
  EXPECT_EQ(firstError("train pretrain for M {\n  batch = 8"),
            "t.bmb:2:12: error: expected '}' to close the settings of 'pretrain' opened at 1:22");
  EXPECT_EQ(firstError("layer A { forward(x) {\n return x\n"),
            "t.bmb:3:1: error: expected '}' to close the body of forward opened at 1:22");
  EXPECT_EQ(firstError("recipe cook {\n prune 2:4"),
            "t.bmb:2:11: error: expected '}' to close recipe 'cook' opened at 1:13");
}

TEST(ParserErrors, SettingWithoutEquals) {
  EXPECT_EQ(firstError("train t for M {\n  batch 8\n}"),
            "t.bmb:2:9: error: expected '=' after setting name 'batch'");
  EXPECT_EQ(firstError("recipe r {\n  moefy experts = 16 top 4\n}"),
            "t.bmb:2:26: error: expected '=' after setting name 'top'");
  EXPECT_EQ(firstError("recipe r {\n  distill { kl = 1 } prune 2:4\n}"),
            "t.bmb:2:22: error: a recipe directive starts on a new line or after ';': "
            "unexpected 'prune' after '}'");
  EXPECT_EQ(firstError("verbalizer v { good [\"x\"] }"),
            "t.bmb:1:21: error: expected '=' after label name 'good'");
}

TEST(ParserErrors, ExpectedExpression) {
  EXPECT_EQ(firstError("layer A {\n  forward(x) {\n    y =\n  }\n}"),
            "t.bmb:4:3: error: expected an expression, found '}'");
  EXPECT_EQ(firstError("layer A { forward(x) { return } }"),
            "t.bmb:1:31: error: expected an expression, found '}'");
  EXPECT_EQ(firstError("layer A { forward(x) { y = a if b else } }"),
            "t.bmb:1:40: error: expected an expression, found '}'");
  EXPECT_EQ(firstError("layer A { y = - }"),
            "t.bmb:1:17: error: expected an expression, found '}'");
  EXPECT_EQ(firstError("recipe r { prune 2:4 on }"),
            "t.bmb:1:25: error: expected an expression, found '}'");
  EXPECT_EQ(firstError("layer A { forward(x) { if { } } }"),
            "t.bmb:1:27: error: expected an expression, found '{'");
}

TEST(ParserErrors, ItemLists) {
  EXPECT_EQ(firstError("layer A {}\nfoo"),
            "t.bmb:2:1: error: expected a declaration (import, layer, model, train, tune, "
            "compress, infer, template, verbalizer, recipe or checkpoint), found 'foo'");
  EXPECT_EQ(firstError("layer A { y = 1 ) }"),
            "t.bmb:1:17: error: expected a layer member ('param', a binding 'name = ...' or "
            "'forward') or '}', found ')'");
  EXPECT_EQ(firstError("layer A { forward(x) { + } }"),
            "t.bmb:1:24: error: expected a statement (an assignment, 'return' or 'if') or "
            "'}', found '+'");
  EXPECT_EQ(firstError("train t for M { 3 }"),
            "t.bmb:1:17: error: expected a setting 'name = value' or '}', found '3'");
  EXPECT_EQ(firstError("verbalizer v { 3 }"),
            "t.bmb:1:16: error: expected a label 'name = [\"word\", ...]' or '}', found '3'");
  EXPECT_EQ(firstError("recipe r { 3 }"),
            "t.bmb:1:12: error: expected a recipe directive or '}', found '3'");
}

TEST(ParserErrors, ExpectedToken) {
  EXPECT_EQ(firstError("train pretrain GPT2 { }"),
            "t.bmb:1:16: error: expected 'for' after 'pretrain', found 'GPT2'");
  EXPECT_EQ(firstError("layer A { param w [3] }"),
            "t.bmb:1:19: error: expected ':' after 'w', found '['");
  EXPECT_EQ(firstError("layer for { }"),
            "t.bmb:1:7: error: expected a name after keyword 'layer', found keyword 'for'");
  EXPECT_EQ(firstError("model M + 3"), "t.bmb:1:9: error: expected '(', '{' or '=', found '+'");
  EXPECT_EQ(firstError("import stdlib"),
            "t.bmb:1:8: error: expected a string after keyword 'import', found 'stdlib'");
  EXPECT_EQ(firstError("template t \"x\""),
            "t.bmb:1:12: error: expected '=' after 't', found string \"x\"");
  EXPECT_EQ(firstError("layer A { forward(x) { y z } }"),
            "t.bmb:1:26: error: expected '=' after 'y', found 'z'");
  EXPECT_EQ(firstError("layer A { y = a. }"),
            "t.bmb:1:18: error: expected a name after '.', found '}'");
  EXPECT_EQ(firstError("layer A { y = f(on x) }"),
            "t.bmb:1:20: error: expected '=' after keyword 'on', found 'x'");
  EXPECT_EQ(firstError("layer A { forward(x) -> { } }"),
            "t.bmb:1:25: error: expected a tensor type such as '[B, T, dim]' or 'i32[B, T]', "
            "found '{'");
  EXPECT_EQ(firstError("layer A { h = repeat(3) 4 }"),
            "t.bmb:1:25: error: expected a layer such as 'Block(dim, heads)' after "
            "'repeat(...)', found '4'");
  EXPECT_EQ(firstError("recipe r { distill from @ \"x\" }"),
            "t.bmb:1:25: error: unexpected '@' after keyword 'from'");
}

TEST(ParserErrors, StructuralChecks) {
  Parsed p = parseText("layer A {\n  forward(x) = x\n  forward(y) = y\n}\n");
  EXPECT_EQ(p.file, nullptr);
  EXPECT_EQ(p.errorLines(),
            (std::vector<std::string>{
                "t.bmb:3:3: error: unexpected 'forward' here: a layer has one forward"}));
  EXPECT_NE(p.output.find("t.bmb:2:3: note: the first forward is here"), std::string::npos);
  EXPECT_EQ(firstError("layer A { y = a < b < c }"),
            "t.bmb:1:21: error: comparisons cannot be chained: write 'a < b and b < c'");
  EXPECT_EQ(firstError("layer A { y = f(a = 1, b) }"),
            "t.bmb:1:24: error: positional argument after keyword argument 'a'");
  EXPECT_EQ(firstError("layer A { y = f(a)(b) }"),
            "t.bmb:1:19: error: only a name such as 'f' or 'a.b' can be called");
}

TEST(ParserErrors, Lexical) {
  EXPECT_EQ(firstError("template t = \"abc\n"), "t.bmb:1:14: error: unterminated string literal");
  EXPECT_EQ(firstError("layer A { y = a $ b }"), "t.bmb:1:17: error: unknown character '$'");
  EXPECT_EQ(firstError("# comment\n"),
            "t.bmb:1:1: error: unknown character '#' (comments start with '//')");
  EXPECT_EQ(firstError("template t = 'x'"),
            "t.bmb:1:14: error: unknown character \"'\" (strings use double quotes)");
  EXPECT_EQ(firstError("template t = \xE2\x80\x9C"
                       "abc\xE2\x80\x9D"),
            "t.bmb:1:14: error: unknown character '\xE2\x80\x9C' (U+201C)");
  EXPECT_EQ(firstError("layer A { y = \x01 }"), "t.bmb:1:15: error: unknown character U+0001");
  EXPECT_EQ(firstError("layer A { /* abc\n"),
            "t.bmb:1:11: error: unterminated block comment: '/*' has no matching '*/'");
  EXPECT_EQ(firstError("template t = \"a\\qb\""),
            "t.bmb:1:16: error: unknown escape sequence '\\q' in string literal");
  EXPECT_EQ(firstError("template t = \"a\\u{110000}b\""),
            "t.bmb:1:16: error: unicode escape '\\u{110000}' is not a valid character");
  EXPECT_EQ(firstError("template t = \"\\u{d800}\""),
            "t.bmb:1:15: error: unicode escape '\\u{d800}' is not a valid character");
  EXPECT_EQ(firstError("template t = \"x\\u12\""),
            "t.bmb:1:16: error: invalid unicode escape (write \\u{...} with 1 to 6 hex digits)");
}

TEST(ParserErrors, OneLexicalErrorDoesNotCascade) {
  // The bad character is dropped; what follows on its line is not reported
  // again, but later lines are.
  Parsed p = parseText("layer A { y = a $ b }\nlayer B { y = ) }\n");
  EXPECT_EQ(p.errorLines(),
            (std::vector<std::string>{"t.bmb:1:17: error: unknown character '$'",
                                      "t.bmb:2:15: error: expected an expression, found ')'"}));
}

TEST(ParserErrors, EchoesOfADroppedCharacterAreNotReported) {
  // `b` becomes a binding without '=' once '$' is dropped; the error that
  // surfaces on the next line is an echo of the '$'.
  Parsed p = parseText("layer A {\n  y = a $ b\n  z = 1\n}\n");
  EXPECT_EQ(p.errorLines(), (std::vector<std::string>{"t.bmb:2:9: error: unknown character '$'"}));
  // Token errors print in source order among syntax errors.
  Parsed q = parseText("layer A { y = ) }\nlayer B { y = 1 $ }\nlayer C { y = ] }\n");
  EXPECT_EQ(q.errorLines(),
            (std::vector<std::string>{"t.bmb:1:15: error: expected an expression, found ')'",
                                      "t.bmb:2:17: error: unknown character '$'",
                                      "t.bmb:3:15: error: expected an expression, found ']'"}));
}

TEST(ParserErrors, Numbers) {
  EXPECT_EQ(firstError("train t for M { batch = 99999999999999999999 }"),
            "t.bmb:1:25: error: integer literal '99999999999999999999' is too large "
            "(max 9223372036854775807)");
  EXPECT_EQ(firstError("train t for M { batch = 9223372036854775808 }"),
            "t.bmb:1:25: error: integer literal '9223372036854775808' is too large "
            "(max 9223372036854775807)");
  EXPECT_EQ(firstError("train t for M { lr = 1e999 }"),
            "t.bmb:1:22: error: floating-point literal '1e999' is out of range");
  EXPECT_EQ(firstError("train t for M { lr = 1e-999 }"),
            "t.bmb:1:22: error: floating-point literal '1e-999' is out of range");
  EXPECT_EQ(firstError("train t for M { lr = 12abc }"),
            "t.bmb:1:22: error: invalid number '12abc': a number cannot be followed by letters");
  EXPECT_EQ(firstError("train t for M { lr = 1.0f }"),
            "t.bmb:1:22: error: invalid number '1.0f': a number cannot be followed by letters");
  EXPECT_EQ(firstError("infer c for M { memory = 0x10 }"),
            "t.bmb:1:26: error: invalid number '0x10': hexadecimal literals are not supported");
  EXPECT_EQ(firstError("infer c for M { memory = 8B }"),
            "t.bmb:1:26: error: unknown size unit 'B' in '8B' (use KB, MB, GB, TB, KiB, MiB, "
            "GiB or TiB)");
  EXPECT_EQ(firstError("infer c for M { memory = 0.1KiB }"),
            "t.bmb:1:26: error: size literal '0.1KiB' is not a whole number of bytes");
  EXPECT_EQ(firstError("infer c for M { memory = 9000000TiB }"),
            "t.bmb:1:26: error: size literal '9000000TiB' is too large "
            "(max 9223372036854775807 bytes)");
  // Long literals are cut short in messages.
  std::string digits(200, '9');
  EXPECT_EQ(firstError("train t for M { b = " + digits + " }"),
            "t.bmb:1:21: error: integer literal '" + std::string(32, '9') +
                "...' is too large (max 9223372036854775807)");
}

TEST(ParserErrors, Bytes) {
  EXPECT_EQ(firstError(std::string("layer A { }\n  x\0", 16)),
            "t.bmb:2:4: error: file is not UTF-8 text");
  EXPECT_EQ(firstError("layer A { y = 1 }\n  \xC3\x28\n"),
            "t.bmb:2:3: error: file is not UTF-8 text");
  EXPECT_EQ(firstError("\xC0\xAF"), "t.bmb:1:1: error: file is not UTF-8 text"); // overlong
  EXPECT_EQ(firstError("// \xED\xA0\x80"), "t.bmb:1:4: error: file is not UTF-8 text");
  EXPECT_EQ(firstError("// \xF4\x90\x80\x80"), "t.bmb:1:4: error: file is not UTF-8 text");
  EXPECT_EQ(firstError("// \xE2\x82"), "t.bmb:1:4: error: file is not UTF-8 text");
  ParseLimits small;
  small.maxFileBytes = 10;
  EXPECT_EQ(firstError("layer A { y = 1 }", small),
            "t.bmb:1:1: error: file is too large (17 bytes; the limit is 10)");
}

TEST(ParserErrors, Nesting) {
  ParseLimits limits;
  limits.maxNesting = 4;
  EXPECT_EQ(firstError("layer A { y = ((((x)))) }", limits),
            "t.bmb:1:18: error: brackets nested too deeply (the limit is 4)");
  EXPECT_EQ(firstError("layer A { y = - - - -x }", limits),
            "t.bmb:1:21: error: expression nested too deeply (the limit is 4)");
  EXPECT_TRUE(parseText("layer A { y = (((x))) }", limits).file);
  EXPECT_TRUE(parseText("layer A { y = - - -x - - - -x }", limits).file); // runs reset
  limits.maxExprDepth = 3;
  EXPECT_EQ(firstError("layer A { y = a + b + c + d }", limits),
            "t.bmb:1:25: error: expression nested too deeply (the limit is 3)");
}

TEST(ParserErrors, ManyErrorsStopAtTheLimit) {
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += "layer A { y = ) }\n";
  Parsed p = parseText(text);
  EXPECT_EQ(p.file, nullptr);
  EXPECT_EQ(p.errorLines().size(), 21u); // 20 shown + "too many errors"
  EXPECT_NE(p.output.find("error: too many errors emitted, stopping now"), std::string::npos);
}

TEST(ParserErrors, SeveralErrorsInOneRun) {
  Parsed p = parseText("layer A {\n  y = )\n}\ntrain t for M {\n  batch 8\n}\nfoo\n");
  EXPECT_EQ(p.errorLines(),
            (std::vector<std::string>{
                "t.bmb:2:7: error: expected an expression, found ')'",
                "t.bmb:5:9: error: expected '=' after setting name 'batch'",
                "t.bmb:7:1: error: expected a declaration (import, layer, model, train, tune, "
                "compress, infer, template, verbalizer, recipe or checkpoint), found 'foo'"}));
}

} // namespace
