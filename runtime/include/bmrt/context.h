//===- bmrt/context.h - Run-time context, errors and profiling ------------===//
//
// A Context is what every runtime call takes first: thread count, the
// profile counters (`--profile`), the communicator and, for the CUDA
// backend, the device (its streams and library handles).
// Errors that a user can cause (bad checkpoint, bad flag, bad token id) are
// reported with bmrt::fail(), which throws bmrt::Error; the executables'
// main catches it, prints "error: ..." and exits non-zero. Kernels never
// print or exit.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CONTEXT_H
#define BMRT_CONTEXT_H

#include <cstdint>
#include <stdexcept>
#include <string>

namespace bmrt {

class Comm; // bmrt/comm.h
namespace cuda {
struct Device; // runtime/cuda/device.h: the CUDA backend's device, streams, handles
}

/// A user-visible run-time error (message without the "error: " prefix).
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void fail(const std::string &message);

/// Kernel kinds, for `--profile` (time per kind).
enum class KernelKind : int {
  Gemm,       // gemm, including its epilogue
  Gemv,       // the matrix-vector path (batch-1 decode)
  Attention,
  Norm,       // layernorm, rmsnorm, residual + layernorm
  Softmax,
  Rotary,
  Embedding,
  Generated,  // bmb_exec.kernel bodies (fused element-wise)
  Copy,       // take / strided copies / positions
  Sampling,
  Loss,       // fused classifier, MSE
  Optimizer,  // AdamW, SGD, gradient clipping
  Comm,       // waiting for collectives (bmrt/comm.h)
  Count
};
const char *kernelKindName(KernelKind k);

struct Context {
  int numThreads = 1;     // set by the app from --threads / OMP_NUM_THREADS
  bool profile = false;   // accumulate time per kernel kind
  double seconds[(int)KernelKind::Count] = {};
  int64_t calls[(int)KernelKind::Count] = {};
  Comm *comm = nullptr;   // the run's communicator (train programs; bmrt/comm.h)
  cuda::Device *device = nullptr; // the CUDA backend's device; null on the host
};

/// Times one runtime call into ctx when profiling is on:
///   { ProfileScope p(ctx, KernelKind::Gemm); ... }
class ProfileScope {
public:
  ProfileScope(Context &ctx, KernelKind kind);
  ~ProfileScope();
  ProfileScope(const ProfileScope &) = delete;
  ProfileScope &operator=(const ProfileScope &) = delete;

private:
  Context &ctx_;
  KernelKind kind_;
  double start_ = 0;
};

/// Prints the profile table (kind, calls, seconds, share) to stderr.
void printProfile(const Context &ctx);

} // namespace bmrt

#endif // BMRT_CONTEXT_H
