//===- NameRules.cpp - What a checkpoint name rule may say ----------------===//
#include "dialects/Bmb/NameRules.h"

using namespace bmb;
using namespace bmb::namerules;

namespace {

/// "'h.attn.q.w' f32[64, 64] per layer (2 layers)".
std::string describe(const Part &p) {
  std::string s = "'" + p.name + "' " + shapes::str(p.slice);
  if (!p.stack.empty())
    s += " per layer (" + std::to_string(p.stack.back()) + " layers)";
  return s;
}

Problem at(Problem::At where, std::string message, size_t part = 0) {
  return {where, part, std::move(message)};
}

} // namespace

unsigned bmb::namerules::countLayerIndices(std::string_view external) {
  unsigned n = 0;
  for (size_t i = external.find("{i}"); i != std::string_view::npos;
       i = external.find("{i}", i + 3))
    ++n;
  return n;
}

std::string bmb::namerules::checkExternal(std::string_view external) {
  if (external.empty())
    return "a checkpoint name cannot be empty";
  for (size_t i = 0; i < external.size(); ++i) {
    if (external.compare(i, 3, "{i}") == 0)
      i += 2;
    else if (external[i] == '{' || external[i] == '}')
      return "only {i}, the layer index, may appear in braces in a checkpoint name";
  }
  if (unsigned n = countLayerIndices(external); n > 1)
    return "'{i}' appears " + std::to_string(n) +
           " times in a checkpoint name; a name has one layer index";
  return "";
}

Problem bmb::namerules::check(std::string_view external, const std::vector<Part> &parts,
                              int64_t axis, bool transpose) {
  if (parts.empty())
    return at(Problem::At::Name, "a rule needs at least one parameter");
  const Part &first = parts.front();
  for (size_t k = 0; k < parts.size(); ++k) {
    const Part &p = parts[k];
    if (p.stack.size() > 1)
      return at(Problem::At::Part,
                "'" + p.name + "' is stacked under " + std::to_string(p.stack.size()) +
                    " nested repeats; a checkpoint name has one layer index {i}, so "
                    "parameters of nested repeats cannot be mapped yet",
                k);
    if (p.stack.empty() != first.stack.empty()) {
      const std::string &stacked = first.stack.empty() ? p.name : first.name;
      const std::string &flat = first.stack.empty() ? first.name : p.name;
      return at(Problem::At::Part,
                "the parts of a rule must all be stacked or all unstacked: '" + stacked +
                    "' is stacked (in a repeat), '" + flat + "' is not",
                k);
    }
  }
  bool stacked = !first.stack.empty();
  unsigned indices = countLayerIndices(external);
  if (stacked && indices == 0)
    return at(Problem::At::Name, "'" + first.name + "' is stacked over the " +
                                     std::to_string(first.stack.back()) +
                                     " layers of a repeat: the checkpoint name needs '{i}' "
                                     "for the layer index");
  if (!stacked && indices > 0)
    return at(Problem::At::Name, "'{i}' stands for a layer index, but '" + first.name +
                                     "' is not stacked (not in a repeat)");
  const int64_t rank = static_cast<int64_t>(first.slice.shape.size());
  if (parts.size() > 1) {
    if (axis < 0 || axis >= rank)
      return at(Problem::At::Axis, "concat axis " + std::to_string(axis) +
                                       " is out of range for parts of rank " +
                                       std::to_string(rank) + " (" + describe(first) + ")");
    bool agree = true;
    for (const Part &p : parts) {
      agree &= p.slice.dtype == first.slice.dtype && p.stack == first.stack &&
               p.slice.shape.size() == first.slice.shape.size();
      for (int64_t j = 0; agree && j < rank; ++j)
        agree &= j == axis || p.slice.shape[j] == first.slice.shape[j];
    }
    if (!agree) {
      std::string all;
      for (size_t k = 0; k < parts.size(); ++k)
        all += (k ? ", " : "") + describe(parts[k]);
      return at(Problem::At::Axis, "concat along axis " + std::to_string(axis) +
                                       " needs parts that agree in dtype, layers and every "
                                       "other dimension: " + all);
    }
  } else if (axis != 0) {
    return at(Problem::At::Axis, "an axis is for concat(...) of two or more parameters");
  }
  if (transpose && rank != 2)
    return at(Problem::At::Transpose, std::string("transpose needs a 2-D tensor") +
                                          (stacked ? " per layer" : "") + ", got " +
                                          describe(first));
  return {};
}
