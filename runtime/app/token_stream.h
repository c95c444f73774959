//===- app/token_stream.h - Printing tokens as soon as they are sampled ---===//
//
// Generated text is streamed token by token (flushed each time) so a user
// sees it appear. A byte-level BPE token can end in the middle of a UTF-8
// character; those bytes are held back until the character is complete, so
// a terminal never shows half a character (and a pipe gets the same bytes).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TOKEN_STREAM_H
#define BMRT_APP_TOKEN_STREAM_H

#include "app/flags.h"
#include "bmrt/tokenizer.h"

#include <cstdio>
#include <string>

namespace bmrt {

/// How many leading bytes of `s` end on a complete UTF-8 sequence: all of
/// them unless `s` ends in the first bytes of a multi-byte character.
/// Invalid bytes count as complete (they are passed through, never held).
size_t completeUtf8Prefix(const std::string &s);

/// Writes the tokens of one generation to `out` as text or ids.
class TokenStream {
public:
  /// `tokenizer` may be null for OutputFormat::Ids.
  TokenStream(FILE *out, OutputFormat format, const Tokenizer *tokenizer);
  void put(int32_t id);
  /// Writes what is held back and ends the line.
  void finish();

private:
  FILE *out_;
  OutputFormat format_;
  const Tokenizer *tokenizer_;
  std::string pending_; // bytes of an incomplete UTF-8 character
  bool first_ = true;   // ids: no separator before the first
};

} // namespace bmrt

#endif // BMRT_APP_TOKEN_STREAM_H
