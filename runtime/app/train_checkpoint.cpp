//===- app/train_checkpoint.cpp - step-N directories, latest, resume ------===//
//
// See train_checkpoint.h for the layout. 64-bit values that JSON numbers
// (doubles) cannot hold exactly -- seed, checksums, the param hash -- are
// written as decimal strings.
//
//===----------------------------------------------------------------------===//
#include "app/train_checkpoint.h"

#include "app/gathered_params.h"
#include "app/kept_params.h"
#include "app/tensors.h"
#include "bmrt/checkpoint.h"
#include "bmrt/comm.h"
#include "bmrt/json.h"
#include "io/atomic_file.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace bmrt {

namespace fs = std::filesystem;

namespace {

constexpr const char *kStateFile = "trainer_state.json";
constexpr const char *kLatest = "latest";
// Tokenizer files a Hugging Face loader (and ours) looks for.
constexpr const char *kTokenizerFiles[] = {"tokenizer.json", "tokenizer_config.json",
                                           "special_tokens_map.json", "vocab.json",
                                           "merges.txt", "vocab.txt"};

std::string stepDirName(int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%07lld", (long long)step);
  return name;
}

// The step of a "step-N" directory name, or -1.
int64_t stepOf(const std::string &name) {
  if (name.size() < 6 || name.compare(0, 5, "step-") != 0)
    return -1;
  int64_t v = 0;
  for (size_t i = 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || v > INT64_MAX / 10 - 10)
      return -1;
    v = v * 10 + (name[i] - '0');
  }
  return v;
}

void writeAtomic(const std::string &file, const std::string &text) {
  io::AtomicFile f(file);
  f.write(text.data(), text.size());
  f.commit();
}

