//===- encode_driver.cpp - Our tokenizer on hex-encoded strings -----------===//
//
// check_bpe_trainer.py runs this and Hugging Face's `tokenizers` on the same
// strings (one per line as hex of its bytes):
//   encode_driver <tokenizer path> <in> <out>
// writes per string "ids;hex(decode(ids))" (ids comma-separated, no
// special tokens added).
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "bmrt/tokenizer.h"

#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <tokenizer> <in> <out>\n", argv[0]);
    return 2;
  }
  try {
    std::unique_ptr<bmrt::Tokenizer> tok = bmrt::loadTokenizer(argv[1], "");
    std::ifstream in(argv[2], std::ios::binary);
    std::ofstream out(argv[3], std::ios::binary);
    if (!in || !out)
      bmrt::fail(std::string("cannot open ") + argv[2] + " or " + argv[3]);
    static const char *digits = "0123456789abcdef";
    std::string line;
    while (std::getline(in, line)) {
      std::string text;
      for (size_t i = 0; i + 1 < line.size(); i += 2)
        text += (char)std::stoi(line.substr(i, 2), nullptr, 16);
      std::vector<int32_t> ids = tok->encode(text, false);
      for (size_t i = 0; i < ids.size(); ++i)
        out << (i ? "," : "") << ids[i];
      out << ';';
      for (unsigned char c : tok->decode(ids))
        out << digits[c >> 4] << digits[c & 15];
      out << '\n';
    }
    return 0;
  } catch (const bmrt::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
