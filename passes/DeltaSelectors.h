//===- DeltaSelectors.h - Selecting layers and params by name --*- C++ -*-===//
//
// The selectors of delta tuning (`on`, `exclude`, `freeze`, `train_only`),
// as OpenDelta users write them, matched against dotted paths from the
// model root without iteration indices (`h.attn.q` for every layer of the
// repeat `h`; a delta's `on`/`exclude` may add one index segment,
// `h.{0,3}.attn.q`, split off by parseIterations):
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

/// Whether `selector` names iterations of a rolled repeat (`h.0.attn.q`,
/// `h.{0,2}.mlp`): some segment is an iteration index.
bool selectsIterations(llvm::StringRef selector);

/// A delta selector with iteration indices, split: `h.{0,2-3}.attn.q` is the
/// layer selector `h.attn.q` on iterations 0, 2 and 3 of the repeat matched
/// by `h` (the selector's segments before the index).
struct IterationSelector {
  std::string layers;              // the selector without the index segment
  std::string repeat;              // the segments before it
  std::vector<int64_t> iterations; // ascending, unique; empty: no index
};

/// Splits `selector` (an index segment is a number `N` or a set `{N,A-B,...}`
/// and follows a repeat's name); an error message for a malformed index, or
/// "". `re:` selectors have no index segment.
std::string parseIterations(llvm::StringRef selector, IterationSelector &out);

/// Up to three of `paths` closest to `selector` (edit distance of the
/// selector against each path's suffix with as many segments), as
/// "'a', 'b' or 'c'", or "" when nothing is close.
std::string nearMisses(llvm::StringRef selector, llvm::ArrayRef<std::string> paths);

} // namespace mlir::bmb

#endif // BMB_PASSES_DELTASELECTORS_H
