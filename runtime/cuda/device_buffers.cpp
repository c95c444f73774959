//===- cuda/device_buffers.cpp - One cudaMalloc per role, pinned staging --===//
#include "cuda/device_buffers.h"

#include "app/role_plan.h"
#include "cuda/check.h"

#include <cstdio>
#include <cstring>

namespace bmrt::cuda {

std::vector<RoleSize> plannedRoles(const ProgramInfo &program, int rank, int ranks) {
  const RolePlan plan = planRoles(program, rank, ranks);
  std::vector<RoleSize> roles = {
      {"params", (size_t)plan.bytes[0], "the model's size", 0},
      {"state", (size_t)plan.bytes[1], "the model's ctx (the KV cache's length)", 1},
      {"activations", (size_t)plan.bytes[2],
       program.train ? "the job's batch and seq" : "the model's ctx (the prompt capacity)", 2},
  };
  if (program.train) {
    roles.push_back({"grads", (size_t)plan.bytes[3], "the trainable params (ZeRO: ranks)", 3});
    // offload = optimizer: the state is pinned host memory (DeviceBuffers
    // allocates it apart), none of it on the GPU.
    roles.push_back({"optimizer state", plan.optStateOnHost ? 0 : (size_t)plan.bytes[4],
                     "the optimizer (zero = 1 splits it over ranks)", 4});
    // Mixed precision: the trainable group's 16-bit copy (lowp.h).
    if (plan.bytes[5] > 0)
      roles.push_back(
          {"low-precision params", (size_t)plan.bytes[5], "the trainable params", 5});
    // zero = 2: the backward's gradients of one unit (a layer) at a time.
    if (plan.bytes[6] > 0)
      roles.push_back({"gradient staging", (size_t)plan.bytes[6],
                       "the largest unit's trainable params (a layer of each repeat)", 6});
    // zero = 3: the params gathered for the entries, unit 0 and two slots
    // of each repeat's layer (docs/distributed.md, "ZeRO-3").
    if (plan.bytes[7] > 0)
      roles.push_back({"param staging", (size_t)plan.bytes[7],
                       "the trainable params of unit 0 and two layers of each repeat", 7});
  }
  return roles;
}

static std::string mib(size_t bytes) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f MiB", bytes / 1048576.0);
  return s;
}

void checkFits(const Device &dev, const std::vector<RoleSize> &roles, size_t freeBytes,
               size_t totalBytes) {
  size_t need = kWorkspaceBytes;
  const RoleSize *largest = nullptr;
  std::string parts;
  for (const RoleSize &r : roles) {
    need += r.bytes;
    parts += r.role + " " + mib(r.bytes) + ", ";
    if (!largest || r.bytes > largest->bytes)
      largest = &r;
  }
  if (need <= freeBytes)
    return;
  fail("the program needs " + mib(need) + " of GPU memory (" + parts + "cuBLASLt workspace " +
       mib(kWorkspaceBytes) + "), but GPU " + std::to_string(dev.index) + " (" + dev.name +
       ") has " + mib(freeBytes) + " free of " + mib(totalBytes) + "; the largest role is " +
       largest->role + ", sized by " + largest->sizedBy +
       ": make that smaller in the .bmb job, or free the GPU");
}

DeviceBuffers::DeviceBuffers(Device &dev, const ProgramInfo &program, int rank, int ranks) {
  std::vector<RoleSize> roles = plannedRoles(program, rank, ranks);
  if (program.train)
    buf_.part = planRoles(program, rank, ranks).part;
  size_t freeBytes = 0, totalBytes = 0;
  BMRT_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  checkFits(dev, roles, freeBytes, totalBytes);
  void **slots[] = {&buf_.params,   &buf_.state,     &buf_.activations, &buf_.grads,
                    &buf_.optState, &buf_.lowParams, &buf_.gradStaging, &buf_.paramStaging};
  for (const RoleSize &r : roles) {
    if (r.bytes == 0)
      continue;
    if (r.slot < 0 || r.slot > 7)
      fail("DeviceBuffers: role " + r.role + " has no slot (a bmrt bug)");
    // Zeroed: the training contract wants grads, optimizer state and the
    // staging zero before the first step.
    BMRT_CUDA_CHECK(cudaMalloc(slots[r.slot], r.bytes));
    BMRT_CUDA_CHECK(cudaMemsetAsync(*slots[r.slot], 0, r.bytes, dev.compute));
    bytes_[r.slot] = (int64_t)r.bytes;
    total_ += r.bytes;
  }
  BMRT_CUDA_CHECK(cudaStreamSynchronize(dev.compute));
  // offload = optimizer (bmrt/offload.h): m, v, the master and the gradient
  // staging in pinned host memory, zeroed as the training contract wants.
  if (program.train) {
    const RolePlan plan = planRoles(program, rank, ranks);
    if (plan.optStateOnHost && plan.bytes[4] > 0) {
      BMRT_CUDA_CHECK(cudaMallocHost(&buf_.optState, (size_t)plan.bytes[4]));
      std::memset(buf_.optState, 0, (size_t)plan.bytes[4]);
      bytes_[4] = plan.bytes[4];
    }
    buf_.optStateOffloaded = plan.optStateOnHost;
  }
}

DeviceBuffers::~DeviceBuffers() {
  for (void *p : {buf_.params, buf_.state, buf_.activations, buf_.grads,
                  buf_.optStateOffloaded ? nullptr : buf_.optState, buf_.lowParams,
                  buf_.gradStaging, buf_.paramStaging})
    if (p)
      cudaFree(p);
  if (buf_.optStateOffloaded && buf_.optState)
    cudaFreeHost(buf_.optState);
}

PinnedBuffer::PinnedBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes)
    BMRT_CUDA_CHECK(cudaMallocHost(&data_, bytes));
}

PinnedBuffer::~PinnedBuffer() {
  if (data_)
    cudaFreeHost(data_);
}

} // namespace bmrt::cuda
