//===- DeltaSelectors.cpp - Selecting layers and params by name -----------===//

#include "passes/DeltaSelectors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Regex.h"

#include <algorithm>

using namespace llvm;

namespace mlir::bmb {

bool globMatch(StringRef pattern, StringRef path) {
  if (pattern.empty())
    return path.empty();
  if (pattern.starts_with("**")) {
    for (size_t i = 0; i <= path.size(); ++i)
      if (globMatch(pattern.drop_front(2), path.drop_front(i)))
        return true;
    return false;
  }
  if (pattern.front() == '*') {
    for (size_t i = 0; i <= path.size(); ++i) {
      if (globMatch(pattern.drop_front(), path.drop_front(i)))
        return true;
      if (i < path.size() && path[i] == '.')
        return false;
    }
    return false;
  }
  return !path.empty() && pattern.front() == path.front() &&
         globMatch(pattern.drop_front(), path.drop_front());
}

namespace {

size_t countSegments(StringRef s) { return s.count('.') + 1; }

/// The last `n` segments of `path` (all of it when it has fewer).
StringRef lastSegments(StringRef path, size_t n) {
  size_t pos = path.size();
  for (size_t k = 0; k < n; ++k) {
    size_t dot = path.rfind('.', pos == 0 ? 0 : pos - 1);
    if (dot == StringRef::npos || pos == 0)
      return path;
    pos = dot;
  }
  return path.drop_front(pos + 1);
}

} // namespace

bool selectorMatches(StringRef selector, StringRef path) {
  if (selector.consume_front("re:")) {
    Regex re("^(" + selector.str() + ")$");
    return re.isValid() && re.match(path);
  }
  if (selector.contains('*'))
    return globMatch(selector, path);
  return path == selector ||
         (path.size() > selector.size() && path.ends_with(selector) &&
          path[path.size() - selector.size() - 1] == '.');
}

std::string checkSelector(StringRef selector) {
  if (selector.empty())
    return "an empty selector";
  if (selector.consume_front("re:")) {
    std::string why;
    Regex re(selector);
    if (!re.isValid(why))
      return "invalid regular expression '" + selector.str() + "': " + why;
  }
  return "";
}

bool selectsIterations(StringRef selector) {
  if (selector.starts_with("re:"))
    return false;
  SmallVector<StringRef> parts;
  selector.split(parts, '.');
  return any_of(parts, [](StringRef p) {
    return !p.empty() && all_of(p, [](char c) { return c >= '0' && c <= '9'; });
  });
}

std::string nearMisses(StringRef selector, ArrayRef<std::string> paths) {
  StringRef bare = selector;
  bare.consume_front("re:");
  std::vector<std::pair<unsigned, std::string>> scored;
  for (const std::string &p : paths) {
    StringRef tail = lastSegments(p, countSegments(bare));
    unsigned d = std::min(tail.edit_distance(bare), StringRef(p).edit_distance(bare));
    if (d <= std::max<size_t>(2, bare.size() / 2))
      scored.emplace_back(d, p);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  std::string out;
  for (size_t k = 0; k < scored.size() && k < 3; ++k)
    out += (k == 0 ? "'" : k + 1 == std::min<size_t>(scored.size(), 3) ? " or '" : ", '") +
           scored[k].second + "'";
  return out;
}

} // namespace mlir::bmb
