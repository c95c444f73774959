//===- SemaTest.cpp - Sema on the shipped models and on small inputs ------===//
//
// Parameter counts are checked against the published sizes of the models
// (Hugging Face's num_parameters() for GPT-2 small, BERT-base with pooler,
// BertForMaskedLM and TinyLlama-1.1B), which we did not compute ourselves.
//
//===----------------------------------------------------------------------===//
#include "lang/Sema.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace bmb;

namespace {

struct Result {
  std::optional<program::Program> program;
  std::string diagnostics;
};

std::string sourceDir() { return BMB_SOURCE_DIR; }

Result compileFile(const std::string &path, const std::string &job = "",
                   const std::string &model = "") {
  SourceManager sources;
  std::ostringstream err;
  Result r;
  {
    DiagnosticEngine diags(sources, err);
    FrontendOptions opts;
    opts.importDirs.push_back(sourceDir());
    opts.job = job;
    opts.model = model;
    std::optional<LoadedFiles> files = loadFiles(path, opts, sources, diags);
    if (files)
      r.program = analyze(*files, opts, sources, diags);
  }
  r.diagnostics = err.str();
  return r;
}

/// Writes `text` to a fresh temporary .bmb file and compiles it.
Result compileText(const std::string &text, const std::string &job = "",
                   const std::string &model = "") {
  char dir[] = "/tmp/bmb-sema-XXXXXX";
  EXPECT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/t.bmb";
  std::ofstream(path) << text;
  Result r = compileFile(path, job, model);
  std::remove(path.c_str());
  rmdir(dir);
  return r;
}

int64_t countParams(const program::LayerInstance &inst, int64_t mult = 1) {
  if (inst.repeat > 0)
    mult *= inst.repeat;
  int64_t n = 0;
  for (const program::Param &p : inst.params)
    n += mult * *shapes::numElements(p.sig.shape);
  for (const auto &c : inst.children)
    n += countParams(*c, mult);
  return n;
}

int64_t paramsOf(const std::string &file, const std::string &model) {
  Result r = compileFile(sourceDir() + "/models/" + file, "", model);
  EXPECT_TRUE(r.program) << r.diagnostics;
  return r.program ? countParams(*r.program->model) : -1;
}

} // namespace

TEST(SemaModels, PublishedParameterCounts) {
  EXPECT_EQ(paramsOf("gpt2.bmb", "GPT2"), 124439808);
  EXPECT_EQ(paramsOf("bert.bmb", "BERT"), 109482240);
  EXPECT_EQ(paramsOf("bert.bmb", "BertMLM"), 109514298);
  EXPECT_EQ(paramsOf("llama.bmb", "TinyLlama"), 1100048384);
}

TEST(SemaModels, JobsBindBatchAndSeq) {
  Result r = compileFile(sourceDir() + "/models/gpt2.bmb", "pretrain");
  ASSERT_TRUE(r.program) << r.diagnostics;
  ASSERT_TRUE(r.program->job);
  EXPECT_EQ(r.program->job->batch, 8);
  EXPECT_EQ(r.program->job->seq, 256);
  const program::Graph &g = r.program->model->forward;
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.values[g.inputs[0]].sig.shape, (shapes::Shape{8, 256}));
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.values[g.outputs[0]].sig.shape, (shapes::Shape{8, 256, 50257}));
  // Infer jobs default to batch 1 and T = ctx.
  Result chat = compileFile(sourceDir() + "/models/gpt2.bmb", "chat");
  ASSERT_TRUE(chat.program) << chat.diagnostics;
  EXPECT_EQ(chat.program->job->batch, 1);
  EXPECT_EQ(chat.program->job->seq, 1024);
}

TEST(SemaModels, RepeatStaysRolled) {
  Result r = compileFile(sourceDir() + "/models/gpt2.bmb", "", "GPT2");
  ASSERT_TRUE(r.program) << r.diagnostics;
  const program::LayerInstance *h = r.program->model->child("h");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->repeat, 12);
  EXPECT_EQ(h->carried, 1);
  EXPECT_EQ(h->layerName, "Block");
}

