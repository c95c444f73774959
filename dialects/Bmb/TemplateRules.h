//===- TemplateRules.h - How a prompt template's text is read ---*- C++ -*-===//
//
// `{name}` or `{name: arg, ...}` is a placeholder; `{{` and `}}` are literal
// braces. Sema (which reports errors at the user's line), bmb.template's
// verifier (which checks IR read back) and prompt lowering (which builds the
// segment plan) all read templates with this, so they can never disagree.
// Plain C++, like ShapeRules.h.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_DIALECTS_BMB_TEMPLATERULES_H
#define BMB_DIALECTS_BMB_TEMPLATERULES_H

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace bmb::templates {

struct Placeholder {
  size_t offset;         // of its '{' in the text
  std::string_view name; // between the braces, a view into the text
};

struct Scan {
  enum class Error { None, UnmatchedClose, Unclosed };
  std::vector<Placeholder> placeholders; // in order, up to the first error
  Error error = Error::None;
  size_t errorOffset = 0; // of the offending brace
};

/// Splits `text` into placeholders; stops at the first brace that does not
/// pair up. What is between the braces is not checked here (see plan).
Scan scan(std::string_view text);

/// A well-formed name: letters, digits and '_', not starting with a digit.
bool isPlaceholderName(std::string_view name);

/// One piece of a template, in order. The placeholders (OpenPrompt's):
///   {text_a} {text_b}             an input field, shortenable by default;
///   {text_a: fixed}               ... never shortened;
///   {meta: FIELD}                 any other field of the data, not
///                                 shortenable unless `{meta: FIELD, shortenable}`;
///   {mask}                        a slot the model predicts (one or more);
///   {soft}  {soft: "word"}        a trained soft token, initialised from
///                                 the embedding of "word" if given ('word' too).
/// A placeholder right after a space owns that space (`space`): the field's
/// text or the label words at a mask are tokenized with a leading space, as
/// OpenPrompt does for byte-level BPE ("It was good" -> " good").
struct Segment {
  enum class Kind { Text, Field, Meta, Mask, Soft };
  Kind kind;
  std::string text; // Text: literal text; Field/Meta: field name; Soft: init word or ""
  bool space = false;
  bool shortenable = false;
  size_t offset = 0; // in the template text
};

struct Plan {
  std::vector<Segment> segments;
  std::string error; // "" when the template is well formed
  size_t errorOffset = 0;
};

/// Reads a whole template. The first problem is reported in `error` as a
/// sentence that follows "template 'NAME': ".
Plan plan(std::string_view text);

const char *kindName(Segment::Kind kind); // "text", "field", "meta", "mask", "soft"

} // namespace bmb::templates

#endif // BMB_DIALECTS_BMB_TEMPLATERULES_H
