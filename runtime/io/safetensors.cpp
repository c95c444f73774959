//===- io/safetensors.cpp - mmap reader and atomic writer -----------------===//
//
// Validation is complete and up front (see safetensors.h): after open()
// succeeds, every tensor's bytes lie inside the mapping, sizes agree with
// dtype x shape, and no two tensors overlap, so read() needs no checks but
// the dtype direction. The format is little-endian, as is every host we
// build for (checked at compile time below).
//
//===----------------------------------------------------------------------===//
#include "safetensors.h"

#include "bmrt/context.h"
#include "bmrt/json.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; a big-endian host would need byte swaps");

namespace bmrt::io {

namespace {

// A header this large is certainly corrupt (GPT-2 XL's is ~40 KB; a 70B model
// in one file with thousands of tensors stays far below).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;
// Integers in the header come through a double: exact up to 2^53.
constexpr double kMaxExactInteger = 9007199254740992.0;

struct DTypeName {
  const char *name;
  FileDType dtype;
  size_t size;
};
constexpr DTypeName kFileDTypes[] = {
    {"F32", FileDType::F32, 4},  {"F16", FileDType::F16, 2}, {"BF16", FileDType::BF16, 2},
    {"F64", FileDType::F64, 8},  {"I32", FileDType::I32, 4}, {"I64", FileDType::I64, 8},
};

bool isFloat(FileDType t) {
  return t == FileDType::F32 || t == FileDType::F16 || t == FileDType::BF16 ||
         t == FileDType::F64;
}

// IEEE half -> float, exact (every half is a float), subnormals, inf and NaN
// included.
float halfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0) {
    // zero or subnormal: mantissa * 2^-24, exact in float
    float magnitude = (float)mantissa * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31)
    bits = sign | 0x7f800000u | (mantissa << 13); // inf / NaN (payload kept)
  else
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13); // rebias 15 -> 127
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

// bfloat16 is the top half of a float.
float bf16ToFloat(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

// One element of a float file dtype as a float (F64 rounds to nearest).
float loadFloat(const uint8_t *p, FileDType t) {
  switch (t) {
  case FileDType::F32: { float f; memcpy(&f, p, 4); return f; }
  case FileDType::F16: { uint16_t h; memcpy(&h, p, 2); return halfToFloat(h); }
  case FileDType::BF16: { uint16_t b; memcpy(&b, p, 2); return bf16ToFloat(b); }
  case FileDType::F64: { double d; memcpy(&d, p, 8); return (float)d; }
  default: return 0; // integer dtypes never reach here (checked by read())
  }
}

// A non-negative integer from the header, or a failure naming `what`.
uint64_t headerInteger(const json::Value &v, const std::string &path, const std::string &what) {
  if (v.kind != json::Value::Kind::Number || v.number < 0 || v.number > kMaxExactInteger ||
      v.number != std::floor(v.number))
    fail(path + ": " + what + " is not a non-negative integer");
  return (uint64_t)v.number;
}

FileTensor parseTensorEntry(const std::string &name, const json::Value &entry,
                            const std::string &path, uint64_t dataBytes) {
  std::string where = "tensor '" + name + "'";
  if (entry.kind != json::Value::Kind::Object)
    fail(path + ": header entry of " + where + " is not an object");
  const json::Value *dtype = entry.get("dtype");
  const json::Value *shape = entry.get("shape");
  const json::Value *offsets = entry.get("data_offsets");
  if (!dtype || dtype->kind != json::Value::Kind::String)
    fail(path + ": " + where + " has no \"dtype\" string");
  if (!shape || shape->kind != json::Value::Kind::Array)
    fail(path + ": " + where + " has no \"shape\" array");
  if (!offsets || offsets->kind != json::Value::Kind::Array || offsets->array.size() != 2)
    fail(path + ": " + where + " has no \"data_offsets\" [begin, end] array");

  FileTensor t;
  t.name = name;
  size_t elementSize = 0;
  for (const DTypeName &d : kFileDTypes)
    if (dtype->string == d.name) {
      t.dtype = d.dtype;
      elementSize = d.size;
    }
  if (elementSize == 0)
    fail(path + ": " + where + " has dtype " + dtype->string +
         ", which is not supported (F32, F16, BF16, F64, I32, I64)");

  t.numel = 1;
  for (const json::Value &dim : shape->array) {
    uint64_t d = headerInteger(dim, path, "a dimension in the shape of " + where);
    t.shape.push_back((int64_t)d);
    if (__builtin_mul_overflow(t.numel, (int64_t)d, &t.numel))
      fail(path + ": the shape of " + where + " has too many elements");
  }
  t.begin = headerInteger(offsets->array[0], path, "data_offsets[0] of " + where);
  t.end = headerInteger(offsets->array[1], path, "data_offsets[1] of " + where);
  std::string range = "[" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
  if (t.begin > t.end)
    fail(path + ": data_offsets " + range + " of " + where + " end before they begin");
  if (t.end > dataBytes)
    fail(path + ": data_offsets " + range + " of " + where + " lie beyond the data section (" +
         std::to_string(dataBytes) + " bytes; is the file truncated?)");
  uint64_t expected;
  if (__builtin_mul_overflow((uint64_t)t.numel, (uint64_t)elementSize, &expected) ||
      expected != t.end - t.begin)
    fail(path + ": " + where + " has " + std::to_string(t.end - t.begin) +
         " bytes of data, but dtype " + dtype->string + " and shape " + shapeString(t.shape) +
         " need " + std::to_string((uint64_t)t.numel * elementSize));
  return t;
}

// Overlapping tensors would alias each other's data: refuse them.
void checkNoOverlap(const std::vector<FileTensor> &tensors, const std::string &path) {
  std::vector<const FileTensor *> byBegin;
  for (const FileTensor &t : tensors)
    if (t.end > t.begin)
      byBegin.push_back(&t);
  std::sort(byBegin.begin(), byBegin.end(),
            [](const FileTensor *a, const FileTensor *b) { return a->begin < b->begin; });
  for (size_t k = 1; k < byBegin.size(); ++k)
    if (byBegin[k]->begin < byBegin[k - 1]->end)
      fail(path + ": the data of tensors '" + byBegin[k - 1]->name + "' and '" +
           byBegin[k]->name + "' overlap");
}

} // namespace

