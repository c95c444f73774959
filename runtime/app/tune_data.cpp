//===- app/tune_data.cpp - Labelled examples for the tune executable ------===//
//
// TSV lines are split on tabs with no quoting (GLUE's files); JSONL lines are
// one object each. Every error names file:line.
//
//===----------------------------------------------------------------------===//
#include "app/tune_data.h"

#include "bmrt/context.h"
#include "bmrt/json.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace bmrt {

namespace {

using json::Value;

std::string joined(const std::vector<std::string> &names) {
  std::string s;
  for (const std::string &n : names)
    s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string trimmed(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos)
    return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

int64_t columnOf(const Value &config, const char *key) {
  const Value *v = config.get(key);
  if (!v)
    return -1;
  if (v->kind != Value::Kind::Number || v->number < 0 || v->number != (double)(int64_t)v->number)
    fail(std::string("the job's data config: '") + key + "' must be a column number >= 0");
  return (int64_t)v->number;
}

// A class name, or a class index when no class has that name.
int32_t labelIndex(const std::string &text, const std::vector<std::string> &labels,
                   const std::string &where) {
  for (size_t c = 0; c < labels.size(); ++c)
    if (labels[c] == text)
      return (int32_t)c;
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos &&
      text.size() < 10) {
    long index = std::stol(text);
    if (index < (long)labels.size())
      return (int32_t)index;
  }
  fail(where + ": label '" + text + "' is not one of the classes (" + joined(labels) +
       ") nor a class index below " + std::to_string(labels.size()));
}

std::vector<std::string> splitTabs(const std::string &line) {
  std::vector<std::string> cells;
  size_t start = 0;
  for (;;) {
    size_t tab = line.find('\t', start);
    cells.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos)
      return cells;
    start = tab + 1;
  }
}

LabelledExample tsvExample(const LabelledSource &source, const std::vector<std::string> &fields,
                           const std::vector<std::string> &labels, const std::string &line,
                           const std::string &where) {
  std::vector<std::string> cells = splitTabs(line);
  auto cell = [&](int64_t column, const std::string &what) -> const std::string & {
    if (column >= (int64_t)cells.size())
      fail(where + ": " + std::to_string(cells.size()) + " column" +
           (cells.size() == 1 ? "" : "s") + ", but the data source reads column " +
           std::to_string(column) + " (" + what + ")");
    return cells[column];
  };
  LabelledExample e;
  e.example.where = where;
  for (const std::string &f : fields) {
    int64_t column = -1;
    for (const auto &[name, c] : source.columns)
      if (name == f)
        column = c;
    if (column < 0)
      fail("the template reads {" + f + "}, but the tsv data source has no column for it (tsv(..., " +
           f + " = COLUMN))");
    e.example.fields.emplace_back(f, cell(column, f));
  }
  e.label = labelIndex(trimmed(cell(source.labelColumn, "label")), labels, where);
  return e;
}

LabelledExample jsonlExample(const LabelledSource &source, const std::vector<std::string> &fields,
                             const std::vector<std::string> &labels, const std::string &line,
                             const std::string &where) {
  Value v = json::parse(line, where);
  if (v.kind != Value::Kind::Object)
    fail(where + ": expected a JSON object (one example per line)");
  LabelledExample e;
  e.example.where = where;
  for (const std::string &f : fields) {
    const std::string &key = f == "text_a" ? source.textAKey : f;
    const Value *value = v.get(key);
    if (!value || value->kind != Value::Kind::String)
      fail(where + ": no string field \"" + key + "\" (the template reads {" + f + "})");
    e.example.fields.emplace_back(f, value->string);
  }
  const Value *label = v.get(source.labelKey);
  if (!label)
    fail(where + ": no field \"" + source.labelKey + "\" (the example's class)");
  if (label->kind == Value::Kind::String)
    e.label = labelIndex(label->string, labels, where);
  else if (label->kind == Value::Kind::Number && label->number >= 0 &&
           label->number == (double)(int64_t)label->number)
    e.label = labelIndex(std::to_string((int64_t)label->number), labels, where);
  else
    fail(where + ": \"" + source.labelKey + "\" must be a class name or a class index");
  return e;
}

} // namespace

LabelledSource labelledSource(const std::string &dataJson, const std::string &path) {
  if (dataJson.empty() && path.empty())
    fail("no data: the job has no `data` setting; pass --data FILE (.tsv or .jsonl)");
  LabelledSource s;
  Value config;
  if (!dataJson.empty())
    config = json::parse(dataJson, "the job's data config");
  const Value *kind = config.get("kind");
  const Value *configPath = config.get("path");
  s.kind = kind && kind->kind == Value::Kind::String ? kind->string : "";
  s.path = !path.empty() ? path
           : configPath && configPath->kind == Value::Kind::String ? configPath->string
                                                                   : "";
  if (s.kind.empty()) // --data without a job data config: by extension
    s.kind = s.path.size() > 6 && s.path.compare(s.path.size() - 6, 6, ".jsonl") == 0 ? "jsonl"
                                                                                      : "tsv";
  if (s.kind != "tsv" && s.kind != "jsonl")
    fail("a tune job reads labelled examples from tsv(...) or jsonl(...), not " + s.kind + "(...)");
  if (s.kind == "tsv") {
    for (const char *field : {"text_a", "text_b"})
      if (int64_t c = columnOf(config, field); c >= 0)
        s.columns.emplace_back(field, c);
    s.labelColumn = columnOf(config, "label");
    if (s.labelColumn < 0)
      fail("the tsv data source names no label column: tsv(\"" + s.path +
           "\", text_a = 0, label = 1, ...)");
  } else if (const Value *field = config.get("field");
             field && field->kind == Value::Kind::String) {
    s.textAKey = field->string;
  }
  return s;
}

std::vector<LabelledExample> readLabelled(const LabelledSource &source,
                                          const std::vector<std::string> &fields,
                                          const std::vector<std::string> &labels) {
  std::ifstream in(source.path, std::ios::binary);
  if (!in)
    fail(source.path + ": cannot read the data file: " + std::strerror(errno));
  std::vector<LabelledExample> examples;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos)
      continue;
    std::string where = source.path + ":" + std::to_string(number);
    examples.push_back(source.kind == "tsv" ? tsvExample(source, fields, labels, line, where)
                                            : jsonlExample(source, fields, labels, line, where));
  }
  if (examples.empty())
    fail(source.path + ": no examples (one per line)");
  return examples;
}

} // namespace bmrt
