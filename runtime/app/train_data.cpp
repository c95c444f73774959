//===- app/train_data.cpp - Token files, or text tokenized at start -------===//
//
// A file is a token file when it starts with the BMBTOK1 magic; otherwise it
// is text: a .jsonl file is one {"text": ...} document per line, anything
// else one document. Documents are separated by the tokenizer's end-of-text
// id (when it has one), as bmb-tokenize --append-eos does, so the model
// sees where documents end.
//
// The tokenizer for text: --tokenizer (a directory or file, or "byte"),
// else the job's data tokenizer: "byte" needs no files, a named one
// ("gpt2", ...) is read from the --load directory.
//
//===----------------------------------------------------------------------===//
#include "app/train_data.h"

#include "bmrt/json.h"
#include "bmrt/tokenizer.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace bmrt {

namespace fs = std::filesystem;

namespace {

std::string readWhole(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path + ": cannot read the data file: " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool isTokenFile(const std::string &path) {
  char magic[8] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(magic, sizeof magic);
  return in.gcount() == 8 && std::memcmp(magic, "BMBTOK1\0", 8) == 0;
}

bool endsWith(const std::string &s, const char *suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

struct ChosenTokenizer {
  std::unique_ptr<Tokenizer> tokenizer;
  std::string dir; // where its files are ("" for byte)
  std::string name;
};

ChosenTokenizer chooseTokenizer(const DataOptions &o, const ProgramInfo &program) {
  const TrainInfo &t = *program.train;
  std::string job = t.dataTokenizer ? t.dataTokenizer : "";
  std::string hint = job == "byte" ? "" : job;
  ChosenTokenizer c;
  // Byte-level models have 256 byte ids, plus EOS as id 256 when there is room.
  if (o.tokenizer ? *o.tokenizer == "byte" : job == "byte") {
    c.tokenizer = makeByteTokenizer(program.vocab > 256);
    c.name = "byte tokenizer";
    return c;
  }
  std::string path;
  if (o.tokenizer)
    path = *o.tokenizer;
  else if (o.loadDir && fs::is_directory(*o.loadDir))
    path = *o.loadDir;
  else if (job.empty())
    fail(o.path + " is text: pass --tokenizer DIR|byte to tokenize it (or a token file made "
                  "by bmb-tokenize)");
  else
    fail(o.path + " is text and job " + program.job + " tokenizes with '" + job +
         "': pass --tokenizer DIR with its files (or a token file made by bmb-tokenize)");
  c.tokenizer = loadTokenizer(path, hint);
  c.dir = fs::is_directory(path) ? path : fs::path(path).parent_path().string();
  c.name = std::string(c.tokenizer->kind()) + " tokenizer from " + path;
  return c;
}

std::vector<std::string> documents(const std::string &path) {
  std::string text = readWhole(path);
  if (!endsWith(path, ".jsonl"))
    return {text};
  std::vector<std::string> docs;
  std::istringstream lines(text);
  std::string line;
  for (int64_t number = 1; std::getline(lines, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    std::string where = path + " line " + std::to_string(number);
    json::Value v = json::parse(line, where);
    const json::Value *field = v.get("text");
    if (!field || field->kind != json::Value::Kind::String)
      fail(where + ": expected an object with a string field \"text\"");
    docs.push_back(field->string);
  }
  return docs;
}

// Tokenizes into a token file that exists only as an open mapping.
std::unique_ptr<TokenFile> tokenizeText(const std::string &path, const Tokenizer &tok) {
  std::vector<int32_t> ids;
  std::optional<int32_t> eos = tok.eosId();
  for (const std::string &doc : documents(path)) {
    std::vector<int32_t> part = tok.encode(doc, false);
    ids.insert(ids.end(), part.begin(), part.end());
    if (eos)
      ids.push_back(*eos);
  }
  if (ids.empty() || (eos && ids.size() == 1))
    fail(path + ": the data is empty (no tokens)");
  const char *tmp = std::getenv("TMPDIR");
  std::string name = std::string(tmp && *tmp ? tmp : "/tmp") + "/bmb-train-XXXXXX";
  int fd = mkstemp(name.data());
  if (fd < 0)
    fail("cannot create a temporary token file in " + fs::path(name).parent_path().string() +
         ": " + std::strerror(errno));
  close(fd);
  try {
    writeTokenFile(name, ids, (uint64_t)tok.vocabSize());
    auto file = std::make_unique<TokenFile>(TokenFile::open(name));
    unlink(name.c_str());
    return file;
  } catch (...) {
    unlink(name.c_str());
    throw;
  }
}

} // namespace

TrainingData openTrainingData(const DataOptions &o, const ProgramInfo &program) {
  if (o.path.empty())
    fail(std::string("no training data: job ") + program.job + " names none; pass --data FILE");
  std::error_code ec;
  if (!fs::exists(o.path, ec))
    fail(o.path + ": the data file does not exist");
  if (fs::is_directory(o.path, ec))
    fail(o.path + ": the data is a directory, not a file");
  if (fs::file_size(o.path, ec) == 0)
    fail(o.path + ": the data file is empty");
  TrainingData data;
  if (isTokenFile(o.path)) {
    if (o.tokenizer)
      fail(o.path + " is a token file (already tokenized): --tokenizer does not apply");
    data.file = std::make_unique<TokenFile>(TokenFile::open(o.path));
    data.description = o.path + " (token file)";
  } else {
    ChosenTokenizer c = chooseTokenizer(o, program);
    data.file = tokenizeText(o.path, *c.tokenizer);
    data.tokenizerDir = c.dir;
    data.description = o.path + " (text, " + c.name + ")";
  }
  if (data.file->vocabSize() > (uint64_t)program.vocab)
    fail(o.path + ": the data's vocabulary has " + std::to_string(data.file->vocabSize()) +
         " ids, more than model " + program.model + "'s " + std::to_string(program.vocab) +
         " (tokenized for another model?)");
  return data;
}

} // namespace bmrt
