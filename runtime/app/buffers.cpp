//===- app/buffers.cpp - mmap'ed, zeroed role allocations -----------------===//
//
// See buffers.h. A failed mapping is a user-facing error (the model does not
// fit), reported with the role and its size.
//
//===----------------------------------------------------------------------===//
#include "app/buffers.h"
#include "app/role_plan.h"

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
  const RolePlan plan = planRoles(program, rank, ranks);
  for (int i = 0; i < 8; i++)
    bytes_[i] = plan.bytes[i];
  if (program.train)
    buf_.part = plan.part;
  try {
    buf_.params = mapZeroed(bytes_[0], "parameters", program);
    buf_.state = mapZeroed(bytes_[1], "state (KV cache)", program);
    buf_.activations = mapZeroed(bytes_[2], "activations", program);
    if (program.train) {
      // Zero, as the training contract wants both before the first step.
      buf_.grads = mapZeroed(bytes_[3], "gradients", program);
      buf_.optState = mapZeroed(bytes_[4],
                                plan.optStateOnHost ? "offloaded optimizer state"
                                                    : "optimizer state",
                                program);
      // offload = optimizer: a separate host allocation, as on a GPU (here
      // it is the same RAM as every other role, so it saves nothing).
      buf_.optStateOffloaded = plan.optStateOnHost;
      if (bytes_[5] > 0)
        buf_.lowParams = mapZeroed(bytes_[5], "reduced-precision weight copy", program);
      if (bytes_[6] > 0)
        buf_.gradStaging = mapZeroed(bytes_[6], "gradient staging", program);
      if (bytes_[7] > 0)
        buf_.paramStaging = mapZeroed(bytes_[7], "parameter staging", program);
    }
  } catch (...) {
    release(); // what was mapped before the failing role
    throw;
  }
}

ProgramBuffers::~ProgramBuffers() { release(); }

void ProgramBuffers::release() {
  void *ptrs[8] = {buf_.params, buf_.state, buf_.activations, buf_.grads, buf_.optState,
                   buf_.lowParams, buf_.gradStaging, buf_.paramStaging};
  for (int i = 0; i < 8; i++)
    if (ptrs[i])
      munmap(ptrs[i], (size_t)bytes_[i]);
  buf_ = Buffers();
}

int64_t ProgramBuffers::bytes(int role) const { return bytes_[role]; }

} // namespace bmrt
