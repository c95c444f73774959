//===- app_test.cpp - Unit tests of the infer app's pieces ----------------===//
//
// Philox against Random123's published known answers, properties of the
// sampler that need no reference (ties, bounds, errors, reproducibility, a
// chi-square test of the draws), the flag rules and the UTF-8 streaming.
// Agreement with Hugging Face's warpers is test_sampling_hf.py's job; the
// command line as a whole is test_cli.py's.
//
//===----------------------------------------------------------------------===//
#include "app/flags.h"
#include "app/request.h"
#include "app/token_stream.h"
#include "app/train_progress.h"
#include "bmrt/philox.h"
#include "bmrt/sampling.h"
#include "bmrt/tokenizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace bmrt;

namespace {

// Random123, tests/kat_vectors, the three "philox4x32 10" lines.
TEST(Philox, KnownAnswers) {
  struct Kat {
    uint32_t ctr[4], key[2], out[4];
  } kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat &k : kats) {
    Philox4x32Block b = philox4x32_10(k.ctr, k.key);
    for (int i = 0; i < 4; i++)
      EXPECT_EQ(b.v[i], k.out[i]) << "word " << i;
  }
}

TEST(Philox, UniformIsInRangeAndUnbiased) {
  const int n = 200000;
  double sum = 0, sumSq = 0;
  for (int i = 0; i < n; i++) {
    double u = philoxUniform(42, (uint64_t)i, kSamplingStream);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sumSq += u * u;
  }
  // Mean 1/2, variance 1/12; the bounds are ~6 standard errors.
  EXPECT_NEAR(sum / n, 0.5, 0.004);
  EXPECT_NEAR(sumSq / n - (sum / n) * (sum / n), 1.0 / 12, 0.002);
  EXPECT_NE(philoxUniform(42, 0, 1), philoxUniform(42, 0, 2)); // streams are apart
  EXPECT_NE(philoxUniform(42, 0, 1), philoxUniform(43, 0, 1)); // so are seeds
}

SamplingConfig config(SamplingMode mode, double temperature = 1, int64_t k = 0,
                      double p = 1, uint64_t seed = 0) {
  SamplingConfig c;
  c.mode = mode;
  c.temperature = temperature;
  c.topK = k;
  c.topP = p;
  c.seed = seed;
  return c;
}

TEST(Sampling, GreedyTakesTheLowestIndexOnTies) {
  std::vector<float> logits = {0, 5, 2, 5};
  Sampler s = makeSampler(config(SamplingMode::Greedy), 4);
  Context ctx;
  EXPECT_EQ(sampleToken(ctx, s, logits.data(), 0), 1);
  EXPECT_EQ(filterDistribution(s, logits.data()), 1);
  EXPECT_EQ(s.probs[1], 1.0);
}

TEST(Sampling, TopKKeepsTiesAtTheBoundary) {
  std::vector<float> logits = {1, 3, 3, 2};
  Sampler s = makeSampler(config(SamplingMode::TopK, 1, 1), 4);
  EXPECT_EQ(filterDistribution(s, logits.data()), 2);
  EXPECT_DOUBLE_EQ(s.probs[1], 0.5);
  EXPECT_DOUBLE_EQ(s.probs[2], 0.5);
}

TEST(Sampling, TopPKeepsAtLeastTheMostLikelyToken) {
  std::vector<float> logits = {0, 1, 0.5f};
  Sampler s = makeSampler(config(SamplingMode::TopP, 1, 0, 0.0), 3);
  EXPECT_EQ(filterDistribution(s, logits.data()), 1);
  EXPECT_EQ(s.probs[1], 1.0);
}

TEST(Sampling, DrawWalksTheCumulativeDistribution) {
  double probs[] = {0.0, 0.25, 0.0, 0.75};
  EXPECT_EQ(drawToken(probs, 4, 0.0), 1);
  EXPECT_EQ(drawToken(probs, 4, 0.2499), 1);
  EXPECT_EQ(drawToken(probs, 4, 0.25), 3);
  EXPECT_EQ(drawToken(probs, 4, 0.999999999), 3);
  double none[] = {0, 0};
  EXPECT_THROW(drawToken(none, 2, 0.5), Error);
}

