//===- data/bpe_trainer.cpp - Byte-level BPE training (GPT-2 layout) ------===//
//
// The algorithm is Hugging Face's BpeTrainer (tokenizers 0.19), so that the
// same corpus gives the same merges:
//   * words are the pieces of GPT-2's regex split (tokenizers/byte_level.h,
//     the pre-tokenizer our GPT-2 tokenizer uses), counted;
//   * the alphabet is the 256 byte characters ordered by code point (which
//     is GPT-2's vocab.json order), ids 0..255;
//   * a max-heap of (pair count, pair) picks the next merge: highest count,
//     ties to the smallest (left id, right id); stale counts are refreshed
//     lazily (popped, re-pushed with the current count);
//   * merging rewrites every word the heap entry recorded (HF's `pos`: the
//     words where the pair appeared when the entry was made), left to right,
//     and applies the exact pair count changes;
//   * a merge whose string already is a token reuses that token's id.
// Training stops when the vocabulary (with <|endoftext|>) reaches the asked
// size, or the best pair is seen fewer than minFrequency times.
//
//===----------------------------------------------------------------------===//
#include "bmrt/tokens.h"

#include "bmrt/context.h"
#include "bmrt/json.h"
#include "tokenizers/byte_level.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <queue>
#include <sys/stat.h>
#include <unordered_map>
#include <unordered_set>

namespace bmrt {

namespace {

using Pair = uint64_t; // left id << 32 | right id
Pair makePair(uint32_t a, uint32_t b) { return ((uint64_t)a << 32) | b; }

struct Word {
  std::vector<uint32_t> symbols;
  std::vector<size_t> lengths; // bytes per symbol (HF's max_length test; unbounded here)
  uint64_t count = 0;
};

struct Change {
  Pair pair;
  int32_t delta;
};

// HF's Word::merge: every non-overlapping (a, b), left to right.
void mergeWord(Word &w, uint32_t a, uint32_t b, uint32_t replacement, std::vector<Change> &changes) {
  std::vector<uint32_t> &s = w.symbols;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == a && i + 1 < s.size() && s[i + 1] == b) {
      uint32_t second = s[i + 1];
      if (i > 0) {
        changes.push_back({makePair(s[i - 1], a), -1});
        changes.push_back({makePair(s[i - 1], replacement), 1});
      }
      s[i] = replacement;
      s.erase(s.begin() + (ptrdiff_t)i + 1);
      if (i + 1 < s.size()) {
        changes.push_back({makePair(second, s[i + 1]), -1});
        changes.push_back({makePair(replacement, s[i + 1]), 1});
      }
    }
    ++i;
  }
}

struct Entry {
  uint64_t count;
  Pair pair;
  uint32_t pos; // index into the word-list table
};
struct EntryLess {
  bool operator()(const Entry &x, const Entry &y) const {
    if (x.count != y.count)
      return x.count < y.count;
    return x.pair > y.pair; // smaller pair first among equal counts
  }
};

// The code point of a one- or two-byte UTF-8 character (the byte map's).
uint32_t codePointOf(const std::string &s) {
  const uint8_t *p = (const uint8_t *)s.data();
  if (s.size() == 1)
    return p[0];
  return ((uint32_t)(p[0] & 0x1f) << 6) | (p[1] & 0x3f);
}

void writeTextFile(const std::string &file, const std::string &text) {
  std::string temp = file + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out)
      fail(file + ": cannot write: " + strerror(errno));
    out << text;
    out.flush();
    if (!out)
      fail(file + ": cannot write: " + strerror(errno));
  }
  if (::rename(temp.c_str(), file.c_str()) != 0)
    fail(file + ": cannot write: rename: " + strerror(errno));
}

} // namespace

