//===- tokenizers/added_vocabulary.cpp - Matching added tokens in text ----===//
//
// HF finds added tokens with an Aho-Corasick automaton in leftmost-longest
// mode: the match that starts first wins, the longest at that start, and the
// search goes on after it. With the handful of added tokens real files have,
// a scan that tries the patterns starting with the current byte (longest
// first) gives the same matches without building an automaton.
//
//===----------------------------------------------------------------------===//
#include "added_vocabulary.h"

#include "unicode.h"

#include <algorithm>
#include <cstdint>

namespace bmrt::tok {

namespace {

constexpr size_t kText = SIZE_MAX;

// Regex \w$ on text[..end] and ^\w on text[begin..].
bool endsWithWordChar(std::string_view text, size_t end) {
  if (end == 0)
    return false;
  size_t start = end - 1;
  while (start > 0 && ((uint8_t)text[start] & 0xC0) == 0x80)
    --start;
  return unicode::charFlags(unicode::decodeUtf8(text, start).cp) & unicode::kWordChar;
}

bool startsWithWordChar(std::string_view text, size_t begin) {
  if (begin >= text.size())
    return false;
  return unicode::charFlags(unicode::decodeUtf8(text, begin).cp) & unicode::kWordChar;
}

} // namespace

void AddedVocabulary::add(AddedToken token) {
  for (AddedToken &t : tokens_) {
    if (t.content == token.content) {
      t = std::move(token);
      return;
    }
  }
  tokens_.push_back(std::move(token));
}

void AddedVocabulary::buildMatcher(Matcher &m) const {
  m.byFirstByte.assign(256, {});
  for (size_t i = 0; i < m.patterns.size(); ++i)
    if (!m.patterns[i].empty())
      m.byFirstByte[(uint8_t)m.patterns[i][0]].push_back(i);
  for (auto &bucket : m.byFirstByte)
    std::stable_sort(bucket.begin(), bucket.end(), [&](size_t a, size_t b) {
      return m.patterns[a].size() > m.patterns[b].size();
    });
}

void AddedVocabulary::build(const std::vector<NormalizerStep> &normalizer) {
  raw_ = Matcher();
  normalized_ = Matcher();
  for (size_t i = 0; i < tokens_.size(); ++i) {
    Matcher &m = tokens_[i].normalized ? normalized_ : raw_;
    m.patterns.push_back(tokens_[i].normalized ? normalize(normalizer, tokens_[i].content)
                                               : tokens_[i].content);
    m.tokenIndex.push_back(i);
  }
  buildMatcher(raw_);
  buildMatcher(normalized_);
}

std::vector<AddedVocabulary::Match>
AddedVocabulary::findMatches(std::string_view sentence, const Matcher &m) const {
  std::vector<Match> out;
  size_t startOffset = 0; // end of the previous accepted match
  size_t searchFrom = 0;  // the automaton resumes after every match it reports
  while (searchFrom < sentence.size()) {
    size_t patternIndex = kText, begin = 0;
    for (size_t pos = searchFrom; pos < sentence.size() && patternIndex == kText; ++pos) {
      for (size_t p : m.byFirstByte[(uint8_t)sentence[pos]]) {
        if (sentence.compare(pos, m.patterns[p].size(), m.patterns[p]) == 0) {
          patternIndex = p, begin = pos;
          break;
        }
      }
    }
    if (patternIndex == kText)
      break;
    size_t end = begin + m.patterns[patternIndex].size();
    searchFrom = end;
    const AddedToken &token = tokens_[m.tokenIndex[patternIndex]];
    if (token.singleWord &&
        (endsWithWordChar(sentence, begin) || startsWithWordChar(sentence, end)))
      continue;
    if (token.lstrip) {
      size_t newBegin = begin;
      while (newBegin > 0) {
        size_t charStart = newBegin - 1;
        while (charStart > 0 && ((uint8_t)sentence[charStart] & 0xC0) == 0x80)
          --charStart;
        if (!unicode::isWhiteSpace(unicode::decodeUtf8(sentence, charStart).cp))
          break;
        newBegin = charStart;
      }
      begin = std::max(newBegin, startOffset);
    }
    if (token.rstrip) {
      while (end < sentence.size()) {
        unicode::Utf8Unit u = unicode::decodeUtf8(sentence, end);
        if (!unicode::isWhiteSpace(u.cp))
          break;
        end += u.length;
      }
    }
    if (startOffset < begin)
      out.push_back({kText, startOffset, begin});
    out.push_back({m.tokenIndex[patternIndex], begin, end});
    startOffset = end;
  }
  if (startOffset < sentence.size())
    out.push_back({kText, startOffset, sentence.size()});
  return out;
}

std::vector<Segment>
AddedVocabulary::extractAndNormalize(std::string_view text,
                                     const std::vector<NormalizerStep> &normalizer) const {
  std::vector<Segment> out;
  for (const Match &rawMatch : findMatches(text, raw_)) {
    if (rawMatch.tokenIndex != kText) {
      out.push_back({"", tokens_[rawMatch.tokenIndex].id, rawMatch.begin == 0});
      continue;
    }
    std::string normalized =
        normalize(normalizer, std::string(text.substr(rawMatch.begin, rawMatch.end - rawMatch.begin)));
    for (const Match &m : findMatches(normalized, normalized_)) {
      bool atStart = rawMatch.begin == 0 && m.begin == 0;
      if (m.tokenIndex != kText)
        out.push_back({"", tokens_[m.tokenIndex].id, atStart});
      else
        out.push_back({normalized.substr(m.begin, m.end - m.begin), -1, atStart});
    }
  }
  return out;
}

const AddedToken *AddedVocabulary::findById(int32_t id) const {
  for (const AddedToken &t : tokens_)
    if (t.id == id)
      return &t;
  return nullptr;
}

const AddedToken *AddedVocabulary::findByContent(std::string_view content) const {
  for (const AddedToken &t : tokens_)
    if (t.content == content)
      return &t;
  return nullptr;
}

} // namespace bmrt::tok
