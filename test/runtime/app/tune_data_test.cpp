//===- tune_data_test.cpp - Labelled data and metrics of the tune app -----===//
//
// The readers against files written here, with every error message; the
// metrics against values worked out by hand (and, for macro-F1, the
// scikit-learn definition: the mean over the classes seen in gold or
// predicted labels).
//
//===----------------------------------------------------------------------===//
#include "app/tune_data.h"
#include "app/tune_metrics.h"

#include "bmrt/context.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace bmrt;

namespace {

std::string writeFile(const std::string &name, const std::string &text) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("bmrt-tune-" + std::to_string(::getpid()) + "-" + name))
                         .string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

const std::vector<std::string> kLabels = {"negative", "positive"};

} // namespace

TEST(TuneData, TsvColumnsAndLabelsByNameOrIndex) {
  std::string path = writeFile("a.tsv", "great film\tyes\tpositive\r\n\n"
                                        "dull\tno\t0\n");
  LabelledSource s = labelledSource(
      "{\"kind\": \"tsv\", \"path\": \"x.tsv\", \"text_a\": 0, \"text_b\": 1, \"label\": 2}", path);
  EXPECT_EQ(s.kind, "tsv");
  EXPECT_EQ(s.path, path);
  std::vector<LabelledExample> ex = readLabelled(s, {"text_a", "text_b"}, kLabels);
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[0].example.fields[0].second, "great film");
  EXPECT_EQ(ex[0].example.fields[1].second, "yes");
  EXPECT_EQ(ex[0].label, 1);
  EXPECT_EQ(ex[0].example.where, path + ":1");
  EXPECT_EQ(ex[1].label, 0);
  EXPECT_EQ(ex[1].example.where, path + ":3"); // the blank line counts
  std::remove(path.c_str());
}

TEST(TuneData, JsonlFieldsKeysAndLabels) {
  std::string path = writeFile("a.jsonl", "{\"sentence\": \"fine\", \"topic\": \"x\", \"label\": \"positive\"}\n"
                                          "{\"sentence\": \"bad\", \"topic\": \"y\", \"label\": 0}\n");
  LabelledSource s = labelledSource("{\"kind\": \"jsonl\", \"path\": \"" + path +
                                        "\", \"field\": \"sentence\"}",
                                    "");
  std::vector<LabelledExample> ex = readLabelled(s, {"text_a", "topic"}, kLabels);
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[0].example.fields[0], std::make_pair(std::string("text_a"), std::string("fine")));
  EXPECT_EQ(ex[0].example.fields[1].second, "x");
  EXPECT_EQ(ex[0].label, 1);
  EXPECT_EQ(ex[1].label, 0);
  std::remove(path.c_str());
}

TEST(TuneData, KindFromExtensionWithoutConfig) {
  EXPECT_EQ(labelledSource("", "d.jsonl").kind, "jsonl");
  EXPECT_EQ(errorOf([] { labelledSource("", "d.tsv"); }),
            "the tsv data source names no label column: tsv(\"d.tsv\", text_a = 0, label = 1, ...)");
  EXPECT_EQ(errorOf([] { labelledSource("", ""); }),
            "no data: the job has no `data` setting; pass --data FILE (.tsv or .jsonl)");
  EXPECT_EQ(errorOf([] { labelledSource("{\"kind\": \"text\", \"path\": \"a.txt\"}", ""); }),
            "a tune job reads labelled examples from tsv(...) or jsonl(...), not text(...)");
}

