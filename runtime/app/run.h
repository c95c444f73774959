//===- app/run.h - One prompt through the entry points --------------------===//
//
// The two things an infer executable does with a prompt: a CausalLM
// generates (prefill, then decode token by token, sampling each), an encoder
// runs prefill once and prints a vector. Both time their entry calls for
// --profile and can dump every call's outputs (--dump).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_RUN_H
#define BMRT_APP_RUN_H

#include "app/entry_memory.h"
#include "app/token_stream.h"
#include "bmrt/program.h"
#include "bmrt/sampling.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace bmrt {

/// Totals over all prompts of a run, for --profile.
struct RunStats {
  int64_t prefillTokens = 0, decodeTokens = 0;
  double prefillSeconds = 0, decodeSeconds = 0;
};

struct GenerateOptions {
  int64_t maxTokens = 128;
  std::optional<int32_t> eos; // stop token; none when absent or --ignore-eos
  std::string dumpDir;        // "" = no dump
};

/// Fails unless 0 < prompt length <= the prefill capacity and every id is in
/// the vocabulary.
void checkPrompt(const ProgramInfo &program, const std::vector<int32_t> &prompt);

/// Writes the inputs of `entry` for `ids`, calls it, returns its wall time
/// (until its results are readable).
double callEntry(Context &ctx, const EntryPoint &entry, EntryMemory &mem, const int32_t *ids,
                 int64_t start, int64_t rows);

/// CausalLM: generates up to maxTokens after `prompt` (from position 0),
/// streaming each token; says on stderr when the context fills up.
void generateTokens(Context &ctx, const ProgramInfo &program, EntryMemory &mem,
                    Sampler &sampler, const std::vector<int32_t> &prompt,
                    const GenerateOptions &options, TokenStream &stream, RunStats &stats);

/// Encoder: runs prefill on `prompt` and prints one line of floats to `out`:
/// the output "pooled" if there is one, else the mean of "hidden" over the
/// valid rows.
void encodePrompt(Context &ctx, const ProgramInfo &program, EntryMemory &mem,
                  const std::vector<int32_t> &prompt, const std::string &dumpDir, FILE *out,
                  RunStats &stats);

} // namespace bmrt

#endif // BMRT_APP_RUN_H
