//===- Loader.cpp - Reading a file and its imports ------------------------===//
//
// Imports are resolved against the importing file's directory first, then
// the configured import directories. Each file is read at most once (by
// canonical path), so diamond imports are fine; a file that imports itself,
// directly or not, is an import cycle. Only regular files under the size cap
// are read, so `import "/dev/zero"` or a directory fails cleanly instead of
// hanging or exhausting memory.
//
//===----------------------------------------------------------------------===//
#include "lang/Parser.h"
#include "lang/Sema.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>

using namespace bmb;

namespace {

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

std::string join(const std::string &dir, const std::string &rel) {
  if (dir.empty() || dir == ".")
    return rel;
  if (dir.back() == '/')
    return dir + rel;
  return dir + "/" + rel;
}

std::string canonical(const std::string &path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf))
    return buf;
  return path;
}

bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

class Loader {
public:
  Loader(const FrontendOptions &options, SourceManager &sources,
         DiagnosticEngine &diags)
      : options(options), sources(sources), diags(diags) {}

  /// Loads `path`; `from` is the import's location (invalid for the main
  /// file). Returns false if this file or one of its imports failed. With
  /// `text`, the file's contents are given rather than read.
  bool load(const std::string &path, Loc from, const std::string *given = nullptr) {
    std::string canon = canonical(path);
    for (size_t i = 0; i < stack.size(); ++i) {
      if (stack[i] != canon)
        continue;
      std::string cycle;
      for (size_t j = i; j < stack.size(); ++j)
        cycle += stackNames[j] + " -> ";
      cycle += path;
      diags.error(from, "import cycle: " + cycle);
      return false;
    }
    if (done.count(canon))
      return true;
    if (done.size() >= options.maxFiles) {
      diags.error(from, "too many imported files (limit " +
                            std::to_string(options.maxFiles) + ")");
      return false;
    }
    done.insert(canon);

    std::string text;
    if (given) {
      if (given->size() > options.maxFileBytes) {
        diags.error(from, "'" + path + "' is too large");
        return false;
      }
      text = *given;
    } else if (!read(path, from, text)) {
      return false;
    }
    uint32_t id = sources.addBuffer(path, std::move(text));
    ParseLimits limits;
    limits.maxFileBytes = options.maxFileBytes;
    limits.maxNesting = options.maxNesting;
    std::unique_ptr<ast::File> file = parseFile(id, sources, diags, limits);
    if (!file)
      return false;

    stack.push_back(canon);
    stackNames.push_back(path);
    bool ok = true;
    std::string dir = directoryOf(path);
    for (const ast::DeclPtr &decl : file->decls) {
      auto *imp = llvm::dyn_cast<ast::ImportDecl>(decl.get());
      if (!imp)
        continue;
      std::string resolved;
      if (!resolve(imp->path, dir, imp->loc, resolved)) {
        ok = false;
        continue;
      }
      ok &= load(resolved, imp->loc);
      if (diags.tooManyErrors())
        break;
    }
    stack.pop_back();
    stackNames.pop_back();
    result.files.push_back(std::move(file));
    return ok;
  }

  LoadedFiles take() {
    // Imports were appended before their importer; the main file is last.
    // Sema wants the main file first.
    std::rotate(result.files.rbegin(), result.files.rbegin() + 1,
                result.files.rend());
    return std::move(result);
  }

private:
  bool resolve(const std::string &rel, const std::string &dir, Loc loc,
               std::string &out) {
    if (rel.empty()) {
      diags.error(loc, "empty import path");
      return false;
    }
    if (rel.find('\0') != std::string::npos) {
      diags.error(loc, "import path contains a NUL character");
      return false;
    }
    std::vector<std::string> tried;
    if (rel[0] == '/') {
      out = rel;
      return true;
    }
    tried.push_back(join(dir, rel));
    for (const std::string &d : options.importDirs)
      tried.push_back(join(d, rel));
    for (const std::string &t : tried)
      if (exists(t)) {
        out = t;
        return true;
      }
    std::string where;
    for (const std::string &t : tried)
      where += (where.empty() ? "" : ", ") + t;
    diags.error(loc, "cannot find import '" + rel + "' (looked for " + where + ")");
    return false;
  }

  bool read(const std::string &path, Loc from, std::string &text) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      diags.error(from, "cannot read '" + path + "': " + std::strerror(errno));
      return false;
    }
    if (!S_ISREG(st.st_mode)) {
      diags.error(from, "'" + path + "' is not a regular file");
      return false;
    }
    if (static_cast<uint64_t>(st.st_size) > options.maxFileBytes) {
      diags.error(from, "'" + path + "' is too large (" +
                            std::to_string(st.st_size) + " bytes; the limit is " +
                            std::to_string(options.maxFileBytes) + ")");
      return false;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      diags.error(from, "cannot open '" + path + "': " + std::strerror(errno));
      return false;
    }
    // Read at most the cap even if the file grew after stat().
    text.resize(options.maxFileBytes + 1);
    in.read(&text[0], static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    if (text.size() > options.maxFileBytes) {
      diags.error(from, "'" + path + "' is too large");
      return false;
    }
    return true;
  }

  const FrontendOptions &options;
  SourceManager &sources;
  DiagnosticEngine &diags;
  std::vector<std::string> stack, stackNames;
  std::set<std::string> done;
  LoadedFiles result;
};

} // namespace

std::optional<LoadedFiles> bmb::loadFiles(const std::string &path,
                                          const FrontendOptions &options,
                                          SourceManager &sources,
                                          DiagnosticEngine &diags) {
  Loader loader(options, sources, diags);
  if (!loader.load(path, Loc{}))
    return std::nullopt;
  return loader.take();
}

std::optional<LoadedFiles> bmb::loadSource(const std::string &path, std::string text,
                                           const FrontendOptions &options,
                                           SourceManager &sources,
                                           DiagnosticEngine &diags) {
  Loader loader(options, sources, diags);
  if (!loader.load(path, Loc{}, &text))
    return std::nullopt;
  return loader.take();
}
