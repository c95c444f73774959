//===- cuda/decode_graph.h - The decode step as a CUDA graph --------------===//
//
// A decode step launches a few dozen small kernels for one token; on a GPU
// their launch cost is of the order of the step itself. So the infer app's
// decode entry runs with its position in device memory (Device::stepStart:
// positions_forward and attention_forward read it there, and the attention
// spans the KV cache's whole capacity, the keys past the position masked),
// which makes the step's launches the same at every position:
//  - the first decode step per row count runs launch by launch (a warm-up:
//    the scratch buffer reaches its size, nothing allocates afterwards);
//  - the second is captured (cudaStreamBeginCapture on the compute stream),
//    instantiated, and launched; every later step copies its position into
//    device memory on the compute stream and launches the graph: no host
//    synchronisation inside the step (the app's one wait after it stays);
//  - a graph is captured again when the scratch buffer was reallocated
//    since (a longer prefill: the graph holds the old pointer);
//  - a capture that fails (a call in the step that cannot be captured) is
//    reported once on stderr and the steps run launch by launch from then
//    on, with the same kernels;
//  - a program whose decode writes its keys or values into the cache in
//    place (the place chosen with the host's position) cannot have its
//    position on the device (NeedsHostPosition): it is said once, and the
//    steps run as the prefill does, with host positions.
// $BMB_CUDA_GRAPHS=0 runs every step launch by launch (the same kernels, so
// the same bits: the GPU test compares the two); --profile does too (per
// call timing has no meaning inside a graph).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_DECODE_GRAPH_H
#define BMRT_CUDA_DECODE_GRAPH_H

#include "bmrt/program.h"
#include "cuda/device.h"
#include "cuda/device_buffers.h"
#include "cuda/kernels_cuda.h"

#include <cstdint>
#include <map>

namespace bmrt::cuda {

/// $BMB_CUDA_GRAPHS (`value`, null when unset): unset or "1" yes, "0" no;
/// anything else fails naming the variable and its values.
bool decodeGraphsWanted(const char *value);

class DecodeGraphs {
public:
  DecodeGraphs(Device &dev, bool enabled);
  ~DecodeGraphs();
  DecodeGraphs(const DecodeGraphs &) = delete;
  DecodeGraphs &operator=(const DecodeGraphs &) = delete;

  /// Queues `decode` (the program's decode entry) for `rows` rows at
  /// position `start` on the compute stream, as above. Returns without
  /// waiting for it.
  void run(Context &ctx, const EntryPoint &decode, const Buffers &buf, int64_t start,
           int64_t rows);

private:
  struct Graph {
    cudaGraphExec_t exec = nullptr;
    bool warm = false;            // one step ran launch by launch
    int64_t capacity = 0;         // start + rows may not pass it (the KV cache's rows)
    uint64_t scratchGeneration = 0;
  };
  void capture(Context &ctx, Graph &g, const EntryPoint &decode, const Buffers &buf,
               int64_t start, int64_t rows);

  Device &dev_;
  bool enabled_;
  bool devicePositions_ = true; // false after NeedsHostPosition
  int64_t *start_ = nullptr; // device: the step's position
  PinnedBuffer pinned_;      // host: its value, copied in on the compute stream
  std::map<int64_t, Graph> graphs_; // by row count
};

} // namespace bmrt::cuda

#endif // BMRT_CUDA_DECODE_GRAPH_H
