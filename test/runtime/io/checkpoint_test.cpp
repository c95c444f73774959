//===- checkpoint_test.cpp - Layout round trips and checkpoint-level errors -===//
//
// Fast C++ checks with the hand-written tiny GPT-2 table: save/load round
// trips in both layouts, path resolution (directory, shard index), and the
// errors of malformed name maps (compiler bugs must fail loudly, not write
// half the params). Whether the "hf" layout really is Hugging Face's is
// checked against transformers in check_gpt2_checkpoint.py.
//
//===----------------------------------------------------------------------===//
#include "tiny_gpt2_program.h"

#include "bmrt/checkpoint.h"
#include "bmrt/context.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace {

#define EXPECT_HAS(message, needle)                                                        \
  EXPECT_NE(std::string(message).find(needle), std::string::npos)                          \
      << "message: " << (message) << "\nlacks: " << (needle)

class Checkpoint : public ::testing::Test {
protected:
  std::string dir;
  std::unique_ptr<tiny_gpt2::Program> program = tiny_gpt2::make(2, 8, 16, 4);
  std::vector<float> params, loaded;

  void SetUp() override {
    char tmpl[] = "/tmp/bmrt-io-ckpt-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    size_t n = (size_t)program->info.paramBytes / 4;
    std::mt19937 rng(42);
    std::normal_distribution<float> normal;
    params.resize(n);
    for (float &p : params)
      p = normal(rng);
    loaded.assign(n, std::nanf(""));
  }
  void TearDown() override { (void)system(("rm -rf '" + dir + "'").c_str()); }

  std::string loadError(const std::string &path) {
    try {
      bmrt::loadCheckpoint(path, program->info, loaded.data());
    } catch (const bmrt::Error &e) {
      return e.what();
    }
    return "(no error)";
  }

  // Every param's bytes equal (padding between params is not compared).
  void expectParamsEqual() {
    for (const bmrt::ParamInfo &p : program->params) {
      int64_t numel = 1;
      for (int d = 0; d < p.rank; ++d)
        numel *= p.shape[d];
      const float *a = params.data() + p.offset / 4, *b = loaded.data() + p.offset / 4;
      for (int64_t k = 0; k < numel; ++k)
        ASSERT_EQ(a[k], b[k]) << p.name << " element " << k;
    }
  }
};

TEST_F(Checkpoint, RoundTripOurNames) {
  bmrt::saveCheckpoint(dir + "/ours.safetensors", program->info, params.data(), nullptr);
  bmrt::LoadReport report =
      bmrt::loadCheckpoint(dir + "/ours.safetensors", program->info, loaded.data());
  EXPECT_EQ(report.nameMap, "");
  EXPECT_EQ(report.tensors, 20);
  EXPECT_EQ(report.file, dir + "/ours.safetensors");
  expectParamsEqual();
}

TEST_F(Checkpoint, RoundTripHfLayoutInADirectory) {
  mkdir((dir + "/hf").c_str(), 0755);
  bmrt::saveCheckpoint(dir + "/hf/model.safetensors", program->info, params.data(), "hf");
  bmrt::LoadReport report = bmrt::loadCheckpoint(dir + "/hf", program->info, loaded.data());
  EXPECT_EQ(report.nameMap, "hf");
  EXPECT_EQ(report.tensors, 4 + 12 * 2 + 1); // the tied lm_head was written and checked
  expectParamsEqual();
}

TEST_F(Checkpoint, ShardIndex) {
  // Two "shards": the same file under two names would duplicate tensors, so
  // the index names one real file; a wrong entry is reported.
  bmrt::saveCheckpoint(dir + "/part1.safetensors", program->info, params.data(), "hf");
  std::ofstream(dir + "/model.safetensors.index.json")
      << R"({"metadata":{},"weight_map":{"transformer.wte.weight":"part1.safetensors"}})";
  bmrt::LoadReport report = bmrt::loadCheckpoint(dir, program->info, loaded.data());
  EXPECT_EQ(report.nameMap, "hf");
  expectParamsEqual();
  std::ofstream(dir + "/model.safetensors.index.json")
      << R"({"weight_map":{"transformer.wte.weight":"part1.safetensors",)"
         R"("transformer.nope":"part1.safetensors"}})";
  EXPECT_HAS(loadError(dir), "\"weight_map\" places tensor 'transformer.nope' in "
                             "part1.safetensors, but that file does not hold it");
  std::ofstream(dir + "/model.safetensors.index.json") << R"({"metadata":{}})";
  EXPECT_HAS(loadError(dir), "model.safetensors.index.json: no \"weight_map\" object");
  std::ofstream(dir + "/model.safetensors.index.json")
      << R"({"weight_map":{"x":"missing.safetensors"}})";
  EXPECT_HAS(loadError(dir), "missing.safetensors: cannot open: No such file or directory");
}

