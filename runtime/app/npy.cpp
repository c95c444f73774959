//===- app/npy.cpp - The .npy format, version 1.0 -------------------------===//
//
// Layout: "\x93NUMPY", version (1, 0), a little-endian uint16 header length,
// then a Python dict literal {'descr', 'fortran_order', 'shape'} padded with
// spaces and ended by '\n' so the data starts 64-byte aligned, then the raw
// data. This host is little-endian (x86-64), as '<' in descr says.
//
//===----------------------------------------------------------------------===//
#include "app/npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace bmrt {

static const char *npyDescr(DType dtype) {
  switch (dtype) {
  case DType::F32: return "<f4";
  case DType::F64: return "<f8";
  case DType::I32: return "<i4";
  }
  fail("writeNpy: unknown dtype " + std::to_string((int)dtype));
}

static int64_t dtypeSize(DType dtype) { return dtype == DType::F64 ? 8 : 4; }

void writeNpy(const std::string &path, DType dtype, const int64_t *shape, int rank,
              const void *data) {
  std::string dims;
  int64_t count = 1;
  for (int i = 0; i < rank; i++) {
    dims += std::to_string(shape[i]) + (rank == 1 ? "," : (i + 1 < rank ? ", " : ""));
    count *= shape[i];
  }
  std::string header = std::string("{'descr': '") + npyDescr(dtype) +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t preamble = 10; // magic (6) + version (2) + header length (2)
  size_t total = preamble + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                           (unsigned char)(header.size() & 0xff),
                           (unsigned char)(header.size() >> 8)};
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    fail("cannot write " + path + ": " + std::strerror(errno));
  size_t bytes = (size_t)(count * dtypeSize(dtype));
  bool ok = std::fwrite(pre, 1, sizeof pre, f) == sizeof pre &&
            std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
            (bytes == 0 || std::fwrite(data, 1, bytes, f) == bytes);
  ok = (std::fclose(f) == 0) && ok;
  if (!ok)
    fail("cannot write " + path + ": " + std::strerror(errno));
}

} // namespace bmrt
