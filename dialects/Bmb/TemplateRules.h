//===- TemplateRules.h - How a prompt template's text is read ---*- C++ -*-===//
//
// `{name}` is a placeholder; `{{` and `}}` are literal braces. Sema (which
// knows which names a template may use) and bmb.template's verifier (which
// checks the text of IR read back) both read templates with this, so they
// can never disagree. Plain C++, like ShapeRules.h.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_DIALECTS_BMB_TEMPLATERULES_H
#define BMB_DIALECTS_BMB_TEMPLATERULES_H

#include <cstddef>
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
/// pair up. Names are not checked here (see isPlaceholderName).
Scan scan(std::string_view text);

/// A well-formed name: letters, digits and '_', not starting with a digit.
bool isPlaceholderName(std::string_view name);

} // namespace bmb::templates

#endif // BMB_DIALECTS_BMB_TEMPLATERULES_H