const char *fileDTypeName(FileDType t) {
  for (const DTypeName &d : kFileDTypes)
    if (d.dtype == t)
      return d.name;
  return "?";
}

size_t fileDTypeSize(FileDType t) {
  for (const DTypeName &d : kFileDTypes)
    if (d.dtype == t)
      return d.size;
  return 0;
}

const char *paramDTypeName(DType t) {
  switch (t) {
  case DType::F32: return "F32";
  case DType::F64: return "F64";
  case DType::I32: return "I32";
  }
  return "?";
}

size_t paramDTypeSize(DType t) { return t == DType::F64 ? 8 : 4; }

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t k = 0; k < shape.size(); ++k)
    s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + "]";
}

SafetensorsFile SafetensorsFile::open(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail(path + ": cannot open: " + strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path + ": not a regular file");
  }
  size_t size = (size_t)st.st_size;
  if (size < 8) {
    ::close(fd);
    fail(path + ": truncated: " + std::to_string(size) +
         " bytes (a safetensors file starts with an 8-byte header length)");
  }
  void *map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd); // the mapping keeps the file alive
  if (map == MAP_FAILED)
    fail(path + ": cannot map: " + strerror(errno));

  SafetensorsFile file;
  file.path_ = path;
  file.map_ = (const uint8_t *)map;
  file.size_ = size;

  uint64_t headerBytes;
  memcpy(&headerBytes, file.map_, 8);
  if (headerBytes > size - 8)
    fail(path + ": header length " + std::to_string(headerBytes) + " exceeds the file size (" +
         std::to_string(size) + " bytes; truncated, or not a safetensors file)");
  if (headerBytes > kMaxHeaderBytes)
    fail(path + ": header length " + std::to_string(headerBytes) +
         " is implausibly large (> 100 MiB; not a safetensors file?)");
  std::string_view headerText((const char *)file.map_ + 8, headerBytes);
  json::Value header = json::parse(headerText, path + " (safetensors header)");
  if (header.kind != json::Value::Kind::Object)
    fail(path + ": the safetensors header is not a JSON object");

  file.data_ = file.map_ + 8 + headerBytes;
  uint64_t dataBytes = size - 8 - headerBytes;
  for (const auto &[name, entry] : header.object) {
    if (name == "__metadata__") {
      if (entry.kind != json::Value::Kind::Object)
        fail(path + ": \"__metadata__\" is not an object");
      for (const auto &[key, value] : entry.object)
        if (value.kind == json::Value::Kind::String)
          file.metadata_.emplace_back(key, value.string);
      continue;
    }
    file.tensors_.push_back(parseTensorEntry(name, entry, path, dataBytes));
  }
  // Duplicate names would make "which one?" ambiguous.
  std::vector<const std::string *> names;
  for (const FileTensor &t : file.tensors_)
    names.push_back(&t.name);
  std::sort(names.begin(), names.end(),
            [](const std::string *a, const std::string *b) { return *a < *b; });
  for (size_t k = 1; k < names.size(); ++k)
    if (*names[k] == *names[k - 1])
      fail(path + ": tensor '" + *names[k] + "' appears twice in the header");
  checkNoOverlap(file.tensors_, path);
  return file;
}

