//===- tokenizers/loaders.h - Reading tokenizer files ---------------------===//
//
// One function per file format, used by loadTokenizer (load.cpp), plus the
// small JSON accessors they share. Every accessor fails with the file and
// the JSON path of the bad member ("tokenizer.json: model.vocab: expected
// an object"), so a broken file is easy to fix.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_TOKENIZERS_LOADERS_H
#define BMRT_TOKENIZERS_LOADERS_H

#include "bmrt/json.h"
#include "bmrt/tokenizer.h"
#include "hf_tokenizer.h"

#include <memory>
#include <string>

namespace bmrt::tok {

/// tokenizer.json (HF `tokenizers` format).
std::unique_ptr<Tokenizer> loadTokenizerJson(const std::string &path);
/// GPT-2's vocab.json + merges.txt.
std::unique_ptr<Tokenizer> loadGpt2Files(const std::string &vocabPath, const std::string &mergesPath);
/// BERT's vocab.txt.
std::unique_ptr<Tokenizer> loadBertVocab(const std::string &vocabPath);

// The components of tokenizer.json (json_components.cpp); `where` names the
// file and member. null adds nothing. Unsupported types fail by name.
void parseNormalizer(const json::Value &v, const std::string &where,
                     std::vector<NormalizerStep> &steps);
void parsePreTokenizer(const json::Value &v, const std::string &where,
                       std::vector<PreTokenizerStep> &steps);
void parseDecoder(const json::Value &v, const std::string &where, std::vector<DecoderStep> &steps);
/// The ids the post-processor puts before and after one sequence; false
/// when it is null.
bool parsePostProcessor(const json::Value &v, const std::string &where,
                        std::vector<int32_t> &prefix, std::vector<int32_t> &suffix);

/// The whole file, or fail naming it.
std::string readFileOrFail(const std::string &path);
/// The directory part of a path ("." when there is none).
std::string parentDir(const std::string &path);
bool fileExists(const std::string &path);

/// transformers' tokenizer_config.json beside the tokenizer files: a null
/// Value when there is none. Its bos_token/eos_token, when given, name the
/// tokenizer's BOS/EOS (failing if they are not tokens of it).
json::Value readTokenizerConfig(const std::string &dir);
void applyConfigSpecialTokens(HfTokenizerParts &parts, const json::Value &config,
                              const std::string &dir);

// JSON accessors; `where` is "<file>: <json path>".
const json::Value &requireMember(const json::Value &object, const char *key, const std::string &where);
std::string stringMember(const json::Value &object, const char *key, const std::string &where);
/// Absent or null gives `fallback`.
std::string optionalString(const json::Value &object, const char *key, const std::string &where,
                           const std::string &fallback);
bool optionalBool(const json::Value &object, const char *key, const std::string &where, bool fallback);
int64_t optionalInt(const json::Value &object, const char *key, const std::string &where,
                    int64_t fallback);
/// A token id: an integer in [0, 2^24).
int32_t tokenId(const json::Value &value, const std::string &where);
/// An object of token -> id (vocab.json, model.vocab).
Vocab parseVocab(const json::Value &object, const std::string &where);

} // namespace bmrt::tok

#endif // BMRT_TOKENIZERS_LOADERS_H
