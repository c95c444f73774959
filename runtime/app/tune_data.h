//===- app/tune_data.h - Labelled examples for the tune executable --------===//
//
// A tune job's data is a TSV or JSONL file of labelled examples (the job's
// `data = tsv(path, text_a = 0, text_b = 1, label = 2, labels = [...])` or
// `jsonl(path, labels = [...])`, carried as TuneInfo::data). Each example
// becomes the named fields its template reads plus a class index into the
// verbalizer's labels. Errors name the file and line (and the column or key)
// of what is wrong: a missing column, a field the template needs that the
// line lacks, a label that is not one of the classes.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TUNE_DATA_H
#define BMRT_APP_TUNE_DATA_H

#include "bmrt/prompt.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bmrt {

/// Where and how to read labelled examples.
struct LabelledSource {
  std::string kind;   // "tsv" or "jsonl"
  std::string path;
  // tsv: column (0-based) of each named field, and of the label.
  std::vector<std::pair<std::string, int64_t>> columns; // ("text_a", 0), ...
  int64_t labelColumn = -1;
  // jsonl: the fields are keys of each line's object, except that text_a
  // reads `textAKey` (the config's `field`, default "text_a"); the label is
  // under "label".
  std::string textAKey = "text_a";
  std::string labelKey = "label";
};

/// Parses TuneInfo::data (the job's config as JSON); `path` overrides its
/// path when not empty (--data). Fails on a config that is not tsv/jsonl or
/// a tsv without a label column.
LabelledSource labelledSource(const std::string &dataJson, const std::string &path);

struct LabelledExample {
  PromptExample example; // fields by name, and "file:line"
  int32_t label = -1;    // index into the labels
};

/// Reads every example. `fields` are the fields the template reads (text_a,
/// text_b, meta fields): each must be present on every line (tsv: declared
/// as a column; jsonl: a string value). `labels` are the verbalizer's
/// classes, in order; a label is a class name or, when no class has that
/// name, a class index (0, 1, ... as in GLUE's TSV files). A line whose
/// label is neither is an error naming it and the classes. An empty file, or one without examples, is an
/// error. Blank lines are skipped; a TSV first line equal to the column
/// names is not a header (TSV has none).
std::vector<LabelledExample> readLabelled(const LabelledSource &source,
                                          const std::vector<std::string> &fields,
                                          const std::vector<std::string> &labels);

} // namespace bmrt

#endif // BMRT_APP_TUNE_DATA_H