TEST_F(Checkpoint, PathErrors) {
  EXPECT_EQ(loadError(dir + "/nothing"), dir + "/nothing: checkpoint does not exist");
  EXPECT_EQ(loadError(dir), dir + ": no model.safetensors or model.safetensors.index.json in "
                                  "this directory");
}

TEST_F(Checkpoint, NoLayoutFits) {
  // A checkpoint of a smaller model with other names altogether.
  auto other = tiny_gpt2::make(1, 8, 16, 4);
  bmrt::saveCheckpoint(dir + "/one-layer.safetensors", other->info, params.data(), "hf");
  std::string message = loadError(dir + "/one-layer.safetensors");
  EXPECT_HAS(message, "the checkpoint does not fit model 'GPT' (a checkpoint of another "
                      "architecture or size?)");
  EXPECT_HAS(message, "our names: 20 of 20 tensors missing, e.g. missing tensor 'wte.w'");
  EXPECT_HAS(message, "name map 'hf': 12 of 28 tensors missing, e.g. missing tensor "
                      "'transformer.h.1.ln_1.weight' (needed for h.ln1.w, layer 1)");
}

TEST_F(Checkpoint, UnknownMapOnSave) {
  try {
    bmrt::saveCheckpoint(dir + "/x.safetensors", program->info, params.data(), "llama");
    ADD_FAILURE() << "an unknown map was accepted";
  } catch (const bmrt::Error &e) {
    EXPECT_EQ(std::string(e.what()), dir + "/x.safetensors: model 'GPT' has no checkpoint name "
                                           "map 'llama' (it has: hf)");
  }
}

// Malformed tables are compiler bugs; they must fail before any copy.
TEST_F(Checkpoint, MalformedNameMaps) {
  auto save = [&](const bmrt::NameRule *rules, int n) -> std::string {
    bmrt::NameMap map{"bad", rules, n};
    bmrt::ProgramInfo info = program->info;
    info.nameMaps = &map;
    info.numNameMaps = 1;
    try {
      bmrt::saveCheckpoint(dir + "/bad.safetensors", info, params.data(), "bad");
    } catch (const bmrt::Error &e) {
      return e.what();
    }
    return "(no error)";
  };
  using namespace tiny_gpt2;
  EXPECT_EQ(save(kHfRules + 1, 16), "program 'GPT': name map 'bad' does not cover param 'wte.w'");
  std::vector<bmrt::NameRule> twice(kHfRules, kHfRules + 17);
  twice.push_back({"again.{i}", kLn1W, 1, 0, false, false});
  EXPECT_EQ(save(twice.data(), (int)twice.size()),
            "program 'GPT': name map 'bad' writes param 'h.ln1.w' layer 0 2 times");
  const char *const unknown[] = {"h.nope"};
  bmrt::NameRule bad[] = {{"x", unknown, 1, 0, false, false}};
  EXPECT_EQ(save(bad, 1), "name map 'bad' rule 'x' names unknown param 'h.nope'");
  bad[0] = {"x.{i}", kWte, 1, 0, false, false};
  EXPECT_EQ(save(bad, 1), "name map 'bad' rule 'x.{i}' has \"{i}\" but its part 'wte.w' is not "
                          "stacked");
  bad[0] = {"x", kQkvW, 3, 0, true, false};
  EXPECT_EQ(save(bad, 1), "name map 'bad' rule 'x' transposes a tensor of rank 3 (only 2-D "
                          "tensors can be transposed)");
  const char *const mixed[] = {"wte.w", "wpe.w"};
  bad[0] = {"x", mixed, 2, 1, false, false};
  EXPECT_EQ(save(bad, 1), "name map 'bad' rule 'x' concatenates 'wte.w' [16, 8] and 'wpe.w' "
                          "[4, 8] along axis 1");
  bad[0] = {"x", mixed, 2, 2, false, false};
  EXPECT_EQ(save(bad, 1), "name map 'bad' rule 'x' has axis 2 for parts of rank 2");
}

