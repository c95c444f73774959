//===- app/tune_batch.h - Prompt-assembled examples into a tune entry -----===//
//
// The app's half of the tune program's contract (program.h, TuneInfo): the
// prompt plan read back from TuneInfo::prompt, each labelled example
// assembled once (bmrt::assemblePrompt), and a batch of them written into
// an entry's inputs: ids with soft tokens as vocab + k, padding (id 0, mask
// 0) to T, the mask positions, the labels (-100 for the padding examples
// that fill the last batch), the label words' ids and the calibration.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TUNE_BATCH_H
#define BMRT_APP_TUNE_BATCH_H

#include "app/tune_data.h"
#include "app/tune_memory.h"
#include "bmrt/program.h"
#include "bmrt/prompt.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bmrt {

/// The tune job's prompt, as the runtime uses it.
struct TunePrompt {
  PromptTemplate tmpl;
  std::vector<PromptVerbalizer> verbalizers; // one per mask
  std::vector<bool> calibrate;               // per mask: contextual calibration
  std::vector<std::string> fields;           // the fields the template reads
  std::vector<int32_t> labelWords;           // [M, C, W, K], -1 padded
};

/// Reads TuneInfo::prompt and tokenizes the label words. A word that needs
/// more than K tokens, or that the tokenizer cannot spell, fails naming it.
TunePrompt readTunePrompt(const ProgramInfo &program, const Tokenizer &tok);

struct TuneExample {
  AssembledPrompt prompt;
  int32_t label = -1;
};

/// Assembles every example (errors name its file:line).
std::vector<TuneExample> assembleExamples(const std::vector<LabelledExample> &examples,
                                          const TunePrompt &prompt, const Tokenizer &tok);

/// Writes `n` <= B examples (then padding examples) into the inputs of
/// `entry`, each input built in host memory and handed to `mem`.
void writeTuneInputs(const ProgramInfo &program, const TrainEntry &entry, TuneMemory &mem,
                     const TuneExample *const *batch, int64_t n, const TunePrompt &prompt,
                     const std::vector<double> &calibration);

/// Output `name` of `entry` ("losses", "scores", "word_probs") after a call,
/// as doubles; empty when the entry has no such output.
std::vector<double> readTuneOutput(const TrainEntry &entry, TuneMemory &mem, const char *name);

} // namespace bmrt

#endif // BMRT_APP_TUNE_BATCH_H
