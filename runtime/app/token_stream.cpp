//===- app/token_stream.cpp - UTF-8-aware streaming of tokens -------------===//
//
// See token_stream.h. Only the tail of the buffer is inspected: a UTF-8
// character is at most 4 bytes, so at most 3 bytes are ever held.
//
//===----------------------------------------------------------------------===//
#include "app/token_stream.h"

namespace bmrt {

// The length a lead byte announces, or 1 for a byte that cannot lead
// (continuation or invalid), which is then passed through as it is.
static size_t sequenceLength(unsigned char b) {
  if (b < 0x80) return 1;
  if ((b & 0xE0) == 0xC0) return 2;
  if ((b & 0xF0) == 0xE0) return 3;
  if ((b & 0xF8) == 0xF0) return 4;
  return 1;
}

size_t completeUtf8Prefix(const std::string &s) {
  size_t n = s.size();
  for (size_t back = 1; back <= 4 && back <= n; back++) {
    unsigned char b = (unsigned char)s[n - back];
    if ((b & 0xC0) == 0x80)
      continue; // a continuation byte: its lead is further back
    return sequenceLength(b) > back ? n - back : n;
  }
  return n;
}

TokenStream::TokenStream(FILE *out, OutputFormat format, const Tokenizer *tokenizer)
    : out_(out), format_(format), tokenizer_(tokenizer) {}

void TokenStream::put(int32_t id) {
  if (format_ == OutputFormat::Ids) {
    std::fprintf(out_, first_ ? "%d" : " %d", id);
    first_ = false;
  } else {
    pending_ += tokenizer_->tokenBytes(id);
    size_t ready = completeUtf8Prefix(pending_);
    std::fwrite(pending_.data(), 1, ready, out_);
    pending_.erase(0, ready);
  }
  std::fflush(out_);
}

void TokenStream::finish() {
  std::fwrite(pending_.data(), 1, pending_.size(), out_);
  pending_.clear();
  std::fputc('\n', out_);
  std::fflush(out_);
  first_ = true;
}

} // namespace bmrt
