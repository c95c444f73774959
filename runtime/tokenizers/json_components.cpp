//===- tokenizers/json_components.cpp - tokenizer.json's pipeline parts ---===//
//
// Reads the normalizer, pre_tokenizer, decoder and post_processor members
// into pipeline steps. Defaults are HF's serde defaults (e.g. ByteLevel's
// add_prefix_space is true when absent). A type we do not implement is
// refused by name rather than skipped: skipping would give wrong ids.
//
//===----------------------------------------------------------------------===//
#include "loaders.h"

#include "bmrt/context.h"
#include "unicode.h"

namespace bmrt::tok {

namespace {

using Kind = json::Value::Kind;

std::string typeOf(const json::Value &v, const std::string &where) {
  if (v.kind != Kind::Object)
    fail(where + ": expected an object with a \"type\"");
  return stringMember(v, "type", where);
}

const json::Value &arrayMember(const json::Value &v, const char *key, const std::string &where) {
  const json::Value &a = requireMember(v, key, where);
  if (a.kind != Kind::Array)
    fail(where + "." + key + ": expected an array");
  return a;
}

// Replace's pattern: {"String": "..."}; {"Regex": ...} is not implemented.
std::string stringPattern(const json::Value &v, const std::string &where) {
  const json::Value &pattern = requireMember(v, "pattern", where);
  if (pattern.get("Regex"))
    fail(where + ": a Replace with a Regex pattern is not supported (only String patterns)");
  std::string s = stringMember(pattern, "String", where + ".pattern");
  if (s.empty())
    fail(where + ".pattern.String: empty pattern");
  return s;
}

PreTokenizerStep::Prepend prependScheme(const json::Value &v, const std::string &where) {
  using Prepend = PreTokenizerStep::Prepend;
  std::string scheme = optionalString(v, "prepend_scheme", where, "");
  if (scheme.empty()) // files before tokenizers 0.14: add_prefix_space
    return optionalBool(v, "add_prefix_space", where, true) ? Prepend::Always : Prepend::Never;
  if (scheme == "always")
    return Prepend::Always;
  if (scheme == "first")
    return Prepend::First;
  if (scheme == "never")
    return Prepend::Never;
  fail(where + ".prepend_scheme: unknown scheme \"" + scheme + "\" (always, first or never)");
}

std::string replacementChar(const json::Value &v, const std::string &where) {
  std::string r = optionalString(v, "replacement", where, "\xE2\x96\x81"); // "▁"
  if (unicode::toCodePoints(r).size() != 1)
    fail(where + ".replacement: expected one character, found \"" + r + "\"");
  return r;
}

// Ids of one TemplateProcessing special token ("special_tokens" entry).
std::vector<int32_t> templateSpecialIds(const json::Value &proc, const std::string &name,
                                        const std::string &where) {
  const json::Value &specials = requireMember(proc, "special_tokens", where);
  const json::Value &entry = requireMember(specials, name.c_str(), where + ".special_tokens");
  const json::Value &ids = arrayMember(entry, "ids", where + ".special_tokens." + name);
  std::vector<int32_t> out;
  for (const json::Value &id : ids.array)
    out.push_back(tokenId(id, where + ".special_tokens." + name + ".ids"));
  return out;
}

void templateProcessing(const json::Value &proc, const std::string &where,
                        std::vector<int32_t> &prefix, std::vector<int32_t> &suffix) {
  const json::Value &single = arrayMember(proc, "single", where);
  bool seenSequence = false;
  for (size_t i = 0; i < single.array.size(); ++i) {
    const json::Value &item = single.array[i];
    std::string itemWhere = where + ".single[" + std::to_string(i) + "]";
    if (const json::Value *seq = item.get("Sequence")) {
      std::string id = stringMember(*seq, "id", itemWhere + ".Sequence");
      if (id != "A" || seenSequence)
        fail(itemWhere + ": a single-sequence template must contain sequence A once");
      seenSequence = true;
    } else if (const json::Value *special = item.get("SpecialToken")) {
      std::vector<int32_t> ids =
          templateSpecialIds(proc, stringMember(*special, "id", itemWhere + ".SpecialToken"), where);
      std::vector<int32_t> &side = seenSequence ? suffix : prefix;
      side.insert(side.end(), ids.begin(), ids.end());
    } else {
      fail(itemWhere + ": expected a Sequence or a SpecialToken");
    }
  }
  if (!seenSequence)
    fail(where + ".single: the template has no sequence A");
}

// BertProcessing / RobertaProcessing: "cls": ["[CLS]", 101], "sep": [...].
int32_t processingToken(const json::Value &proc, const char *key, const std::string &where) {
  const json::Value &pair = requireMember(proc, key, where);
  if (pair.kind != Kind::Array || pair.array.size() != 2)
    fail(where + "." + key + ": expected [token, id]");
  return tokenId(pair.array[1], where + "." + key + "[1]");
}

} // namespace

void parseNormalizer(const json::Value &v, const std::string &where,
                     std::vector<NormalizerStep> &steps) {
  if (v.isNull())
    return;
  std::string type = typeOf(v, where);
  NormalizerStep step;
  using K = NormalizerStep::Kind;
  if (type == "Sequence") {
    const json::Value &list = arrayMember(v, "normalizers", where);
    for (size_t i = 0; i < list.array.size(); ++i)
      parseNormalizer(list.array[i], where + ".normalizers[" + std::to_string(i) + "]", steps);
    return;
  } else if (type == "Prepend") {
    step.kind = K::Prepend;
    step.content = stringMember(v, "prepend", where);
  } else if (type == "Replace") {
    step.kind = K::Replace;
    step.pattern = stringPattern(v, where);
    step.content = stringMember(v, "content", where);
  } else if (type == "Lowercase") {
    step.kind = K::Lowercase;
  } else if (type == "NFD") {
    step.kind = K::Nfd;
  } else if (type == "StripAccents") {
    step.kind = K::StripAccents;
  } else if (type == "BertNormalizer") {
    step.kind = K::Bert;
    step.cleanText = optionalBool(v, "clean_text", where, true);
    step.handleChineseChars = optionalBool(v, "handle_chinese_chars", where, true);
    step.lowercase = optionalBool(v, "lowercase", where, true);
    step.stripAccents = optionalBool(v, "strip_accents", where, step.lowercase); // null: as lowercase
  } else {
    fail(where + ": normalizer type \"" + type +
         "\" is not supported (supported: BertNormalizer, Prepend, Replace, Lowercase, NFD, "
         "StripAccents, Sequence)");
  }
  steps.push_back(step);
}

void parsePreTokenizer(const json::Value &v, const std::string &where,
                       std::vector<PreTokenizerStep> &steps) {
  if (v.isNull())
    return;
  std::string type = typeOf(v, where);
  PreTokenizerStep step;
  using K = PreTokenizerStep::Kind;
  if (type == "Sequence") {
    const json::Value &list = arrayMember(v, "pretokenizers", where);
    for (size_t i = 0; i < list.array.size(); ++i)
      parsePreTokenizer(list.array[i], where + ".pretokenizers[" + std::to_string(i) + "]", steps);
    return;
  } else if (type == "ByteLevel") {
    step.kind = K::ByteLevel;
    step.addPrefixSpace = optionalBool(v, "add_prefix_space", where, true);
    step.useRegex = optionalBool(v, "use_regex", where, true);
  } else if (type == "BertPreTokenizer") {
    step.kind = K::Bert;
  } else if (type == "Metaspace") {
    step.kind = K::Metaspace;
    step.replacement = replacementChar(v, where);
    step.prependScheme = prependScheme(v, where);
    step.split = optionalBool(v, "split", where, true);
  } else {
    fail(where + ": pre-tokenizer type \"" + type +
         "\" is not supported (supported: ByteLevel, BertPreTokenizer, Metaspace, Sequence)");
  }
  steps.push_back(step);
}

void parseDecoder(const json::Value &v, const std::string &where, std::vector<DecoderStep> &steps) {
  if (v.isNull())
    return;
  std::string type = typeOf(v, where);
  DecoderStep step;
  using K = DecoderStep::Kind;
  if (type == "Sequence") {
    const json::Value &list = arrayMember(v, "decoders", where);
    for (size_t i = 0; i < list.array.size(); ++i)
      parseDecoder(list.array[i], where + ".decoders[" + std::to_string(i) + "]", steps);
    return;
  } else if (type == "ByteLevel") {
    step.kind = K::ByteLevel;
  } else if (type == "WordPiece") {
    step.kind = K::WordPiece;
    step.prefix = optionalString(v, "prefix", where, "##");
    step.cleanup = optionalBool(v, "cleanup", where, true);
  } else if (type == "Metaspace") {
    step.kind = K::Metaspace;
    step.replacement = replacementChar(v, where);
    step.prependNever = prependScheme(v, where) == PreTokenizerStep::Prepend::Never;
  } else if (type == "Replace") {
    step.kind = K::Replace;
    step.pattern = stringPattern(v, where);
    step.content = stringMember(v, "content", where);
  } else if (type == "ByteFallback") {
    step.kind = K::ByteFallback;
  } else if (type == "Fuse") {
    step.kind = K::Fuse;
  } else if (type == "Strip") {
    step.kind = K::Strip;
    step.content = stringMember(v, "content", where);
    if (unicode::toCodePoints(step.content).size() != 1)
      fail(where + ".content: expected one character");
    int64_t start = optionalInt(v, "start", where, 0), stop = optionalInt(v, "stop", where, 0);
    if (start < 0 || stop < 0)
      fail(where + ": start and stop must not be negative");
    step.stripStart = (size_t)start, step.stripStop = (size_t)stop;
  } else {
    fail(where + ": decoder type \"" + type +
         "\" is not supported (supported: ByteLevel, WordPiece, Metaspace, Replace, ByteFallback, "
         "Fuse, Strip, Sequence)");
  }
  steps.push_back(step);
}

bool parsePostProcessor(const json::Value &v, const std::string &where,
                        std::vector<int32_t> &prefix, std::vector<int32_t> &suffix) {
  if (v.isNull())
    return false;
  std::string type = typeOf(v, where);
  if (type == "Sequence") {
    const json::Value &list = arrayMember(v, "processors", where);
    for (size_t i = 0; i < list.array.size(); ++i) {
      // Each processor wraps what the previous ones produced.
      std::vector<int32_t> pre, post;
      parsePostProcessor(list.array[i], where + ".processors[" + std::to_string(i) + "]", pre, post);
      prefix.insert(prefix.begin(), pre.begin(), pre.end());
      suffix.insert(suffix.end(), post.begin(), post.end());
    }
  } else if (type == "TemplateProcessing") {
    templateProcessing(v, where, prefix, suffix);
  } else if (type == "BertProcessing" || type == "RobertaProcessing") {
    prefix.push_back(processingToken(v, "cls", where));
    suffix.push_back(processingToken(v, "sep", where));
  } else if (type != "ByteLevel") { // ByteLevel only trims offsets
    fail(where + ": post-processor type \"" + type +
         "\" is not supported (supported: TemplateProcessing, BertProcessing, "
         "RobertaProcessing, ByteLevel, Sequence)");
  }
  return true;
}

} // namespace bmrt::tok
