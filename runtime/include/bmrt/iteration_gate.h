//===- bmrt/iteration_gate.h - A per-iteration delta's gate ---------------===//
//
// A delta on some iterations of a repeat (`on = [...]` naming layers) is
// multiplied by a one-element gate the emitted program sets per iteration
// (bmb_exec.iteration_gate): 1 where the iteration has the delta, else 0.
// The gate lives where the kernels that read it run, so setting it is a
// kernel-API call: a store on the host (host/rowops.cpp), a one-thread
// kernel on the compute stream on the cuda backend (cuda/iteration_gate.cu;
// it may be captured in a CUDA graph, as its value is a launch argument).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_ITERATION_GATE_H
#define BMRT_ITERATION_GATE_H

#include "bmrt/context.h"

namespace bmrt {

/// out[0] = open ? 1 : 0.
template <class T> void iteration_gate(Context &ctx, T *out, bool open);

} // namespace bmrt

#endif // BMRT_ITERATION_GATE_H
