//===- app/info.cpp - Describing a program from its tables ----------------===//
//
// Everything printed comes from the ProgramInfo tables, so --info answers
// "what is in this binary" without a checkpoint: useful before downloading
// weights, and to see which checkpoint layouts (name maps) it accepts.
//
//===----------------------------------------------------------------------===//
#include "app/info.h"
#include "app/tensors.h"
#include "bmrt/lowp.h"

#include <cstdio>
#include <string>
#include <sys/resource.h>

namespace bmrt {

// The peak resident set of this process: VmHWM of /proc/self/status, which
// starts afresh at exec. getrusage's ru_maxrss does not: on Linux a child
// keeps its parent's high-water mark across fork + exec, so a launcher with a
// large RSS (a Python benchmark with torch loaded) would be reported as ours.
double peakRssKiB() {
  if (FILE *f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    double kib = -1;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "VmHWM: %lf kB", &kib) == 1)
        break;
    std::fclose(f);
    if (kib >= 0)
      return kib;
  }
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage); // KiB on Linux
  return (double)usage.ru_maxrss;
}


static const char *inputKindName(InputKind k) {
  switch (k) {
  case InputKind::Tokens: return "tokens";
  case InputKind::TokenTypes: return "token types";
  case InputKind::Mask: return "mask";
  }
  return "?";
}

static double mib(int64_t bytes) { return (double)bytes / (1 << 20); }

static void printEntry(FILE *out, const EntryPoint &e) {
  std::fprintf(out, "entry %s: up to %lld rows\n", e.name, (long long)e.capacity);
  for (int i = 0; i < e.numInputs; i++)
    std::fprintf(out, "  input  %-16s %s (%s)\n", e.inputs[i].name,
                 describeTensor(e.inputs[i]).c_str(), inputKindName(e.inputKinds[i]));
  for (int i = 0; i < e.numOutputs; i++)
    std::fprintf(out, "  output %-16s %s\n", e.outputs[i].name,
                 describeTensor(e.outputs[i]).c_str());
}

static void printNameMap(FILE *out, const NameMap &m) {
  std::fprintf(out, "name map %s: %d rules\n", m.name, m.numRules);
  for (int i = 0; i < m.numRules; i++) {
    const NameRule &r = m.rules[i];
    std::string parts;
    for (int j = 0; j < r.numParts; j++)
      parts += (j ? ", " : "") + std::string(r.parts[j]);
    if (r.numParts > 1)
      parts = "concat(" + parts + "; axis " + std::to_string(r.axis) + ")";
    std::fprintf(out, "  %s = %s%s%s\n", r.external, parts.c_str(),
                 r.transpose ? " transposed" : "", r.tied ? " (tied: may be absent)" : "");
  }
}

static void printTrainInfo(FILE *out, const ProgramInfo &p) {
  const TrainInfo &t = *p.train;
  static const char *schedules[] = {"constant", "linear", "cosine"};
  std::fprintf(out,
               "train: batch %lld x seq %lld (fixed at compile time), %lld micro-batch%s per "
               "step\n",
               (long long)t.batch, (long long)t.seq, (long long)t.accumulate,
               t.accumulate == 1 ? "" : "es");
  if (t.optimizer == OptimizerKind::AdamW)
    std::fprintf(out, "optimizer: adamw (lr %g, betas (%g, %g), eps %g, weight decay %g)\n",
                 t.lr, t.beta1, t.beta2, t.eps, t.weightDecay);
  else
    std::fprintf(out, "optimizer: sgd (lr %g, momentum %g, weight decay %g)\n", t.lr,
                 t.momentum, t.weightDecay);
  std::fprintf(out, "schedule: %s (warmup %lld), %lld steps; clip %s\n",
               t.schedule >= 0 && t.schedule <= 2 ? schedules[t.schedule] : "?",
               (long long)t.warmup, (long long)t.steps,
               t.clipNorm > 0 ? std::to_string(t.clipNorm).c_str() : "none");
  std::fprintf(out, "data: %s (tokenizer %s)\n", t.data && *t.data ? t.data : "(none)",
               t.dataTokenizer && *t.dataTokenizer ? t.dataTokenizer : "(none)");
  std::fprintf(out, "memory plan (training): grads %.2f MiB + optimizer state %.2f MiB\n",
               mib(t.gradBytes), mib(t.optStateBytes));
  if (t.offloadOptimizer)
    std::fprintf(out,
                 "offload = optimizer: the optimizer state, plus an fp32 master copy of the "
                 "params and a gradient staging (%.2f MiB on one rank, 1/N each on N ranks "
                 "under zero = 1 or 2), is in host memory and AdamW runs on the host in "
                 "%lld-element chunks; on --target=host that is the same RAM (no saving), on "
                 "a GPU it leaves device memory\n",
                 mib(2 * t.optStateBytes), (long long)t.offloadChunk);
  if (t.zeroStage == 2)
    std::fprintf(out,
                 "zero = 2: on N ranks each holds 1/N of the grads, plus %.2f MiB of gradient "
                 "staging\n",
                 mib(t.gradStagingBytes));
  if (t.zeroStage == 3)
    std::fprintf(out,
                 "zero = 3: on N ranks each holds 1/N of the trainable params and grads, plus "
                 "%.2f MiB of param staging and %.2f MiB of gradient staging\n",
                 mib(t.paramStagingBytes), mib(t.gradStagingBytes));
  const std::string precision = t.precision ? t.precision : "fp32";
  if (precision == "bf16" || precision == "fp16") {
    char scaling[96] = "";
    if (precision == "fp16")
      std::snprintf(scaling, sizeof scaling, "; dynamic loss scale from %g, window %lld",
                    t.lossScale, (long long)t.lossScaleWindow);
    std::fprintf(out, "precision: %s GEMMs, fp32 master weights (%s weight copy %.2f MiB%s)%s\n",
                 precision.c_str(), precision.c_str(), mib(low_param_bytes(t)),
                 t.zeroStage == 3 ? ", of the param staging" : "", scaling);
  }
  const TrainEntry *entries[3] = {&t.forwardBackward, &t.optimizerStep, &t.evaluate};
  for (const TrainEntry *e : entries) {
    std::fprintf(out, "entry %s\n", e->name);
    for (int i = 0; i < e->numInputs; i++)
      std::fprintf(out, "  input  %-16s %s\n", e->inputs[i].name,
                   describeTensor(e->inputs[i]).c_str());
    for (int i = 0; i < e->numOutputs; i++)
      std::fprintf(out, "  output %-16s %s\n", e->outputs[i].name,
                   describeTensor(e->outputs[i]).c_str());
  }
}

