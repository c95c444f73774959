//===- app/buffers.cpp - mmap'ed, zeroed role allocations -----------------===//
//
// See buffers.h. A failed mapping is a user-facing error (the model does not
// fit), reported with the role and its size.
//
//===----------------------------------------------------------------------===//
#include "app/buffers.h"
#include "bmrt/lowp.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/mman.h>

namespace bmrt {

// Worth asking for huge pages only when the buffer spans several of them.
static constexpr int64_t kHugePageThreshold = 4ll << 20;

static void *mapZeroed(int64_t bytes, const char *role, const ProgramInfo &program) {
  if (bytes < 0)
    fail(std::string("program ") + program.job + " plans a negative size for its " + role);
  if (bytes == 0)
    return nullptr;
  void *p = mmap(nullptr, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED) {
    char size[64];
    std::snprintf(size, sizeof size, "%.1f MiB", (double)bytes / (1 << 20));
    fail(std::string("cannot allocate ") + size + " for the " + role + " of " + program.model);
  }
#ifdef MADV_HUGEPAGE
  if (bytes >= kHugePageThreshold)
    madvise(p, (size_t)bytes, MADV_HUGEPAGE); // advice only: failure changes nothing
#endif
  // Touch every page now: the first prefill would otherwise take the page
  // faults (and, for huge pages, the kernel's zeroing and sometimes
  // compaction) inside its kernels -- measured here as attention taking
  // 70-140 ms instead of 10 ms in some runs of a 128-token GPT-2 prefill,
  // when it first writes the KV cache. The memory is planned and used anyway.
  std::memset(p, 0, (size_t)bytes);
  return p;
}

ProgramBuffers::ProgramBuffers(const ProgramInfo &program, int rank, int ranks) {
  bytes_[0] = program.paramBytes;
  const TrainInfo *train = program.train;
  if (train) {
    // The rank's partition decides the sizes (docs/distributed.md): grads
    // and the group's span of the params hold every rank's partition, the
    // optimizer state only this rank's. zero = 2: the grads hold only the
    // rank's partition, plus the staging of one unit at a time.
    buf_.part = partitionOf(*train, rank, ranks);
    const int64_t elem = train->groupElems > 0 ? train->gradBytes / train->groupElems : 4;
    bytes_[0] = std::max(program.paramBytes, train->groupParamOffset + buf_.part.total * elem);
    bytes_[3] = buf_.part.gradElems * elem;
    bytes_[4] = train->optSlots * buf_.part.optStride * elem;
    bytes_[5] = low_param_bytes(*train); // every rank reads all weights
    bytes_[6] = train->gradStagingBytes;
  }
  bytes_[1] = program.stateBytes;
  bytes_[2] = program.activationBytes;
  try {
    buf_.params = mapZeroed(bytes_[0], "parameters", program);
    buf_.state = mapZeroed(bytes_[1], "state (KV cache)", program);
    buf_.activations = mapZeroed(bytes_[2], "activations", program);
    if (program.train) {
      // Zero, as the training contract wants both before the first step.
      buf_.grads = mapZeroed(bytes_[3], "gradients", program);
      buf_.optState = mapZeroed(bytes_[4], "optimizer state", program);
      if (bytes_[5] > 0)
        buf_.lowParams = mapZeroed(bytes_[5], "reduced-precision weight copy", program);
      if (bytes_[6] > 0)
        buf_.gradStaging = mapZeroed(bytes_[6], "gradient staging", program);
    }
  } catch (...) {
    release(); // what was mapped before the failing role
    throw;
  }
}

ProgramBuffers::~ProgramBuffers() { release(); }

void ProgramBuffers::release() {
  void *ptrs[7] = {buf_.params, buf_.state, buf_.activations, buf_.grads, buf_.optState,
                   buf_.lowParams, buf_.gradStaging};
  for (int i = 0; i < 7; i++)
    if (ptrs[i])
      munmap(ptrs[i], (size_t)bytes_[i]);
  buf_ = Buffers();
}

int64_t ProgramBuffers::bytes(int role) const { return bytes_[role]; }

} // namespace bmrt
