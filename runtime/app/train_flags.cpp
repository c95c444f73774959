//===- app/train_flags.cpp - Parsing and documenting the train command line ===//
//
// Same conventions as flags.cpp: strict numbers, "--flag value" or
// "--flag=value", combinations that cannot mean anything are refused here
// rather than ignored at run time.
//
//===----------------------------------------------------------------------===//
#include "app/train_flags.h"

#include "bmrt/training.h"

#include <cmath>
#include <limits>
#include <string>

namespace bmrt {

TrainFlags parseTrainFlags(int argc, char **argv) {
  TrainFlags f;
  const int64_t kMax = std::numeric_limits<int32_t>::max();
  FlagReader flags(argc, argv);
  while (flags.next()) {
    const std::string &name = flags.name();
    auto value = [&] { return flags.value(); };
    auto noValue = [&] { flags.noValue(); };
    if (name == "--help" || name == "-h") {
      noValue();
      f.help = true;
    } else if (name == "--data") {
      f.data = value();
    } else if (name == "--tokenizer") {
      f.tokenizer = value();
    } else if (name == "--steps") {
      f.steps = parseInt(name, value(), 0, std::numeric_limits<int64_t>::max() / 2);
    } else if (name == "--lr") {
      f.lr = parseReal(name, value());
      if (!(*f.lr >= 0))
        throw UsageError("--lr must be >= 0");
    } else if (name == "--seed") {
      f.seed = parseSeed(name, value());
    } else if (name == "--load") {
      f.load = value();
    } else if (name == "--load-delta") {
      f.loadDelta = value();
    } else if (name == "--save") {
      f.save = value();
    } else if (name == "--save-every") {
      f.saveEvery = parseInt(name, value(), 0, std::numeric_limits<int64_t>::max() / 2);
      f.saveEverySet = true;
    } else if (name == "--keep") {
      f.keep = parseInt(name, value(), 1, kMax);
    } else if (name == "--resume") {
      noValue();
      f.resume = true;
    } else if (name == "--eval-every") {
      f.evalEvery = parseInt(name, value(), 0, std::numeric_limits<int64_t>::max() / 2);
      f.evalEverySet = true;
    } else if (name == "--eval-batches") {
      f.evalBatches = parseInt(name, value(), 1, kMax);
    } else if (name == "--val-fraction") {
      f.valFraction = parseReal(name, value());
      if (!(*f.valFraction >= 0 && *f.valFraction < 1))
        throw UsageError("--val-fraction must be in [0, 1)");
    } else if (name == "--log") {
      f.log = value();
    } else if (name == "--order") {
      std::string v = value();
      if (v != "random" && v != "sequential")
        throw UsageError("--order must be random or sequential, not '" + v + "'");
      f.order = v;
    } else if (name == "--threads") {
      f.threads = (int)parseInt(name, value(), 1, 4096);
    } else if (name == "--accum") {
      f.accum = parseInt(name, value(), 1, kMax);
    } else if (name == "--loss-scale") {
      f.lossScale = parseReal(name, value());
      int e;
      if (!(f.lossScale >= 1 && f.lossScale <= 0x1p100) || std::frexp(f.lossScale, &e) != 0.5)
        throw UsageError("--loss-scale must be a power of two in [1, 2^100]");
    } else if (name == "--eval-only") {
      noValue();
      f.evalOnly = true;
    } else if (name == "--eval-split") {
      std::string v = value();
      if (v == "held-out")
        f.evalSplit = EvalSplit::HeldOut;
      else if (v == "all")
        f.evalSplit = EvalSplit::All;
      else
        throw UsageError("--eval-split must be held-out or all, not '" + v + "'");
      f.evalSplitSet = true;
    } else if (name == "--dump-grads") {
      f.dumpGrads = value();
    } else if (name == "--dump-batch") {
      f.dumpBatch = value();
    } else if (name == "--print-every") {
      f.printEvery = parseInt(name, value(), 1, kMax);
      f.printEverySet = true;
    } else if (name == "--profile") {
      noValue();
      f.profile = true;
    } else if (name == "--deterministic") {
      noValue();
      f.deterministic = true;
    } else if (name == "--no-overlap") {
      noValue();
      f.noOverlap = true;
    } else if (name == "--comm-timeout") {
      f.commTimeout = parseReal(name, value());
      if (!(f.commTimeout > 0))
        throw UsageError("--comm-timeout must be > 0 seconds");
    } else if (name == "--rank-logs") {
      f.rankLogs = value();
    } else if (name == "--info") {
      noValue();
      f.info = true;
    } else {
      throw UsageError("unknown flag '" + name + "'");
    }
  }
  if (f.resume && !f.save)
    throw UsageError("--resume continues from the checkpoints in --save DIR; pass --save DIR");
  if (f.loadDelta && !f.load)
    throw UsageError("--load-delta FILE goes over a backbone: pass --load PATH too");
  if (f.resume && f.load)
    throw UsageError("--resume and --load exclude each other (--load starts a new run from "
                     "a checkpoint's parameters)");
  if (f.evalOnly) {
    if (!f.load)
      throw UsageError("--eval-only needs --load DIR|FILE (the parameters to evaluate)");
    if (f.save || f.resume || f.dumpGrads || f.dumpBatch || f.saveEvery || f.evalEvery)
      throw UsageError("--eval-only trains nothing: it takes no --save, --resume, "
                       "--dump-grads, --dump-batch, --save-every or --eval-every");
  } else if (f.evalSplitSet) {
    throw UsageError("--eval-split applies to --eval-only");
  }
  if (f.saveEvery && !f.save)
    throw UsageError("--save-every needs --save DIR");
  return f;
}

void applyJobDefaults(TrainFlags &f, const TrainInfo &train) {
  if (f.evalOnly)
    return;
  if (!f.saveEverySet && f.save)
    f.saveEvery = train.saveEvery;
  if (!f.evalEverySet && (!f.valFraction || *f.valFraction > 0))
    f.evalEvery = train.evalEvery;
  if (!f.printEverySet && train.logEvery > 0)
    f.printEvery = train.logEvery;
}

static const char *scheduleName(int s) {
  switch ((LrSchedule)s) {
  case LrSchedule::Constant: return "constant";
  case LrSchedule::Linear: return "linear";
  case LrSchedule::Cosine: return "cosine";
  }
  return "?";
}

void printTrainHelp(FILE *out, const char *argv0, const ProgramInfo &p) {
  const TrainInfo &t = *p.train;
  std::fprintf(out, "usage: %s --data FILE [flags]\n\n", argv0);
  std::fprintf(out, "Trains model %s with job '%s' of %s.\n", p.model, p.job, p.source);
  std::fprintf(out,
               "Batch %lld x sequence length %lld are fixed by the job at compile time "
               "(recompile to change them).\n",
               (long long)t.batch, (long long)t.seq);
  std::fprintf(out, "Optimizer %s, lr %g, schedule %s (warmup %lld)%s.\n\n",
               t.optimizer == OptimizerKind::AdamW ? "adamw" : "sgd", t.lr,
               scheduleName(t.schedule), (long long)t.warmup,
               t.clipNorm > 0 ? ", gradient clipping" : "");
  std::fprintf(out, "flags:\n");
  std::fprintf(out,
               "  --data FILE          a token file (bmb-tokenize), or text / .jsonl "
               "({\"text\": ...} per line) tokenized at start (default: %s)\n",
               t.data && *t.data ? t.data : "none");
  std::fprintf(out,
               "  --tokenizer DIR|byte tokenizer for text data (default: the job's, %s)\n",
               t.dataTokenizer && *t.dataTokenizer ? t.dataTokenizer : "none");
  std::fprintf(out, "  --steps N            optimizer steps; the run ends at step N (default %lld)\n",
               (long long)t.steps);
  std::fprintf(out, "  --lr X               base learning rate (default %g)\n", t.lr);
  std::fprintf(out,
               "  --accum N            micro-batches per step (default %lld)\n",
               (long long)t.accumulate);
  if (t.precision && std::string(t.precision) == "fp16")
    std::fprintf(out,
                 "  --loss-scale S       initial fp16 loss scale, a power of two (default %g; "
                 "halves on overflow, doubles after %lld good steps)\n",
                 t.lossScale, (long long)t.lossScaleWindow);
  std::fprintf(out,
               "  --seed S             parameter init, data order and dropout (default 0)\n");
  std::fprintf(out, "  --order ORDER        random or sequential batches (default random)\n");
  std::fprintf(out,
               "  --val-fraction F     the last F of the data is held out for evaluation "
               "(default 0.05)\n");
  std::fprintf(out,
               "  --load PATH          start from a checkpoint's parameters (our or Hugging "
               "Face names) instead of fresh ones\n");
  std::fprintf(out,
               "  --load-delta FILE    with --load: then a delta checkpoint (delta.safetensors) "
               "tuned on that backbone\n");
  std::fprintf(out,
               "  --save DIR           write checkpoints to DIR/step-NNNNNNN (at the end, "
               "every --save-every steps, on SIGINT/SIGTERM)\n");
  std::fprintf(out, "  --save-every N       also save every N steps (default %lld: %s)\n",
               (long long)t.saveEvery, t.saveEvery ? "the job's save_every" : "off");
  std::fprintf(out, "  --keep K             keep the newest K checkpoints (default 3)\n");
  std::fprintf(out,
               "  --resume             continue from the newest complete checkpoint in "
               "--save DIR, exactly as if never stopped\n");
  std::fprintf(out,
               "  --eval-every N       evaluate on the held-out split every N steps "
               "(default %lld: %s)\n",
               (long long)t.evalEvery, t.evalEvery ? "the job's eval_every" : "off");
  std::fprintf(out, "  --eval-batches N     batches per evaluation (default 8)\n");
  std::fprintf(out,
               "  --eval-only          with --load: print loss and perplexity, then exit\n");
  std::fprintf(out,
               "  --eval-split SPLIT   with --eval-only: held-out (default) or all (the "
               "whole file)\n");
  std::fprintf(out,
               "  --log FILE           metrics as JSON lines (step, loss, lr, grad_norm, "
               "tokens_per_s, elapsed; val_loss, val_ppl)\n");
  std::fprintf(out,
               "  --dump-grads FILE    after the first step's backward: the gradients as "
               ".safetensors (before clipping)\n");
  std::fprintf(out,
               "  --dump-batch DIR     the first step's inputs as DIR/tokens.npy and "
               "DIR/targets.npy (i32 [accum*B, T]; masked for a masked LM)\n");
  std::fprintf(out,
               "  --print-every N      progress line every N steps when not on a terminal "
               "(default %lld%s)\n",
               (long long)(t.logEvery > 0 ? t.logEvery : 10),
               t.logEvery > 0 ? ": the job's log_every" : "");
  std::fprintf(out,
               "  --threads N          CPU threads (default: OMP_NUM_THREADS or all cores; "
               "a resume is bit-identical with the same N)\n");
  std::fprintf(out, "  --profile            time per kernel kind at the end\n");
  std::fprintf(out,
               "\nSeveral ranks: mpirun -np N %s ... (as root add --allow-run-as-root "
               "--oversubscribe),\nor RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT per process. "
               "Each rank takes its own micro-batches\nof every step (N x accum per step); "
               "rank 0 prints, logs and saves.\n",
               argv0);
  std::fprintf(out,
               "  --deterministic      reductions sum in rank order and micro-batches are "
               "summed one by one:\n"
               "                       N ranks give the bits of one process with --accum N\n");
  std::fprintf(out,
               "  --no-overlap         reduce the gradients at the optimizer step, not layer "
               "by layer\n"
               "                       during the backward (zero = 0; the same sums); zero = 2\n"
               "                       and 3: wait for each layer's reduce-scatter at once, not\n"
               "                       during the next layer's backward; zero = 3: gather each\n"
               "                       layer's params when it starts, not ahead\n");
  std::fprintf(out,
               "  --comm-timeout S     a collective that takes longer stops the run "
               "(default 300)\n");
  std::fprintf(out,
               "  --rank-logs DIR      every rank writes its progress to DIR/rank-R.log\n");
  std::fprintf(out, "  --info               describe the program, then exit\n");
  std::fprintf(out, "  --help               this text\n");
}

} // namespace bmrt
