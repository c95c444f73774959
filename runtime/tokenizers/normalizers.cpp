//===- tokenizers/normalizers.cpp - HF normalizers the families use -------===//
//
// BertNormalizer follows HF's bert.rs step by step (clean text, pad CJK,
// strip accents, lower-case, in that order), because the order is visible:
// accents are stripped before lower-casing, so e.g. U+0130 lower-cases to
// "i" + U+0307 and keeps its dot. Character classes are HF's (unicode.h).
//
//===----------------------------------------------------------------------===//
#include "pipeline.h"

#include "unicode.h"

namespace bmrt::tok {

namespace {

using CodePoints = std::vector<char32_t>;

// clean_text: drop NUL, U+FFFD and control characters; every whitespace
// character becomes a plain space. Tab, newline and return are whitespace,
// not control.
CodePoints bertCleanText(const CodePoints &in) {
  CodePoints out;
  out.reserve(in.size());
  for (char32_t c : in) {
    bool tabOrNewline = c == '\t' || c == '\n' || c == '\r';
    if (c == 0 || c == unicode::kReplacementChar ||
        (!tabOrNewline && (unicode::charFlags(c) & unicode::kBertControl)))
      continue;
    out.push_back(tabOrNewline || unicode::isWhiteSpace(c) ? U' ' : c);
  }
  return out;
}

CodePoints bertPadChinese(const CodePoints &in) {
  CodePoints out;
  out.reserve(in.size());
  for (char32_t c : in) {
    if (unicode::isBertChineseChar(c)) {
      out.push_back(U' ');
      out.push_back(c);
      out.push_back(U' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

CodePoints dropNonspacingMarks(const CodePoints &in) {
  CodePoints out;
  out.reserve(in.size());
  for (char32_t c : in)
    if (!(unicode::charFlags(c) & unicode::kBertNonspacingMark))
      out.push_back(c);
  return out;
}

CodePoints lowercase(const CodePoints &in) {
  CodePoints out;
  out.reserve(in.size());
  for (char32_t c : in)
    unicode::appendLowercase(out, c);
  return out;
}

std::string replaceAll(const std::string &text, const std::string &pattern,
                       const std::string &content) {
  std::string out;
  size_t from = 0;
  for (size_t at; (at = text.find(pattern, from)) != std::string::npos; from = at + pattern.size()) {
    out.append(text, from, at - from);
    out += content;
  }
  out.append(text, from, std::string::npos);
  return out;
}

std::string applyStep(const NormalizerStep &step, std::string text) {
  using Kind = NormalizerStep::Kind;
  switch (step.kind) {
  case Kind::Prepend:
    return text.empty() ? text : step.content + text; // HF: only non-empty strings
  case Kind::Replace:
    return replaceAll(text, step.pattern, step.content);
  case Kind::Lowercase:
    return unicode::fromCodePoints(lowercase(unicode::toCodePoints(text)));
  case Kind::Nfd:
    return unicode::fromCodePoints(unicode::nfd(unicode::toCodePoints(text)));
  case Kind::StripAccents: // HF's StripAccents only filters; NFD is a separate step
    return unicode::fromCodePoints(dropNonspacingMarks(unicode::toCodePoints(text)));
  case Kind::Bert: {
    CodePoints cps = unicode::toCodePoints(text);
    if (step.cleanText)
      cps = bertCleanText(cps);
    if (step.handleChineseChars)
      cps = bertPadChinese(cps);
    if (step.stripAccents)
      cps = dropNonspacingMarks(unicode::nfd(cps));
    if (step.lowercase)
      cps = lowercase(cps);
    return unicode::fromCodePoints(cps);
  }
  }
  return text;
}

} // namespace

std::string normalize(const std::vector<NormalizerStep> &steps, std::string text) {
  for (const NormalizerStep &step : steps)
    text = applyStep(step, std::move(text));
  return text;
}

} // namespace bmrt::tok
