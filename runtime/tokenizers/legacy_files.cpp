//===- tokenizers/legacy_files.cpp - vocab.json + merges.txt, vocab.txt ---===//
//
// Checkpoints without tokenizer.json carry the original formats. These
// imply the pipeline transformers builds from them (its GPT2Converter and
// BertConverter): byte-level BPE with <|endoftext|>, or lower-casing BERT
// WordPiece with [CLS] ... [SEP]. tokenizer_config.json, when present beside
// them, can switch off lower-casing (do_lower_case) and the like, and for
// byte-level BPE name a mask token of the vocabulary (RoBERTa's "<mask>";
// bmb-tokenize --mask-token writes it), which is then special as
// transformers makes it.
//
//===----------------------------------------------------------------------===//
#include "loaders.h"

#include "bmrt/context.h"
#include "unicode.h"

namespace bmrt::tok {

namespace {

// Lines as Rust's BufRead::lines gives them: "\n" or "\r\n" ends a line, and
// a final newline does not start another line.
std::vector<std::string> splitLines(const std::string &text) {
  std::vector<std::string> lines;
  size_t from = 0;
  while (from < text.size()) {
    size_t nl = text.find('\n', from);
    size_t end = nl == std::string::npos ? text.size() : nl;
    std::string line = text.substr(from, end - from);
    if (nl != std::string::npos && !line.empty() && line.back() == '\r')
      line.pop_back();
    lines.push_back(std::move(line));
    if (nl == std::string::npos)
      break;
    from = nl + 1;
  }
  return lines;
}

std::string trimEnd(const std::string &s) {
  std::vector<char32_t> cps = unicode::toCodePoints(s);
  while (!cps.empty() && unicode::isWhiteSpace(cps.back()))
    cps.pop_back();
  return unicode::fromCodePoints(cps);
}

void addSpecialIfPresent(HfTokenizerParts &parts, const Vocab &vocab, const std::string &token) {
  auto it = vocab.find(token);
  if (it == vocab.end())
    return;
  AddedToken t;
  t.content = token;
  t.id = it->second;
  t.special = true;
  parts.added.add(std::move(t));
}

} // namespace

std::unique_ptr<Tokenizer> loadGpt2Files(const std::string &vocabPath, const std::string &mergesPath) {
  json::Value root = json::parse(readFileOrFail(vocabPath), vocabPath);
  Vocab vocab = parseVocab(root, vocabPath);
  std::vector<std::pair<std::string, std::string>> merges;
  std::vector<std::string> lines = splitLines(readFileOrFail(mergesPath));
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string &line = lines[i];
    if (line.compare(0, 8, "#version") == 0)
      continue;
    size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
      fail(mergesPath + ":" + std::to_string(i + 1) +
           ": expected two tokens separated by one space, found \"" + line + "\"");
    merges.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  std::string dir = parentDir(vocabPath);
  json::Value config = readTokenizerConfig(dir);

  HfTokenizerParts parts;
  parts.kind = "gpt2-bpe";
  parts.what = vocabPath;
  PreTokenizerStep byteLevel;
  byteLevel.kind = PreTokenizerStep::Kind::ByteLevel;
  byteLevel.addPrefixSpace =
      optionalBool(config, "add_prefix_space", dir + "/tokenizer_config.json", false);
  parts.preTokenizer.push_back(byteLevel);
  addSpecialIfPresent(parts, vocab, "<|endoftext|>");
  if (const json::Value *mask = config.get("mask_token"); mask && !mask->isNull()) {
    std::string where = dir + "/tokenizer_config.json: mask_token";
    if (mask->kind != json::Value::Kind::Object && mask->kind != json::Value::Kind::String)
      fail(where + " must be a string or an object with \"content\"");
    std::string token = mask->kind == json::Value::Kind::Object
                            ? stringMember(*mask, "content", where)
                            : mask->string;
    if (!vocab.count(token))
      fail(where + " \"" + token + "\" is not in " + vocabPath);
    addSpecialIfPresent(parts, vocab, token);
  }
  parts.bpe = std::make_unique<BpeModel>(std::move(vocab), merges, BpeOptions(),
                                         vocabPath + " + " + mergesPath);
  parts.hasDecoder = true;
  DecoderStep decoder;
  decoder.kind = DecoderStep::Kind::ByteLevel;
  parts.decoder.push_back(decoder);
  parts.bos = parts.eos = findTokenId(parts, "<|endoftext|>");
  applyConfigSpecialTokens(parts, config, dir);
  return makeHfTokenizer(std::move(parts));
}

std::unique_ptr<Tokenizer> loadBertVocab(const std::string &vocabPath) {
  Vocab vocab;
  std::vector<std::string> lines = splitLines(readFileOrFail(vocabPath));
  for (size_t i = 0; i < lines.size(); ++i)
    vocab[trimEnd(lines[i])] = (int32_t)i; // a repeated line: the later id wins, as in HF
  std::string dir = parentDir(vocabPath);
  std::string configPath = dir + "/tokenizer_config.json";
  json::Value config = readTokenizerConfig(dir);

  HfTokenizerParts parts;
  parts.kind = "wordpiece";
  parts.what = vocabPath;
  NormalizerStep bert;
  bert.kind = NormalizerStep::Kind::Bert;
  bert.lowercase = optionalBool(config, "do_lower_case", configPath, true);
  bert.stripAccents = optionalBool(config, "strip_accents", configPath, bert.lowercase);
  bert.handleChineseChars = optionalBool(config, "tokenize_chinese_chars", configPath, true);
  parts.normalizer.push_back(bert);
  PreTokenizerStep pre;
  pre.kind = PreTokenizerStep::Kind::Bert;
  parts.preTokenizer.push_back(pre);
  for (const char *special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
    addSpecialIfPresent(parts, vocab, special);
  auto cls = vocab.find("[CLS]"), sep = vocab.find("[SEP]");
  if (cls == vocab.end() || sep == vocab.end())
    fail(vocabPath + ": no [CLS] or no [SEP] token; a BERT vocab.txt needs both");
  parts.specialPrefix = {cls->second};
  parts.specialSuffix = {sep->second};
  parts.wordPiece = std::make_unique<WordPieceModel>(std::move(vocab), "[UNK]", "##", 100, vocabPath);
  parts.hasDecoder = true;
  DecoderStep decoder;
  decoder.kind = DecoderStep::Kind::WordPiece;
  decoder.prefix = "##";
  parts.decoder.push_back(decoder);
  applyConfigSpecialTokens(parts, config, dir);
  return makeHfTokenizer(std::move(parts));
}

} // namespace bmrt::tok
