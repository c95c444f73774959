//===- app/tune_flags.cpp - The tune executable's command line ------------===//
#include "app/tune_flags.h"

namespace bmrt {

TuneFlags parseTuneFlags(int argc, char **argv) {
  TuneFlags f;
  FlagReader r(argc, argv);
  const int64_t kMax = int64_t(1) << 40;
  while (r.next()) {
    const std::string &name = r.name();
    if (name == "--help" || name == "-h") {
      r.noValue();
      f.help = true;
    } else if (name == "--data") {
      f.data = r.value();
    } else if (name == "--val") {
      f.val = r.value();
    } else if (name == "--val-fraction") {
      f.valFraction = parseReal(name, r.value());
      if (*f.valFraction < 0 || *f.valFraction >= 1)
        throw UsageError("--val-fraction must be in [0, 1)");
    } else if (name == "--steps") {
      f.steps = parseInt(name, r.value(), 0, kMax);
    } else if (name == "--lr") {
      f.lr = parseReal(name, r.value());
      if (*f.lr < 0)
        throw UsageError("--lr must be >= 0");
    } else if (name == "--seed") {
      f.seed = parseSeed(name, r.value());
    } else if (name == "--load") {
      f.load = r.value();
    } else if (name == "--load-delta") {
      f.loadDelta = r.value();
    } else if (name == "--save") {
      f.save = r.value();
    } else if (name == "--save-every") {
      f.saveEvery = parseInt(name, r.value(), 1, kMax);
    } else if (name == "--resume") {
      r.noValue();
      f.resume = true;
    } else if (name == "--eval-every") {
      f.evalEvery = parseInt(name, r.value(), 1, kMax);
    } else if (name == "--eval-only") {
      r.noValue();
      f.evalOnly = true;
    } else if (name == "--log") {
      f.log = r.value();
    } else if (name == "--tokenizer") {
      f.tokenizer = r.value();
    } else if (name == "--dump-grads") {
      f.dumpGrads = r.value();
    } else if (name == "--print-every") {
      f.printEvery = parseInt(name, r.value(), 1, kMax);
    } else if (name == "--threads") {
      f.threads = (int)parseInt(name, r.value(), 1, 4096);
    } else if (name == "--info") {
      r.noValue();
      f.info = true;
    } else {
      throw UsageError("unknown flag '" + name + "'");
    }
  }
  if (f.help || f.info)
    return f;
  if (f.val && f.valFraction && *f.valFraction > 0)
    throw UsageError("--val FILE and --val-fraction exclude each other (held-out examples come "
                     "from one of them)");
  if (f.resume && !f.save)
    throw UsageError("--resume continues from the checkpoints in --save DIR; pass --save DIR");
  if (f.resume && f.loadDelta)
    throw UsageError("--resume and --load-delta exclude each other (--resume loads the deltas "
                     "of the last checkpoint)");
  if (f.saveEvery && !f.save)
    throw UsageError("--save-every needs --save DIR");
  if (f.evalOnly && (f.save || f.resume || f.dumpGrads || f.saveEvery || f.evalEvery))
    throw UsageError("--eval-only trains nothing: it takes no --save, --resume, --dump-grads, "
                     "--save-every or --eval-every");
  return f;
}

void printTuneHelp(FILE *out, const char *argv0, const ProgramInfo &program) {
  const TrainInfo &t = *program.train;
  std::fprintf(out,
               "usage: %s [flags]\n\n"
               "Prompt-tunes %s (job %s of %s): labelled examples through the prompt template,\n"
               "the deltas and prompt params trained, accuracy and macro-F1 on held-out\n"
               "examples, delta-only checkpoints. Batch %lld, sequence length %lld (compiled in).\n\n"
               "  --data FILE          labelled examples (default: the job's data)\n"
               "  --val FILE           held-out examples (else a share of --data)\n"
               "  --val-fraction F     held-out share of --data (default 0.1; 0: no evaluation)\n"
               "  --steps N            optimizer steps (default: the job's, else 100)\n"
               "  --lr LR              learning rate (default: the job's optimizer's)\n"
               "  --seed S             held-out split, example order, fresh deltas (default 0;\n"
               "                       --resume keeps the run's)\n"
               "  --load PATH          the backbone checkpoint (default: the job's from, '%s')\n"
               "  --load-delta FILE    then trained deltas (a delta.safetensors) over it\n"
               "  --tokenizer DIR|byte the tokenizer (default: the backbone checkpoint's directory)\n"
               "  --save DIR           delta-only checkpoints: DIR/step-N/{delta,optimizer}.safetensors\n"
               "  --save-every N       also every N steps (default: the job's save_every; always at the end)\n"
               "  --resume             continue from the last checkpoint in --save DIR\n"
               "  --eval-every N       evaluate the held-out examples every N steps (default: the\n"
               "                       job's eval_every; always at the end)\n"
               "  --eval-only          evaluate only (prints loss, accuracy, macro_f1)\n"
               "  --log FILE           JSON lines: each step, each evaluation\n"
               "  --dump-grads FILE    the first step's gradients (safetensors)\n"
               "  --print-every N      progress line every N steps (default: the job's log_every, else 10)\n"
               "  --threads N          threads (default: OMP_NUM_THREADS or all cores)\n"
               "  --info               the program's tables\n",
               argv0, program.model, program.job, program.source, (long long)t.batch,
               (long long)t.seq, program.from);
}

} // namespace bmrt
