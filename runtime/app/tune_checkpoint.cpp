//===- app/tune_checkpoint.cpp - Delta-only checkpoints of a tune run -----===//
#include "app/tune_checkpoint.h"
#include "app/train_checkpoint.h" // paramTableHash

#include "bmrt/checkpoint.h"
#include "bmrt/json.h"

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace bmrt {

namespace fs = std::filesystem;

namespace {

constexpr const char *kState = "tune_state.json";

void writeAtomic(const fs::path &file, const std::string &text) {
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out)
      fail("cannot write " + tmp.string());
  }
  fs::rename(tmp, file);
}

std::string readText(const fs::path &file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    fail("cannot read " + file.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string hex(uint64_t v) {
  char b[20];
  std::snprintf(b, sizeof b, "%016" PRIx64, v);
  return b;
}

} // namespace

std::string saveTuneCheckpoint(const std::string &dir, const ProgramInfo &program,
                               const Buffers &buf, const TuneState &state) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%07lld", (long long)state.step);
  const fs::path out = fs::path(dir) / name;
  fs::create_directories(out);
  fs::remove(out / kState); // a re-save of a step must not look complete half way
  saveDeltaCheckpoint((out / "delta.safetensors").string(), program, buf.params);
  saveOptimizerState((out / "optimizer.safetensors").string(), program, buf);
  std::string calib;
  for (size_t i = 0; i < state.calibration.size(); ++i) {
    char b[40];
    std::snprintf(b, sizeof b, "%s%.17g", i ? ", " : "", state.calibration[i]);
    calib += b;
  }
  char loss[40];
  std::snprintf(loss, sizeof loss, "%.17g", state.loss);
  writeAtomic(out / kState,
              "{\"step\": " + std::to_string(state.step) + ", \"seed\": " +
                  std::to_string(state.seed) + ", \"loss\": " + loss + ", \"model\": " +
                  json::quote(program.model) + ", \"job\": " + json::quote(program.job) +
                  ", \"param_hash\": \"" + hex(paramTableHash(program)) +
                  "\", \"calibration\": [" + calib + "]}\n");
  writeAtomic(fs::path(dir) / "latest", std::string(name) + "\n");
  return out.string();
}

std::optional<TuneState> loadTuneCheckpoint(const std::string &dir, const ProgramInfo &program,
                                            const Buffers &buf, std::string *path) {
  const fs::path latest = fs::path(dir) / "latest";
  if (!fs::exists(latest))
    return std::nullopt;
  std::string name = readText(latest);
  while (!name.empty() && (name.back() == '\n' || name.back() == '\r'))
    name.pop_back();
  const fs::path at = fs::path(dir) / name;
  if (!fs::exists(at / kState))
    fail(latest.string() + " names " + at.string() + ", which has no " + kState +
         " (an incomplete checkpoint)");
  json::Value s = json::parse(readText(at / kState), (at / kState).string());
  const json::Value *hash = s.get("param_hash");
  if (!hash || hash->string != hex(paramTableHash(program)))
    fail((at / kState).string() + " is a checkpoint of another program (param table hash " +
         (hash ? hash->string : std::string("missing")) + ", this program's " +
         hex(paramTableHash(program)) + ")");
  loadDeltaCheckpoint((at / "delta.safetensors").string(), program, buf.params);
  loadOptimizerState((at / "optimizer.safetensors").string(), program, buf);
  TuneState state;
  auto num = [&](const char *key) {
    const json::Value *v = s.get(key);
    if (!v || v->kind != json::Value::Kind::Number)
      fail((at / kState).string() + ": missing or mistyped '" + key + "'");
    return v->number;
  };
  state.step = (int64_t)num("step");
  state.seed = (uint64_t)num("seed");
  state.loss = num("loss");
  if (const json::Value *c = s.get("calibration"))
    for (const json::Value &x : c->array)
      state.calibration.push_back(x.number);
  if (path)
    *path = at.string();
  return state;
}

} // namespace bmrt
