//===- data/token_file.cpp - Token files: atomic write, mmap + validate ---===//
//
// The layout is documented in include/bmrt/tokens.h. Little-endian hosts
// only (as the safetensors reader): the ids are memcpy'd.
//
//===----------------------------------------------------------------------===//
#include "bmrt/tokens.h"

#include "bmrt/context.h"
#include "io/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "token files assume a little-endian host");

namespace bmrt {

namespace {

constexpr char kMagic[8] = {'B', 'M', 'B', 'T', 'O', 'K', '1', '\0'};
constexpr uint32_t kVersion = 1;

uint64_t load64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
uint32_t load32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

} // namespace

int tokenIdBytesFor(uint64_t vocabSize) { return vocabSize <= 65536 ? 2 : 4; }

uint64_t tokenChecksum(const void *data, size_t n) {
  const uint8_t *p = (const uint8_t *)data;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

void writeTokenFile(const std::string &file, const std::vector<int32_t> &ids, uint64_t vocabSize) {
  if (vocabSize == 0 || vocabSize > (uint64_t)INT32_MAX + 1)
    fail(file + ": cannot write: vocab size " + std::to_string(vocabSize) + " is out of range");
  int width = tokenIdBytesFor(vocabSize);
  std::vector<uint8_t> body(ids.size() * (size_t)width);
  for (size_t i = 0; i < ids.size(); ++i) {
    int32_t id = ids[i];
    if (id < 0 || (uint64_t)id >= vocabSize)
      fail(file + ": cannot write: id " + std::to_string(id) + " at position " + std::to_string(i) +
           " is outside the vocabulary of " + std::to_string(vocabSize));
    if (width == 2) {
      uint16_t v = (uint16_t)id;
      memcpy(&body[i * 2], &v, 2);
    } else {
      uint32_t v = (uint32_t)id;
      memcpy(&body[i * 4], &v, 4);
    }
  }
  uint8_t header[kTokenFileHeaderBytes] = {};
  uint32_t version = kVersion, widthField = (uint32_t)width;
  uint64_t count = ids.size(), checksum = tokenChecksum(body.data(), body.size());
  memcpy(header, kMagic, 8);
  memcpy(header + 8, &version, 4);
  memcpy(header + 12, &widthField, 4);
  memcpy(header + 16, &count, 8);
  memcpy(header + 24, &vocabSize, 8);
  memcpy(header + 32, &checksum, 8);

  io::AtomicFile out(file);
  out.write(header, sizeof header);
  out.write(body.data(), body.size());
  out.commit();
}

TokenFile TokenFile::open(const std::string &file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail(file + ": cannot open token file: " + strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    fail(file + ": cannot stat token file: " + strerror(err));
  }
  size_t bytes = (size_t)st.st_size;
  if (bytes < kTokenFileHeaderBytes) {
    ::close(fd);
    fail(file + ": not a token file: truncated header (" + std::to_string(bytes) + " bytes, need " +
         std::to_string(kTokenFileHeaderBytes) + ")");
  }
  void *map = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  int err = errno;
  ::close(fd);
  if (map == MAP_FAILED)
    fail(file + ": cannot map token file: " + strerror(err));

  TokenFile t;
  t.path_ = file;
  t.map_ = (const uint8_t *)map;
  t.mapBytes_ = bytes; // from here on the destructor unmaps on failure
  const uint8_t *h = t.map_;
  if (memcmp(h, kMagic, 8) != 0)
    fail(file + ": not a token file: bad magic (expected \"BMBTOK1\")");
  uint32_t version = load32(h + 8), width = load32(h + 12);
  if (version != kVersion)
    fail(file + ": unsupported token file version " + std::to_string(version) + " (this build reads " +
         std::to_string(kVersion) + ")");
  if (width != 2 && width != 4)
    fail(file + ": bad token file: id width " + std::to_string(width) + " (must be 2 or 4)");
  t.count_ = load64(h + 16);
  t.vocab_ = load64(h + 24);
  t.checksum_ = load64(h + 32);
  t.idBytes_ = (int)width;
  for (size_t i = 40; i < kTokenFileHeaderBytes; ++i)
    if (h[i] != 0)
      fail(file + ": bad token file: reserved header byte " + std::to_string(i) + " is not zero");
  if (t.vocab_ == 0 || t.vocab_ > (uint64_t)INT32_MAX + 1)
    fail(file + ": bad token file: vocab size " + std::to_string(t.vocab_) + " is out of range");
  if ((int)width != tokenIdBytesFor(t.vocab_))
    fail(file + ": bad token file: id width " + std::to_string(width) + " does not match vocab size " +
         std::to_string(t.vocab_));
  uint64_t body = bytes - kTokenFileHeaderBytes;
  if (t.count_ > body / width) // count * width > body, without overflow
    fail(file + ": truncated token file: header says " + std::to_string(t.count_) + " ids (" +
         std::to_string(t.count_ * width) + " bytes) but only " + std::to_string(body) +
         " bytes follow the header");
  if (t.count_ * width != body)
    fail(file + ": bad token file: count mismatch: header says " + std::to_string(t.count_) +
         " ids but " + std::to_string(body) + " bytes follow the header (" +
         std::to_string(body / width) + (body % width ? "+" : "") + " ids)");
  t.ids_ = t.map_ + kTokenFileHeaderBytes;
  uint64_t sum = tokenChecksum(t.ids_, (size_t)body);
  if (sum != t.checksum_)
    fail(file + ": bad token file: checksum mismatch (file damaged)");
  for (uint64_t i = 0; i < t.count_; ++i) {
    uint64_t id = width == 2 ? (uint64_t)(uint16_t)(t.ids_[2 * i] | (t.ids_[2 * i + 1] << 8))
                             : (uint64_t)load32(t.ids_ + 4 * i);
    if (id >= t.vocab_)
      fail(file + ": bad token file: id " + std::to_string(id) + " at position " + std::to_string(i) +
           " is >= the vocab size " + std::to_string(t.vocab_));
  }
  return t;
}

TokenFile::TokenFile(TokenFile &&o) noexcept { *this = std::move(o); }

TokenFile &TokenFile::operator=(TokenFile &&o) noexcept {
  if (this != &o) {
    if (map_)
      munmap(const_cast<uint8_t *>(map_), mapBytes_);
    path_ = std::move(o.path_);
    map_ = o.map_;
    mapBytes_ = o.mapBytes_;
    ids_ = o.ids_;
    count_ = o.count_;
    vocab_ = o.vocab_;
    checksum_ = o.checksum_;
    idBytes_ = o.idBytes_;
    o.map_ = nullptr;
    o.ids_ = nullptr;
    o.mapBytes_ = 0;
  }
  return *this;
}

TokenFile::~TokenFile() {
  if (map_)
    munmap(const_cast<uint8_t *>(map_), mapBytes_);
}

int32_t TokenFile::at(uint64_t i) const {
  if (idBytes_ == 2) {
    uint16_t v;
    memcpy(&v, ids_ + 2 * i, 2);
    return v;
  }
  return (int32_t)load32(ids_ + 4 * i);
}

void TokenFile::copy(uint64_t begin, uint64_t n, int32_t *out) const {
  if (begin > count_ || n > count_ - begin)
    fail(path_ + ": ids [" + std::to_string(begin) + ", " + std::to_string(begin + n) +
         ") are past the end (" + std::to_string(count_) + " ids)");
  for (uint64_t i = 0; i < n; ++i)
    out[i] = at(begin + i);
}

std::vector<int32_t> TokenFile::all() const {
  std::vector<int32_t> out(count_);
  copy(0, count_, out.data());
  return out;
}

} // namespace bmrt