TEST(SemaModels, CheckpointMapsApplyToAliases) {
  // GPT2's map applies to its alias GPT2Tiny, through the job.
  Result r = compileFile(sourceDir() + "/models/gpt2.bmb", "pretrain");
  ASSERT_TRUE(r.program) << r.diagnostics;
  ASSERT_EQ(r.program->checkpointMaps.size(), 1u);
  const program::CheckpointMap &hf = r.program->checkpointMaps[0];
  EXPECT_EQ(hf.name, "hf");
  ASSERT_EQ(hf.rules.size(), 17u);
  const program::NameRule &cAttn = hf.rules[4];
  EXPECT_EQ(cAttn.external, "transformer.h.{i}.attn.c_attn.weight");
  EXPECT_EQ(cAttn.parts, (std::vector<std::string>{"h.attn.q.w", "h.attn.k.w", "h.attn.v.w"}));
  EXPECT_EQ(cAttn.axis, 0);
  EXPECT_TRUE(cAttn.transpose);
  EXPECT_FALSE(cAttn.tied);
  EXPECT_TRUE(hf.rules.back().tied);

  // BERT's pooler rules apply only when the model has a pooler; BertMLM has
  // its own map.
  EXPECT_EQ(compileFile(sourceDir() + "/models/bert.bmb", "", "BERT")
                .program->checkpointMaps.at(0).rules.size(), 23u);
  Result noPool = compileText("import \"models/bert.bmb\"\n"
                              "model NoPool = BERT(layers = 1, pooler = false)\n",
                              "", "NoPool");
  ASSERT_TRUE(noPool.program) << noPool.diagnostics;
  EXPECT_EQ(noPool.program->checkpointMaps.at(0).rules.size(), 21u);
  Result mlm = compileFile(sourceDir() + "/models/bert.bmb", "sst2");
  ASSERT_TRUE(mlm.program) << mlm.diagnostics;
  ASSERT_EQ(mlm.program->checkpointMaps.size(), 1u);
  EXPECT_EQ(mlm.program->checkpointMaps[0].rules.size(), 28u);
}

TEST(SemaModels, EveryShippedJobChecks) {
  for (const char *job : {"pretrain", "pretrain_nano", "chat"})
    EXPECT_TRUE(compileFile(sourceDir() + "/models/gpt2.bmb", job).program) << job;
  EXPECT_TRUE(compileFile(sourceDir() + "/models/bert.bmb", "sst2").program);
  EXPECT_TRUE(compileFile(sourceDir() + "/models/llama.bmb", "chat").program);
}

TEST(SemaErrors, ShapeMismatchShowsBothShapes) {
  Result r = compileText(R"(import "stdlib/nn.bmb"
model M(dim: int = 8, ctx: int = 16) {
  a = Linear(dim, 16)
  b = Linear(32, 4)
  forward(x: [B, T, dim]) -> [B, T, 4] = b(a(x))
}
)", "", "M");
  EXPECT_FALSE(r.program);
  EXPECT_NE(r.diagnostics.find("t.bmb:5:42: error: input 'x' of 'Linear' (as 'b') is "
                               "f32[1, 16, 16], but forward expects [..., 32]"),
            std::string::npos)
      << r.diagnostics;
}

TEST(SemaErrors, UnknownNamesSuggest) {
  Result r = compileText(R"(import "stdlib/nn.bmb"
model M(dim: int = 8, ctx: int = 16) {
  a = Linaer(dim, 16)
  forward(x: [B, T, dim]) = a(x)
}
)", "", "M");
  EXPECT_FALSE(r.program);
  EXPECT_NE(r.diagnostics.find("error: unknown layer 'Linaer' (did you mean 'Linear'?)"),
            std::string::npos)
      << r.diagnostics;
}

TEST(SemaErrors, SelfContainingLayer) {
  Result r = compileText(R"(layer L(n: int) {
  inner = L(n)
  forward(x) = x
}
model M() {
  l = L(3)
  forward(x: [B, 4]) = l(x)
}
)", "", "M");
  EXPECT_FALSE(r.program);
  EXPECT_NE(r.diagnostics.find("layer 'L' contains itself"), std::string::npos)
      << r.diagnostics;
}

TEST(SemaErrors, JobSettings) {
  Result r = compileText(R"(import "stdlib/nn.bmb"
model M(dim: int = 8) {
  a = Linear(dim, dim)
  forward(x: [B, T, dim]) = a(x)
}
train t for M {
  bacth = 4
  seq = "long"
  optimizer = adamw(lr = -1)
}
)");
  EXPECT_FALSE(r.program);
  EXPECT_NE(r.diagnostics.find("unknown setting 'bacth' for a train job (did you mean 'batch'?)"),
            std::string::npos)
      << r.diagnostics;
  EXPECT_NE(r.diagnostics.find("setting 'seq' expects a positive integer, got a string"),
            std::string::npos)
      << r.diagnostics;
  EXPECT_NE(r.diagnostics.find("argument 'lr' of adamw(...) expects a positive number"),
            std::string::npos)
      << r.diagnostics;
  EXPECT_NE(r.diagnostics.find("train job 't' needs the setting 'batch'"), std::string::npos)
      << r.diagnostics;
}

TEST(SemaErrors, ImportProblems) {
  Result zero = compileText("import \"/dev/zero\"\n");
  EXPECT_NE(zero.diagnostics.find("'/dev/zero' is not a regular file"), std::string::npos)
      << zero.diagnostics;
  Result missing = compileText("import \"nope/none.bmb\"\n");
  EXPECT_NE(missing.diagnostics.find("cannot find import 'nope/none.bmb'"), std::string::npos)
      << missing.diagnostics;
}

TEST(SemaErrors, IntegerOverflowInHyperparameters) {
  Result r = compileText(R"(model M(n: int = 9223372036854775807) {
  param w: [n * 2] = zeros
  forward(x: [B, 4]) = x
}
)", "", "M");
  EXPECT_FALSE(r.program);
  EXPECT_NE(r.diagnostics.find("integer overflow in 9223372036854775807 * 2"),
            std::string::npos)
      << r.diagnostics;
}
