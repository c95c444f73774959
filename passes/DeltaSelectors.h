//===- DeltaSelectors.h - Selecting layers and params by name --*- C++ -*-===//
//
// The selectors of delta tuning (`on`, `exclude`, `freeze`, `train_only`),
// as OpenDelta users write them, matched against dotted paths from the
// model root without iteration indices (`h.attn.q` for every layer of the
// repeat `h`):
//   - `re:PATTERN`  a regular expression that must match the whole path;
//   - with a `*`    a glob: `*` within one segment, `**` across segments;
//   - otherwise     a suffix on segment boundaries: `attn.q` matches
//                   `h.attn.q` and `attn.q`, not `h.xattn.q`.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_PASSES_DELTASELECTORS_H
#define BMB_PASSES_DELTASELECTORS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir::bmb {

/// Dotted-path glob: `*` matches within one segment, `**` across segments
/// (also `no_decay = [...]` of bmb-insert-optimizer).
bool globMatch(llvm::StringRef pattern, llvm::StringRef path);

/// Whether `selector` selects `path`. An invalid `re:` pattern matches
/// nothing (checkSelector reports it).
bool selectorMatches(llvm::StringRef selector, llvm::StringRef path);

/// An error message for a malformed selector (bad regex, empty), or "".
std::string checkSelector(llvm::StringRef selector);

/// Whether `selector` names iterations of a rolled repeat (`h.0.attn.q`):
/// some segment is a number. Such a selection is per-iteration.
bool selectsIterations(llvm::StringRef selector);

/// Up to three of `paths` closest to `selector` (edit distance of the
/// selector against each path's suffix with as many segments), as
/// "'a', 'b' or 'c'", or "" when nothing is close.
std::string nearMisses(llvm::StringRef selector, llvm::ArrayRef<std::string> paths);

} // namespace mlir::bmb

#endif // BMB_PASSES_DELTASELECTORS_H
