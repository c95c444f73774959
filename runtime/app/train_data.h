//===- app/train_data.h - The training corpus as a token file -------------===//
//
// Training reads a BMBTOK1 token file (bmb-tokenize). Text and JSONL are
// accepted too, for convenience: they are tokenized at start into a token
// file in $TMPDIR that is unlinked as soon as it is mapped, so batches,
// checksums and resume work exactly as for a token file (the same text gives
// the same ids, hence the same checksum on resume).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TRAIN_DATA_H
#define BMRT_APP_TRAIN_DATA_H

#include "bmrt/program.h"
#include "bmrt/tokens.h"

#include <memory>
#include <optional>
#include <string>

namespace bmrt {

struct TrainingData {
  std::unique_ptr<TokenFile> file;
  std::string tokenizerDir; // tokenizer files to copy into checkpoints ("" = none)
  std::string description;  // "corpus.txt (text, byte tokenizer)"
};

struct DataOptions {
  std::string path;                     // --data, else the job's data
  std::optional<std::string> tokenizer; // --tokenizer DIR|byte
  std::optional<std::string> loadDir;   // --load: a tokenizer may sit beside the weights
};

/// Opens (or tokenizes) the data; fails naming the file when it is missing,
/// empty, or holds ids outside the model's vocabulary.
TrainingData openTrainingData(const DataOptions &options, const ProgramInfo &program);

} // namespace bmrt

#endif // BMRT_APP_TRAIN_DATA_H
