//===- app/request.cpp - Plain-text and JSON request lines ----------------===//
//
// A JSON request is strict: a misspelt member ("detla") or a number where a
// name belongs is an error for that line, never a request silently run on
// the default delta.
//
//===----------------------------------------------------------------------===//
#include "app/request.h"

#include "bmrt/context.h"
#include "bmrt/json.h"

namespace bmrt {

Request parseRequest(const std::string &line) {
  Request r;
  if (line.empty() || line[0] != '{') {
    r.prompt = line;
    return r;
  }
  json::Value v = json::parse(line, "JSON request");
  if (v.kind != json::Value::Kind::Object)
    fail("JSON request: not an object");
  bool hasPrompt = false, hasDelta = false;
  for (const auto &[key, value] : v.object) {
    bool &seen = key == "prompt" ? hasPrompt : hasDelta;
    if ((key == "prompt" || key == "delta") && seen)
      fail("JSON request: " + json::quote(key) + " given twice");
    if (key == "prompt") {
      if (value.kind != json::Value::Kind::String)
        fail("JSON request: \"prompt\" must be a string");
      r.prompt = value.string;
      hasPrompt = true;
    } else if (key == "delta") {
      hasDelta = true;
      if (value.kind == json::Value::Kind::String)
        r.delta = value.string;
      else if (!value.isNull())
        fail("JSON request: \"delta\" must be a delta's name (a string) or null");
    } else {
      fail("JSON request: unknown member " + json::quote(key) +
           " (a request has \"prompt\" and \"delta\")");
    }
  }
  if (!hasPrompt)
    fail("JSON request: no \"prompt\"");
  return r;
}

} // namespace bmrt
