//===- bmrt/dropout.h - The dropout mask of one element (Philox) ----------===//
//
// DESIGN decision 6: a dropout mask is not state but a pure function of
// (seed, step, micro-step, rng_id, repeat iteration, element index). So the
// forward and the backward of one dropout draw the same mask, as do a
// recomputed forward (activation checkpointing), a resumed run, any thread
// count and the CUDA backend: generated kernels call the functions below
// (bmb_exec.elem_call "dropout") for element i of their output.
//
// The keying, one Philox4x32-10 block per element (bmrt/philox.h):
//
//   key     = (seed bits 0..31, seed bits 32..63)
//   ctr[0]  = element index bits 0..31
//   ctr[1]  = element index bits 32..47 | layer << 16
//   ctr[2]  = step (the 1-based optimizer update, StepArgs::step), mod 2^32
//   ctr[3]  = 1 << 31 | rng_id << 16 | micro-step
//
// with layer < 2^16 (the iteration of the enclosing bmb.repeat, 0 outside
// one), rng_id < 2^15 (bmb.dropout's id), micro-step < 2^16 (the
// micro-batch within the step) and the element index < 2^48: bmbc checks
// the static ones; larger values wrap. Bit 31 of ctr[3] is dropout's: the
// other users of the seed keep it clear (parameter init and sampling leave
// ctr[3] = 0, data order puts "DATA" = 0x44415441 there; a new stream tag
// must keep it clear too), so dropout draws never coincide with theirs.
//
// Element e is kept when word 0 of its block is >= floor(p * 2^32), i.e.
// with probability 1 - floor(p * 2^32) / 2^32, and then scaled by
// 1 / (1 - p) (inverted dropout, as torch.nn.functional.dropout).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_DROPOUT_H
#define BMRT_DROPOUT_H

#include "bmrt/philox.h"
#include "bmrt/portable.h"

#include <cstdint>

namespace bmrt {

/// The 32 random bits that decide element `index`'s mask (keying above).
BMRT_HD uint32_t dropout_bits(uint64_t seed, int64_t step, int64_t microStep, int64_t rngId,
                              int64_t layer, int64_t index) {
  const uint64_t e = (uint64_t)index;
  const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  const uint32_t ctr[4] = {
      (uint32_t)e,
      (uint32_t)((e >> 32) & 0xFFFFu) | ((uint32_t)layer << 16),
      (uint32_t)step,
      0x80000000u | (((uint32_t)rngId & 0x7FFFu) << 16) | ((uint32_t)microStep & 0xFFFFu)};
  return philox4x32_10(ctr, key).v[0];
}

/// Elements whose bits are below this are dropped: floor(p * 2^32) for
/// 0 <= p < 1 (at most 2^32 - 1, so p < 1 always keeps some).
BMRT_HD uint32_t dropout_threshold(double p) { return (uint32_t)(p * 4294967296.0); }

/// Whether element `index` is kept (see the keying above).
BMRT_HD bool dropout_keep(double p, uint64_t seed, int64_t step, int64_t microStep,
                          int64_t rngId, int64_t layer, int64_t index) {
  return dropout_bits(seed, step, microStep, rngId, layer, index) >= dropout_threshold(p);
}

/// Inverted dropout of one element: x / (1 - p) when kept, else 0. The
/// backward is the same call on the gradient (same mask, same scale). The
/// seed arrives as int64_t from generated code (StepArgs::seed, cast).
template <class T>
BMRT_HD T dropout(T x, double p, int64_t seed, int64_t step, int64_t microStep, int64_t rngId,
                  int64_t layer, int64_t index) {
  return dropout_keep(p, (uint64_t)seed, step, microStep, rngId, layer, index)
             ? x * T(1.0 / (1.0 - p))
             : T(0);
}

} // namespace bmrt

#endif // BMRT_DROPOUT_H
