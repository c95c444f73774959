//===- Diagnostics.cpp - Source files and error rendering -----------------===//
#include "lang/Diagnostics.h"

#include <ostream>

using namespace bmb;

uint32_t SourceManager::addBuffer(std::string path, std::string text) {
  Entry e;
  e.path = std::move(path);
  e.text = std::move(text);
  e.lineStarts.push_back(0);
  for (size_t i = 0; i < e.text.size(); ++i)
    if (e.text[i] == '\n')
      e.lineStarts.push_back(i + 1);
  files.push_back(std::move(e));
  return static_cast<uint32_t>(files.size() - 1);
}

std::string_view SourceManager::lineText(uint32_t file, uint32_t line) const {
  if (file >= files.size() || line == 0)
    return {};
  const Entry &e = files[file];
  if (line > e.lineStarts.size())
    return {};
  size_t begin = e.lineStarts[line - 1];
  size_t end = line < e.lineStarts.size() ? e.lineStarts[line] - 1 : e.text.size();
  if (end > begin && e.text[end - 1] == '\r')
    --end;
  return std::string_view(e.text).substr(begin, end - begin);
}

Diagnostic &DiagnosticEngine::error(Loc loc, std::string message) {
  ++numErrors;
  pending.push_back({Severity::Error, loc, std::move(message), {}});
  return pending.back();
}

Diagnostic &DiagnosticEngine::warning(Loc loc, std::string message) {
  pending.push_back({Severity::Warning, loc, std::move(message), {}});
  return pending.back();
}

static const char *label(Severity s) {
  switch (s) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "error";
}

void DiagnosticEngine::render(Severity severity, Loc loc,
                              std::string_view message) const {
  if (loc.valid() && loc.file < sources.numFiles())
    os << sources.path(loc.file) << ':' << loc.line << ':' << loc.col << ": ";
  os << label(severity) << ": " << message << '\n';
  if (!loc.valid() || loc.file >= sources.numFiles())
    return;
  std::string_view line = sources.lineText(loc.file, loc.line);
  // A UTF-8 byte-order mark is not shown; columns count it, so the caret
  // moves back with it.
  size_t bom = 0;
  if (loc.line == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") {
    line.remove_prefix(3);
    bom = 3;
  }
  // Long or binary lines are clipped so a garbage file cannot flood the
  // terminal; control bytes print as spaces so the caret stays aligned.
  constexpr size_t maxWidth = 160;
  size_t col = loc.col ? loc.col - 1 : 0;
  col = col >= bom ? col - bom : 0;
  size_t start = col > maxWidth - 20 ? col - (maxWidth - 20) : 0;
  std::string shown;
  for (size_t i = start; i < line.size() && shown.size() < maxWidth; ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    shown.push_back(c == '\t' ? ' ' : (c < 0x20 || c == 0x7f) ? ' ' : line[i]);
  }
  os << "  " << shown << '\n';
  os << "  " << std::string(col - start, ' ') << "^\n";
}

void DiagnosticEngine::flush() {
  unsigned printedErrors = 0;
  for (const Diagnostic &d : pending) {
    if (d.severity == Severity::Error) {
      ++printedErrors;
      if (errorLimit && printedErrors + shownErrors > errorLimit) {
        if (!limitReported) {
          os << "error: too many errors emitted, stopping now\n";
          limitReported = true;
        }
        continue;
      }
    }
    render(d.severity, d.loc, d.message);
    for (const auto &[loc, msg] : d.notes)
      render(Severity::Note, loc, msg);
  }
  shownErrors += printedErrors;
  pending.clear();
  os.flush();
}
