//===- tokenizers/pretokenizers.cpp - HF pre-tokenizers the families use --===//
//
// ByteLevel (GPT-2): optional prefix space, GPT-2's regex split, then every
// byte mapped to its printable character. BertPreTokenizer: whitespace
// separates and is dropped, each punctuation character is a piece of its
// own. Metaspace (SentencePiece): spaces become "▁", one is prepended, and
// every "▁" starts a new piece.
//
//===----------------------------------------------------------------------===//
#include "byte_level.h"
#include "pipeline.h"
#include "unicode.h"

namespace bmrt::tok {

namespace {

void byteLevel(const PreTokenizerStep &step, Piece piece, std::vector<Piece> &out) {
  if (step.addPrefixSpace && (piece.text.empty() || piece.text[0] != ' '))
    piece.text.insert(0, 1, ' ');
  if (!step.useRegex) {
    out.push_back({bytesToUnicode(piece.text), piece.atStart});
    return;
  }
  std::vector<std::pair<size_t, size_t>> ranges;
  splitGpt2(piece.text, ranges);
  for (auto [begin, end] : ranges)
    out.push_back({bytesToUnicode(std::string_view(piece.text).substr(begin, end - begin)),
                   piece.atStart && begin == 0});
}

void bert(const Piece &piece, std::vector<Piece> &out) {
  std::string_view text = piece.text;
  size_t wordStart = 0;
  auto flush = [&](size_t end) {
    if (end > wordStart)
      out.push_back({std::string(text.substr(wordStart, end - wordStart)),
                     piece.atStart && wordStart == 0});
  };
  for (size_t pos = 0; pos < text.size();) {
    unicode::Utf8Unit u = unicode::decodeUtf8(text, pos);
    uint32_t flags = unicode::charFlags(u.cp);
    if (flags & unicode::kWhiteSpace) {
      flush(pos);
      wordStart = pos + u.length;
    } else if (flags & unicode::kBertPunctuation) {
      flush(pos);
      out.push_back({std::string(text.substr(pos, u.length)), piece.atStart && pos == 0});
      wordStart = pos + u.length;
    }
    pos += u.length;
  }
  flush(text.size());
}

std::string replaceSpaces(const std::string &text, const std::string &replacement) {
  std::string out;
  out.reserve(text.size() + 8);
  for (char c : text) {
    if (c == ' ')
      out += replacement;
    else
      out += c;
  }
  return out;
}

void metaspace(const PreTokenizerStep &step, const Piece &piece, std::vector<Piece> &out) {
  const std::string &rep = step.replacement;
  std::string text = replaceSpaces(piece.text, rep);
  bool startsWithRep = text.compare(0, rep.size(), rep) == 0;
  using Prepend = PreTokenizerStep::Prepend;
  if (!startsWithRep && (step.prependScheme == Prepend::Always ||
                         (step.prependScheme == Prepend::First && piece.atStart)))
    text.insert(0, rep);
  if (!step.split) {
    out.push_back({text, piece.atStart});
    return;
  }
  // Split before every replacement character (HF's MergedWithNext).
  size_t from = 0;
  for (size_t at = text.find(rep, 1); at != std::string::npos; at = text.find(rep, at + rep.size())) {
    out.push_back({text.substr(from, at - from), piece.atStart && from == 0});
    from = at;
  }
  out.push_back({text.substr(from), piece.atStart && from == 0});
}

} // namespace

void preTokenize(const std::vector<PreTokenizerStep> &steps, std::vector<Piece> &pieces) {
  for (const PreTokenizerStep &step : steps) {
    std::vector<Piece> next;
    next.reserve(pieces.size() * 2);
    for (Piece &piece : pieces) {
      if (piece.text.empty()) // HF never hands a step an empty piece
        continue;
      switch (step.kind) {
      case PreTokenizerStep::Kind::ByteLevel:
        byteLevel(step, std::move(piece), next);
        break;
      case PreTokenizerStep::Kind::Bert:
        bert(piece, next);
        break;
      case PreTokenizerStep::Kind::Metaspace:
        metaspace(step, piece, next);
        break;
      }
    }
    pieces.clear();
    for (Piece &p : next)
      if (!p.text.empty())
        pieces.push_back(std::move(p));
  }
}

} // namespace bmrt::tok
