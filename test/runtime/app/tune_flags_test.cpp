//===- tune_flags_test.cpp - The tune executable's command line -----------===//
//
// app/tune_flags.h: each flag's value, and the combinations that cannot mean
// anything refused with a message naming the flags (exit 2 in the app).
//
//===----------------------------------------------------------------------===//
#include "app/tune_flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

bmrt::TuneFlags parse(std::vector<std::string> args) {
  args.insert(args.begin(), "tune");
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  return bmrt::parseTuneFlags((int)argv.size(), argv.data());
}

std::string usageError(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const bmrt::UsageError &e) {
    return e.what();
  }
  return "";
}

TEST(TuneFlags, Values) {
  bmrt::TuneFlags f = parse({"--data", "d.tsv", "--val=v.tsv", "--steps", "7", "--lr", "0.5",
                             "--seed", "3", "--load", "b/", "--save", "s", "--save-every", "2",
                             "--eval-every", "4", "--tokenizer", "byte", "--print-every", "1"});
  EXPECT_EQ(*f.data, "d.tsv");
  EXPECT_EQ(*f.val, "v.tsv");
  EXPECT_EQ(*f.steps, 7);
  EXPECT_EQ(*f.lr, 0.5);
  EXPECT_EQ(*f.seed, 3u);
  EXPECT_EQ(*f.load, "b/");
  EXPECT_EQ(f.saveEvery, 2);
  EXPECT_EQ(f.evalEvery, 4);
  EXPECT_EQ(*f.tokenizer, "byte");
  EXPECT_EQ(*f.printEvery, 1);
  EXPECT_FALSE(parse({}).seed.has_value()) << "no --seed: 0, or the resumed run's";
}

TEST(TuneFlags, RefusedCombinations) {
  EXPECT_EQ(usageError({"--bogus"}), "unknown flag '--bogus'");
  EXPECT_EQ(usageError({"--val", "v.tsv", "--val-fraction", "0.2"}),
            "--val FILE and --val-fraction exclude each other (held-out examples come from one "
            "of them)");
  EXPECT_EQ(usageError({"--val-fraction", "1"}), "--val-fraction must be in [0, 1)");
  EXPECT_EQ(usageError({"--resume"}),
            "--resume continues from the checkpoints in --save DIR; pass --save DIR");
  EXPECT_EQ(usageError({"--save", "s", "--resume", "--load-delta", "d.safetensors"}),
            "--resume and --load-delta exclude each other (--resume loads the deltas of the "
            "last checkpoint)");
  EXPECT_EQ(usageError({"--save-every", "5"}), "--save-every needs --save DIR");
  EXPECT_EQ(usageError({"--eval-only", "--save", "s"}),
            "--eval-only trains nothing: it takes no --save, --resume, --dump-grads, "
            "--save-every or --eval-every");
  EXPECT_EQ(usageError({"--lr", "-1"}), "--lr must be >= 0");
  EXPECT_EQ(usageError({"--val-fraction", "0", "--val", "v.tsv"}), "")
      << "--val with a zero share is no conflict";
}

} // namespace
