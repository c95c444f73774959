//===- app/generate.cpp - Prefill, then sample and decode -----------------===//
//
// Positions: the prompt fills 0..n-1; the token sampled after a call that
// ended at position p sits at p+1 and is fed to decode at that position. The
// KV cache holds as many rows as prefill takes, so decode can run while its
// position is below that; the last token sampled then is still printed.
// Sampling draws with step = index of the token in this generation, so a
// prompt gives the same tokens whether it came from --prompt or a stdin line.
//
//===----------------------------------------------------------------------===//
#include "app/run.h"
#include "app/tensors.h"

#include <algorithm>
#include <chrono>

namespace bmrt {

static double seconds() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

void checkPrompt(const ProgramInfo &program, const std::vector<int32_t> &prompt) {
  int64_t capacity = program.entries[0].capacity;
  if (prompt.empty())
    fail("the prompt is empty (it has no tokens)");
  if ((int64_t)prompt.size() > capacity)
    fail("prompt has " + std::to_string(prompt.size()) + " tokens; the context of " +
         program.model + " is " + std::to_string(capacity));
  for (size_t i = 0; i < prompt.size(); i++)
    if (prompt[i] < 0 || prompt[i] >= program.vocab)
      fail("token id " + std::to_string(prompt[i]) + " (position " + std::to_string(i) +
           " of the prompt) is outside the vocabulary of " + program.model + " (" +
           std::to_string(program.vocab) + " tokens)");
}

double callEntry(Context &ctx, const EntryPoint &entry, EntryMemory &mem, const int32_t *ids,
                 int64_t start, int64_t rows) {
  mem.writeInputs(entry, ids, rows);
  double t0 = seconds();
  mem.call(ctx, entry, start, rows);
  return seconds() - t0;
}

void generateTokens(Context &ctx, const ProgramInfo &program, EntryMemory &mem,
                    Sampler &sampler, const std::vector<int32_t> &prompt,
                    const GenerateOptions &options, TokenStream &stream, RunStats &stats) {
  checkPrompt(program, prompt);
  const EntryPoint &prefill = program.entries[0], &decode = program.entries[1];
  const int64_t limit = std::min(program.ctx, prefill.capacity); // rows of the KV cache
  const int64_t n = (int64_t)prompt.size();

  stats.prefillSeconds += callEntry(ctx, prefill, mem, prompt.data(), 0, n);
  stats.prefillTokens += n;
  if (!options.dumpDir.empty())
    dumpEntryOutputs(options.dumpDir, 0, prefill, mem, n);
  if (options.maxTokens == 0) {
    stream.finish();
    return;
  }

  int64_t position = n, generated = 0;
  int32_t token = mem.sample(ctx, sampler, prefill.outputs[0], 0);
  while (true) {
    if (options.eos && token == *options.eos)
      break;
    stream.put(token);
    generated++;
    if (generated >= options.maxTokens)
      break;
    if (position >= limit) {
      std::fprintf(stderr, "note: stopped after %lld tokens: the context of %s (%lld tokens) is full\n",
                   (long long)generated, program.model, (long long)limit);
      break;
    }
    // A device may draw the next token within the step (decodeSeconds then
    // holds the draw too).
    mem.expectSample(sampler, decode.outputs[0], (uint64_t)generated);
    stats.decodeSeconds += callEntry(ctx, decode, mem, &token, position, 1);
    stats.decodeTokens += 1;
    if (!options.dumpDir.empty())
      dumpEntryOutputs(options.dumpDir, generated, decode, mem, 1);
    position++;
    token = mem.sample(ctx, sampler, decode.outputs[0], (uint64_t)generated);
  }
  stream.finish();
}

} // namespace bmrt
