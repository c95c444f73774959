//===- parts_dump.cpp - Our pipeline steps, one at a time -----------------===//
//
// The test driver of check_parts.py, which runs Hugging Face tokenizers'
// steps on the same input. `classes`: for every code point it is given (one
// hex number per line), what our GPT-2 splitter, BERT pre-tokenizer and BERT
// normalizer steps make of it. `nfd`: the NFD of given strings. `pieces`:
// the pre-tokenized pieces of given strings (GPT-2 ByteLevel; BERT
// normalizer + BertPreTokenizer; Metaspace), which shows a wrong split even
// where a small vocabulary would hide it in the ids. Output is hex so that
// any character survives the comparison.
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "byte_level.h"
#include "pipeline.h"
#include "unicode.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

using namespace bmrt;

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

std::string utf8(char32_t c) {
  std::string s;
  unicode::appendUtf8(s, c);
  return s;
}

tok::PreTokenizerStep bertStep() {
  tok::PreTokenizerStep step;
  step.kind = tok::PreTokenizerStep::Kind::Bert;
  return step;
}

size_t gpt2Pieces(const std::string &text) {
  std::vector<std::pair<size_t, size_t>> pieces;
  tok::splitGpt2(text, pieces);
  return pieces.size();
}

std::string joinPieces(const std::vector<tok::Piece> &pieces) {
  std::string out;
  for (size_t i = 0; i < pieces.size(); ++i)
    out += (i ? "," : "") + hex(pieces[i].text);
  return out;
}

std::string piecesOf(const std::string &text, const tok::PreTokenizerStep &step) {
  std::vector<tok::Piece> pieces = {{text, true}};
  tok::preTokenize({step}, pieces);
  return joinPieces(pieces);
}

// GPT-2's ByteLevel; BERT (uncased) normalizer then BertPreTokenizer; Llama's
// Metaspace (prepend always, split).
std::string allPieces(const std::string &text) {
  tok::PreTokenizerStep byteLevel, bert, metaspace;
  byteLevel.kind = tok::PreTokenizerStep::Kind::ByteLevel;
  bert.kind = tok::PreTokenizerStep::Kind::Bert;
  metaspace.kind = tok::PreTokenizerStep::Kind::Metaspace;
  metaspace.replacement = "\xE2\x96\x81";
  tok::NormalizerStep bertNormalizer;
  bertNormalizer.kind = tok::NormalizerStep::Kind::Bert;
  std::string normalized = tok::normalize({bertNormalizer}, text);
  return piecesOf(text, byteLevel) + " " + hex(normalized) + " " + piecesOf(normalized, bert) +
         " " + piecesOf(text, metaspace);
}

std::string bertNormalize(const std::string &text, bool clean, bool chinese, bool strip, bool lower) {
  tok::NormalizerStep step;
  step.kind = tok::NormalizerStep::Kind::Bert;
  step.cleanText = clean, step.handleChineseChars = chinese;
  step.stripAccents = strip, step.lowercase = lower;
  return hex(tok::normalize({step}, text));
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s classes|nfd|pieces <input> <output>\n", argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  std::ifstream in(argv[2]);
  std::ofstream out(argv[3]);
  if (!in || !out) {
    std::fprintf(stderr, "error: cannot open %s or %s\n", argv[2], argv[3]);
    return 1;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (mode == "classes") {
      char32_t c = (char32_t)std::stoul(line, nullptr, 16);
      std::string s = utf8(c);
      out << line << ' ' << gpt2Pieces("a" + s) << gpt2Pieces("1" + s) << gpt2Pieces("!" + s)
          << ' ' << piecesOf("a" + s + "b", bertStep()) << ' ' << bertNormalize(s, true, false, false, false)
          << ' ' << bertNormalize(s, false, true, false, false) << ' '
          << bertNormalize(s, false, false, true, false) << ' '
          << bertNormalize(s, false, false, false, true) << '\n';
    } else if (mode == "pieces") {
      out << allPieces(unhex(line)) << '\n';
    } else if (mode == "nfd") {
      std::string s = unhex(line);
      out << hex(unicode::fromCodePoints(unicode::nfd(unicode::toCodePoints(s)))) << '\n';
    } else {
      std::fprintf(stderr, "error: unknown mode %s\n", mode.c_str());
      return 2;
    }
  }
  return 0;
}
