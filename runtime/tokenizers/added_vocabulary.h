//===- tokenizers/added_vocabulary.h - Special and added tokens -----------===//
//
// Tokens like <|endoftext|>, [CLS] or <s> are matched in the text before
// anything else and never split (HF's AddedVocabulary). Tokens marked
// `normalized` are looked for in the normalized text (in their normalized
// form); the others in the raw text. Text between matches is normalized
// piece by piece, which is visible: a Prepend("▁") normalizer adds its "▁"
// after every special token too.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_TOKENIZERS_ADDED_VOCABULARY_H
#define BMRT_TOKENIZERS_ADDED_VOCABULARY_H

#include "pipeline.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bmrt::tok {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;    // dropped by decode (skip_special_tokens)
  bool singleWord = false; // only matched when not inside a word (regex \w)
  bool lstrip = false, rstrip = false; // swallow whitespace on that side
  bool normalized = false; // matched in the normalized text
};

/// A run of text between added tokens (id < 0, text normalized) or one
/// added token (id >= 0).
struct Segment {
  std::string text;
  int32_t id = -1;
  bool atStart = false; // begins at byte 0 of the caller's text
};

class AddedVocabulary {
public:
  /// A token with the content of an earlier one replaces it.
  void add(AddedToken token);
  /// Builds the matchers; call after the last add(). `normalizer` is the
  /// tokenizer's, for the normalized tokens' patterns.
  void build(const std::vector<NormalizerStep> &normalizer);
  /// HF's extract_and_normalize.
  std::vector<Segment> extractAndNormalize(std::string_view text,
                                           const std::vector<NormalizerStep> &normalizer) const;
  const AddedToken *findById(int32_t id) const;
  const AddedToken *findByContent(std::string_view content) const;
  const std::vector<AddedToken> &tokens() const { return tokens_; }

private:
  struct Matcher {
    std::vector<std::string> patterns;
    std::vector<size_t> tokenIndex;            // into tokens_
    std::vector<std::vector<size_t>> byFirstByte; // pattern indices, longest first
  };
  struct Match {
    size_t tokenIndex; // SIZE_MAX for text
    size_t begin, end;
  };
  void buildMatcher(Matcher &m) const;
  std::vector<Match> findMatches(std::string_view sentence, const Matcher &m) const;

  std::vector<AddedToken> tokens_;
  Matcher raw_, normalized_;
};

} // namespace bmrt::tok

#endif // BMRT_TOKENIZERS_ADDED_VOCABULARY_H