BpeResult trainByteLevelBpe(const std::vector<std::string> &documents, int64_t vocabSize,
                            int64_t minFrequency) {
  if (vocabSize < 257)
    fail("BPE vocab size must be at least 257 (256 bytes + <|endoftext|>), got " +
         std::to_string(vocabSize));
  // The alphabet: bytes ordered by their characters' code points.
  std::vector<uint8_t> order(256);
  for (int b = 0; b < 256; ++b)
    order[b] = (uint8_t)b;
  std::sort(order.begin(), order.end(), [](uint8_t x, uint8_t y) {
    return codePointOf(tok::byteToUnicode(x)) < codePointOf(tok::byteToUnicode(y));
  });
  uint32_t byteId[256];
  std::vector<std::string> tokenBytes; // raw bytes per id
  std::unordered_map<std::string, uint32_t> idOf;
  for (uint32_t id = 0; id < 256; ++id) {
    byteId[order[id]] = id;
    tokenBytes.push_back(std::string(1, (char)order[id]));
    idOf[tokenBytes.back()] = id;
  }

  // Words and their counts.
  std::unordered_map<std::string, uint64_t> wordCounts;
  std::vector<std::pair<size_t, size_t>> pieces;
  for (const std::string &doc : documents) {
    pieces.clear();
    tok::splitGpt2(doc, pieces);
    for (auto [begin, end] : pieces)
      if (end > begin)
        ++wordCounts[doc.substr(begin, end - begin)];
  }
  std::vector<Word> words;
  words.reserve(wordCounts.size());
  for (auto &[text, count] : wordCounts) {
    Word w;
    for (unsigned char c : text)
      w.symbols.push_back(byteId[c]);
    w.count = count;
    words.push_back(std::move(w));
  }

  // Initial pair counts and where each pair occurs.
  std::unordered_map<Pair, int64_t> pairCounts;
  std::unordered_map<Pair, std::vector<uint32_t>> where;
  for (uint32_t wi = 0; wi < words.size(); ++wi) {
    const Word &w = words[wi];
    for (size_t i = 0; i + 1 < w.symbols.size(); ++i) {
      Pair p = makePair(w.symbols[i], w.symbols[i + 1]);
      pairCounts[p] += (int64_t)w.count;
      std::vector<uint32_t> &ws = where[p];
      if (ws.empty() || ws.back() != wi)
        ws.push_back(wi);
    }
  }
  std::vector<std::vector<uint32_t>> posTable;
  std::priority_queue<Entry, std::vector<Entry>, EntryLess> queue;
  for (auto &[p, ws] : where) {
    int64_t c = pairCounts[p];
    if (c > 0) {
      posTable.push_back(std::move(ws));
      queue.push({(uint64_t)c, p, (uint32_t)(posTable.size() - 1)});
    }
  }
  where.clear();

  std::vector<std::pair<uint32_t, uint32_t>> mergeIds;
  std::vector<Change> changes;
  std::unordered_map<Pair, std::unordered_set<uint32_t>> toUpdate;
  while ((int64_t)tokenBytes.size() + 1 < vocabSize && !queue.empty()) {
    Entry top = queue.top();
    queue.pop();
    int64_t current = pairCounts[top.pair];
    if ((int64_t)top.count != current) {
      if (current > 0)
        queue.push({(uint64_t)current, top.pair, top.pos});
      continue;
    }
    if (current < 1 || current < minFrequency)
      break;
    uint32_t a = (uint32_t)(top.pair >> 32), b = (uint32_t)top.pair;
    std::string merged = tokenBytes[a] + tokenBytes[b];
    uint32_t newId;
    auto found = idOf.find(merged);
    if (found != idOf.end()) {
      newId = found->second;
    } else {
      newId = (uint32_t)tokenBytes.size();
      tokenBytes.push_back(merged);
      idOf.emplace(merged, newId);
    }
    mergeIds.emplace_back(a, b);
    toUpdate.clear();
    for (uint32_t wi : posTable[top.pos]) {
      changes.clear();
      mergeWord(words[wi], a, b, newId, changes);
      for (const Change &c : changes) {
        pairCounts[c.pair] += (int64_t)c.delta * (int64_t)words[wi].count;
        if (c.delta > 0)
          toUpdate[c.pair].insert(wi);
      }
    }
    for (auto &[p, ws] : toUpdate) {
      int64_t c = pairCounts[p];
      if (c > 0) {
        posTable.emplace_back(ws.begin(), ws.end());
        queue.push({(uint64_t)c, p, (uint32_t)(posTable.size() - 1)});
      }
    }
  }

  BpeResult result;
  for (const std::string &t : tokenBytes)
    result.vocab.push_back(tok::bytesToUnicode(t));
  result.vocab.push_back("<|endoftext|>");
  for (auto [a, b] : mergeIds)
    result.merges.emplace_back(result.vocab[a], result.vocab[b]);
  return result;
}

void writeBpeFiles(const std::string &dir, const BpeResult &bpe) {
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    fail(dir + ": cannot create directory: " + strerror(errno));
  std::string vocab = "{";
  for (size_t id = 0; id < bpe.vocab.size(); ++id)
    vocab += (id ? "," : "") + json::quote(bpe.vocab[id]) + ":" + std::to_string(id);
  vocab += "}";
  std::string merges = "#version: 0.2\n";
  for (const auto &[a, b] : bpe.merges)
    merges += a + " " + b + "\n";
  writeTextFile(dir + "/vocab.json", vocab);
  writeTextFile(dir + "/merges.txt", merges);
  if (!bpe.maskToken.empty())
    writeTextFile(dir + "/tokenizer_config.json",
                  "{\"mask_token\": " + json::quote(bpe.maskToken) + "}\n");
}

} // namespace bmrt
