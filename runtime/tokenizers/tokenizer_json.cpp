//===- tokenizers/tokenizer_json.cpp - Loading HF's tokenizer.json --------===//
//
// The model (BPE or WordPiece), the added tokens and the pipeline parts,
// then which family this is: BPE with a ByteLevel pre-tokenizer is GPT-2
// style; BPE with SentencePiece's "▁" handling (byte_fallback, Metaspace, or
// a Prepend("▁") normalizer) is Llama style; WordPiece is BERT. Anything
// else is refused rather than guessed.
//
// Not applied: "truncation" and "padding" (the caller decides lengths).
//
//===----------------------------------------------------------------------===//
#include "loaders.h"

#include "bmrt/context.h"

#include <algorithm>

namespace bmrt::tok {

namespace {

using Kind = json::Value::Kind;
const char *const kMetaspace = "\xE2\x96\x81"; // "▁"

std::vector<std::pair<std::string, std::string>> parseMerges(const json::Value &model,
                                                             const std::string &where) {
  const json::Value &list = requireMember(model, "merges", where);
  if (list.kind != Kind::Array)
    fail(where + ".merges: expected an array");
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(list.array.size());
  for (size_t i = 0; i < list.array.size(); ++i) {
    const json::Value &m = list.array[i];
    std::string at = where + ".merges[" + std::to_string(i) + "]";
    if (m.kind == Kind::String) { // "a b" (tokenizers < 0.20)
      size_t space = m.string.find(' ');
      if (space == std::string::npos || m.string.find(' ', space + 1) != std::string::npos)
        fail(at + ": expected two tokens separated by one space, found \"" + m.string + "\"");
      merges.emplace_back(m.string.substr(0, space), m.string.substr(space + 1));
    } else if (m.kind == Kind::Array && m.array.size() == 2 && m.array[0].kind == Kind::String &&
               m.array[1].kind == Kind::String) { // ["a", "b"] (tokenizers >= 0.20)
      merges.emplace_back(m.array[0].string, m.array[1].string);
    } else {
      fail(at + ": expected \"a b\" or [\"a\", \"b\"]");
    }
  }
  return merges;
}

std::unique_ptr<BpeModel> parseBpe(const json::Value &model, const std::string &where,
                                   const std::string &path) {
  const json::Value *dropout = model.get("dropout");
  if (dropout && !dropout->isNull() && !(dropout->kind == Kind::Number && dropout->number == 0))
    fail(where + ".dropout: BPE dropout is not supported (encoding would be random)");
  BpeOptions options;
  const json::Value *unk = model.get("unk_token");
  if (unk && !unk->isNull())
    options.unkToken = stringMember(model, "unk_token", where);
  options.continuingSubwordPrefix = optionalString(model, "continuing_subword_prefix", where, "");
  options.endOfWordSuffix = optionalString(model, "end_of_word_suffix", where, "");
  options.fuseUnk = optionalBool(model, "fuse_unk", where, false);
  options.byteFallback = optionalBool(model, "byte_fallback", where, false);
  options.ignoreMerges = optionalBool(model, "ignore_merges", where, false);
  Vocab vocab = parseVocab(requireMember(model, "vocab", where), where + ".vocab");
  return std::make_unique<BpeModel>(std::move(vocab), parseMerges(model, where), options, path);
}

std::unique_ptr<WordPieceModel> parseWordPiece(const json::Value &model, const std::string &where,
                                               const std::string &path) {
  int64_t maxChars = optionalInt(model, "max_input_chars_per_word", where, 100);
  if (maxChars < 0)
    fail(where + ".max_input_chars_per_word: must not be negative");
  Vocab vocab = parseVocab(requireMember(model, "vocab", where), where + ".vocab");
  return std::make_unique<WordPieceModel>(std::move(vocab),
                                          optionalString(model, "unk_token", where, "[UNK]"),
                                          optionalString(model, "continuing_subword_prefix", where, "##"),
                                          (size_t)maxChars, path);
}

void parseAddedTokens(const json::Value &root, const std::string &path, AddedVocabulary &added) {
  const json::Value *list = root.get("added_tokens");
  if (!list || list->isNull())
    return;
  if (list->kind != Kind::Array)
    fail(path + ": added_tokens: expected an array");
  for (size_t i = 0; i < list->array.size(); ++i) {
    const json::Value &t = list->array[i];
    std::string where = path + ": added_tokens[" + std::to_string(i) + "]";
    AddedToken token;
    token.id = tokenId(requireMember(t, "id", where), where + ".id");
    token.content = stringMember(t, "content", where);
    if (token.content.empty())
      fail(where + ".content: empty token");
    token.special = optionalBool(t, "special", where, false);
    token.singleWord = optionalBool(t, "single_word", where, false);
    token.lstrip = optionalBool(t, "lstrip", where, false);
    token.rstrip = optionalBool(t, "rstrip", where, false);
    token.normalized = optionalBool(t, "normalized", where, !token.special);
    added.add(std::move(token));
  }
}

template <typename T, typename Pred> bool anyOf(const std::vector<T> &v, Pred pred) {
  return std::any_of(v.begin(), v.end(), pred);
}

const char *bpeKind(const HfTokenizerParts &parts, bool byteFallback, const std::string &path) {
  if (anyOf(parts.preTokenizer, [](auto &s) { return s.kind == PreTokenizerStep::Kind::ByteLevel; }))
    return "gpt2-bpe";
  bool sentencePiece =
      byteFallback ||
      anyOf(parts.preTokenizer, [](auto &s) { return s.kind == PreTokenizerStep::Kind::Metaspace; }) ||
      anyOf(parts.normalizer, [](auto &s) {
        return s.kind == NormalizerStep::Kind::Prepend && s.content == kMetaspace;
      });
  if (sentencePiece)
    return "sentencepiece-bpe";
  fail(path + ": a BPE model with neither a ByteLevel pre-tokenizer (GPT-2 style) nor "
              "SentencePiece's \"\xE2\x96\x81\" handling (Llama style) is not supported");
}

} // namespace

std::unique_ptr<Tokenizer> loadTokenizerJson(const std::string &path) {
  json::Value root = json::parse(readFileOrFail(path), path);
  if (root.kind != Kind::Object)
    fail(path + ": expected a JSON object (a tokenizer.json from Hugging Face tokenizers)");
  HfTokenizerParts parts;
  parts.what = path;
  const json::Value &model = requireMember(root, "model", path);
  std::string where = path + ": model";
  if (model.kind != Kind::Object)
    fail(where + ": expected an object");
  // Old files leave out the model's type; the members tell.
  std::string type = optionalString(model, "type", where,
                                    model.get("merges") ? "BPE"
                                    : model.get("max_input_chars_per_word") ? "WordPiece"
                                                                            : "");
  if (type == "BPE")
    parts.bpe = parseBpe(model, where, path);
  else if (type == "WordPiece")
    parts.wordPiece = parseWordPiece(model, where, path);
  else
    fail(where + ": model type \"" + type + "\" is not supported (supported: BPE, WordPiece)");

  parseAddedTokens(root, path, parts.added);
  auto member = [&](const char *key) -> const json::Value & {
    static const json::Value null;
    const json::Value *v = root.get(key);
    return v ? *v : null;
  };
  parseNormalizer(member("normalizer"), path + ": normalizer", parts.normalizer);
  parsePreTokenizer(member("pre_tokenizer"), path + ": pre_tokenizer", parts.preTokenizer);
  parts.hasDecoder = !member("decoder").isNull();
  parseDecoder(member("decoder"), path + ": decoder", parts.decoder);
  bool hasPost = parsePostProcessor(member("post_processor"), path + ": post_processor",
                                    parts.specialPrefix, parts.specialSuffix);

  if (parts.wordPiece) {
    parts.kind = "wordpiece";
  } else {
    parts.kind = bpeKind(parts, optionalBool(model, "byte_fallback", where, false), path);
    const char *bos = parts.kind == std::string("gpt2-bpe") ? "<|endoftext|>" : "<s>";
    const char *eos = parts.kind == std::string("gpt2-bpe") ? "<|endoftext|>" : "</s>";
    parts.bos = findTokenId(parts, bos);
    parts.eos = findTokenId(parts, eos);
    // Older Llama conversions have no post-processor; transformers'
    // LlamaTokenizerFast then adds <s> itself (add_bos_token defaults on).
    if (!hasPost && parts.kind == std::string("sentencepiece-bpe") && parts.bos)
      parts.specialPrefix = {*parts.bos};
  }
  applyConfigSpecialTokens(parts, readTokenizerConfig(parentDir(path)), parentDir(path));
  return makeHfTokenizer(std::move(parts));
}

} // namespace bmrt::tok
