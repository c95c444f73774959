//===- prompt/assemble.cpp - One example under a template -> token ids ----===//
//
// OpenPrompt's tokenizer wrapper, for our tokenizers: tokenize each segment
// on its own, truncate shortenable segments to max_len, then frame the whole
// with the model family's special tokens. See bmrt/prompt.h for the rules;
// segmentText is where we differ from OpenPrompt (SentencePiece's "▁").
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "bmrt/prompt.h"

#include <algorithm>
#include <optional>

namespace bmrt {

std::optional<int32_t> maskTokenId(const Tokenizer &tok) {
  // An added special token encodes to one id that streams no text.
  for (const char *name : {"[MASK]", "<mask>"}) {
    std::vector<int32_t> ids = tok.encode(name, false);
    if (ids.size() == 1 && tok.tokenBytes(ids[0]).empty())
      return ids[0];
  }
  return std::nullopt;
}

std::string segmentText(const Tokenizer &tok, const std::string &text) {
  if (text.empty() || text[0] != ' ')
    return text;
  // tokenBytes streams a token as a middle token: a word start ("▁a",
  // WordPiece's "a") comes with its space.
  std::vector<int32_t> ids = tok.encode("a", false);
  bool startsAsWord = !ids.empty() && tok.tokenBytes(ids[0]).compare(0, 1, " ") == 0;
  return startsAsWord ? text.substr(1) : text;
}

namespace {

/// What the tokenizer adds around one text: encode("a") with and without
/// special tokens, and where the plain ids sit inside the framed ones.
struct Framing {
  std::vector<int32_t> prefix, suffix;
};

Framing framingOf(const Tokenizer &tok) {
  std::vector<int32_t> plain = tok.encode("a", false), framed = tok.encode("a", true);
  auto at = std::search(framed.begin(), framed.end(), plain.begin(), plain.end());
  if (plain.empty() || at == framed.end())
    fail(std::string("prompt: cannot tell the ") + tok.kind() +
         " tokenizer's special tokens apart from its text (encode(\"a\") with special tokens "
         "does not contain it without them)");
  return {std::vector<int32_t>(framed.begin(), at),
          std::vector<int32_t>(at + plain.size(), framed.end())};
}

const std::string *field(const PromptExample &e, const std::string &name) {
  for (const auto &[k, v] : e.fields)
    if (k == name)
      return &v;
  return nullptr;
}

/// Removes `excess` tokens from the shortenable parts by the policy.
void truncate(std::vector<std::vector<int32_t>> &parts, const std::vector<bool> &shortenable,
              Truncate policy, int64_t excess) {
  size_t n = parts.size();
  if (policy == Truncate::Balanced) {
    for (; excess > 0; --excess) {
      size_t longest = n;
      for (size_t i = 0; i < n; ++i)
        if (shortenable[i] && (longest == n || parts[i].size() >= parts[longest].size()))
          longest = i; // >=: ties go to the later part
      parts[longest].pop_back();
    }
    return;
  }
  for (size_t k = 0; k < n && excess > 0; ++k) {
    size_t i = policy == Truncate::Tail ? n - 1 - k : k;
    if (!shortenable[i])
      continue;
    int64_t cut = std::min<int64_t>(excess, parts[i].size());
    if (policy == Truncate::Tail)
      parts[i].resize(parts[i].size() - cut);
    else
      parts[i].erase(parts[i].begin(), parts[i].begin() + cut);
    excess -= cut;
  }
}

} // namespace

AssembledPrompt assemblePrompt(const PromptTemplate &t, const PromptExample &example,
                               const Tokenizer &tok) {
  using K = PromptSegment::Kind;
  std::vector<std::vector<int32_t>> parts;
  std::vector<bool> shortenable;
  std::optional<int32_t> mask = maskTokenId(tok); // none: a causal LM
  int64_t canShorten = 0, total = 0;
  for (const PromptSegment &s : t.segments) {
    std::vector<int32_t> ids;
    switch (s.kind) {
    case K::Text:
      ids = tok.encode(segmentText(tok, s.text), false);
      break;
    case K::Field:
    case K::Meta: {
      const std::string *value = field(example, s.text);
      if (!value)
        fail(example.where + ": no field '" + s.text + "' (the prompt template reads {" +
             (s.kind == K::Meta ? "meta: " : "") + s.text + "})");
      ids = value->empty() ? std::vector<int32_t>{}
                           : tok.encode(segmentText(tok, (s.space ? " " : "") + *value), false);
      break;
    }
    case K::Mask:
      if (mask)
        ids = {*mask};
      break;
    case K::Soft:
      ids = {0}; // overwritten by the soft token's embedding row
      break;
    }
    bool cut = (s.kind == K::Field || s.kind == K::Meta) && s.shortenable;
    canShorten += cut ? ids.size() : 0;
    total += ids.size();
    parts.push_back(std::move(ids));
    shortenable.push_back(cut);
  }
  Framing frame = framingOf(tok);
  total += frame.prefix.size() + frame.suffix.size();

  AssembledPrompt out;
  if (t.maxLen > 0 && total > t.maxLen) {
    out.truncated = total - t.maxLen;
    if (out.truncated > canShorten)
      fail(example.where + ": the prompt is " + std::to_string(total) + " tokens, longer than " +
           "max_len " + std::to_string(t.maxLen) + ", and only " + std::to_string(canShorten) +
           " of them are in shortenable fields");
    truncate(parts, shortenable, t.truncate, out.truncated);
  }

  out.ids = frame.prefix;
  int64_t softIndex = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (t.segments[i].kind == K::Mask) {
      // A causal LM scores the label word with the logits of the token
      // before the mask, which adds no token.
      if (!mask && out.ids.empty())
        fail(example.where + ": nothing precedes the {mask}, so a causal LM (the " +
             tok.kind() + " tokenizer has no mask token) has no logits to predict it from");
      out.maskPositions.push_back(mask ? out.ids.size() : out.ids.size() - 1);
    }
    if (t.segments[i].kind == K::Soft)
      out.softSlots.emplace_back(out.ids.size(), softIndex++);
    out.ids.insert(out.ids.end(), parts[i].begin(), parts[i].end());
  }
  out.ids.insert(out.ids.end(), frame.suffix.begin(), frame.suffix.end());
  return out;
}

PromptExample contentFreeExample(const PromptTemplate &t) {
  PromptExample e;
  e.where = "the content-free input";
  for (const PromptSegment &s : t.segments)
    if (s.kind == PromptSegment::Kind::Field || s.kind == PromptSegment::Kind::Meta)
      e.fields.emplace_back(s.text, "");
  return e;
}

} // namespace bmrt
