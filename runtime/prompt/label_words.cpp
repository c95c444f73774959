//===- prompt/label_words.cpp - Verbalizer and soft-token words -> ids ----===//
//
// A label word is tokenized as the model would see it at the mask: with the
// mask's leading space if it owns one (" good" for byte-level BPE, where
// "good" and " good" are different tokens; for SentencePiece the "▁" the
// tokenizer prepends is that space: segmentText). Every token must be a known
// piece of text: a word that needs [UNK] (or hits a special token) would
// score the label by the unknown token's logit, so it is an error.
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "bmrt/prompt.h"

#include <optional>

namespace bmrt {

namespace {

std::vector<int32_t> wordIds(const std::string &word, bool space, const Tokenizer &tok,
                             const std::string &what) {
  std::vector<int32_t> ids = tok.encode(segmentText(tok, (space ? " " : "") + word), false);
  if (ids.empty())
    fail("prompt: " + what + " has no tokens");
  for (int32_t id : ids)
    if (tok.tokenBytes(id).empty())
      fail("prompt: " + what + " is not known to the " + tok.kind() +
           " tokenizer (token " + std::to_string(id) + " is [UNK] or a special token)");
  return ids;
}

} // namespace

std::vector<std::vector<std::vector<int32_t>>>
labelWordIds(const PromptVerbalizer &v, const PromptTemplate &t, const Tokenizer &tok,
             size_t mask) {
  std::optional<bool> space;
  size_t seen = 0;
  for (const PromptSegment &s : t.segments)
    if (s.kind == PromptSegment::Kind::Mask && seen++ == mask) {
      space = s.space;
      break;
    }
  if (!space)
    fail("prompt: the template has " + std::to_string(seen) + " {mask}s, no mask number " +
         std::to_string(mask) + " for a verbalizer");
  std::vector<std::vector<std::vector<int32_t>>> out(v.labels.size());
  for (size_t l = 0; l < v.labels.size(); ++l)
    for (const std::string &w : v.words.at(l))
      out[l].push_back(wordIds(w, *space, tok, "label word '" + w + "' of label '" + v.labels[l] + "'"));
  return out;
}

std::vector<std::vector<int32_t>> softInitIds(const PromptTemplate &t, const Tokenizer &tok) {
  std::vector<std::vector<int32_t>> out;
  for (const PromptSegment &s : t.segments)
    if (s.kind == PromptSegment::Kind::Soft)
      out.push_back(s.text.empty() ? std::vector<int32_t>{}
                                   : wordIds(s.text, s.space, tok, "soft token init word '" + s.text + "'"));
  return out;
}

} // namespace bmrt