TEST(Sampling, BadInputFailsWithAMessage) {
  std::vector<float> nanLogits = {0, NAN};
  Sampler s = makeSampler(config(SamplingMode::Temperature), 2);
  try {
    filterDistribution(s, nanLogits.data());
    FAIL() << "NaN accepted";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("token 1"), std::string::npos) << e.what();
  }
  std::vector<float> allMasked = {-INFINITY, -INFINITY};
  EXPECT_THROW(filterDistribution(s, allMasked.data()), Error);
  EXPECT_THROW(makeSampler(config(SamplingMode::Temperature, 0), 2), Error);
  EXPECT_THROW(makeSampler(config(SamplingMode::TopK, 1, 0), 2), Error);
  EXPECT_THROW(makeSampler(config(SamplingMode::TopP, 1, 0, 1.5), 2), Error);
}

// Draws at steps 0..n-1 follow the filtered distribution: a chi-square
// statistic far below the 1e-6 tail, and nothing outside the kept set.
TEST(Sampling, DrawsFollowTheDistribution) {
  std::vector<float> logits = {0.1f, 2.0f, -1.0f, 1.5f, 0.7f, -3.0f, 1.9f, 0.0f};
  Sampler s = makeSampler(config(SamplingMode::TopP, 0.9, 0, 0.8, 11), 8);
  filterDistribution(s, logits.data());
  std::vector<double> expected = s.probs;
  const int n = 50000;
  std::vector<int> counts(8, 0);
  Context ctx;
  for (int i = 0; i < n; i++)
    counts[sampleToken(ctx, s, logits.data(), (uint64_t)i)]++;
  double chi2 = 0;
  int kept = 0;
  for (int t = 0; t < 8; t++) {
    if (expected[t] == 0) {
      EXPECT_EQ(counts[t], 0) << "token " << t << " was filtered out";
      continue;
    }
    kept++;
    double e = n * expected[t];
    chi2 += (counts[t] - e) * (counts[t] - e) / e;
  }
  ASSERT_GE(kept, 3);
  // chi2(dof <= 7) exceeds 35 with probability < 1e-5.
  EXPECT_LT(chi2, 35.0);
}

TEST(Sampling, SameSeedSameTokens) {
  std::vector<float> logits(50);
  for (int i = 0; i < 50; i++)
    logits[i] = std::sin(i * 1.7f);
  auto run = [&](uint64_t seed) {
    Sampler s = makeSampler(config(SamplingMode::Temperature, 1.0, 0, 1, seed), 50);
    Context ctx;
    std::vector<int32_t> tokens;
    for (uint64_t step = 0; step < 32; step++)
      tokens.push_back(sampleToken(ctx, s, logits.data(), step));
    return tokens;
  };
  EXPECT_EQ(run(3), run(3));
  EXPECT_NE(run(3), run(4));
}

TEST(Sampling, ModeNamesRoundTrip) {
  for (SamplingMode m : {SamplingMode::Greedy, SamplingMode::Temperature, SamplingMode::TopK,
                         SamplingMode::TopP}) {
    SamplingMode parsed;
    ASSERT_TRUE(parseSamplingMode(samplingModeName(m), parsed));
    EXPECT_EQ(parsed, m);
  }
  SamplingMode unused;
  EXPECT_FALSE(parseSamplingMode("beam", unused));
}

InferFlags parse(std::vector<std::string> args) {
  args.insert(args.begin(), "infer");
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  return parseInferFlags((int)argv.size(), argv.data());
}

TEST(Flags, ParsesValuesInBothForms) {
  InferFlags f = parse({"--prompt-ids", "1,2,300", "--max-tokens=5", "--seed", "18446744073709551615",
                        "--ignore-eos", "--output", "ids", "--top-p", "0.5"});
  ASSERT_TRUE(f.promptIds);
  EXPECT_EQ(*f.promptIds, (std::vector<int32_t>{1, 2, 300}));
  EXPECT_EQ(*f.maxTokens, 5);
  EXPECT_EQ(f.seed, 18446744073709551615ull);
  EXPECT_TRUE(f.ignoreEos);
  EXPECT_EQ(f.output, OutputFormat::Ids);
  EXPECT_DOUBLE_EQ(*f.topP, 0.5);
}

