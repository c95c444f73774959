//===- tokenizers/json_fields.cpp - Checked access to tokenizer JSON ------===//
//
// Tokenizer files come from many tools and versions; a missing or mistyped
// member must become a clear error naming the file and the member, not a
// silent default or a crash. These accessors are that check, once.
//
//===----------------------------------------------------------------------===//
#include "loaders.h"

#include "bmrt/context.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace bmrt::tok {

namespace {

// Far above any real vocabulary (~256k), low enough that a corrupt id cannot
// make the id -> token table huge.
constexpr int64_t kMaxTokenId = int64_t(1) << 24;

const char *kindName(json::Value::Kind k) {
  switch (k) {
  case json::Value::Kind::Null: return "null";
  case json::Value::Kind::Bool: return "a boolean";
  case json::Value::Kind::Number: return "a number";
  case json::Value::Kind::String: return "a string";
  case json::Value::Kind::Array: return "an array";
  case json::Value::Kind::Object: return "an object";
  }
  return "?";
}

[[noreturn]] void wrongKind(const std::string &where, const char *expected, const json::Value &v) {
  fail(where + ": expected " + expected + ", found " + kindName(v.kind));
}

} // namespace

std::string readFileOrFail(const std::string &path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    fail(path + ": no such file");
  if (S_ISDIR(st.st_mode))
    fail(path + ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path + ": cannot be read");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad())
    fail(path + ": read error");
  return buffer.str();
}

std::string parentDir(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool fileExists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

const json::Value &requireMember(const json::Value &object, const char *key,
                                 const std::string &where) {
  if (object.kind != json::Value::Kind::Object)
    wrongKind(where, "an object", object);
  const json::Value *v = object.get(key);
  if (!v)
    fail(where + ": missing \"" + key + "\"");
  return *v;
}

std::string stringMember(const json::Value &object, const char *key, const std::string &where) {
  const json::Value &v = requireMember(object, key, where);
  if (v.kind != json::Value::Kind::String)
    wrongKind(where + "." + key, "a string", v);
  return v.string;
}

std::string optionalString(const json::Value &object, const char *key, const std::string &where,
                           const std::string &fallback) {
  const json::Value *v = object.get(key);
  if (!v || v->isNull())
    return fallback;
  if (v->kind != json::Value::Kind::String)
    wrongKind(where + "." + key, "a string", *v);
  return v->string;
}

bool optionalBool(const json::Value &object, const char *key, const std::string &where,
                  bool fallback) {
  const json::Value *v = object.get(key);
  if (!v || v->isNull())
    return fallback;
  if (v->kind != json::Value::Kind::Bool)
    wrongKind(where + "." + key, "true or false", *v);
  return v->boolean;
}

int64_t optionalInt(const json::Value &object, const char *key, const std::string &where,
                    int64_t fallback) {
  const json::Value *v = object.get(key);
  if (!v || v->isNull())
    return fallback;
  if (v->kind != json::Value::Kind::Number || v->number != std::floor(v->number) ||
      std::fabs(v->number) > 9.0e15)
    wrongKind(where + "." + key, "an integer", *v);
  return (int64_t)v->number;
}

int32_t tokenId(const json::Value &value, const std::string &where) {
  if (value.kind != json::Value::Kind::Number || value.number != std::floor(value.number))
    wrongKind(where, "an integer token id", value);
  if (value.number < 0 || value.number >= (double)kMaxTokenId)
    fail(where + ": token id " + std::to_string((int64_t)value.number) + " is out of range [0, " +
         std::to_string(kMaxTokenId) + ")");
  return (int32_t)value.number;
}

Vocab parseVocab(const json::Value &object, const std::string &where) {
  if (object.kind != json::Value::Kind::Object)
    wrongKind(where, "an object of token -> id", object);
  Vocab vocab;
  vocab.reserve(object.object.size() * 2);
  for (const auto &[token, id] : object.object)
    vocab[token] = tokenId(id, where + "[\"" + token + "\"]");
  return vocab;
}

json::Value readTokenizerConfig(const std::string &dir) {
  std::string path = dir + "/tokenizer_config.json";
  if (!fileExists(path))
    return json::Value();
  json::Value config = json::parse(readFileOrFail(path), path);
  if (config.kind != json::Value::Kind::Object)
    wrongKind(path, "an object", config);
  return config;
}

void applyConfigSpecialTokens(HfTokenizerParts &parts, const json::Value &config,
                              const std::string &dir) {
  if (config.isNull())
    return;
  std::string path = dir + "/tokenizer_config.json";
  auto named = [&](const char *key, std::optional<int32_t> &slot) {
    const json::Value *v = config.get(key);
    if (!v || v->isNull())
      return;
    // transformers writes either "<s>" or {"content": "<s>", ...}.
    std::string token;
    if (v->kind == json::Value::Kind::Object)
      token = stringMember(*v, "content", path + ": " + key);
    else if (v->kind == json::Value::Kind::String)
      token = v->string;
    else
      wrongKind(path + ": " + key, "a string", *v);
    std::optional<int32_t> id = findTokenId(parts, token);
    if (!id)
      fail(path + ": " + key + " \"" + token + "\" is not a token of the tokenizer");
    slot = id;
  };
  named("bos_token", parts.bos);
  named("eos_token", parts.eos);
}

} // namespace bmrt::tok
