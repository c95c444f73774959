//===- tools/bmb-tokenize.cpp - Text -> token file; byte-level BPE training ===//
//
//   bmb-tokenize --tokenizer PATH|byte INPUT... -o OUT.tok [--jsonl-field F] [--append-eos]
//   bmb-tokenize --train-bpe VOCAB_SIZE INPUT... -o DIR [--min-frequency N] [--jsonl-field F]
//                [--mask-token TOKEN]
//
// An INPUT ending in .jsonl holds one JSON object per line (blank lines
// skipped) whose field F (default "text") is one document; any other file is
// one document. Exit status: 0 done, 1 a run-time error (unreadable input,
// bad JSON line, ...: the message names the file), 2 bad usage.
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "bmrt/json.h"
#include "bmrt/tokenizer.h"
#include "bmrt/tokens.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

const char *kUsage =
    "usage: bmb-tokenize --tokenizer PATH|byte INPUT... -o OUT.tok [--jsonl-field NAME] [--append-eos]\n"
    "       bmb-tokenize --train-bpe VOCAB_SIZE INPUT... -o DIR [--min-frequency N] [--jsonl-field NAME]\n"
    "                                [--mask-token TOKEN]\n"
    "\n"
    "Tokenizes text into a token file for training, or trains a byte-level BPE\n"
    "tokenizer (GPT-2 layout: DIR/vocab.json + DIR/merges.txt).\n"
    "\n"
    "  --tokenizer PATH|byte  a tokenizer directory or file (see bmrt/tokenizer.h),\n"
    "                         or 'byte' for bytes as ids (vocab 256; 257 with --append-eos)\n"
    "  INPUT...               text files (each one document) or .jsonl files (one JSON\n"
    "                         object per line; its field NAME is one document)\n"
    "  -o OUT                 the token file (--tokenizer) or directory (--train-bpe)\n"
    "  --jsonl-field NAME     the field of a .jsonl line holding the text (default: text)\n"
    "  --append-eos           append the tokenizer's end-of-text id after each document\n"
    "  --train-bpe N          train a byte-level BPE vocabulary of N tokens instead\n"
    "                         (256 bytes + merges + <|endoftext|>)\n"
    "  --min-frequency N      with --train-bpe: merge only pairs seen >= N times (default 2)\n"
    "  --mask-token TOKEN     with --train-bpe: add the special token TOKEN (e.g. <mask>) as the\n"
    "                         last id, for masked-LM training and prompts (tokenizer_config.json)\n"
    "  -h, --help             this text\n";

struct UsageError {
  std::string message;
};

struct Options {
  std::string tokenizer, output, field = "text";
  std::vector<std::string> inputs;
  bool appendEos = false;
  int64_t trainVocab = 0, minFrequency = 2;
  std::string maskToken; // --mask-token: a special token after <|endoftext|>
};

int64_t parseCount(const std::string &flag, const std::string &value) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || v < 0)
    throw UsageError{flag + " wants a non-negative integer, got '" + value + "'"};
  return v;
}