TEST(Flags, RejectsBadCommandLines) {
  std::vector<std::vector<std::string>> bad = {
      {"--bogus"},           {"--max-tokens"},           {"--max-tokens", "1O"},
      {"--max-tokens", "-1"}, {"--top-p", "1.5"},        {"--temperature", "0"},
      {"--top-k", "0"},      {"--sampling", "beam"},     {"--output", "json"},
      {"--prompt-ids", "1,,2"}, {"--prompt-ids", "-3"},  {"--seed", "-1"},
      {"--threads", "0"},    {"--prompt", "a", "--prompt-ids", "1"},
      {"--save-names", "hf"}, {"--ignore-eos=yes"},      {"positional"},
      {"--save", "x.safetensors", "--prompt", "hi"},
  };
  for (auto &args : bad)
    EXPECT_THROW(parse(args), UsageError) << args[0];
}

TEST(Flags, DeltasAreNamedAndRepeatable) {
  InferFlags f = parse({"--delta", "sst2=runs/a/delta.safetensors",
                        "--delta=runs/b/mnli.safetensors", "--load-delta",
                        "qa.v2=x=y.safetensors", "--use-delta", "mnli"});
  ASSERT_EQ(f.deltas.size(), 3u);
  EXPECT_EQ(f.deltas[0].name, "sst2");
  EXPECT_EQ(f.deltas[0].file, "runs/a/delta.safetensors");
  EXPECT_EQ(f.deltas[1].name, "mnli"); // the file's stem
  EXPECT_EQ(f.deltas[1].file, "runs/b/mnli.safetensors");
  EXPECT_EQ(f.deltas[2].name, "qa.v2"); // split at the first '='
  EXPECT_EQ(f.deltas[2].file, "x=y.safetensors");
  EXPECT_EQ(defaultDelta(f), "mnli");
  // The first --delta is the default; none: the backbone alone.
  EXPECT_EQ(defaultDelta(parse({"--delta", "a.safetensors", "--delta", "b.safetensors"})), "a");
  EXPECT_EQ(defaultDelta(parse({"--delta", "a.safetensors", "--use-delta", "none"})), "none");
  EXPECT_EQ(defaultDelta(parse({"--use-delta", "none"})), "none");
  EXPECT_EQ(defaultDelta(parse({})), "");
  // A '/' before the '=' makes it part of the path: named by the stem.
  EXPECT_EQ(parseDeltaFlag("--delta", "d/e=f/g.safetensors").name, "g");
}