TEST(TuneData, Errors) {
  const std::string cfg = "{\"kind\": \"tsv\", \"text_a\": 0, \"label\": 1}";
  std::string shortLine = writeFile("short.tsv", "ok\tpositive\nonly one column\n");
  EXPECT_EQ(errorOf([&] { readLabelled(labelledSource(cfg, shortLine), {"text_a"}, kLabels); }),
            shortLine + ":2: 1 column, but the data source reads column 1 (label)");
  std::string badLabel = writeFile("label.tsv", "ok\tneutral\n");
  EXPECT_EQ(errorOf([&] { readLabelled(labelledSource(cfg, badLabel), {"text_a"}, kLabels); }),
            badLabel + ":1: label 'neutral' is not one of the classes (negative, positive) nor a "
                       "class index below 2");
  std::string index = writeFile("index.tsv", "ok\t2\n");
  EXPECT_EQ(errorOf([&] { readLabelled(labelledSource(cfg, index), {"text_a"}, kLabels); }),
            index + ":1: label '2' is not one of the classes (negative, positive) nor a class "
                    "index below 2");
  EXPECT_EQ(errorOf([&] { readLabelled(labelledSource(cfg, index), {"text_b"}, kLabels); }),
            "the template reads {text_b}, but the tsv data source has no column for it (tsv(..., "
            "text_b = COLUMN))");
  std::string empty = writeFile("empty.tsv", "\n  \n");
  EXPECT_EQ(errorOf([&] { readLabelled(labelledSource(cfg, empty), {"text_a"}, kLabels); }),
            empty + ": no examples (one per line)");
  EXPECT_EQ(errorOf([&] {
              readLabelled(labelledSource(cfg, "/nonexistent/d.tsv"), {"text_a"}, kLabels);
            }),
            "/nonexistent/d.tsv: cannot read the data file: No such file or directory");
  std::string jl = writeFile("bad.jsonl", "{\"text_a\": \"x\", \"label\": \"positive\"}\n"
                                          "{\"text_a\": 3, \"label\": \"positive\"}\n"
                                          "[1]\n{\"text_a\": \"x\"}\n{\"text_a\": \"x\", \"label\": true}\n");
  LabelledSource js = labelledSource("{\"kind\": \"jsonl\"}", jl);
  EXPECT_EQ(errorOf([&] { readLabelled(js, {"text_a"}, kLabels); }), jl + ":2: no string field \"text_a\" (the template reads {text_a})");
  for (auto [line, message] :
       std::vector<std::pair<std::string, std::string>>{
           {"[1]", ":1: expected a JSON object (one example per line)"},
           {"{\"text_a\": \"x\"}", ":1: no field \"label\" (the example's class)"},
           {"{\"text_a\": \"x\", \"label\": true}",
            ":1: \"label\" must be a class name or a class index"}}) {
    std::string one = writeFile("one.jsonl", line + "\n");
    EXPECT_EQ(errorOf([&] { readLabelled(labelledSource("{\"kind\": \"jsonl\"}", one), {"text_a"}, kLabels); }),
              one + message);
    std::remove(one.c_str());
  }
  EXPECT_EQ(errorOf([] { labelledSource("{\"kind\": \"tsv\", \"label\": -1}", "d.tsv"); }),
            "the job's data config: 'label' must be a column number >= 0");
  for (const std::string &p : {shortLine, badLabel, index, empty, jl})
    std::remove(p.c_str());
}

TEST(TuneMetrics, AccuracyAndMacroF1ByHand) {
  // gold 0 0 0 1 1 2, predicted 0 0 1 1 2 2:
  //   class 0: TP 2, support 3, predicted 2 -> F1 = 4/5
  //   class 1: TP 1, support 2, predicted 2 -> F1 = 2/4
  //   class 2: TP 1, support 1, predicted 2 -> F1 = 2/3
  ClassMetrics m = classMetrics({0, 0, 0, 1, 1, 2}, {0, 0, 1, 1, 2, 2}, 4);
  EXPECT_EQ(m.examples, 6);
  EXPECT_DOUBLE_EQ(m.accuracy, 4.0 / 6.0);
  EXPECT_DOUBLE_EQ(m.f1[0], 0.8);
  EXPECT_DOUBLE_EQ(m.f1[1], 0.5);
  EXPECT_DOUBLE_EQ(m.f1[2], 2.0 / 3.0);
  EXPECT_EQ(m.f1[3], 0.0);
  // Class 3 is in neither list: left out of the mean.
  EXPECT_DOUBLE_EQ(m.macroF1, (0.8 + 0.5 + 2.0 / 3.0) / 3.0);
  EXPECT_EQ(m.support, (std::vector<int64_t>{3, 2, 1, 0}));
}

TEST(TuneMetrics, NeverPredictedClassCountsAsZero) {
  // The majority baseline on gold 1 1 0: class 0 is never predicted.
  ClassMetrics m = classMetrics({1, 1, 0}, {1, 1, 1}, 2);
  EXPECT_DOUBLE_EQ(m.accuracy, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.f1[1], 0.8); // 2·2 / (2 + 3)
  EXPECT_DOUBLE_EQ(m.macroF1, 0.4);
  EXPECT_EQ(majorityClass({1, 1, 0}, 2), 1);
  EXPECT_EQ(majorityClass({0, 1}, 2), 0); // ties: the lowest index
  EXPECT_EQ(errorOf([] { classMetrics({0}, {}, 2); }),
            "classMetrics: 1 gold labels but 0 predictions");
  EXPECT_EQ(errorOf([] { classMetrics({0}, {5}, 2); }),
            "classMetrics: a class index outside [0, 2)");
}
