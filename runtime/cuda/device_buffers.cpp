//===- cuda/device_buffers.cpp - One cudaMalloc per role, pinned staging --===//
#include "cuda/device_buffers.h"

#include "cuda/check.h"

#include <cstdio>

namespace bmrt::cuda {

std::vector<RoleSize> plannedRoles(const ProgramInfo &program) {
  std::vector<RoleSize> roles = {
      {"params", (size_t)program.paramBytes, "the model's size"},
      {"state", (size_t)program.stateBytes, "the model's ctx (the KV cache's length)"},
      {"activations", (size_t)program.activationBytes,
       program.train ? "the job's batch and seq" : "the model's ctx (the prompt capacity)"},
  };
  if (const TrainInfo *t = program.train) {
    roles.push_back({"grads", (size_t)t->gradBytes, "the trainable params (ZeRO: ranks)"});
    roles.push_back({"optimizer state", (size_t)t->optStateBytes,
                     "the optimizer (zero = 1 splits it over ranks)"});
    // Mixed precision: the trainable group's 16-bit copy (lowp.h).
    const std::string precision = t->precision ? t->precision : "fp32";
    if (precision == "bf16" || precision == "fp16")
      roles.push_back({"low-precision params", (size_t)(2 * t->groupElems),
                       "the trainable params"});
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

DeviceBuffers::DeviceBuffers(Device &dev, const ProgramInfo &program) {
  std::vector<RoleSize> roles = plannedRoles(program);
  size_t freeBytes = 0, totalBytes = 0;
  BMRT_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  checkFits(dev, roles, freeBytes, totalBytes);
  void **slots[] = {&buf_.params, &buf_.state,    &buf_.activations,
                    &buf_.grads,  &buf_.optState, &buf_.lowParams};
  for (size_t i = 0; i < roles.size(); i++) {
    if (roles[i].bytes == 0)
      continue;
    BMRT_CUDA_CHECK(cudaMalloc(slots[i], roles[i].bytes));
    BMRT_CUDA_CHECK(cudaMemsetAsync(*slots[i], 0, roles[i].bytes, dev.compute));
    total_ += roles[i].bytes;
  }
  BMRT_CUDA_CHECK(cudaStreamSynchronize(dev.compute));
}

DeviceBuffers::~DeviceBuffers() {
  for (void *p : {buf_.params, buf_.state, buf_.activations, buf_.grads, buf_.optState,
                  buf_.lowParams})
    if (p)
      cudaFree(p);
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