std::string usageMessage(std::vector<std::string> args) {
  try {
    parse(args);
  } catch (const UsageError &e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Flags, RejectsBadDeltas) {
  EXPECT_EQ(usageMessage({"--delta", "a/delta.safetensors", "--delta", "b/delta.safetensors"}),
            "--delta: two deltas named 'delta' (a/delta.safetensors and b/delta.safetensors); "
            "name them apart with NAME=FILE");
  EXPECT_EQ(usageMessage({"--delta", "x=a.safetensors", "--load-delta", "x=b.safetensors"}),
            "--delta: two deltas named 'x' (a.safetensors and b.safetensors); name them apart "
            "with NAME=FILE");
  EXPECT_EQ(usageMessage({"--delta", "a.safetensors", "--use-delta", "b"}),
            "--use-delta: no delta named 'b' (the deltas: a; or none for the backbone alone)");
  EXPECT_EQ(usageMessage({"--use-delta", "b"}),
            "--use-delta: no delta named 'b' (no --delta was given; or none for the backbone "
            "alone)");
  EXPECT_EQ(usageMessage({"--delta", "none=a.safetensors"}),
            "--delta 'none=a.safetensors': 'none' names the backbone alone; give the delta "
            "another name (NAME=FILE)");
  EXPECT_EQ(usageMessage({"--delta", "none.safetensors"}),
            "--delta 'none.safetensors': 'none' names the backbone alone; give the delta "
            "another name (NAME=FILE)");
  EXPECT_EQ(usageMessage({"--delta", "=a.safetensors"}),
            "--delta '=a.safetensors': the name before '=' is empty");
  EXPECT_EQ(usageMessage({"--delta", "x="}), "--delta 'x=' names no file");
  EXPECT_EQ(usageMessage({"--delta", "my task.safetensors"}),
            "--delta 'my task.safetensors': the file's stem 'my task' is not a delta name "
            "(letters, digits, _ - .); write NAME=FILE");
  EXPECT_EQ(usageMessage({"--init", "1", "--delta", "a.safetensors"}),
            "--delta goes on the backbone a delta was tuned from: --load, not --init");
  EXPECT_EQ(usageMessage({"--init", "1", "--use-delta", "none"}),
            "--use-delta goes on the backbone a delta was tuned from: --load, not --init");
  EXPECT_EQ(usageMessage({"--delta"}), "--delta needs a value");
}

std::string requestError(const std::string &line) {
  try {
    parseRequest(line);
  } catch (const Error &e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Request, PlainLinesAndJsonObjects) {
  Request r = parseRequest("hello {world}");
  EXPECT_EQ(r.prompt, "hello {world}");
  EXPECT_FALSE(r.delta);
  r = parseRequest(" {\"prompt\": \"x\"}"); // only a leading '{' makes JSON
  EXPECT_EQ(r.prompt, " {\"prompt\": \"x\"}");
  r = parseRequest("{\"delta\": \"sst2\", \"prompt\": \"It was \\u00e9\\n\"}");
  EXPECT_EQ(r.prompt, "It was \xc3\xa9\n");
  ASSERT_TRUE(r.delta);
  EXPECT_EQ(*r.delta, "sst2");
  r = parseRequest("{\"prompt\": \"{a}\", \"delta\": null}");
  EXPECT_EQ(r.prompt, "{a}");
  EXPECT_FALSE(r.delta);
  EXPECT_EQ(parseRequest("").prompt, "");
}

TEST(Request, MalformedJsonIsAnError) {
  EXPECT_NE(requestError("{\"prompt\": \"x\"").find("JSON request: invalid JSON at byte"),
            std::string::npos)
      << requestError("{\"prompt\": \"x\"");
  EXPECT_EQ(requestError("{\"delta\": \"a\"}"), "JSON request: no \"prompt\"");
  EXPECT_EQ(requestError("{\"prompt\": 3}"), "JSON request: \"prompt\" must be a string");
  EXPECT_EQ(requestError("{\"prompt\": \"x\", \"delta\": 1}"),
            "JSON request: \"delta\" must be a delta's name (a string) or null");
  EXPECT_EQ(requestError("{\"prompt\": \"x\", \"detla\": \"a\"}"),
            "JSON request: unknown member \"detla\" (a request has \"prompt\" and \"delta\")");
  EXPECT_EQ(requestError("{\"prompt\": \"x\", \"prompt\": \"y\"}"),
            "JSON request: \"prompt\" given twice");
  EXPECT_EQ(requestError("{\"prompt\": \"x\"} trailing").substr(0, 13), "JSON request:");
}

ProgramInfo programWithSampling(const char *mode, double temperature, int64_t k, double p) {
  ProgramInfo info{};
  info.job = "chat";
  info.sampling = mode;
  info.temperature = temperature;
  info.topK = k;
  info.topP = p;
  return info;
}

TEST(Flags, SamplingDefaultsComeFromTheJob) {
  ProgramInfo topP = programWithSampling("top_p", 0.8, 0, 0.9);
  SamplingConfig c = resolveSampling(parse({"--seed", "5"}), topP);
  EXPECT_EQ(c.mode, SamplingMode::TopP);
  EXPECT_DOUBLE_EQ(c.topP, 0.9);
  EXPECT_DOUBLE_EQ(c.temperature, 0.8);
  EXPECT_EQ(c.seed, 5u);
  // --top-k alone switches to top_k; --sampling greedy with a k is refused.
  c = resolveSampling(parse({"--top-k", "4"}), topP);
  EXPECT_EQ(c.mode, SamplingMode::TopK);
  EXPECT_EQ(c.topK, 4);
  EXPECT_THROW(resolveSampling(parse({"--sampling", "greedy", "--top-k", "4"}), topP), UsageError);
  EXPECT_THROW(resolveSampling(parse({"--sampling", "top_k"}), topP), UsageError); // no k known
  EXPECT_THROW(resolveSampling(parse({"--top-k", "4", "--top-p", "0.5"}), topP), UsageError);
  ProgramInfo greedy = programWithSampling("greedy", 0, 0, 0);
  EXPECT_EQ(resolveSampling(parse({}), greedy).mode, SamplingMode::Greedy);
  c = resolveSampling(parse({"--temperature", "0.7"}), greedy);
  EXPECT_EQ(c.mode, SamplingMode::Temperature);
  EXPECT_DOUBLE_EQ(c.temperature, 0.7);
}

TEST(TokenStream, Utf8PrefixHoldsIncompleteCharacters) {
  EXPECT_EQ(completeUtf8Prefix("abc"), 3u);
  EXPECT_EQ(completeUtf8Prefix("ab\xC3"), 2u);             // é's first byte
  EXPECT_EQ(completeUtf8Prefix("ab\xC3\xA9"), 4u);         // é complete
  EXPECT_EQ(completeUtf8Prefix("\xE2\x82"), 0u);           // € missing one byte
  EXPECT_EQ(completeUtf8Prefix("\xF0\x9F\x98"), 0u);       // an emoji missing one
  EXPECT_EQ(completeUtf8Prefix("\xF0\x9F\x98\x80"), 4u);
  EXPECT_EQ(completeUtf8Prefix("a\x80"), 2u);              // stray continuation: passed on
  EXPECT_EQ(completeUtf8Prefix("a\xFF"), 2u);              // invalid lead: passed on
}

TEST(TokenStream, StreamsWholeCharactersAndIds) {
  std::unique_ptr<Tokenizer> bytes = makeByteTokenizer(true);
  char *text = nullptr;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  ASSERT_NE(out, nullptr);
  TokenStream stream(out, OutputFormat::Text, bytes.get());
  stream.put('a');
  stream.put(0xC3);
  EXPECT_EQ(std::string(text, size), "a"); // the lead byte is held back
  stream.put(0xA9);
  EXPECT_EQ(std::string(text, size), "a\xC3\xA9");
  stream.put(0xE2); // never completed: written at the end anyway
  stream.finish();
  EXPECT_EQ(std::string(text, size), "a\xC3\xA9\xE2\n");
  TokenStream ids(out, OutputFormat::Ids, nullptr);
  ids.put(7);
  ids.put(256);
  ids.finish();
  std::fclose(out);
  EXPECT_EQ(std::string(text, size), "a\xC3\xA9\xE2\n7 256\n");
  std::free(text);
}

} // namespace

// A job's schedule(min_lr = ...) is a share of the run's base lr; a --lr
// below it is the user's mistake (exit 2), said before any step.
TEST(MinLr, ShareOfTheBaseLrAndABaseBelowItIsAUsageError) {
  bmrt::TrainInfo t{};
  EXPECT_EQ(bmrt::minLrRate(t, 1e-3), 0.0); // no floor
  t.minLr = 1e-4;
  EXPECT_DOUBLE_EQ(bmrt::minLrRate(t, 1e-3), 0.1);
  EXPECT_DOUBLE_EQ(bmrt::minLrRate(t, 1e-4), 1.0);
  try {
    bmrt::minLrRate(t, 5e-5);
    FAIL() << "a --lr below min_lr was accepted";
  } catch (const bmrt::UsageError &e) {
    EXPECT_STREQ(e.what(), "--lr 5e-05 is below the job's schedule min_lr 0.0001: the schedule "
                           "decays from the lr to min_lr");
  }
}

