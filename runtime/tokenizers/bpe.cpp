//===- tokenizers/bpe.cpp - Byte-pair encoding by merge rank --------------===//
//
// HF's Word::merge_all: the piece starts as one symbol per character, every
// adjacent pair with a merge goes into a min-heap keyed by (rank, position),
// and the lowest is merged, re-checking on pop that the entry is still
// current. That is O(n log n) for a piece of n characters, which matters for
// SentencePiece-style files where a whole line is one piece. Characters
// missing from the vocabulary become <0xNN> byte tokens (byte_fallback) or
// the unknown token (consecutive ones fused when fuse_unk), exactly as HF's
// merge_word decides.
//
//===----------------------------------------------------------------------===//
#include "models.h"

#include "bmrt/context.h"
#include "unicode.h"

#include <cstdio>
#include <queue>

namespace bmrt::tok {

namespace {

constexpr size_t kCacheCapacity = 10000; // HF's DEFAULT_CACHE_CAPACITY
constexpr size_t kMaxCachedPieceBytes = 256;

struct Symbol {
  int32_t id;
  int32_t prev, next; // -1 at the ends
  bool removed;
};

struct HeapEntry {
  uint32_t rank;
  uint32_t pos;
  int32_t newId;
  // std::priority_queue is a max-heap: "greater" means popped later.
  bool operator<(const HeapEntry &o) const {
    return rank != o.rank ? rank > o.rank : pos > o.pos;
  }
};

} // namespace

BpeModel::BpeModel(Vocab vocab, const std::vector<std::pair<std::string, std::string>> &merges,
                   BpeOptions options, const std::string &what)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  const size_t prefixLen = options_.continuingSubwordPrefix.size();
  merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto &[a, b] = merges[rank];
    auto lookup = [&](const std::string &token) {
      auto it = vocab_.find(token);
      if (it == vocab_.end())
        fail(what + ": merge " + std::to_string(rank + 1) + " (\"" + a + " " + b +
             "\") names \"" + token + "\", which is not in the vocabulary");
      return it->second;
    };
    int32_t idA = lookup(a), idB = lookup(b);
    // The merged token drops b's continuing-subword prefix (HF).
    std::string merged = a + (b.compare(0, prefixLen, options_.continuingSubwordPrefix) == 0
                                  ? b.substr(prefixLen)
                                  : b);
    int32_t newId = lookup(merged);
    merges_[pairKey(idA, idB)] = {(uint32_t)rank, newId}; // a repeated pair: the later rank wins, as in HF
  }
  if (options_.unkToken) {
    auto it = vocab_.find(*options_.unkToken);
    if (it == vocab_.end())
      fail(what + ": the unknown token \"" + *options_.unkToken + "\" is not in the vocabulary");
    unkId_ = it->second;
  }
}

std::vector<int32_t> BpeModel::mergeWord(std::string_view piece) const {
  std::vector<Symbol> symbols;
  symbols.reserve(piece.size());
  auto add = [&](int32_t id) {
    int32_t index = (int32_t)symbols.size();
    symbols.push_back({id, index - 1, -1, false});
    if (index > 0)
      symbols[index - 1].next = index;
  };
  std::optional<int32_t> pendingUnk; // HF adds an unknown token lazily to fuse runs
  std::string key;
  for (size_t pos = 0; pos < piece.size();) {
    unicode::Utf8Unit u = unicode::decodeUtf8(piece, pos);
    std::string_view ch = piece.substr(pos, u.length);
    bool first = pos == 0, last = pos + u.length == piece.size();
    pos += u.length;
    key.assign(first ? "" : options_.continuingSubwordPrefix);
    key.append(ch);
    if (last)
      key += options_.endOfWordSuffix;
    auto it = vocab_.find(key);
    if (it != vocab_.end()) {
      if (pendingUnk) {
        add(*pendingUnk);
        pendingUnk.reset();
      }
      add(it->second);
      continue;
    }
    if (options_.byteFallback) {
      std::vector<int32_t> bytes;
      for (unsigned char b : key) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        auto bt = vocab_.find(name);
        if (bt == vocab_.end())
          break;
        bytes.push_back(bt->second);
      }
      if (bytes.size() == key.size()) {
        // HF does not flush a pending unknown token here; neither do we.
        for (int32_t id : bytes)
          add(id);
        continue;
      }
    }
    if (unkId_) {
      if (pendingUnk && !options_.fuseUnk)
        add(*pendingUnk);
      pendingUnk = *unkId_;
    }
    // No unknown token: HF drops the character.
  }
  if (pendingUnk)
    add(*pendingUnk);

  std::priority_queue<HeapEntry> heap;
  auto push = [&](int32_t pos) {
    int32_t next = symbols[pos].next;
    if (next < 0)
      return;
    auto it = merges_.find(pairKey(symbols[pos].id, symbols[next].id));
    if (it != merges_.end())
      heap.push({it->second.rank, (uint32_t)pos, it->second.newId});
  };
  for (int32_t i = 0; i + 1 < (int32_t)symbols.size(); ++i)
    push(i);
  while (!heap.empty()) {
    HeapEntry top = heap.top();
    heap.pop();
    Symbol &left = symbols[top.pos];
    if (left.removed || left.next < 0)
      continue;
    Symbol &right = symbols[left.next];
    // Stale entry: the pair at this position changed since it was pushed.
    auto it = merges_.find(pairKey(left.id, right.id));
    if (it == merges_.end() || it->second.newId != top.newId)
      continue;
    left.id = top.newId;
    right.removed = true;
    left.next = right.next;
    if (right.next >= 0)
      symbols[right.next].prev = (int32_t)top.pos;
    if (left.prev >= 0)
      push(left.prev);
    push((int32_t)top.pos);
  }
  std::vector<int32_t> ids;
  for (const Symbol &s : symbols)
    if (!s.removed)
      ids.push_back(s.id);
  return ids;
}

void BpeModel::tokenize(std::string_view piece, std::vector<int32_t> &ids) const {
  if (piece.empty())
    return;
  std::string key(piece);
  if (options_.ignoreMerges) {
    auto it = vocab_.find(key);
    if (it != vocab_.end()) {
      ids.push_back(it->second);
      return;
    }
  }
  bool cacheable = piece.size() <= kMaxCachedPieceBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cacheMutex_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> word = mergeWord(piece);
  ids.insert(ids.end(), word.begin(), word.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cacheMutex_);
    if (cache_.size() < kCacheCapacity)
      cache_.emplace(std::move(key), std::move(word));
  }
}

} // namespace bmrt::tok
