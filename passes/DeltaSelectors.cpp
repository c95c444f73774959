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

namespace {
bool isNumber(StringRef s) {
  return !s.empty() && all_of(s, [](char c) { return c >= '0' && c <= '9'; });
}
bool isIndexSegment(StringRef s) {
  return isNumber(s) || (s.starts_with("{") && s.ends_with("}"));
}
} // namespace

bool selectsIterations(StringRef selector) {
  if (selector.starts_with("re:"))
    return false;
  SmallVector<StringRef> parts;
  selector.split(parts, '.');
  return any_of(parts, isIndexSegment);
}

std::string parseIterations(StringRef selector, IterationSelector &out) {
  out = IterationSelector{selector.str(), "", {}};
  if (selector.starts_with("re:"))
    return "";
  SmallVector<StringRef> parts;
  selector.split(parts, '.');
  int found = -1;
  for (auto [k, p] : llvm::enumerate(parts)) {
    if (!isIndexSegment(p))
      continue;
    if (found >= 0)
      return "'" + selector.str() +
             "' indexes the iterations of more than one repeat; one index segment is supported";
    if (k == 0)
      return "'" + selector.str() + "': an iteration index must follow a repeat's name";
    found = k;
  }
  if (found < 0)
    return "";
  StringRef index = parts[found];
  std::vector<int64_t> its;
  SmallVector<StringRef> items;
  if (index.consume_front("{")) {
    index.consume_back("}");
    index.split(items, ',');
  } else {
    items.push_back(index);
  }
  for (StringRef item : items) {
    item = item.trim();
    auto [lo, hi] = item.split('-');
    if (!isNumber(lo) || (item.contains('-') && !isNumber(hi)))
      return "'" + selector.str() + "': malformed iteration index '" + item.str() +
             "' (a number or a range A-B)";
    int64_t a = std::stoll(lo.str()), b = item.contains('-') ? std::stoll(hi.str()) : a;
    if (b < a)
      return "'" + selector.str() + "': empty iteration range '" + item.str() + "'";
    for (int64_t i = a; i <= b; ++i)
      its.push_back(i);
  }
  std::sort(its.begin(), its.end());
  its.erase(std::unique(its.begin(), its.end()), its.end());
  std::string layers, repeat;
  for (auto [k, p] : llvm::enumerate(parts)) {
    if (int(k) == found)
      continue;
    layers += (layers.empty() ? "" : ".") + p.str();
    if (int(k) < found)
      repeat += (repeat.empty() ? "" : ".") + p.str();
  }
  out = IterationSelector{layers, repeat, its};
  return "";
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
