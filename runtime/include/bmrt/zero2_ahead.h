//===- bmrt/zero2_ahead.h - ZeRO-2's reduce-scatters, one layer ahead -----===//
//
// The backward's gradient staging holds two slots per repeat's layer
// (TrainInfo::gradSlotStride): layer l writes slot l % 2. At the end of
// layer l's reverse iteration reduce_scatter_ahead issues the
// reduce-scatter of its slot and leaves it on the communicator
// (Comm::hold), so it travels while layer l - 1's backward writes the other
// slot. wait_unit_grads(l + 2) at the start of layer l's iteration waits for
// the reduce-scatter that last used slot l % 2 and adds the rank's piece
// into its partition; after the loop it finishes the last two layers
// (docs/distributed.md, "ZeRO-2").
//
// Each unit's piece is still added into the partition once per
// micro-batch, grads = grads + piece, and the pieces of different units
// are disjoint ranges of the partition: only the moment of the add moves,
// so the sums are the same bits as waiting at once (ahead = false,
// --no-overlap).
//
// Templates in a header: they are made of reduce_scatter_unit (shared by
// the backends) and add_unit_grads (each backend's kernel), and a program
// instantiates them for its own gradient type only (the cuda backend has
// no double add_unit_grads).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_ZERO2_AHEAD_H
#define BMRT_ZERO2_AHEAD_H

#include "bmrt/comm.h"
#include "bmrt/training.h"

#include <cstdint>
#include <string>

namespace bmrt {

/// The communicator key a layer's reduce-scatter is held under: its slot's
/// element offset in the gradient staging, made negative, since ZeRO-3's
/// param gathers hold theirs under non-negative staging offsets on the
/// same communicator.
inline int64_t gradSlotKey(int64_t slotAt) { return -1 - slotAt; }

inline int64_t gradSlotOf(const char *what, int64_t stagingAt, int64_t slotStride,
                          int64_t layer) {
  if (layer < 0 || slotStride <= 0)
    fail(std::string(what) + ": layer " + std::to_string(layer) + " of slot stride " +
         std::to_string(slotStride) + " (a bmbc bug)");
  return stagingAt + (layer % 2) * slotStride;
}

/// Layer `layer`'s unit, group elements [at, at + n), staged in slot layer
/// % 2 (element stagingAt + (layer % 2) * slotStride of
/// Buffers::gradStaging): issues its reduce-scatter; `ahead`: holds it for
/// wait_unit_grads, else waits and adds the rank's piece at once.
template <class T>
void reduce_scatter_ahead(Context &ctx, const Buffers &buf, int64_t stagingAt,
                          int64_t slotStride, int64_t at, int64_t n, int64_t layer, bool ahead) {
  const int64_t slotAt = gradSlotOf("reduce_scatter_ahead", stagingAt, slotStride, layer);
  const CommHandle h = reduce_scatter_unit<T>(ctx, buf, slotAt, at, n);
  if (ahead) {
    commOf(ctx).hold(gradSlotKey(slotAt), layer, h);
    return;
  }
  commWait(ctx, h);
  add_unit_grads<T>(ctx, buf, slotAt, at, n);
}

/// If layer `layer`'s reduce-scatter is held (reduce_scatter_ahead), waits
/// for it, adds the rank's piece into its partition and zeroes the slot;
/// otherwise (a layer past the loop's end, or not ahead) does nothing.
template <class T>
void wait_unit_grads(Context &ctx, const Buffers &buf, int64_t stagingAt, int64_t slotStride,
                     int64_t at, int64_t n, int64_t layer) {
  const int64_t slotAt = gradSlotOf("wait_unit_grads", stagingAt, slotStride, layer);
  CommHandle h;
  if (!commOf(ctx).take(gradSlotKey(slotAt), layer, h))
    return;
  commWait(ctx, h);
  add_unit_grads<T>(ctx, buf, slotAt, at, n);
}

} // namespace bmrt

#endif // BMRT_ZERO2_AHEAD_H
