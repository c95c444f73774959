//===- tokenizers/load.cpp - Finding and loading a tokenizer --------------===//
//
// loadTokenizer takes what a user gives (a checkpoint directory or one file)
// and the job's tokenizer family. Files decide the tokenizer; the family
// only has to agree with them, so a GPT-2 job pointed at a BERT vocabulary
// stops with a message instead of training on nonsense ids.
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "bmrt/tokenizer.h"
#include "loaders.h"

#include <cstring>
#include <sys/stat.h>

namespace bmrt {

namespace {

using namespace tok;

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool endsWith(const std::string &s, const char *suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

[[noreturn]] void refuseSentencePieceModel(const std::string &path) {
  fail(path + ": tokenizer.model (a SentencePiece protobuf) is not supported; provide the "
              "tokenizer.json that Hugging Face makes from it (with transformers: "
              "AutoTokenizer.from_pretrained(dir).save_pretrained(dir))");
}

std::unique_ptr<Tokenizer> loadFromDirectory(const std::string &dir) {
  auto in = [&](const char *name) { return dir + "/" + name; };
  if (fileExists(in("tokenizer.json")))
    return loadTokenizerJson(in("tokenizer.json"));
  bool vocabJson = fileExists(in("vocab.json")), merges = fileExists(in("merges.txt"));
  if (vocabJson && merges)
    return loadGpt2Files(in("vocab.json"), in("merges.txt"));
  if (vocabJson || merges)
    fail(dir + ": has " + (vocabJson ? "vocab.json but no merges.txt" : "merges.txt but no vocab.json") +
         "; GPT-2's tokenizer needs both (or a tokenizer.json)");
  if (fileExists(in("vocab.txt")))
    return loadBertVocab(in("vocab.txt"));
  if (fileExists(in("tokenizer.model")))
    refuseSentencePieceModel(in("tokenizer.model"));
  fail(dir + ": no tokenizer files (looked for tokenizer.json, vocab.json + merges.txt, vocab.txt)");
}

std::unique_ptr<Tokenizer> loadFromFile(const std::string &path) {
  std::string name = baseName(path);
  std::string dir = parentDir(path);
  if (name == "vocab.json" || name == "merges.txt") {
    std::string vocab = dir + "/vocab.json", merges = dir + "/merges.txt";
    if (!fileExists(vocab) || !fileExists(merges))
      fail(path + ": GPT-2's tokenizer needs vocab.json and merges.txt side by side in " + dir);
    return loadGpt2Files(vocab, merges);
  }
  if (endsWith(name, ".model"))
    refuseSentencePieceModel(path);
  if (endsWith(name, ".json"))
    return loadTokenizerJson(path);
  if (endsWith(name, ".txt"))
    return loadBertVocab(path);
  fail(path + ": not a tokenizer file (expected tokenizer.json, vocab.json, merges.txt or vocab.txt)");
}

const char *kindOfHint(const std::string &hint) {
  if (hint == "gpt2")
    return "gpt2-bpe";
  if (hint == "bert")
    return "wordpiece";
  if (hint == "llama")
    return "sentencepiece-bpe";
  return nullptr;
}

} // namespace

std::unique_ptr<Tokenizer> loadTokenizer(const std::string &path, const std::string &hint) {
  if (hint == "byte")
    return makeByteTokenizer(/*withEos=*/false);
  if (!hint.empty() && !kindOfHint(hint))
    fail("unknown tokenizer \"" + hint + "\" (expected gpt2, bert, llama or byte)");
  if (path.empty())
    fail(std::string("the ") + (hint.empty() ? "" : hint + " ") +
         "tokenizer needs its files: give a checkpoint directory or a tokenizer file");
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    fail(path + ": no such file or directory");
  std::unique_ptr<Tokenizer> tokenizer =
      S_ISDIR(st.st_mode) ? loadFromDirectory(path) : loadFromFile(path);
  if (!hint.empty() && std::strcmp(tokenizer->kind(), kindOfHint(hint)) != 0)
    fail(path + ": holds a " + tokenizer->kind() + " tokenizer, but the job asks for " + hint +
         " (" + kindOfHint(hint) + ")");
  return tokenizer;
}

} // namespace bmrt
