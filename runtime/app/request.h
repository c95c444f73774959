//===- app/request.h - One stdin line of the infer executable --------------===//
//
// Without --prompt the infer executable serves one request per stdin line.
// A line is the prompt itself, unless it starts with '{': then it is a JSON
// object {"prompt": TEXT, "delta": NAME} choosing the delta for this request
// (app/delta_set.h). Parsing is separate so the rules are unit-testable.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_REQUEST_H
#define BMRT_APP_REQUEST_H

#include <optional>
#include <string>

namespace bmrt {

struct Request {
  std::string prompt;
  std::optional<std::string> delta; // absent (or JSON null): the run's default delta
};

/// Parses one line (its trailing '\r' already removed). A malformed JSON
/// request (bad JSON, not an object, no string "prompt", a member other than
/// "prompt" and "delta", a "delta" that is not a string or null) is a
/// bmrt::Error saying what is wrong.
Request parseRequest(const std::string &line);

} // namespace bmrt

#endif // BMRT_APP_REQUEST_H
