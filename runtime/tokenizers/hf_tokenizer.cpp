//===- tokenizers/hf_tokenizer.cpp - Running an HF pipeline ---------------===//
//
// encode: added tokens are cut out first, the text between them is
// normalized, pre-tokenized and given to the model piece by piece, then the
// post-processor's ids go around it. decode: ids become token strings
// (special tokens skipped), the decoder chain makes text.
//
// Invalid UTF-8: a byte-level (GPT-2) pipeline encodes any bytes, because
// it works on bytes. The others replace each ill-formed subpart with U+FFFD
// first, which is what Python's bytes.decode("utf-8", "replace") gives
// before text can reach HF at all.
//
//===----------------------------------------------------------------------===//
#include "hf_tokenizer.h"

#include "bmrt/context.h"
#include "unicode.h"

#include <algorithm>

namespace bmrt::tok {

namespace {

class HfTokenizer : public Tokenizer {
public:
  explicit HfTokenizer(HfTokenizerParts parts) : p_(std::move(parts)) {
    p_.added.build(p_.normalizer);
    byteLevel_ = std::any_of(p_.preTokenizer.begin(), p_.preTokenizer.end(), [](const auto &s) {
      return s.kind == PreTokenizerStep::Kind::ByteLevel;
    });
    const Vocab &vocab = p_.bpe ? p_.bpe->vocab() : p_.wordPiece->vocab();
    int64_t size = 0;
    for (const auto &entry : vocab)
      size = std::max<int64_t>(size, (int64_t)entry.second + 1);
    for (const AddedToken &t : p_.added.tokens())
      size = std::max<int64_t>(size, (int64_t)t.id + 1);
    tokens_.assign(size, std::string());
    hasToken_.assign(size, false);
    special_.assign(size, false);
    for (const auto &entry : vocab)
      tokens_[entry.second] = entry.first, hasToken_[entry.second] = true;
    // HF looks ids up in the added tokens first.
    for (const AddedToken &t : p_.added.tokens()) {
      tokens_[t.id] = t.content, hasToken_[t.id] = true;
      special_[t.id] = t.special;
    }
    for (const auto *ids : {&p_.specialPrefix, &p_.specialSuffix})
      for (int32_t id : *ids)
        if (id < 0 || id >= size || !hasToken_[id])
          fail(p_.what + ": the post-processor adds id " + std::to_string(id) +
               ", which is not a token of the vocabulary");
  }

  const char *kind() const override { return p_.kind; }

  std::vector<int32_t> encode(std::string_view text, bool addSpecial) const override {
    std::string input = byteLevel_ ? std::string(text) : unicode::toValidUtf8(text);
    std::vector<int32_t> ids;
    if (addSpecial)
      ids = p_.specialPrefix;
    std::vector<Piece> pieces;
    for (Segment &segment : p_.added.extractAndNormalize(input, p_.normalizer)) {
      if (segment.id >= 0) {
        ids.push_back(segment.id);
        continue;
      }
      pieces.clear();
      pieces.push_back({std::move(segment.text), segment.atStart});
      preTokenize(p_.preTokenizer, pieces);
      for (const Piece &piece : pieces) {
        if (p_.bpe)
          p_.bpe->tokenize(piece.text, ids);
        else
          p_.wordPiece->tokenize(piece.text, ids);
      }
    }
    if (addSpecial)
      ids.insert(ids.end(), p_.specialSuffix.begin(), p_.specialSuffix.end());
    return ids;
  }

  std::string decode(const std::vector<int32_t> &ids) const override {
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (int32_t id : ids) {
      checkId(id);
      // HF skips ids without a token (holes in a vocabulary) silently.
      if (hasToken_[id] && !special_[id])
        tokens.push_back(tokens_[id]);
    }
    if (!p_.hasDecoder) {
      std::string out;
      for (size_t i = 0; i < tokens.size(); ++i)
        out += (i ? " " : "") + tokens[i];
      return out;
    }
    return decodeTokens(p_.decoder, std::move(tokens), /*streaming=*/false);
  }

  std::string tokenBytes(int32_t id) const override {
    checkId(id);
    if (!hasToken_[id] || special_[id])
      return "";
    if (!p_.hasDecoder)
      return " " + tokens_[id];
    return decodeTokens(p_.decoder, {tokens_[id]}, /*streaming=*/true);
  }

  int64_t vocabSize() const override { return (int64_t)tokens_.size(); }
  std::optional<int32_t> eosId() const override { return p_.eos; }
  std::optional<int32_t> bosId() const override { return p_.bos; }

private:
  void checkId(int32_t id) const {
    if (id < 0 || id >= (int64_t)tokens_.size())
      fail("token id " + std::to_string(id) + " is out of range for the tokenizer of " + p_.what +
           " (vocabulary size " + std::to_string(tokens_.size()) + ")");
  }

  HfTokenizerParts p_;
  bool byteLevel_ = false;
  std::vector<std::string> tokens_; // id -> token string
  std::vector<bool> hasToken_, special_;
};

} // namespace

std::unique_ptr<Tokenizer> makeHfTokenizer(HfTokenizerParts parts) {
  if (!parts.bpe == !parts.wordPiece)
    fail(parts.what + ": internal error: a tokenizer needs exactly one model");
  return std::make_unique<HfTokenizer>(std::move(parts));
}

std::optional<int32_t> findTokenId(const HfTokenizerParts &parts, const std::string &token) {
  if (const AddedToken *t = parts.added.findByContent(token))
    return t->id;
  const Vocab &vocab = parts.bpe ? parts.bpe->vocab() : parts.wordPiece->vocab();
  auto it = vocab.find(token);
  if (it != vocab.end())
    return it->second;
  return std::nullopt;
}

} // namespace bmrt::tok
