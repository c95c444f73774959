//===- tokenizers/byte.cpp - Bytes as tokens ------------------------------===//
//
// For models trained here without a vocabulary: id b is byte b, and id 256
// is an end-of-text token when the model has one. Encoding is lossless for
// any bytes; decode() returns valid UTF-8 (ill-formed parts become U+FFFD,
// as every decode here does), tokenBytes() the raw byte for streaming.
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "bmrt/tokenizer.h"
#include "unicode.h"

namespace bmrt {

namespace {

class ByteTokenizer : public Tokenizer {
public:
  explicit ByteTokenizer(bool withEos) : withEos_(withEos) {}

  const char *kind() const override { return "byte"; }

  std::vector<int32_t> encode(std::string_view text, bool /*addSpecial: none*/) const override {
    std::vector<int32_t> ids(text.size());
    for (size_t i = 0; i < text.size(); ++i)
      ids[i] = (uint8_t)text[i];
    return ids;
  }

  std::string decode(const std::vector<int32_t> &ids) const override {
    std::string bytes;
    bytes.reserve(ids.size());
    for (int32_t id : ids)
      bytes += tokenBytes(id);
    return unicode::toValidUtf8(bytes);
  }

  std::string tokenBytes(int32_t id) const override {
    if (id < 0 || id >= vocabSize())
      fail("token id " + std::to_string(id) + " is out of range for the byte tokenizer (vocabulary size " +
           std::to_string(vocabSize()) + ")");
    return id < 256 ? std::string(1, (char)id) : std::string(); // 256: EOS
  }

  int64_t vocabSize() const override { return withEos_ ? 257 : 256; }
  std::optional<int32_t> eosId() const override {
    return withEos_ ? std::optional<int32_t>(256) : std::nullopt;
  }
  std::optional<int32_t> bosId() const override { return std::nullopt; }

private:
  bool withEos_;
};

} // namespace

std::unique_ptr<Tokenizer> makeByteTokenizer(bool withEos) {
  return std::make_unique<ByteTokenizer>(withEos);
}

} // namespace bmrt
