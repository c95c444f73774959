//===- cuda/decode_graph.h - The decode step as a CUDA graph --------------===//
//
// A decode step launches a few dozen small kernels for one token; on a GPU
// their launch cost is of the order of the step itself. So the infer app's
// decode entry runs with its position in device memory (Device::stepStart:
// positions_forward and attention_forward read it there; the attention
// loops over the keys up to it: attention_decode.cu), which makes the
// step's launches the same at every position, and the step's work grow
// with the position, not the cache's capacity:
//  - the first decode step per row count runs launch by launch (a warm-up:
//    the scratch buffer reaches its size, nothing allocates afterwards);
//  - the second is captured (cudaStreamBeginCapture on the compute stream),
//    instantiated, and launched; every later step copies its position into
//    device memory on the compute stream and launches the graph: no host
//    synchronisation inside the step;
//  - when the app said it will sample the step's logits
//    (EntryMemory::expectSample), the draw of the next token joins the step
//    (sampling_draw.h: its settings, seed and Philox counter in device
//    memory, beside the position, so one copy brings both in): one
//    cudaGraphLaunch, then one copy of the draw's result back and one wait
//    per token. Graphs are kept per row count and draw kind (none, the
//    one-block draw, the sorted draw);
//  - a graph is captured again when the scratch buffer was reallocated
//    since (a longer prefill: the graph holds the old pointer);
//  - a capture that fails (a call in the step that cannot be captured) is
//    reported once on stderr and the steps run launch by launch from then
//    on, with the same kernels;
//  - a program whose decode writes its keys or values into the cache in
//    place (the place chosen with the host's position) cannot have its
//    position on the device (NeedsHostPosition): it is said once, and the
//    steps run as the prefill does, with host positions (the draw still
//    follows the step, launched on its own).
// $BMB_CUDA_GRAPHS=0 runs every step launch by launch (the same kernels,
// the draw's included, so the same bits and ids: the GPU tests compare the
// two); --profile does too (per call timing has no meaning inside a graph).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_DECODE_GRAPH_H
#define BMRT_CUDA_DECODE_GRAPH_H

#include "bmrt/program.h"
#include "cuda/device.h"
#include "cuda/device_buffers.h"
#include "cuda/kernels_cuda.h"
#include "cuda/sampling_draw.h"

#include <cstdint>
#include <map>
#include <optional>
#include <utility>

namespace bmrt::cuda {

/// $BMB_CUDA_GRAPHS (`value`, null when unset): unset or "1" yes, "0" no;
/// anything else fails naming the variable and its values.
bool decodeGraphsWanted(const char *value);

/// The draw that follows a decode step: its settings (drawParamsOf) over
/// the step's logits row.
struct StepDraw {
  DrawParams params;
  SamplingMode mode = SamplingMode::Greedy;
  const float *logits = nullptr; // device: the decode output's logits
  int64_t vocab = 0;
};

class DecodeGraphs {
public:
  DecodeGraphs(Device &dev, bool enabled);
  ~DecodeGraphs();
  DecodeGraphs(const DecodeGraphs &) = delete;
  DecodeGraphs &operator=(const DecodeGraphs &) = delete;

  /// Queues `decode` (the program's decode entry) for `rows` rows at
  /// position `start` on the compute stream, as above. Without `draw` it
  /// returns without waiting for the step. With `draw`, the draw follows
  /// the step (in its graph), and run returns the draw's result once the
  /// step is done: the step's one wait.
  std::optional<DrawResult> run(Context &ctx, const EntryPoint &decode, const Buffers &buf,
                                int64_t start, int64_t rows, const StepDraw *draw = nullptr);

private:
  // The step's inputs and the draw's result, in device memory and a pinned
  // mirror: [start, params] go in with one copy, result comes back.
  struct Slot {
    int64_t start = 0;
    int64_t unused = 0;
    DrawParams params;
    DrawResult result;
  };
  struct Graph {
    cudaGraphExec_t exec = nullptr;
    bool warm = false;            // one step ran launch by launch
    int64_t capacity = 0;         // start + rows may not pass it (the KV cache's rows)
    uint64_t scratchGeneration = 0;
    const float *logits = nullptr; // the draw's row and vocabulary, baked in at capture
    int64_t vocab = 0;
  };
  // Graphs by row count and draw kind (0 none, 1 one-block, 2 sorted).
  using Key = std::pair<int64_t, int>;
  void launch(Context &ctx, Graph &g, const EntryPoint &decode, const Buffers &buf,
              int64_t start, int64_t rows, const StepDraw *draw);
  void step(Context &ctx, const EntryPoint &decode, const Buffers &buf, int64_t start,
            int64_t rows, const StepDraw *draw); // launch by launch
  void capture(Context &ctx, Graph &g, const EntryPoint &decode, const Buffers &buf,
               int64_t start, int64_t rows, const StepDraw *draw);

  Device &dev_;
  bool enabled_;
  bool devicePositions_ = true; // false after NeedsHostPosition
  Slot *slot_ = nullptr;        // device
  PinnedBuffer pinned_;         // host: a Slot, copied in and out on the compute stream
  std::map<Key, Graph> graphs_;
};

} // namespace bmrt::cuda

#endif // BMRT_CUDA_DECODE_GRAPH_H
