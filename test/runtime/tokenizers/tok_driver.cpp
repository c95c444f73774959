//===- tok_driver.cpp - The tokenizer API from the command line -----------===//
//
// compare_hf.py runs this and Hugging Face's `tokenizers` on the same
// inputs. Strings travel as hex of their bytes (one per line), so newlines,
// NULs and invalid UTF-8 survive; ids as comma-separated decimals.
//
//   encode <tokenizer> <hint> <in> <out>  first line "kind vocab bos eos"
//       (-1 for none), then per string: ids;ids with specials;
//       decode(ids with specials);concatenated tokenBytes(ids)
//   decode <tokenizer> <hint> <in> <out>  per line of ids: decode(ids)
//   vocab  <tokenizer> <hint> <out>       per id: tokenBytes(id)
//   load   <tokenizer> <hint>             prints kind, or the error
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "bmrt/tokenizer.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string hex(const std::string &s) {
  static const char *digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s)
    out += digits[c >> 4], out += digits[c & 15];
  return out;
}

std::string unhex(const std::string &h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2)
    out += (char)std::stoi(h.substr(i, 2), nullptr, 16);
  return out;
}

std::string joinIds(const std::vector<int32_t> &ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i)
    out += (i ? "," : "") + std::to_string(ids[i]);
  return out;
}

std::vector<int32_t> parseIds(const std::string &line) {
  std::vector<int32_t> ids;
  std::stringstream ss(line);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty())
      ids.push_back(std::stoi(item));
  return ids;
}

int run(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (argc < 4 || (mode != "load" && argc < 5)) {
    std::fprintf(stderr, "usage: %s encode|decode|vocab|load <tokenizer> <hint> [in] [out]\n", argv[0]);
    return 2;
  }
  std::unique_ptr<bmrt::Tokenizer> tok = bmrt::loadTokenizer(argv[2], argv[3]);
  if (mode == "load") {
    std::printf("%s\n", tok->kind());
    return 0;
  }
  std::ofstream out(argv[argc - 1], std::ios::binary);
  if (mode == "vocab") {
    for (int32_t id = 0; id < tok->vocabSize(); ++id)
      out << hex(tok->tokenBytes(id)) << '\n';
    return 0;
  }
  std::ifstream in(argv[4], std::ios::binary);
  if (!in || !out)
    bmrt::fail(std::string("cannot open ") + argv[4] + " or " + argv[5]);
  std::string line;
  if (mode == "encode") {
    out << tok->kind() << ' ' << tok->vocabSize() << ' ' << tok->bosId().value_or(-1) << ' '
        << tok->eosId().value_or(-1) << '\n';
    while (std::getline(in, line)) {
      std::string text = unhex(line);
      std::vector<int32_t> plain = tok->encode(text, false), framed = tok->encode(text, true);
      std::string stream;
      for (int32_t id : plain)
        stream += tok->tokenBytes(id);
      out << joinIds(plain) << ';' << joinIds(framed) << ';' << hex(tok->decode(framed)) << ';'
          << hex(stream) << '\n';
    }
  } else if (mode == "decode") {
    while (std::getline(in, line))
      out << hex(tok->decode(parseIds(line))) << '\n';
  } else {
    std::fprintf(stderr, "error: unknown mode %s\n", mode.c_str());
    return 2;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const bmrt::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
