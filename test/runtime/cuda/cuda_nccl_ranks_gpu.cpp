//===- cuda_nccl_ranks_gpu.cpp - NCCL's piece collectives on several GPUs --===//
//
// One rank of `mpirun -np N` (ctest cuda-gpu.nccl.ranks; label cuda-gpu),
// one GPU per rank: reduceScatterv and allGatherv (ZeRO-2's and ZeRO-3's
// pieces of unequal length, grouped ncclReduce / ncclBroadcast calls) on
// device buffers, pieces of every kind (empty, one rank holding the whole
// unit, uneven), checked exactly: the inputs are small integers, so every
// sum is exact in any order.
//
//   cuda_nccl_ranks_gpu --need-gpus=N   exit 77 (ctest's Skipped) unless N
//                                       GPUs are visible, before mpirun
//   cuda_nccl_ranks_gpu                 one rank: "ok" and exit 0, or the
//                                       mismatches and exit 1
//
//===----------------------------------------------------------------------===//
#include "bmrt/comm.h"
#include "cuda/device.h"
#include "cuda/nccl_comm.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace bmrt;

// Rank r's input at element i: a small integer, distinct per rank.
float inputOf(int r, int64_t i) { return (float)(1 + r * 100 + i % 37); }

int failures = 0;
void check(bool ok, const std::string &what) {
  if (!ok) {
    std::fprintf(stderr, "FAIL: %s\n", what.c_str());
    ++failures;
  }
}

std::vector<float> run(Comm &comm, cuda::Device &dev, const std::vector<int64_t> &counts,
                       bool gather, const std::vector<float> &in) {
  float *d = nullptr;
  const size_t bytes = in.size() * sizeof(float);
  if (cudaMalloc(&d, bytes) != cudaSuccess ||
      cudaMemcpy(d, in.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess)
    fail("cudaMalloc/cudaMemcpy of the test buffer failed");
  CommHandle h = gather ? comm.allGatherv(d, counts.data(), DType::F32)
                        : comm.reduceScatterv(d, counts.data(), DType::F32);
  comm.wait(h);
  std::vector<float> out(in.size());
  if (cudaStreamSynchronize(dev.compute) != cudaSuccess ||
      cudaMemcpy(out.data(), d, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
    fail("cudaMemcpy of the test buffer back failed");
  cudaFree(d);
  return out;
}

void pieces(Comm &comm, cuda::Device &dev, const std::vector<int64_t> &counts) {
  const int n = comm.size(), me = comm.rank();
  int64_t total = 0;
  std::vector<int64_t> at((size_t)n);
  for (int q = 0; q < n; ++q)
    at[(size_t)q] = total, total += counts[(size_t)q];
  std::string name = "pieces";
  for (int64_t c : counts)
    name += " " + std::to_string(c);
  // allGatherv: my piece holds my input, the rest -1; afterwards every
  // piece holds its owner's input.
  std::vector<float> in((size_t)total, -1.0f);
  for (int64_t i = 0; i < counts[(size_t)me]; ++i)
    in[(size_t)(at[(size_t)me] + i)] = inputOf(me, at[(size_t)me] + i);
  std::vector<float> out = run(comm, dev, counts, true, in);
  for (int q = 0; q < n; ++q)
    for (int64_t i = at[(size_t)q]; i < at[(size_t)q] + counts[(size_t)q]; ++i)
      check(out[(size_t)i] == inputOf(q, i), "rank " + std::to_string(me) + ": allGatherv " +
                                                 name + ": element " + std::to_string(i));
  // reduceScatterv: every rank's whole buffer; afterwards my piece is the
  // sum over ranks.
  for (int64_t i = 0; i < total; ++i)
    in[(size_t)i] = inputOf(me, i);
  out = run(comm, dev, counts, false, in);
  for (int64_t i = at[(size_t)me]; i < at[(size_t)me] + counts[(size_t)me]; ++i) {
    float want = 0;
    for (int q = 0; q < n; ++q)
      want += inputOf(q, i);
    check(out[(size_t)i] == want, "rank " + std::to_string(me) + ": reduceScatterv " + name +
                                      ": element " + std::to_string(i));
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 2 && !std::strncmp(argv[1], "--need-gpus=", 12)) {
    int have = 0;
    if (cudaGetDeviceCount(&have) != cudaSuccess)
      have = 0;
    const int need = std::atoi(argv[1] + 12);
    if (have < need) {
      std::printf("skipped: %d GPU(s) visible, this test needs %d\n", have, need);
      return 77;
    }
    return 0;
  }
  try {
    auto dev = cuda::openDevice(); // by $OMPI_COMM_WORLD_LOCAL_RANK
    CommOptions options;
    options.timeoutSeconds = 60;
    auto comm = cuda::openNcclComm(*dev, options);
    const int n = comm->size();
    std::vector<int64_t> uneven((size_t)n), whole((size_t)n, 0), empty((size_t)n, 0);
    for (int q = 0; q < n; ++q)
      uneven[(size_t)q] = q % 2 ? 0 : 1000 + 7 * q; // every other rank's piece empty
    uneven[(size_t)n - 1] = 333;
    whole[(size_t)n - 1] = 4099; // one rank holds the whole unit
    pieces(*comm, *dev, uneven);
    pieces(*comm, *dev, whole);
    pieces(*comm, *dev, empty);
    comm->barrier();
    if (failures)
      return 1;
    std::printf("rank %d of %d: ok\n", comm->rank(), n);
    return 0;
  } catch (const Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
