//===- cuda/decode_graph.cpp - The decode step as a CUDA graph ------------===//
//
// decode_graph.h has the why and the rules. Every CUDA call is checked; a
// capture's own failure (the entry threw, cudaStreamEndCapture or
// cudaGraphInstantiate failed) is not an error of the run: it turns graphs
// off with a note, and the step runs launch by launch.
//
//===----------------------------------------------------------------------===//
#include "cuda/decode_graph.h"
#include "cuda/check.h"

#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

namespace bmrt::cuda {
namespace {

// Device::stepStart for the length of one step (and its capacity bound
// gathered afresh), cleared however the step ends.
struct StepStartScope {
  StepStartScope(Device &dev, const int64_t *start) : dev(dev) {
    dev.stepStart = start;
    dev.stepCapacity = 0;
  }
  ~StepStartScope() { dev.stepStart = nullptr; }
  Device &dev;
};

} // namespace

bool decodeGraphsWanted(const char *value) {
  if (!value || !std::strcmp(value, "1"))
    return true;
  if (!std::strcmp(value, "0"))
    return false;
  fail(std::string("$BMB_CUDA_GRAPHS is '") + value +
       "'; it must be 1 (decode steps as CUDA graphs, the default) or 0 (launch by launch)");
}

DecodeGraphs::DecodeGraphs(Device &dev, bool enabled)
    : dev_(dev), enabled_(enabled), pinned_(sizeof(int64_t)) {
  BMRT_CUDA_CHECK(cudaMalloc(&start_, sizeof(int64_t)));
}

DecodeGraphs::~DecodeGraphs() {
  for (auto &[rows, g] : graphs_)
    if (g.exec)
      cudaGraphExecDestroy(g.exec);
  if (start_)
    cudaFree(start_);
}

void DecodeGraphs::run(Context &ctx, const EntryPoint &decode, const Buffers &buf,
                       int64_t start, int64_t rows) {
  if (start < 0 || rows < 1)
    fail("decode: position " + std::to_string(start) + ", " + std::to_string(rows) +
         " rows (an app bug)");
  if (!devicePositions_) {
    decode.fn(ctx, buf, start, rows);
    return;
  }
  // The previous step's copy read the pinned value before the app's wait
  // after that step: it may be written again.
  *(int64_t *)pinned_.data() = start;
  BMRT_CUDA_CHECK(cudaMemcpyAsync(start_, pinned_.data(), sizeof(int64_t),
                                  cudaMemcpyHostToDevice, dev_.compute));
  StepStartScope scope(dev_, start_);
  Graph &g = graphs_[rows];
  if (g.exec && g.scratchGeneration != dev_.scratchGeneration) { // holds a freed pointer
    BMRT_CUDA_CHECK(cudaGraphExecDestroy(g.exec));
    g.exec = nullptr;
  }
  if (g.exec) {
    // attention_forward's own check, which a replay does not run.
    if (start + rows > g.capacity)
      fail("attention_forward: rows [" + std::to_string(start) + ", " +
           std::to_string(start + rows) + ") do not fit the KV cache capacity " +
           std::to_string(g.capacity));
    BMRT_CUDA_CHECK(cudaGraphLaunch(g.exec, dev_.compute));
    return;
  }
  if (!enabled_ || !g.warm || ctx.profile) {
    try {
      decode.fn(ctx, buf, start, rows);
    } catch (const NeedsHostPosition &e) {
      // Nothing of the step is wrong, only its position's place: run it
      // again (the same values) with host positions, from now on.
      devicePositions_ = false;
      std::fprintf(stderr, "cuda: decoding with host positions, launch by launch: %s\n",
                   e.what());
      dev_.stepStart = nullptr;
      decode.fn(ctx, buf, start, rows);
    }
    g.warm = true;
    return;
  }
  capture(ctx, g, decode, buf, start, rows);
}

void DecodeGraphs::capture(Context &ctx, Graph &g, const EntryPoint &decode,
                           const Buffers &buf, int64_t start, int64_t rows) {
  BMRT_CUDA_CHECK(cudaStreamBeginCapture(dev_.compute, cudaStreamCaptureModeThreadLocal));
  std::string why;
  try {
    decode.fn(ctx, buf, start, rows); // recorded, not run
  } catch (const Error &e) {
    why = e.what();
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(dev_.compute, &graph);
  if (why.empty() && ended != cudaSuccess)
    why = std::string("cudaStreamEndCapture: ") + cudaGetErrorString(ended);
  if (why.empty()) {
    const cudaError_t made = cudaGraphInstantiate(&g.exec, graph, 0);
    if (made != cudaSuccess) {
      why = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(made);
      g.exec = nullptr;
    }
  }
  if (graph)
    BMRT_CUDA_CHECK(cudaGraphDestroy(graph));
  if (!why.empty()) {
    (void)cudaGetLastError(); // a failed capture's error is not sticky: clear it
    enabled_ = false;
    std::fprintf(stderr,
                 "cuda: decoding launch by launch: the decode step could not be captured as "
                 "a CUDA graph (%s)\n",
                 why.c_str());
    decode.fn(ctx, buf, start, rows);
    return;
  }
  g.capacity = dev_.stepCapacity > 0 ? dev_.stepCapacity : std::numeric_limits<int64_t>::max();
  g.scratchGeneration = dev_.scratchGeneration;
  BMRT_CUDA_CHECK(cudaGraphLaunch(g.exec, dev_.compute));
}

} // namespace bmrt::cuda