std::string readText(const std::string &file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    fail(file + ": cannot read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string u64(uint64_t v) { return "\"" + std::to_string(v) + "\""; }

std::string real(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

std::string stateJson(const TrainerState &s) {
  std::string j = "{\n";
  j += "  \"step\": " + std::to_string(s.step) + ",\n";
  j += "  \"seed\": " + u64(s.seed) + ",\n";
  j += "  \"data\": {\"step\": " + u64(s.data.step) + ", \"seed\": " + u64(s.data.seed) +
       ", \"file_checksum\": " + u64(s.data.fileChecksum) +
       ", \"file_count\": " + u64(s.data.fileCount) + "},\n";
  j += "  \"order\": " + json::quote(s.order) + ",\n";
  j += "  \"val_fraction\": " + real(s.valFraction) + ",\n";
  j += "  \"accum\": " + std::to_string(s.accum) + ",\n";
  j += "  \"ranks\": " + std::to_string(s.ranks) + ",\n";
  j += "  \"optimizer_partition\": " + std::to_string(s.partitionSize) + ",\n";
  j += "  \"group_layout\": " + json::quote(s.groupLayout) + ",\n";
  j += "  \"lr\": " + real(s.lr) + ",\n";
  j += "  \"schedule\": " + std::to_string(s.schedule) + ",\n";
  j += "  \"warmup\": " + std::to_string(s.warmup) + ",\n";
  j += "  \"total_steps\": " + std::to_string(s.totalSteps) + ",\n";
  j += "  \"loss\": " + (std::isfinite(s.loss) ? real(s.loss) : std::string("null")) + ",\n";
  j += "  \"model\": " + json::quote(s.model) + ",\n";
  j += "  \"job\": " + json::quote(s.job) + ",\n";
  if (s.lossScale > 0)
    j += "  \"loss_scale\": {\"scale\": " + real(s.lossScale) +
         ", \"good_steps\": " + std::to_string(s.lossScaleGood) +
         ", \"skipped_steps\": " + std::to_string(s.skippedSteps) + "},\n";
  j += "  \"param_hash\": " + u64(s.paramHash) + "\n";
  return j + "}\n";
}

const json::Value &member(const json::Value &v, const char *key, const std::string &file) {
  const json::Value *m = v.get(key);
  if (!m)
    fail(file + ": missing \"" + key + "\"");
  return *m;
}

uint64_t u64Member(const json::Value &v, const char *key, const std::string &file) {
  const json::Value &m = member(v, key, file);
  if (m.kind != json::Value::Kind::String || m.string.empty() ||
      m.string.find_first_not_of("0123456789") != std::string::npos)
    fail(file + ": \"" + key + "\" is not an unsigned integer string");
  return std::strtoull(m.string.c_str(), nullptr, 10);
}

double numMember(const json::Value &v, const char *key, const std::string &file) {
  const json::Value &m = member(v, key, file);
  if (m.kind == json::Value::Kind::Null)
    return NAN;
  if (m.kind != json::Value::Kind::Number)
    fail(file + ": \"" + key + "\" is not a number");
  return m.number;
}

std::string strMember(const json::Value &v, const char *key, const std::string &file) {
  const json::Value &m = member(v, key, file);
  if (m.kind != json::Value::Kind::String)
    fail(file + ": \"" + key + "\" is not a string");
  return m.string;
}

TrainerState readState(const std::string &file) {
  json::Value v = json::parse(readText(file), file);
  TrainerState s;
  s.step = (int64_t)numMember(v, "step", file);
  s.seed = u64Member(v, "seed", file);
  const json::Value &d = member(v, "data", file);
  s.data.step = u64Member(d, "step", file);
  s.data.seed = u64Member(d, "seed", file);
  s.data.fileChecksum = u64Member(d, "file_checksum", file);
  s.data.fileCount = u64Member(d, "file_count", file);
  s.order = strMember(v, "order", file);
  s.valFraction = numMember(v, "val_fraction", file);
  s.accum = (int64_t)numMember(v, "accum", file);
  // Absent in checkpoints of one-process runs before issue 5.
  s.ranks = v.get("ranks") ? (int64_t)numMember(v, "ranks", file) : 1;
  s.partitionSize =
      v.get("optimizer_partition") ? (int64_t)numMember(v, "optimizer_partition", file) : 0;
  s.groupLayout = v.get("group_layout") ? strMember(v, "group_layout", file) : "";
  if (s.ranks < 1 || s.partitionSize < 0)
    fail(file + ": \"ranks\" or \"optimizer_partition\" is out of range");
  s.lr = numMember(v, "lr", file);
  s.schedule = (int)numMember(v, "schedule", file);
  s.warmup = (int64_t)numMember(v, "warmup", file);
  s.totalSteps = (int64_t)numMember(v, "total_steps", file);
  s.loss = numMember(v, "loss", file);
  s.model = strMember(v, "model", file);
  s.job = strMember(v, "job", file);
  s.paramHash = u64Member(v, "param_hash", file);
  if (const json::Value *ls = v.get("loss_scale")) {
    s.lossScale = numMember(*ls, "scale", file);
    s.lossScaleGood = (int64_t)numMember(*ls, "good_steps", file);
    s.skippedSteps = (int64_t)numMember(*ls, "skipped_steps", file);
  }
  return s;
}

const char *modelMapName(const ProgramInfo &program) {
  for (int i = 0; i < program.numNameMaps; ++i)
    if (std::strcmp(program.nameMaps[i].name, "hf") == 0)
      return "hf";
  return nullptr;
}

// Step directories in dir, newest first.
std::vector<std::pair<int64_t, std::string>> stepDirs(const std::string &dir) {
  std::vector<std::pair<int64_t, std::string>> out;
  std::error_code ec;
  for (const fs::directory_entry &e : fs::directory_iterator(dir, ec)) {
    int64_t step = stepOf(e.path().filename().string());
    if (step >= 0 && e.is_directory())
      out.push_back({step, e.path().string()});
  }
  std::sort(out.begin(), out.end(), [](auto &a, auto &b) { return a.first > b.first; });
  return out;
}

void prune(const std::string &dir, int64_t keep, const std::string &newest) {
  int64_t kept = 0;
  for (const auto &[step, path] : stepDirs(dir)) {
    bool complete = fs::exists(fs::path(path) / kStateFile);
    if (path == newest || (complete && kept < keep)) {
      kept += complete;
      continue;
    }
    // An incomplete directory older than the newest complete one is a
    // leftover of an interrupted save: it goes too.
    std::error_code ec;
    fs::remove_all(path, ec);
  }
}

} // namespace

uint64_t paramTableHash(const ProgramInfo &program) {
  std::string table;
  for (int i = 0; i < program.numParams; ++i) {
    const ParamInfo &p = program.params[i];
    table += p.name;
    table += '\0';
    table += std::to_string((int)p.dtype) + ":" + (p.frozen ? "f" : "t") + ":";
    for (int d = 0; d < p.rank; ++d)
      table += std::to_string(p.shape[d]) + ",";
    table += ';';
  }
  return tokenChecksum(table.data(), table.size());
}

std::string optimizerPartitionFile(int64_t rank, int64_t ranks) {
  char name[64];
  std::snprintf(name, sizeof name, "optimizer-%05lld-of-%05lld.safetensors", (long long)rank,
                (long long)ranks);
  return name;
}

std::string saveTrainCheckpoint(const std::string &dir, const ProgramInfo &program,
                                const Buffers &buf, TrainerState state,
                                const std::string &tokenizerDir, int64_t keep, Comm &comm) {
  const bool lead = comm.rank() == 0;
  const bool partitioned = buf.part.end - buf.part.begin < program.train->groupElems;
  const std::string name = stepDirName(state.step);
  const fs::path out = fs::path(dir) / name;
  if (lead) {
    fs::create_directories(out);
    // A re-save of the same step must not look complete half way.
    fs::remove(out / kStateFile);
  }
  comm.barrier(); // the directory exists, and is incomplete
  if (partitioned)
    saveOptimizerPartition((out / optimizerPartitionFile(comm.rank(), comm.size())).string(),
                           program, buf);
  // The params files are whole. Under zero = 3 every rank takes part in
  // them, each trainable param gathered in turn (app/gathered_params.h);
  // otherwise rank 0 holds them all.
  if (lead || paramsPartitioned(program, buf)) {
    GatheredParams params(program, buf, comm);
    saveCheckpoint((out / "model.safetensors").string(), program, params,
                   modelMapName(program));
    // A partly frozen model (delta tuning) also gets its trained tensors
    // alone, pinned to the frozen backbone (io/delta_checkpoint.cpp).
    bool anyFrozen = false;
    for (int k = 0; k < program.numParams; ++k)
      anyFrozen |= !isDeltaTensor(program.params[k]);
    if (anyFrozen)
      saveDeltaCheckpoint((out / "delta.safetensors").string(), program, params);
  }
  if (lead) {
    if (!partitioned)
      saveOptimizerState((out / "optimizer.safetensors").string(), program, buf);
    if (!tokenizerDir.empty())
      for (const char *f : kTokenizerFiles)
        if (fs::exists(fs::path(tokenizerDir) / f))
          fs::copy_file(fs::path(tokenizerDir) / f, out / f,
                        fs::copy_options::overwrite_existing);
  }
  comm.barrier(); // every rank's part is on disk
  if (lead) {
    state.ranks = comm.size();
    state.partitionSize = partitioned ? buf.part.size : 0;
    writeAtomic((out / kStateFile).string(), stateJson(state));
    writeAtomic((fs::path(dir) / kLatest).string(), name + "\n");
    prune(dir, keep, out.string());
  }
  return out.string();
}

std::optional<ResumePoint> loadResumePoint(const std::string &dir, const ProgramInfo &program,
                                           const Buffers &buf, FILE *notes, Comm &comm) {
  std::vector<std::string> candidates;
  std::string latestNote;
  const fs::path latest = fs::path(dir) / kLatest;
  if (fs::exists(latest)) {
    std::string name = readText(latest.string());
    while (!name.empty() && (name.back() == '\n' || name.back() == '\r'))
      name.pop_back();
    if (stepOf(name) >= 0)
      candidates.push_back((fs::path(dir) / name).string());
    else
      latestNote = latest.string() + " does not name a step directory";
  }
  for (const auto &[step, path] : stepDirs(dir))
    if (std::find(candidates.begin(), candidates.end(), path) == candidates.end())
      candidates.push_back(path);
  const uint64_t hash = paramTableHash(program);
  std::string skipped = latestNote; // why the first choice was not taken
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string &path = candidates[i];
    bool voted = false;
    try {
      if (!fs::exists(path))
        fail("it does not exist");
      if (!fs::exists(fs::path(path) / kStateFile))
        fail(std::string("incomplete (no ") + kStateFile + ")");
      TrainerState s = readState((fs::path(path) / kStateFile).string());
      if (s.paramHash != hash || s.model != program.model)
        throw std::invalid_argument(path + " is a checkpoint of model '" + s.model +
                                    "' (job " + s.job + ") with another parameter table, not " +
                                    program.model + "'s");
      loadCheckpoint((fs::path(path) / "model.safetensors").string(), program,
                     KeptParams(program, buf));
      if (s.partitionSize > 0) {
        // Partition files are ranges of the group in its order of then: a
        // complete checkpoint this build cannot continue (not skipped).
        if (s.groupLayout != TrainerState::kGroupLayout)
          throw std::invalid_argument(
              path + ": its optimizer partitions follow the " +
              (s.groupLayout.empty() ? std::string("param-major") : "'" + s.groupLayout + "'") +
              " order of the trainable group, not this bmbc's layer-major one (resume it "
              "with the bmbc that wrote it, or start again with --load " +
              (fs::path(path) / "model.safetensors").string() + ")");
        std::vector<std::string> files;
        for (int64_t r = 0; r < s.ranks; ++r)
          files.push_back((fs::path(path) / optimizerPartitionFile(r, s.ranks)).string());
        loadOptimizerPartitions(files, s.partitionSize, program, buf);
      } else {
        loadOptimizerState((fs::path(path) / "optimizer.safetensors").string(), program, buf);
      }
      // Under zero = 3 each rank read its own part of the params; a value
      // only one rank checks (a tied tensor) may fail there alone. The
      // ranks agree before any of them takes the checkpoint.
      voted = true;
      if (comm.max(0.0) != 0)
        fail("another rank could not load it");
      if (!skipped.empty())
        std::fprintf(notes, "note: resuming from %s, the newest complete checkpoint (%s)\n",
                     path.c_str(), skipped.c_str());
      return ResumePoint{path, s};
    } catch (const std::invalid_argument &e) {
      fail(e.what());
    } catch (const Error &e) {
      if (!voted)
        comm.max(1.0); // this rank's vote against it
      std::fprintf(notes, "warning: skipping checkpoint %s: %s\n", path.c_str(), e.what());
      if (skipped.empty())
        skipped = (i == 0 && fs::exists(latest) ? "latest pointed at " : "skipped ") + path +
                  ": " + e.what();
    }
  }
  return std::nullopt;
}

void saveGradients(const std::string &file, const ProgramInfo &program, const Buffers &buf) {
  std::vector<uint8_t> asParams((size_t)program.paramBytes, 0);
  for (int i = 0; i < program.numParams; ++i) {
    const ParamInfo &p = program.params[i];
    if (p.gradOffset < 0)
      continue;
    // Gradient and param have the same layout (the group's, layer-major).
    const int64_t layers = paramLayers(p), slice = paramSliceBytes(p), stride = paramLayerStride(p);
    for (int64_t l = 0; l < layers; ++l)
      std::memcpy(asParams.data() + p.offset + l * stride,
                  (const uint8_t *)buf.grads + p.gradOffset + l * stride, (size_t)slice);
  }
  saveCheckpoint(file, program, asParams.data(), modelMapName(program));
}

} // namespace bmrt