SafetensorsFile::SafetensorsFile(SafetensorsFile &&other) noexcept
    : path_(std::move(other.path_)), map_(other.map_), size_(other.size_), data_(other.data_),
      tensors_(std::move(other.tensors_)), metadata_(std::move(other.metadata_)) {
  other.map_ = nullptr;
  other.size_ = 0;
}

SafetensorsFile::~SafetensorsFile() {
  if (map_)
    munmap(const_cast<uint8_t *>(map_), size_);
}

// Once a tensor is converted its file pages are not needed: dropping them
// keeps the process's peak RSS near the planned allocations instead of
// planned + the whole checkpoint. The mapping is private and never written,
// so a later read of the same range (a tied tensor's check) faults the pages
// back in from the file.
static void releasePages(const uint8_t *begin, size_t bytes) {
  const uintptr_t page = 4096;
  uintptr_t lo = ((uintptr_t)begin + page - 1) & ~(page - 1);
  uintptr_t hi = ((uintptr_t)begin + bytes) & ~(page - 1);
  if (hi > lo)
    madvise((void *)lo, hi - lo, MADV_DONTNEED); // advice only: failure changes nothing
}

void SafetensorsFile::checkReadable(const FileTensor &t, DType to,
                                    const std::string &forWhat) const {
  bool wantFloat = to == DType::F32 || to == DType::F64;
  if (wantFloat != isFloat(t.dtype))
    fail(path_ + ": tensor '" + t.name + "' has dtype " + fileDTypeName(t.dtype) + ", but " +
         forWhat + " is " + paramDTypeName(to));
}

void SafetensorsFile::read(const FileTensor &t, DType to, void *dst,
                           const std::string &forWhat) const {
  readRange(t, to, 0, t.numel, dst, forWhat);
}

void SafetensorsFile::readRange(const FileTensor &t, DType to, int64_t first, int64_t count,
                                void *dst, const std::string &forWhat) const {
  if (first < 0 || count < 0 || first > t.numel - count)
    fail(path_ + ": elements [" + std::to_string(first) + ", " + std::to_string(first + count) +
         ") of tensor '" + t.name + "' asked for " + forWhat + ", which has " +
         std::to_string(t.numel) + " (a bmrt bug)");
  size_t srcSize = fileDTypeSize(t.dtype);
  const uint8_t *src = data_ + t.begin + (size_t)first * srcSize;
  struct Release {
    const uint8_t *p;
    size_t n;
    ~Release() { releasePages(p, n); }
  } release{src, (size_t)count * srcSize};
  size_t n = (size_t)count;
  checkReadable(t, to, forWhat);
  if (to == DType::F32) {
    float *out = (float *)dst;
    if (t.dtype == FileDType::F32) {
      memcpy(out, src, n * 4);
      return;
    }
    for (size_t k = 0; k < n; ++k)
      out[k] = loadFloat(src + k * srcSize, t.dtype);
  } else if (to == DType::F64) {
    double *out = (double *)dst;
    if (t.dtype == FileDType::F64) {
      memcpy(out, src, n * 8);
      return;
    }
    for (size_t k = 0; k < n; ++k)
      out[k] = (double)loadFloat(src + k * srcSize, t.dtype); // exact: all are floats
  } else { // I32
    int32_t *out = (int32_t *)dst;
    if (t.dtype == FileDType::I32) {
      memcpy(out, src, n * 4);
      return;
    }
    for (size_t k = 0; k < n; ++k) {
      int64_t v;
      memcpy(&v, src + k * 8, 8);
      if (v < INT32_MIN || v > INT32_MAX)
        fail(path_ + ": tensor '" + t.name + "' element " + std::to_string(first + (int64_t)k) +
             " (" + std::to_string(v) + ") does not fit the I32 of " + forWhat);
      out[k] = (int32_t)v;
    }
  }
}

} // namespace bmrt::io