/// What the program does with the model, for the `model:` line. Train
/// programs always carry ModelKind::CausalLM, so their objective (and, for
/// tune programs, the head the verbalizer scores) says more.
static const char *modelRole(const ProgramInfo &p) {
  if (p.tune)
    return p.tune->headParam && *p.tune->headParam ? "prompt classifier over the LM head"
                                                   : "prompt classifier over a headless encoder";
  if (p.train)
    return p.train->objective == TrainObjective::MaskedLM ? "masked LM" : "causal LM";
  return p.kind == ModelKind::CausalLM ? "causal LM" : "encoder";
}

void printProgramInfo(FILE *out, const ProgramInfo &p) {
  bool lm = p.kind == ModelKind::CausalLM;
  std::fprintf(out, "model: %s (%s, vocab %lld, ctx %lld)\n", p.model, modelRole(p),
               (long long)p.vocab, (long long)p.ctx);
  std::fprintf(out, "job: %s\n", p.job);
  std::fprintf(out, "source: %s\n", p.source);
  std::fprintf(out, "checkpoint: %s\n", p.from && *p.from ? p.from : "(none)");
  std::fprintf(out, "tokenizer: %s\n",
               p.tokenizer && *p.tokenizer ? p.tokenizer : "(from the checkpoint directory)");
  if (lm && !p.train)
    std::fprintf(out, "sampling: %s (temperature %g, top_k %lld, top_p %g)\n",
                 p.sampling && *p.sampling ? p.sampling : "greedy", p.temperature,
                 (long long)p.topK, p.topP);
  int64_t count = 0, bytes = 0, frozen = 0;
  for (int i = 0; i < p.numParams; i++) {
    int64_t n = 1;
    for (int d = 0; d < p.params[i].rank; d++)
      n *= p.params[i].shape[d];
    count += n;
    bytes += n * dtypeBytes(p.params[i].dtype);
    frozen += p.params[i].frozen ? n : 0;
  }
  std::fprintf(out, "params: %d tensors, %lld values (%lld frozen), %lld bytes\n", p.numParams,
               (long long)count, (long long)frozen, (long long)bytes);
  for (int i = 0; i < p.numParams; i++) {
    const ParamInfo &q = p.params[i];
    std::string shape;
    for (int d = 0; d < q.rank; d++)
      shape += (d ? ", " : "") + std::to_string(q.shape[d]);
    std::fprintf(out, "  %-28s %s[%s]%s%s\n", q.name, dtypeName(q.dtype), shape.c_str(),
                 q.stacked ? " stacked" : "", q.frozen ? " frozen" : "");
  }
  std::fprintf(out,
               "memory plan: params %.2f MiB + state %.2f MiB + activations %.2f MiB = "
               "%.2f MiB\n",
               mib(p.paramBytes), mib(p.stateBytes), mib(p.activationBytes),
               mib(p.paramBytes + p.stateBytes + p.activationBytes));
  for (int i = 0; i < p.numEntries; i++)
    printEntry(out, p.entries[i]);
  if (p.train)
    printTrainInfo(out, p);
  if (p.tune) {
    const TuneInfo &t = *p.tune;
    std::fprintf(out,
                 "tune: %lld label(s), %lld mask(s), <= %lld word(s) of <= %lld token(s); %lld soft "
                 "token(s); embedding %s, head %s\n",
                 (long long)t.numLabels, (long long)t.numMasks, (long long)t.maxWords,
                 (long long)t.maxWordTokens, (long long)t.numSoft, t.embeddingParam,
                 *t.headParam ? t.headParam : "(none: hidden states)");
    if (*t.labelParam)
      std::fprintf(out, "soft verbalizer: %s, starting from rows of %s\n", t.labelParam,
                   t.labelInitParam);
    std::fprintf(out, "prompt plan: %s\n", t.prompt);
    std::fprintf(out, "data: %s\n", t.data && *t.data ? t.data : "(none)");
  }
  if (p.numNameMaps == 0)
    std::fprintf(out, "name maps: none (checkpoints use our names)\n");
  for (int i = 0; i < p.numNameMaps; i++)
    printNameMap(out, p.nameMaps[i]);
}

} // namespace bmrt
