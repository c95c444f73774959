//===- app/train_checkpoint.h - Saving and resuming a training run --------===//
//
//   DIR/step-NNNNNNN/model.safetensors      params (Hugging Face names when the
//                                           program has an "hf" map)
//   DIR/step-NNNNNNN/optimizer.safetensors  <param>.exp_avg / .exp_avg_sq ...
//   DIR/step-NNNNNNN/optimizer-RRRRR-of-NNNNN.safetensors
//                                           instead, under ZeRO on N ranks: rank
//                                           R's partition (flat exp_avg, ...);
//                                           any world size resumes from either
//   DIR/step-NNNNNNN/trainer_state.json     step, seed, data position, settings,
//                                           model/job and a hash of the param table
//   DIR/step-NNNNNNN/<tokenizer files>      when the data came with a tokenizer dir
//   DIR/latest                              "step-NNNNNNN": the newest complete one
//
// Every file is written atomically, trainer_state.json last (a directory
// without it is incomplete), then `latest`; older checkpoints beyond
// --keep are removed only after that. Resuming takes `latest`, or when it
// points at something missing, incomplete or unreadable, the newest step
// directory that loads, and says so.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TRAIN_CHECKPOINT_H
#define BMRT_APP_TRAIN_CHECKPOINT_H

#include "bmrt/comm.h"
#include "bmrt/program.h"
#include "bmrt/tokens.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace bmrt {

/// What a checkpoint records besides tensors: enough to continue the run
/// exactly (step, seed, data position) and to refuse another model's state.
struct TrainerState {
  int64_t step = 0;          // optimizer updates done
  uint64_t seed = 0;
  DataState data;
  std::string order;         // "random" / "sequential"
  double valFraction = 0;
  int64_t accum = 1;         // micro-batches per step and rank
  int64_t ranks = 1;         // the run's world size
  int64_t partitionSize = 0; // ZeRO: elements per optimizer-state partition file (0: one whole file)
  // The order of the trainable group that partition files follow:
  // "layer-major" (units, docs/distributed.md); "" in checkpoints of the
  // param-major group before it, whose partition files this bmbc refuses.
  std::string groupLayout = kGroupLayout;
  static constexpr const char *kGroupLayout = "layer-major";
  double lr = 0;             // base learning rate
  int schedule = 0;          // LrSchedule
  int64_t warmup = 0, totalSteps = 0;
  double loss = 0;           // of the last step
  std::string model, job;
  uint64_t paramHash = 0;
  // fp16 loss scaling (loss_scale.h); lossScale 0: none (absent from the file).
  double lossScale = 0;
  int64_t lossScaleGood = 0, skippedSteps = 0;
};

/// FNV-1a over the param table (names, dtypes, shapes, frozen): two programs
/// with the same hash read each other's checkpoints.
uint64_t paramTableHash(const ProgramInfo &program);

/// Writes DIR/step-N (see above), then DIR/latest, then prunes to `keep`;
/// returns the checkpoint's directory. Every rank of `comm` calls it with
/// its host() buffers: each writes its optimizer-state partition (ZeRO) and
/// rank 0 the rest (under zero = 3 from params gathered one at a time,
/// app/gathered_params.h), and trainer_state.json only once all parts are
/// on disk.
std::string saveTrainCheckpoint(const std::string &dir, const ProgramInfo &program,
                                const Buffers &buf, TrainerState state,
                                const std::string &tokenizerDir, int64_t keep, Comm &comm);

/// Loads the checkpoint to resume from in DIR into params and optimizer state
/// and returns its state and directory; none when DIR has no checkpoint.
/// Under zero = 3 each rank reads only the params it holds, into its
/// partition (app/kept_params.h). Fails on a checkpoint of another model
/// (param table hash) rather than falling back. Every rank of `comm` calls
/// it and they take the same checkpoint: one that fails to load on any rank
/// is skipped by all. Skipped checkpoints are reported on `notes` (each rank
/// reads them; only rank 0 says so on stderr).
struct ResumePoint {
  std::string path;
  TrainerState state;
};
std::optional<ResumePoint> loadResumePoint(const std::string &dir, const ProgramInfo &program,
                                           const Buffers &buf, FILE *notes, Comm &comm);

/// --dump-grads: every param's gradient as a safetensors file, laid out like
/// the params (Hugging Face names when the program has an "hf" map); frozen
/// params have no gradient and are written as zeros.
void saveGradients(const std::string &file, const ProgramInfo &program, const Buffers &buf);

} // namespace bmrt

#endif // BMRT_APP_TRAIN_CHECKPOINT_H
