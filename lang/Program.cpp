//===- Program.cpp - Constants of the elaborated program ------------------===//
#include "lang/Program.h"

#include <cstdio>

using namespace bmb::program;

Constant Constant::ofInt(int64_t v) {
  Constant c;
  c.kind = Kind::Int;
  c.i = v;
  return c;
}
Constant Constant::ofFloat(double v) {
  Constant c;
  c.kind = Kind::Float;
  c.f = v;
  return c;
}
Constant Constant::ofBool(bool v) {
  Constant c;
  c.kind = Kind::Bool;
  c.b = v;
  return c;
}
Constant Constant::ofString(std::string v) {
  Constant c;
  c.kind = Kind::String;
  c.s = std::move(v);
  return c;
}
Constant Constant::ofEnum(std::string v) {
  Constant c;
  c.kind = Kind::Enum;
  c.s = std::move(v);
  return c;
}

static std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%02X", static_cast<unsigned char>(ch));
      out += buf;
      continue;
    }
    out += ch;
  }
  return out + "\"";
}

std::string Constant::str() const {
  switch (kind) {
  case Kind::None:
    return "none";
  case Kind::Int:
    return std::to_string(i);
  case Kind::Float: {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", f);
    std::string s = buf;
    if (s.find_first_of(".eEn") == std::string::npos)
      s += ".0";
    return s;
  }
  case Kind::Bool:
    return b ? "true" : "false";
  case Kind::String:
    return quote(s);
  case Kind::Enum:
    return s;
  case Kind::List:
  case Kind::Tuple: {
    std::string out = kind == Kind::List ? "[" : "(";
    for (size_t k = 0; k < elements.size(); ++k)
      out += (k ? ", " : "") + elements[k].str();
    return out + (kind == Kind::List ? "]" : ")");
  }
  case Kind::Pair:
    return elements.size() == 2
               ? elements[0].str() + (s == "->" ? " -> " : ":") + elements[1].str()
               : "?";
  case Kind::Call: {
    std::string out = s + "(";
    bool first = true;
    for (const Constant &e : elements) {
      out += (first ? "" : ", ") + e.str();
      first = false;
    }
    for (const auto &[k, v] : keywords) {
      out += (first ? "" : ", ") + k + " = " + v.str();
      first = false;
    }
    return out + ")";
  }
  }
  return "?";
}