TEST_F(Checkpoint, ParamOutsideAllocation) {
  bmrt::ProgramInfo info = program->info;
  info.paramBytes -= 64;
  try {
    bmrt::saveCheckpoint(dir + "/x.safetensors", info, params.data(), nullptr);
    ADD_FAILURE() << "a param beyond paramBytes was accepted";
  } catch (const bmrt::Error &e) {
    EXPECT_HAS(e.what(), "program 'GPT': param 'ln_f.b' lies outside the params allocation");
  }
}

// The trainable group of a training program is layer-major (bmb-plan-memory,
// docs/distributed.md): a stacked param's layers sit one unit apart, with
// every other stacked param's slice of that layer in between. Checkpoint
// files are still whole tensors: saving from that layout writes the same
// bytes as from the back-to-back one, and loading fills the right slices.
std::unique_ptr<tiny_gpt2::Program> layerMajor(const tiny_gpt2::Program &from) {
  auto program = std::make_unique<tiny_gpt2::Program>();
  program->params = from.params;
  program->info = from.info;
  program->info.params = program->params.data();
  program->info.nameMaps = &program->hfMap;
  auto align = [](int64_t n) { return (n + 63) / 64 * 64; };
  int64_t at = 0, unit = 0;
  for (bmrt::ParamInfo &p : program->params)
    if (!p.stacked) {
      p.offset = at;
      at = align(at + bmrt::paramSliceBytes(p));
    } else {
      unit += align(bmrt::paramSliceBytes(p));
    }
  int64_t within = 0;
  for (bmrt::ParamInfo &p : program->params)
    if (p.stacked) {
      p.offset = at + within;
      p.layerStride = unit;
      within += align(bmrt::paramSliceBytes(p));
    }
  program->info.paramBytes = at + unit * program->params[2].shape[0];
  return program;
}

TEST_F(Checkpoint, LayerMajorParamsSaveAndLoadWholeTensors) {
  std::unique_ptr<tiny_gpt2::Program> strided = layerMajor(*program);
  ASSERT_GT(strided->params[2].layerStride, bmrt::paramSliceBytes(strided->params[2]));
  // The same values, placed slice by slice.
  std::vector<float> placed((size_t)strided->info.paramBytes / 4, 0.0f);
  for (size_t k = 0; k < program->params.size(); ++k) {
    const bmrt::ParamInfo &a = program->params[k], &b = strided->params[k];
    for (int64_t l = 0; l < bmrt::paramLayers(a); ++l)
      std::memcpy((char *)placed.data() + b.offset + l * bmrt::paramLayerStride(b),
                  (const char *)params.data() + a.offset + l * bmrt::paramSliceBytes(a),
                  (size_t)bmrt::paramSliceBytes(a));
  }
  for (const char *map : {(const char *)nullptr, "hf"}) {
    std::string name = map ? map : "ours";
    bmrt::saveCheckpoint(dir + "/" + name + "-flat.safetensors", program->info, params.data(),
                         map);
    bmrt::saveCheckpoint(dir + "/" + name + "-units.safetensors", strided->info, placed.data(),
                         map);
    std::ifstream f1(dir + "/" + name + "-flat.safetensors", std::ios::binary),
        f2(dir + "/" + name + "-units.safetensors", std::ios::binary);
    std::string b1((std::istreambuf_iterator<char>(f1)), {}),
        b2((std::istreambuf_iterator<char>(f2)), {});
    EXPECT_EQ(b1, b2) << name << ": the files differ";
    std::vector<float> back(placed.size(), std::nanf(""));
    bmrt::loadCheckpoint(dir + "/" + name + "-flat.safetensors", strided->info, back.data());
    for (const bmrt::ParamInfo &p : strided->params)
      for (int64_t l = 0; l < bmrt::paramLayers(p); ++l)
        ASSERT_EQ(0, std::memcmp((const char *)back.data() + p.offset +
                                     l * bmrt::paramLayerStride(p),
                                 (const char *)placed.data() + p.offset +
                                     l * bmrt::paramLayerStride(p),
                                 (size_t)bmrt::paramSliceBytes(p)))
            << name << ": " << p.name << " layer " << l;
  }
}

TEST_F(Checkpoint, LayerStrideShorterThanALayer) {
  std::unique_ptr<tiny_gpt2::Program> strided = layerMajor(*program);
  strided->params[2].layerStride = 16;
  try {
    bmrt::saveCheckpoint(dir + "/x.safetensors", strided->info, params.data(), nullptr);
    ADD_FAILURE() << "a layer stride shorter than a layer was accepted";
  } catch (const bmrt::Error &e) {
    EXPECT_HAS(e.what(), "param 'h.ln1.w' has a layer stride of 16 bytes, less than one layer's 32");
  }
}

} // namespace
