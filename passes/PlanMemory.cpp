//===- PlanMemory.cpp - One allocation per role, offsets from liveness -----===//
//
// DESIGN decision 3: params, persistent state (the KV cache) and activations
// each get one allocation, and the compiler gives every buffer its byte
// offset. Params and state are laid out one after the other in declaration
// order. Activations are packed by liveness per entry function: a buffer is
// live from its first to its last use in program order (a use inside a loop
// that the buffer is defined outside of keeps it live for the whole loop;
// inputs are live from the start, outputs to the end), and buffers are
// placed largest first at the lowest offset that does not overlap a placed
// buffer with an overlapping lifetime. The entries share the activations
// allocation (only one runs at a time), so its size is the largest plan.
//
// Training programs (`train` attribute: {opt_slots = N}) add two roles and
// lay the trainable params out as one flat group (docs/distributed.md):
// frozen params first, then the trainable ones from `group_param_offset`,
// layer-major (layOutGroup: the params outside repeats, then one unit per
// layer), and the grads allocation the same way from 0, so a
// trainable param's `grad_offset` is also its place in the group
// (offset = group_param_offset + grad_offset). Ranks split the group into
// partitions (bmrt::Partition), so collectives and the partitioned
// optimizer work on byte ranges that mean the same in both allocations.
// The optimizer state is N slots over the group, slot k of a one-rank run
// at k * grad_bytes (`opt_offset` = `grad_offset` within each slot); a
// partition's chunk of `partition_align` elements is also the unit of the
// deterministic gradient norm. zero = 2 programs also get a staging
// allocation (`grad_staging_bytes`, each param's `staging_offset`): the
// params outside repeats and two slots for the layers of each repeat
// (`grad_slot_stride` bytes apart), where the backward writes a unit's
// gradients before they are reduce-scattered into the partition: layer l
// writes slot l % 2 while layer l + 1's reduce-scatter is in flight from
// the other. zero = 3 programs get a param staging (`param_staging_bytes`),
// where each unit's params are gathered from the ranks' partitions and
// read: the same layout, then a second slot for every repeat's layer, the
// same layout again `param_slot_stride` bytes further on (layer l reads
// slot l % 2, so the next layer's gather can fill the other one). An
// offloaded optimizer (bmb-offload-optimizer) makes the optimizer state a
// host role (`offload_state_bytes`: four slots over the group,
// bmrt/offload.h). Their activations are
// planned like any entry's: the forward_backward entry holds the forward
// and the backward, so a saved activation (a stacked `[count, ...]` buffer
// written in the forward loop, read in the backward loop) is live from the
// first loop to the second.
//
// Every offset is a multiple of 64 bytes (a cache line; what AVX-512 loads
// and the GPU's coalescing like).
//
//===----------------------------------------------------------------------===//
#include "dialects/BmbExec/BmbExecOps.h"
#include "passes/ExecBuffers.h"
#include "passes/Passes.h"

