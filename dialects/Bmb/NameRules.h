//===- NameRules.h - What a checkpoint name rule may say --------*- C++ -*-===//
//
// A rule of a checkpoint name map says that an external tensor is
// transpose?(concat(parts, axis)) of our parameters, per layer slice when the
// parts are stacked ("{i}" in the external name is the layer index). Sema
// (which reports at the user's line) and bmb.checkpoint_map's verifier (which
// checks IR read back or built by a pass) both check rules with this, so
// they can never disagree. Plain C++, like ShapeRules.h.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_DIALECTS_BMB_NAMERULES_H
#define BMB_DIALECTS_BMB_NAMERULES_H

#include "dialects/Bmb/ShapeRules.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bmb::namerules {

/// How many times "{i}" appears in `external`.
unsigned countLayerIndices(std::string_view external);

/// The problem with an external name by itself (empty, a brace other than
/// "{i}", "{i}" more than once), or "".
std::string checkExternal(std::string_view external);

/// One part of a rule: a parameter by name, one layer's signature, and the
/// counts of the repeats it is stacked under, outermost first.
struct Part {
  std::string name;
  shapes::Sig slice;
  std::vector<int64_t> stack;
};

/// What is wrong with a rule, and where it shows: at one of the parts, at
/// the external name, at concat's axis or at the transpose.
struct Problem {
  enum class At { None, Part, Name, Axis, Transpose };
  At at = At::None;
  size_t part = 0; // At::Part: which one
  std::string message;
  bool ok() const { return at == At::None; }
};

/// Checks that `parts` (at least one) form the external tensor `external`:
/// every part unstacked, or every part stacked one deep (nested repeats
/// would need two layer indices); "{i}" exactly when they are stacked;
/// concatenated parts agreeing in dtype, number of layers and every dimension
/// but `axis`, which is within their rank; a transposed tensor 2-D per
/// layer.
Problem check(std::string_view external, const std::vector<Part> &parts, int64_t axis,
              bool transpose);

} // namespace bmb::namerules

#endif // BMB_DIALECTS_BMB_NAMERULES_H
