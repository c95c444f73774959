//===- app/encode.cpp - An encoder's prompt to one vector -----------------===//
//
// Encoders (BERT-like) have no decode: one prefill gives hidden states. The
// printed vector is the model's own pooled output when it has one (it is what
// the checkpoint was trained to expose), else the mean over the valid rows of
// "hidden" (padding rows excluded), a common sentence embedding.
//
//===----------------------------------------------------------------------===//
#include "app/run.h"
#include "app/tensors.h"

namespace bmrt {

void encodePrompt(Context &ctx, const ProgramInfo &program, EntryMemory &mem,
                  const std::vector<int32_t> &prompt, const std::string &dumpDir, FILE *out,
                  RunStats &stats) {
  checkPrompt(program, prompt);
  const EntryPoint &prefill = program.entries[0];
  const int64_t n = (int64_t)prompt.size();
  stats.prefillSeconds += callEntry(ctx, prefill, mem, prompt.data(), 0, n);
  stats.prefillTokens += n;
  if (!dumpDir.empty())
    dumpEntryOutputs(dumpDir, 0, prefill, mem, n);

  const TensorRef *pooled = findOutput(prefill, "pooled");
  const TensorRef *t = pooled ? pooled : findOutput(prefill, "hidden");
  if (t->dtype != DType::F32)
    fail(std::string("output ") + t->name + " of " + program.model + " is " +
         describeTensor(*t) + "; the infer app prints f32 vectors only");
  ValidRows v = mem.readOutput(*t, n);
  const float *x = (const float *)v.bytes.data();
  int64_t count = (int64_t)(v.bytes.size() / sizeof(float));
  int64_t width = v.rank > 0 ? v.shape[v.rank - 1] : 1;
  std::vector<double> line((size_t)width, 0.0);
  if (pooled && count != width)
    fail(std::string("output pooled of ") + program.model + " is " + describeTensor(*t) +
         "; expected one vector");
  // hidden: the mean over every valid row (pooled has exactly one).
  int64_t rows = count / width;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < width; c++)
      line[c] += x[r * width + c];
  for (int64_t c = 0; c < width; c++)
    std::fprintf(out, c ? " %.9g" : "%.9g", line[c] / (double)rows);
  std::fputc('\n', out);
  std::fflush(out);
}

} // namespace bmrt
