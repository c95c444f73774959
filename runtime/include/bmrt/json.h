//===- bmrt/json.h - A small JSON reader for checkpoint and tokenizer files -===//
//
// safetensors headers, model.safetensors.index.json, tokenizer.json and
// vocab.json are JSON. This reader builds a plain tree; objects keep their
// members in file order (vocab.json's order is meaningless, but merges and
// added_tokens are arrays, so nothing depends on object order). Strings are
// returned as UTF-8 with escapes (including \uXXXX surrogate pairs) decoded.
// Malformed input fails with bmrt::fail("<what>: invalid JSON at byte N: ...").
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_JSON_H
#define BMRT_JSON_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bmrt::json {

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;          // also exact for integers up to 2^53
  std::string string;         // Kind::String
  std::vector<Value> array;   // Kind::Array
  std::vector<std::pair<std::string, Value>> object; // Kind::Object, file order

  bool isNull() const { return kind == Kind::Null; }
  /// The member `key` of an object, or null if absent / not an object.
  const Value *get(std::string_view key) const;
};

/// Parses `text`; `what` names the source in error messages (a file name).
/// Nesting deeper than 512 levels is refused.
Value parse(std::string_view text, const std::string &what);

/// `s` as a JSON string literal, quotes included: '"' and '\\' escaped,
/// control characters as \u00XX, everything else (UTF-8) as it is. The one
/// writer-side escape of every JSON file we write.
std::string quote(std::string_view s);

} // namespace bmrt::json

#endif // BMRT_JSON_H