namespace mlir::bmb {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb;
using namespace mlir::bmb::exec;

namespace {

constexpr int64_t kAlign = 64;
// Elements per partition chunk: partitions are multiples of it, and the
// gradient norm sums one chunk at a time (bmrt::grad_norm_part), so the
// norm is the same sum in the same order at any world size and thread
// count. 16 Ki elements: 64 KiB of fp32, small next to any real model's
// partition, large enough that the per-chunk partials are few.
constexpr int64_t kPartitionAlign = 16384;
int64_t alignUp(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

int64_t byteSize(Type t) {
  auto m = cast<MemRefType>(t);
  return m.getNumElements() * ((m.getElementTypeBitWidth() + 7) / 8);
}

struct Interval {
  Operation *buffer; // AllocOp or InputOp
  int64_t first, last, bytes;
  int64_t offset = -1;
};

/// Plans one function's activations; returns the bytes it needs.
int64_t planFunction(func::FuncOp f) {
  // Number the ops in program order; remember each loop's span.
  DenseMap<Operation *, int64_t> index;
  int64_t n = 0;
  f.walk<WalkOrder::PreOrder>([&](Operation *op) { index[op] = n++; });
  DenseMap<Operation *, int64_t> loopEnd;
  f.walk([&](scf::ForOp loop) {
    int64_t end = index[loop];
    loop.walk([&](Operation *op) { end = std::max(end, index[op]); });
    loopEnd[loop] = end;
  });

  std::vector<Interval> intervals;
  DenseMap<Operation *, size_t> slot;
  f.walk([&](Operation *op) {
    if (isa<AllocOp, InputOp>(op)) {
      slot[op] = intervals.size();
      int64_t first = isa<InputOp>(op) ? 0 : index[op];
      intervals.push_back({op, first, index[op], byteSize(op->getResult(0).getType())});
    }
  });
  // Uses, through views, extend the root's interval.
  f.walk([&](Operation *op) {
    for (Value v : op->getOperands()) {
      if (!isa<MemRefType>(v.getType()))
        continue;
      Value root = rootBuffer(v);
      Operation *def = root.getDefiningOp();
      auto it = def ? slot.find(def) : slot.end();
      if (it == slot.end())
        continue;
      Interval &iv = intervals[it->second];
      int64_t at = isa<OutputOp>(op) ? n : index[op];
      // A use inside a loop that does not contain the definition: live for
      // the whole loop (the next iteration reads it again).
      for (Operation *p = op->getParentOp(); p && p != f; p = p->getParentOp())
        if (auto loop = dyn_cast<scf::ForOp>(p); loop && !loop->isAncestor(def)) {
          iv.first = std::min(iv.first, index[loop]);
          at = std::max(at, loopEnd[loop]);
        }
      iv.last = std::max(iv.last, at);
    }
  });

  std::vector<Interval *> order;
  for (Interval &iv : intervals)
    order.push_back(&iv);
  std::stable_sort(order.begin(), order.end(),
                   [](Interval *a, Interval *b) { return a->bytes > b->bytes; });
  std::vector<Interval *> placed;
  int64_t total = 0;
  for (Interval *iv : order) {
    // Candidate offsets: 0 and the end of every overlapping placed buffer.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (Interval *p : placed)
      if (p->first <= iv->last && iv->first <= p->last)
        busy.push_back({p->offset, p->offset + p->bytes});
    std::sort(busy.begin(), busy.end());
    int64_t at = 0;
    for (auto [lo, hi] : busy) {
      if (at + iv->bytes <= lo)
        break;
      at = std::max(at, alignUp(hi));
    }
    iv->offset = at;
    placed.push_back(iv);
    total = std::max(total, at + iv->bytes);
  }
  Builder b(f.getContext());
  for (Interval &iv : intervals)
    iv.buffer->setAttr("offset", b.getI64IntegerAttr(iv.offset));
  return alignUp(total);
}

/// Lays the trainable group out in units (docs/distributed.md): unit 0 is
/// the params outside repeats, in declaration order; then, for each repeat
/// (the stacked params of one layer count, in the order their first param
/// is declared), one unit per layer holding that layer's slice of each of
/// its params, back to back. So a stacked param's slices are one unit apart
/// (its layer stride), and a layer's gradients are one contiguous range
/// that a collective can take right after the layer's backward. Every slice
/// starts on a 64-byte boundary. `place(p, offset, stride)` receives each
/// param's byte offset in the group and its layer stride; `bounds` gets the
/// units' boundaries (units + 1 of them). Returns the group's bytes.
///
/// Repeats of the same length share their units (layer i of each): the
/// exec level no longer says which repeat a stacked param came from.
///
/// ZeRO-2's staging (the backward's gradients of one unit at a time): unit
/// 0, then one layer's unit per repeat, in the same order; `place` gets
/// each param's byte offset there too, `stagingBytes` the size.
template <class Place>
int64_t layOutGroup(ArrayRef<ParamOp> group, SmallVectorImpl<int64_t> &bounds,
                    int64_t &stagingBytes, Place place) {
  int64_t at = 0;
  bounds.push_back(0);
  SmallVector<std::pair<int64_t, SmallVector<ParamOp>>> repeats; // layer count -> params
  for (ParamOp p : group) {
    if (!p.getStacked()) {
      place(p, at, 0, at);
      at = alignUp(at + byteSize(p.getType()));
      continue;
    }
    int64_t layers = cast<MemRefType>(p.getType()).getDimSize(0);
    auto it = llvm::find_if(repeats, [&](auto &r) { return r.first == layers; });
    if (it == repeats.end()) {
      repeats.push_back({layers, {}});
      it = std::prev(repeats.end());
    }
    it->second.push_back(p);
  }
  bounds.push_back(at);
  stagingBytes = at;
  for (auto &[layers, params] : repeats) {
    int64_t unitBytes = 0;
    for (ParamOp p : params)
      unitBytes += alignUp(p.getSliceBytes());
    int64_t within = 0;
    for (ParamOp p : params) {
      place(p, at + within, unitBytes, stagingBytes + within);
      within += alignUp(p.getSliceBytes());
    }
    stagingBytes += unitBytes;
    for (int64_t l = 0; l < layers; ++l)
      bounds.push_back(at + (l + 1) * unitBytes);
    at += layers * unitBytes;
  }
  return at;
}

struct PlanMemoryPass : mlir::bmb::impl::PlanMemoryPassBase<PlanMemoryPass> {
  void runOnOperation() override {
    getOperation().walk([&](ProgramOp program) {
      Builder b(program.getContext());
      int64_t params = 0, state = 0, activations = 0, grads = 0, optState = 0;
      auto train = program->getAttrOfType<DictionaryAttr>("train");
      auto slotsAttr = train ? train.getAs<IntegerAttr>("opt_slots") : IntegerAttr();
      int64_t optSlots = slotsAttr ? slotsAttr.getInt() : 0;
      // Frozen (or, in infer programs, all) params first; then the group.
      SmallVector<ParamOp> group;
      Type groupElem;
      for (ParamOp p : program.getBody().front().getOps<ParamOp>()) {
        if (train && !p.getFrozen()) {
          group.push_back(p);
          continue;
        }
        p.setOffsetAttr(b.getI64IntegerAttr(params));
        params = alignUp(params + byteSize(p.getType()));
      }
      const int64_t groupParamOffset = params;
      for (ParamOp p : group) {
        Type elem = cast<MemRefType>(p.getType()).getElementType();
        if (groupElem && elem != groupElem) {
          p.emitError("bmb-plan-memory: the trainable params mix ")
              << groupElem << " and " << elem
              << "; one flat group per element type is not implemented yet";
          return signalPassFailure();
        }
        groupElem = elem;
      }
      SmallVector<int64_t> unitBounds; // bytes into the group
      auto stage = train ? train.getAs<IntegerAttr>("zero_stage") : IntegerAttr();
      const bool staged = stage && stage.getInt() >= 2;
      int64_t stagingBytes = 0;
      grads = layOutGroup(group, unitBounds, stagingBytes,
                          [&](ParamOp p, int64_t at, int64_t stride, int64_t stagingAt) {
        p.setOffsetAttr(b.getI64IntegerAttr(groupParamOffset + at));
        if (staged)
          p.setStagingOffsetAttr(b.getI64IntegerAttr(stagingAt));
        p.setGradOffsetAttr(b.getI64IntegerAttr(at));
        if (optSlots > 0)
          p.setOptOffsetAttr(b.getI64IntegerAttr(at));
        if (p.getStacked() && stride != p.getSliceBytes())
          p.setLayerStrideAttr(b.getI64IntegerAttr(stride));
      });
      params = groupParamOffset + grads;
      optState = optSlots * grads;
      for (Operation &op : program.getBody().front()) {
        if (auto s = dyn_cast<StateOp>(op)) {
          s.setOffsetAttr(b.getI64IntegerAttr(state));
          state = alignUp(state + byteSize(s.getType()));
        } else if (auto f = dyn_cast<func::FuncOp>(op)) {
          int64_t need = planFunction(f);
          f->setAttr("activation_bytes", b.getI64IntegerAttr(need));
          activations = std::max(activations, need);
        }
      }
      program->setAttr("param_bytes", b.getI64IntegerAttr(params));
      program->setAttr("state_bytes", b.getI64IntegerAttr(state));
      program->setAttr("activation_bytes", b.getI64IntegerAttr(activations));
      if (train) {
        program->setAttr("grad_bytes", b.getI64IntegerAttr(grads));
        program->setAttr("opt_state_bytes", b.getI64IntegerAttr(optState));
        program->setAttr("group_param_offset", b.getI64IntegerAttr(groupParamOffset));
        int64_t elemBytes = groupElem ? (groupElem.getIntOrFloatBitWidth() + 7) / 8 : 4;
        program->setAttr("group_elems", b.getI64IntegerAttr(grads / elemBytes));
        program->setAttr("partition_align", b.getI64IntegerAttr(kPartitionAlign));
        SmallVector<int64_t> units;
        for (int64_t bound : unitBounds)
          units.push_back(bound / elemBytes);
        program->setAttr("group_units", b.getDenseI64ArrayAttr(units));
        // zero = 2 and 3: every repeat's layer has two slots, the layout of
        // the first (after unit 0) again `grad_slot_stride` bytes on: layer
        // l writes slot l % 2 while layer l + 1's reduce-scatter is still in
        // flight from the other (bmb_exec.reduce_scatter_ahead).
        const int64_t layerSlots = stagingBytes - unitBounds[1];
        if (staged) {
          program->setAttr("grad_staging_bytes", b.getI64IntegerAttr(stagingBytes + layerSlots));
          program->setAttr("grad_slot_stride", b.getI64IntegerAttr(layerSlots));
        }
        // offload = optimizer (bmb-offload-optimizer): the optimizer state
        // is a host role of four slots (m, v, the fp32 master, the gradient
        // staging; bmrt/offload.h), none of it in the device's memory.
        bool offloaded = false;
        program.walk([&](OffloadGradsOutOp) { offloaded = true; });
        if (offloaded)
          program->setAttr("offload_state_bytes", b.getI64IntegerAttr(4 * grads));
        if (stage && stage.getInt() == 3) {
          program->setAttr("param_staging_bytes",
                           b.getI64IntegerAttr(stagingBytes + layerSlots));
          program->setAttr("param_slot_stride", b.getI64IntegerAttr(layerSlots));
        }
      }
    });
  }
};

} // namespace
