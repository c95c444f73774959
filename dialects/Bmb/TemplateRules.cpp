//===- TemplateRules.cpp - How a prompt template's text is read -----------===//
#include "dialects/Bmb/TemplateRules.h"

using namespace bmb::templates;

Scan bmb::templates::scan(std::string_view text) {
  Scan out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      ++i; // `{{` or `}}`: a literal brace
      continue;
    }
    if (c == '}') {
      out.error = Scan::Error::UnmatchedClose;
      out.errorOffset = i;
      return out;
    }
    if (c != '{')
      continue;
    size_t end = text.find('}', i);
    if (end == std::string_view::npos) {
      out.error = Scan::Error::Unclosed;
      out.errorOffset = i;
      return out;
    }
    out.placeholders.push_back({i, text.substr(i + 1, end - i - 1)});
    i = end;
  }
  return out;
}

bool bmb::templates::isPlaceholderName(std::string_view name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9'))
    return false;
  for (char ch : name)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
          (ch >= '0' && ch <= '9') || ch == '_'))
      return false;
  return true;
}