Options parseFlags(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const std::string &flag) -> std::string {
      if (i + 1 >= argc)
        throw UsageError{flag + " needs a value"};
      return argv[++i];
    };
    if (a == "--tokenizer")
      o.tokenizer = value(a);
    else if (a == "-o" || a == "--output")
      o.output = value(a);
    else if (a == "--jsonl-field")
      o.field = value(a);
    else if (a == "--append-eos")
      o.appendEos = true;
    else if (a == "--train-bpe")
      o.trainVocab = parseCount(a, value(a));
    else if (a == "--min-frequency")
      o.minFrequency = parseCount(a, value(a));
    else if (a == "--mask-token")
      o.maskToken = value(a);
    else if (a.size() > 1 && a[0] == '-')
      throw UsageError{"unknown flag " + a};
    else
      o.inputs.push_back(a);
  }
  bool train = o.trainVocab > 0;
  if (train == !o.tokenizer.empty())
    throw UsageError{"give exactly one of --tokenizer and --train-bpe"};
  if (o.inputs.empty())
    throw UsageError{"no input files"};
  if (o.output.empty())
    throw UsageError{"no output (-o)"};
  if (train && o.appendEos)
    throw UsageError{"--append-eos is for --tokenizer"};
  if (!train && !o.maskToken.empty())
    throw UsageError{"--mask-token is for --train-bpe"};
  if (!o.maskToken.empty() && (o.maskToken.size() < 3 || o.maskToken.front() != '<' ||
                               o.maskToken.back() != '>'))
    throw UsageError{"--mask-token wants a token written <like-this> (text never contains it), "
                     "got '" + o.maskToken + "'"};
  if (!o.maskToken.empty() && o.trainVocab < 258)
    throw UsageError{"--train-bpe with --mask-token wants at least 258 tokens (256 bytes, "
                     "<|endoftext|> and the mask token)"};
  return o;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    bmrt::fail(path + ": cannot read: " + strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    bmrt::fail(path + ": cannot read: " + strerror(errno));
  return ss.str();
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The documents of one input file.
std::vector<std::string> readDocuments(const std::string &path, const std::string &field) {
  std::string text = readFile(path);
  if (!endsWith(path, ".jsonl"))
    return {std::move(text)};
  std::vector<std::string> docs;
  size_t from = 0, lineNo = 0;
  while (from < text.size()) {
    size_t nl = text.find('\n', from);
    size_t end = nl == std::string::npos ? text.size() : nl;
    std::string_view line(text.data() + from, end - from);
    ++lineNo;
    from = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos)
      continue;
    std::string where = path + ":" + std::to_string(lineNo);
    bmrt::json::Value v = bmrt::json::parse(line, where);
    if (v.kind != bmrt::json::Value::Kind::Object)
      bmrt::fail(where + ": expected a JSON object");
    const bmrt::json::Value *f = v.get(field);
    if (!f)
      bmrt::fail(where + ": no field \"" + field + "\"");
    if (f->kind != bmrt::json::Value::Kind::String)
      bmrt::fail(where + ": field \"" + field + "\" is not a string");
    docs.push_back(f->string);
  }
  return docs;
}

int tokenize(const Options &o) {
  std::unique_ptr<bmrt::Tokenizer> tok = o.tokenizer == "byte"
                                             ? bmrt::makeByteTokenizer(o.appendEos)
                                             : bmrt::loadTokenizer(o.tokenizer, "");
  int32_t eos = -1;
  if (o.appendEos) {
    if (!tok->eosId())
      bmrt::fail(o.tokenizer + ": --append-eos: the tokenizer has no end-of-text token");
    eos = *tok->eosId();
  }
  std::vector<int32_t> ids;
  uint64_t documents = 0;
  for (const std::string &input : o.inputs) {
    std::vector<std::string> docs = readDocuments(input, o.field);
    size_t before = ids.size();
    for (const std::string &doc : docs) {
      std::vector<int32_t> part = tok->encode(doc, false);
      ids.insert(ids.end(), part.begin(), part.end());
      if (o.appendEos)
        ids.push_back(eos);
    }
    documents += docs.size();
    std::printf("%s: %zu documents, %zu tokens\n", input.c_str(), docs.size(), ids.size() - before);
  }
  uint64_t vocab = (uint64_t)tok->vocabSize();
  bmrt::writeTokenFile(o.output, ids, vocab);
  std::printf("%s: %llu documents, %zu tokens, vocab %llu, uint%d ids\n", o.output.c_str(),
              (unsigned long long)documents, ids.size(), (unsigned long long)vocab,
              bmrt::tokenIdBytesFor(vocab) * 8);
  return 0;
}

int trainBpe(const Options &o) {
  std::vector<std::string> docs;
  for (const std::string &input : o.inputs) {
    std::vector<std::string> part = readDocuments(input, o.field);
    for (std::string &d : part)
      docs.push_back(std::move(d));
  }
  // The mask token takes the last id, so the trainer stops one token earlier.
  bool mask = !o.maskToken.empty();
  bmrt::BpeResult bpe = bmrt::trainByteLevelBpe(docs, o.trainVocab - (mask ? 1 : 0), o.minFrequency);
  if (mask) {
    bpe.vocab.push_back(o.maskToken);
    bpe.maskToken = o.maskToken;
  }
  bmrt::writeBpeFiles(o.output, bpe);
  std::printf("%s: %zu documents, vocab %zu (%zu merges)\n", o.output.c_str(), docs.size(),
              bpe.vocab.size(), bpe.merges.size());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::fputs(kUsage, stdout);
      return 0;
    }
  Options o;
  try {
    o = parseFlags(argc, argv);
  } catch (const UsageError &e) {
    std::fprintf(stderr, "bmb-tokenize: %s\n%s", e.message.c_str(), kUsage);
    return 2;
  }
  try {
    return o.trainVocab > 0 ? trainBpe(o) : tokenize(o);
  } catch (const bmrt::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
