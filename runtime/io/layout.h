//===- io/layout.h - Checkpoint layouts as lists of bindings (private) ----===//
//
// A layout says, for every tensor name a checkpoint file holds, which slices
// of our params it is made of. Both of a program's kinds of layout reduce to
// the same list of Bindings, so loading and saving have one code path each:
//   - our own names: one binding per param, the whole (stacked) tensor;
//   - a declared name map: one binding per rule and layer ("{i}" expanded),
//     external = transpose?(concat(parts, axis)).
// Malformed tables (a compiler bug, not a user error) fail loudly here.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_IO_LAYOUT_H
#define BMRT_IO_LAYOUT_H

#include "bmrt/program.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bmrt::io {

/// One param, or one layer of a stacked param. Where its bytes are is the
/// business of a ParamTarget or ParamSource (bmrt/checkpoint.h): the whole
/// params allocation, or a rank's partition of it.
struct ParamSlice {
  const ParamInfo *param;
  int64_t layer;              // -1: the whole param
  std::vector<int64_t> shape; // without the layer dim when layer >= 0
};

struct Binding {
  std::string external;          // the name in the file
  std::vector<ParamSlice> parts; // concatenated along `axis`, in order
  int axis = 0;                  // normalized to [0, rank)
  bool transpose = false;        // 2-D only
  bool tied = false;             // may be absent; if present must equal parts
  bool delta = false;            // a delta param's: may be absent (keeps its values)
  DType dtype = DType::F32;      // of every part
  std::vector<int64_t> concatShape; // our layout: parts joined along axis
  std::vector<int64_t> fileShape;   // the file's shape (concatShape transposed)
  int64_t numel = 0;

  /// "h.attn.q.w + h.attn.k.w, layer 3" for error messages.
  std::string describe() const;
};

/// Our own names: one binding per param.
std::vector<Binding> ourLayout(const ProgramInfo &program);

/// The bindings of name map `map` (every rule, every layer).
std::vector<Binding> mapLayout(const ProgramInfo &program, const NameMap &map);

/// Checks that the non-tied bindings write every param (every layer of every
/// stacked param) exactly once; `layoutName` names the layout in the error.
void checkCoverage(const ProgramInfo &program, const std::vector<Binding> &bindings,
                   const std::string &layoutName);

/// Bytes of a part in its param's logical layout (layer after layer,
/// paramSliceBytes each; param_slices.h): where it starts (layer * slice for
/// one layer, 0 for the whole param) and how many.
int64_t partLogicalStart(const ParamSlice &part);
int64_t partLogicalBytes(const ParamSlice &part);

/// Receives bytes [from, from + n) of part `part` of a binding, counted from
/// the part's start (partLogicalStart), at `src`.
using PartBytesFn =
    std::function<void(size_t part, int64_t from, int64_t n, const uint8_t *src)>;

/// File order -> parts: `external` holds b.numel elements of b.dtype in
/// b.fileShape; they are transposed back and handed to `put` chunk by chunk.
void scatterToParts(const Binding &b, const uint8_t *external, const PartBytesFn &put,
                    std::vector<uint8_t> &scratch);

/// Parts -> file order (the inverse of scatterToParts) into `external`:
/// parts[k] holds part k's partLogicalBytes, back to back.
void gatherFromParts(const Binding &b, const std::vector<const uint8_t *> &parts,
                     uint8_t *external, std::vector<uint8_t> &scratch);

} // namespace bmrt::io

#endif // BMRT_IO_LAYOUT_H
