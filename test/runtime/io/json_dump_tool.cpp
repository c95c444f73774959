//===- json_dump_tool.cpp - Parse a file with bmrt::json, print it back ----===//
//
// For check_json_vs_python.py: the document is re-emitted canonically
// (members in file order, numbers as %.17g, which round-trips doubles) so
// Python's json module, which we did not write, can compare it with its own
// reading of the original.
//
//   json_dump_tool <file.json>    -> canonical JSON on stdout
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "bmrt/json.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

using bmrt::json::Value;

static void dump(const Value &v, std::string &out) {
  switch (v.kind) {
  case Value::Kind::Null: out += "null"; break;
  case Value::Kind::Bool: out += v.boolean ? "true" : "false"; break;
  case Value::Kind::Number: {
    char buf[32];
    snprintf(buf, sizeof buf, "%.17g", v.number);
    out += buf;
    break;
  }
  case Value::Kind::String: out += bmrt::json::quote(v.string); break;
  case Value::Kind::Array:
    out += '[';
    for (size_t k = 0; k < v.array.size(); ++k) {
      if (k)
        out += ',';
      dump(v.array[k], out);
    }
    out += ']';
    break;
  case Value::Kind::Object:
    out += '{';
    for (size_t k = 0; k < v.object.size(); ++k) {
      if (k)
        out += ',';
      out += bmrt::json::quote(v.object[k].first);
      out += ':';
      dump(v.object[k].second, out);
    }
    out += '}';
    break;
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <file.json>\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    fprintf(stderr, "error: %s: cannot open\n", argv[1]);
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    std::string out;
    dump(bmrt::json::parse(text.str(), argv[1]), out);
    fwrite(out.data(), 1, out.size(), stdout);
  } catch (const bmrt::Error &e) {
    fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
