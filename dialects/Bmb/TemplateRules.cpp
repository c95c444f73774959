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

const char *bmb::templates::kindName(Segment::Kind kind) {
  switch (kind) {
  case Segment::Kind::Text: return "text";
  case Segment::Kind::Field: return "field";
  case Segment::Kind::Meta: return "meta";
  case Segment::Kind::Mask: return "mask";
  case Segment::Kind::Soft: return "soft";
  }
  return "?";
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return s;
}

/// An argument: a bare word, or a word in "double" or 'single' quotes.
struct Arg {
  std::string value;
  bool quoted = false;
};

bool splitArgs(std::string_view s, std::vector<Arg> &out) {
  size_t i = 0;
  while (true) {
    while (i < s.size() && s[i] == ' ')
      ++i;
    Arg a;
    if (i < s.size() && (s[i] == '"' || s[i] == '\'')) {
      size_t close = s.find(s[i], i + 1);
      if (close == std::string_view::npos)
        return false;
      a.value = std::string(s.substr(i + 1, close - i - 1));
      a.quoted = true;
      i = close + 1;
    } else {
      size_t end = s.find(',', i);
      a.value = std::string(trim(s.substr(i, end == std::string_view::npos ? s.npos : end - i)));
      i = end == std::string_view::npos ? s.size() : end;
      if (a.value.empty())
        return false;
    }
    out.push_back(std::move(a));
    while (i < s.size() && s[i] == ' ')
      ++i;
    if (i == s.size())
      return true;
    if (s[i] != ',')
      return false;
    ++i;
  }
}

/// Reads the shortenable mark of a field; false on anything else.
bool shortenMark(const Arg &a, bool &shortenable) {
  if (a.quoted)
    return false;
  if (a.value == "shortenable")
    shortenable = true;
  else if (a.value == "fixed")
    shortenable = false;
  else
    return false;
  return true;
}

} // namespace

Plan bmb::templates::plan(std::string_view text) {
  Plan out;
  auto fail = [&](size_t offset, std::string message) {
    out.segments.clear();
    out.error = std::move(message);
    out.errorOffset = offset;
    return out;
  };
  Scan s = scan(text);
  if (s.error == Scan::Error::UnmatchedClose)
    return fail(s.errorOffset, "unmatched '}' (write '}}' for a brace)");
  if (s.error == Scan::Error::Unclosed)
    return fail(s.errorOffset, "'{' without a closing '}'");

  auto addText = [&](size_t from, size_t to) {
    std::string lit;
    for (size_t i = from; i < to; ++i) {
      lit += text[i];
      if ((text[i] == '{' || text[i] == '}') && i + 1 < to && text[i + 1] == text[i])
        ++i;
    }
    if (!lit.empty())
      out.segments.push_back({Segment::Kind::Text, lit, false, false, from});
  };

  size_t pos = 0;
  for (const Placeholder &ph : s.placeholders) {
    addText(pos, ph.offset);
    pos = ph.offset + ph.name.size() + 2;
    std::string inner = "{" + std::string(ph.name) + "}";
    std::string_view body = ph.name;
    size_t colon = body.find(':');
    std::string_view name = trim(body.substr(0, colon));
    std::vector<Arg> args;
    if (colon != std::string_view::npos && !splitArgs(body.substr(colon + 1), args))
      return fail(ph.offset, "malformed placeholder '" + inner +
                                 "' (write {name} or {name: arg, ...}; quote words with \" or ')");

    Segment seg{Segment::Kind::Text, "", false, false, ph.offset};
    if (name == "text_a" || name == "text_b") {
      seg.kind = Segment::Kind::Field;
      seg.text = std::string(name);
      seg.shortenable = true;
      if (args.size() > 1 || (args.size() == 1 && !shortenMark(args[0], seg.shortenable)))
        return fail(ph.offset, "'" + inner + "': a field takes 'shortenable' or 'fixed'");
    } else if (name == "meta") {
      seg.kind = Segment::Kind::Meta;
      if (args.empty() || args[0].quoted || !isPlaceholderName(args[0].value))
        return fail(ph.offset, "'" + inner + "': write {meta: FIELD} with the data field's name");
      seg.text = args[0].value;
      if (args.size() > 2 || (args.size() == 2 && !shortenMark(args[1], seg.shortenable)))
        return fail(ph.offset, "'" + inner + "': a meta field takes 'shortenable' or 'fixed' after its name");
    } else if (name == "mask") {
      seg.kind = Segment::Kind::Mask;
      if (!args.empty())
        return fail(ph.offset, "'" + inner + "': {mask} takes no arguments");
    } else if (name == "soft") {
      seg.kind = Segment::Kind::Soft;
      if (args.size() > 1 || (args.size() == 1 && (!args[0].quoted || args[0].value.empty())))
        return fail(ph.offset, "'" + inner + "': write {soft} or {soft: \"word\"} (the word whose "
                                             "embedding starts the soft token)");
      if (args.size() == 1)
        seg.text = args[0].value;
    } else {
      return fail(ph.offset, "unknown placeholder '{" + std::string(name) +
                                 "}' (expected {text_a}, {text_b}, {meta: FIELD}, {mask} or {soft})");
    }
    // A space just before the placeholder belongs to it (see Segment).
    if (!out.segments.empty() && out.segments.back().kind == Segment::Kind::Text &&
        out.segments.back().text.back() == ' ') {
      out.segments.back().text.pop_back();
      if (out.segments.back().text.empty())
        out.segments.pop_back();
      seg.space = true;
    }
    out.segments.push_back(std::move(seg));
  }
  addText(pos, text.size());
  return out;
}
