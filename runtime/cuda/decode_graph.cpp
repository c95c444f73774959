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

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
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
    : dev_(dev), enabled_(enabled), pinned_(sizeof(Slot)) {
  BMRT_CUDA_CHECK(cudaMalloc(&slot_, sizeof(Slot)));
  new (pinned_.data()) Slot();
}

DecodeGraphs::~DecodeGraphs() {
  for (auto &[key, g] : graphs_)
    if (g.exec)
      cudaGraphExecDestroy(g.exec);
  if (slot_)
    cudaFree(slot_);
}

std::optional<DrawResult> DecodeGraphs::run(Context &ctx, const EntryPoint &decode,
                                            const Buffers &buf, int64_t start, int64_t rows,
                                            const StepDraw *draw) {
  if (start < 0 || rows < 1)
    fail("decode: position " + std::to_string(start) + ", " + std::to_string(rows) +
         " rows (an app bug)");
  // The step's position and the draw's settings, one copy in. The previous
  // step's copy read the pinned slot before the app's wait after that step:
  // it may be written again.
  Slot *host = (Slot *)pinned_.data();
  host->start = start;
  if (draw)
    host->params = draw->params;
  BMRT_CUDA_CHECK(cudaMemcpyAsync(slot_, host, offsetof(Slot, result), cudaMemcpyHostToDevice,
                                  dev_.compute));
  const int kind = !draw ? 0 : drawIsSorted(draw->mode) ? 2 : 1;
  launch(ctx, graphs_[Key(rows, kind)], decode, buf, start, rows, draw);
  if (!draw)
    return std::nullopt;
  // The step's one wait: the draw's result (the token, its errors, the
  // device's error flag) comes back.
  BMRT_CUDA_CHECK(cudaMemcpyAsync(&host->result, &slot_->result, sizeof(DrawResult),
                                  cudaMemcpyDeviceToHost, dev_.compute));
  synchronize(dev_.compute);
  return host->result;
}

void DecodeGraphs::launch(Context &ctx, Graph &g, const EntryPoint &decode, const Buffers &buf,
                          int64_t start, int64_t rows, const StepDraw *draw) {
  if (!devicePositions_) {
    step(ctx, decode, buf, start, rows, draw);
    return;
  }
  StepStartScope scope(dev_, &slot_->start);
  const bool stale = g.scratchGeneration != dev_.scratchGeneration || // holds a freed pointer
                     (draw && (g.logits != draw->logits || g.vocab != draw->vocab));
  if (g.exec && stale) {
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
      step(ctx, decode, buf, start, rows, draw);
    } catch (const NeedsHostPosition &e) {
      // Nothing of the step is wrong, only its position's place: run it
      // again (the same values) with host positions, from now on.
      devicePositions_ = false;
      std::fprintf(stderr, "cuda: decoding with host positions, launch by launch: %s\n",
                   e.what());
      dev_.stepStart = nullptr;
      step(ctx, decode, buf, start, rows, draw);
    }
    g.warm = true;
    return;
  }
  capture(ctx, g, decode, buf, start, rows, draw);
}

void DecodeGraphs::step(Context &ctx, const EntryPoint &decode, const Buffers &buf,
                        int64_t start, int64_t rows, const StepDraw *draw) {
  decode.fn(ctx, buf, start, rows);
  if (draw)
    enqueueDraw(dev_, drawIsSorted(draw->mode), &slot_->params, draw->logits, draw->vocab,
                &slot_->result);
}

void DecodeGraphs::capture(Context &ctx, Graph &g, const EntryPoint &decode,
                           const Buffers &buf, int64_t start, int64_t rows,
                           const StepDraw *draw) {
  BMRT_CUDA_CHECK(cudaStreamBeginCapture(dev_.compute, cudaStreamCaptureModeThreadLocal));
  std::string why;
  try {
    step(ctx, decode, buf, start, rows, draw); // recorded, not run
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
    step(ctx, decode, buf, start, rows, draw);
    return;
  }
  g.capacity = dev_.stepCapacity > 0 ? dev_.stepCapacity : std::numeric_limits<int64_t>::max();
  g.scratchGeneration = dev_.scratchGeneration;
  g.logits = draw ? draw->logits : nullptr;
  g.vocab = draw ? draw->vocab : 0;
  BMRT_CUDA_CHECK(cudaGraphLaunch(g.exec, dev_.compute));
}

} // namespace bmrt::cuda
