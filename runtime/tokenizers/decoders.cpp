//===- tokenizers/decoders.cpp - HF decoders the families use -------------===//
//
// Each step maps a list of token strings to a new list, as HF's
// decode_chain does; the final list is concatenated. The per-token details
// are HF's and visible in the output, e.g. the WordPiece decoder cleans up
// " ." per token (not over the joined text), ByteFallback turns an invalid
// run of byte tokens into one U+FFFD per byte, and ByteLevel decodes with
// from_utf8_lossy (one U+FFFD per maximal ill-formed subpart).
//
//===----------------------------------------------------------------------===//
#include "byte_level.h"
#include "pipeline.h"
#include "unicode.h"

namespace bmrt::tok {

namespace {

using Tokens = std::vector<std::string>;

std::string replaceAll(const std::string &text, const std::string &pattern,
                       const std::string &content) {
  if (pattern.empty())
    return text;
  std::string out;
  size_t from = 0;
  for (size_t at; (at = text.find(pattern, from)) != std::string::npos; from = at + pattern.size()) {
    out.append(text, from, at - from);
    out += content;
  }
  out.append(text, from, std::string::npos);
  return out;
}

bool isValidUtf8(std::string_view bytes) {
  for (size_t pos = 0; pos < bytes.size();) {
    unicode::Utf8Unit u = unicode::decodeUtf8(bytes, pos);
    if (!u.valid)
      return false;
    pos += u.length;
  }
  return true;
}

Tokens byteLevel(const Tokens &tokens, bool streaming) {
  std::string bytes, tokenBytes;
  for (const std::string &t : tokens) {
    if (unicodeToBytes(t, tokenBytes))
      bytes += tokenBytes;
    else
      bytes += t; // not made of mapped characters (an added token): as is
  }
  return {streaming ? bytes : unicode::toValidUtf8(bytes)};
}

// HF's cleanup(), applied to each token separately.
std::string wordPieceCleanup(std::string s) {
  static const char *const kPairs[][2] = {
      {" .", "."},   {" ?", "?"},    {" !", "!"},     {" ,", ","},         {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"},
      {" 're", "'re"}};
  for (const auto &pair : kPairs)
    s = replaceAll(s, pair[0], pair[1]);
  return s;
}

Tokens wordPiece(const DecoderStep &step, Tokens tokens, bool streaming) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string &t = tokens[i];
    if (i != 0 || streaming) {
      if (t.compare(0, step.prefix.size(), step.prefix) == 0)
        t.erase(0, step.prefix.size());
      else
        t.insert(0, 1, ' ');
    }
    if (step.cleanup)
      t = wordPieceCleanup(std::move(t));
  }
  return tokens;
}

Tokens metaspace(const DecoderStep &step, Tokens tokens, bool streaming) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    // The first token loses every replacement character (HF does exactly
    // this), the others get spaces.
    bool drop = i == 0 && !streaming && !step.prependNever;
    tokens[i] = replaceAll(tokens[i], step.replacement, drop ? "" : " ");
  }
  return tokens;
}

// "<0xNN>" -> NN; anything else -> -1. Mirrors u8::from_str_radix on the two
// characters after "<0x" (which also accepts lower case, and "+N").
int byteFallbackValue(const std::string &t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>')
    return -1;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  };
  if (t[3] == '+')
    return hex(t[4]);
  int hi = hex(t[3]), lo = hex(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

Tokens byteFallback(const Tokens &tokens, bool streaming) {
  Tokens out;
  std::string pending;
  auto flush = [&] {
    if (pending.empty())
      return;
    if (streaming || isValidUtf8(pending))
      out.push_back(pending);
    else
      for (size_t i = 0; i < pending.size(); ++i)
        out.push_back("\xEF\xBF\xBD"); // U+FFFD per byte, as HF
    pending.clear();
  };
  for (const std::string &t : tokens) {
    int b = byteFallbackValue(t);
    if (b >= 0) {
      pending += (char)b;
      continue;
    }
    flush();
    out.push_back(t);
  }
  flush();
  return out;
}

// Removes up to `start` leading and `stop` trailing copies of one character.
Tokens strip(const DecoderStep &step, Tokens tokens) {
  char32_t content = unicode::toCodePoints(step.content).at(0);
  for (std::string &t : tokens) {
    std::vector<char32_t> cps = unicode::toCodePoints(t);
    size_t begin = 0, end = cps.size();
    while (begin < step.stripStart && begin < end && cps[begin] == content)
      ++begin;
    for (size_t i = 0; i < step.stripStop && end > begin && cps[end - 1] == content; ++i)
      --end;
    t = unicode::fromCodePoints(std::vector<char32_t>(cps.begin() + begin, cps.begin() + end));
  }
  return tokens;
}

} // namespace

std::string decodeTokens(const std::vector<DecoderStep> &steps, std::vector<std::string> tokens,
                         bool streaming) {
  using Kind = DecoderStep::Kind;
  for (const DecoderStep &step : steps) {
    switch (step.kind) {
    case Kind::ByteLevel:
      tokens = byteLevel(tokens, streaming);
      break;
    case Kind::WordPiece:
      tokens = wordPiece(step, std::move(tokens), streaming);
      break;
    case Kind::Metaspace:
      tokens = metaspace(step, std::move(tokens), streaming);
      break;
    case Kind::Replace:
      for (std::string &t : tokens)
        t = replaceAll(t, step.pattern, step.content);
      break;
    case Kind::ByteFallback:
      tokens = byteFallback(tokens, streaming);
      break;
    case Kind::Fuse: {
      std::string all;
      for (const std::string &t : tokens)
        all += t;
      tokens = {all};
      break;
    }
    case Kind::Strip:
      if (!streaming)
        tokens = strip(step, std::move(tokens));
      break;
    }
  }
  std::string out;
  for (const std::string &t : tokens)
    out += t;
  return out;
}

} // namespace bmrt::tok
