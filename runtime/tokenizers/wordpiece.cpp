//===- tokenizers/wordpiece.cpp - Greedy longest-match-first WordPiece ----===//
//
// BERT's WordpieceTokenizer as HF implements it: a word longer than
// max_input_chars_per_word characters is one unknown token; otherwise, from
// the left, take the longest vocabulary entry (with "##" after the first
// piece); if some position has no entry at all, the whole word is one
// unknown token. Candidates are cut at character boundaries and never longer
// than the longest vocabulary entry, which keeps long words cheap.
//
//===----------------------------------------------------------------------===//
#include "models.h"

#include "bmrt/context.h"
#include "unicode.h"

#include <algorithm>

namespace bmrt::tok {

WordPieceModel::WordPieceModel(Vocab vocab, std::string unkToken, std::string prefix,
                               size_t maxInputCharsPerWord, const std::string &what)
    : vocab_(std::move(vocab)), prefix_(std::move(prefix)),
      maxInputCharsPerWord_(maxInputCharsPerWord) {
  auto it = vocab_.find(unkToken);
  if (it == vocab_.end())
    fail(what + ": the unknown token \"" + unkToken + "\" is not in the vocabulary");
  unkId_ = it->second;
  for (const auto &entry : vocab_)
    longestEntry_ = std::max(longestEntry_, entry.first.size());
}

void WordPieceModel::tokenize(std::string_view word, std::vector<int32_t> &ids) const {
  // Character boundaries (byte offsets), including the end.
  std::vector<size_t> bounds;
  for (size_t pos = 0; pos < word.size();) {
    bounds.push_back(pos);
    pos += unicode::decodeUtf8(word, pos).length;
  }
  size_t numChars = bounds.size();
  bounds.push_back(word.size());
  if (numChars > maxInputCharsPerWord_) {
    ids.push_back(unkId_);
    return;
  }
  std::vector<int32_t> pieces;
  std::string candidate;
  size_t start = 0; // index into bounds
  while (start < numChars) {
    size_t prefixLen = start > 0 ? prefix_.size() : 0;
    int32_t found = -1;
    size_t end = numChars;
    for (; end > start; --end) {
      size_t bytes = bounds[end] - bounds[start];
      if (bytes + prefixLen > longestEntry_)
        continue;
      candidate.assign(start > 0 ? prefix_ : "");
      candidate.append(word.substr(bounds[start], bytes));
      auto it = vocab_.find(candidate);
      if (it != vocab_.end()) {
        found = it->second;
        break;
      }
    }
    if (found < 0) {
      ids.push_back(unkId_);
      return;
    }
    pieces.push_back(found);
    start = end;
  }
  ids.insert(ids.end(), pieces.begin(), pieces.end());
}

} // namespace bmrt::tok
