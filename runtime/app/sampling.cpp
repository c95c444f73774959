//===- app/sampling.cpp - Temperature, top-k, top-p and the draw ----------===//
//
// Hugging Face's warpers on the host, in double precision (the filtered set
// can differ from transformers' float32 only when a cumulative probability
// lands within rounding of p; test/runtime/app checks the rest agrees).
// The vocab-sized scratch lives in the Sampler, so the decode loop allocates
// nothing. Top-p sorts the whole vocabulary once per token: ~50k doubles is a
// few milliseconds, small next to a decode step of a real model.
//
//===----------------------------------------------------------------------===//
#include "bmrt/sampling.h"
#include "bmrt/philox.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace bmrt {

const char *samplingModeName(SamplingMode mode) {
  switch (mode) {
  case SamplingMode::Greedy: return "greedy";
  case SamplingMode::Temperature: return "temperature";
  case SamplingMode::TopK: return "top_k";
  case SamplingMode::TopP: return "top_p";
  }
  return "unknown";
}

bool parseSamplingMode(const std::string &name, SamplingMode &mode) {
  for (SamplingMode m : {SamplingMode::Greedy, SamplingMode::Temperature, SamplingMode::TopK,
                         SamplingMode::TopP}) {
    if (name == samplingModeName(m)) {
      mode = m;
      return true;
    }
  }
  return false;
}

static std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

void validateSamplingConfig(const SamplingConfig &c) {
  if (c.mode == SamplingMode::Greedy)
    return;
  if (!(c.temperature > 0) || !std::isfinite(c.temperature))
    fail("sampling temperature must be a number > 0, not " + number(c.temperature));
  if (c.mode == SamplingMode::TopK && c.topK <= 0)
    fail("top_k sampling needs k > 0, not " + std::to_string(c.topK));
  if (c.mode == SamplingMode::TopP && !(c.topP >= 0 && c.topP <= 1))
    fail("top_p sampling needs p in [0, 1], not " + number(c.topP));
}

Sampler makeSampler(const SamplingConfig &config, int64_t vocab) {
  validateSamplingConfig(config);
  if (vocab <= 0)
    fail("cannot sample from a vocabulary of " + std::to_string(vocab) + " tokens");
  Sampler s;
  s.config = config;
  s.vocab = vocab;
  s.probs.assign((size_t)vocab, 0.0);
  s.order.assign((size_t)vocab, 0);
  return s;
}

// A NaN or +inf logit means the model computed garbage; sampling from it
// would hide that, so it is an error. -inf is a legitimate "never".
static void checkLogits(const float *logits, int64_t vocab) {
  for (int64_t i = 0; i < vocab; i++) {
    float x = logits[i];
    if (std::isnan(x) || x == std::numeric_limits<float>::infinity())
      fail("the model produced an invalid logit (" + std::string(std::isnan(x) ? "nan" : "inf") +
           ") for token " + std::to_string(i));
  }
}

static int32_t argmaxLogit(const float *logits, int64_t vocab) {
  int64_t best = 0;
  for (int64_t i = 1; i < vocab; i++)
    if (logits[i] > logits[best]) // strict: the lowest index wins ties
      best = i;
  return (int32_t)best;
}

// probs[i] = exp(logits[i] / T) for the kept tokens (probs[i] > 0 marks
// "kept" on entry), normalized; removed tokens stay 0. Returns the count kept.
static int64_t softmaxKept(const float *logits, int64_t vocab, double temperature,
                           double *probs) {
  double maxScaled = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < vocab; i++)
    if (probs[i] > 0)
      maxScaled = std::max(maxScaled, (double)logits[i] / temperature);
  if (maxScaled == -std::numeric_limits<double>::infinity())
    fail("every logit is -inf: there is no token to sample");
  double sum = 0;
  int64_t kept = 0;
  for (int64_t i = 0; i < vocab; i++) {
    if (probs[i] > 0) {
      probs[i] = std::exp((double)logits[i] / temperature - maxScaled);
      sum += probs[i];
      kept += probs[i] > 0;
    }
  }
  for (int64_t i = 0; i < vocab; i++)
    probs[i] /= sum;
  return kept;
}

// TopKLogitsWarper: everything below the k-th largest logit goes; ties with
// it stay. Temperature scaling keeps the order, so the raw logits decide.
static void markTopK(Sampler &s, const float *logits) {
  int64_t vocab = s.vocab, k = std::min(s.config.topK, vocab);
  int32_t *order = s.order.data();
  for (int64_t i = 0; i < vocab; i++)
    order[i] = (int32_t)i;
  std::nth_element(order, order + (k - 1), order + vocab,
                   [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  float threshold = logits[order[k - 1]];
  for (int64_t i = 0; i < vocab; i++)
    s.probs[i] = logits[i] >= threshold ? 1.0 : 0.0;
}

// TopPLogitsWarper: HF removes, in ascending order, the tokens whose
// cumulative probability is <= 1 - p. Seen from the top that is: a token
// stays while the mass of the tokens above it is < p; the most likely token
// always stays. Ties are ordered by id so the result is deterministic.
static void keepTopP(Sampler &s) {
  int64_t vocab = s.vocab;
  int32_t *order = s.order.data();
  const double *probs = s.probs.data();
  for (int64_t i = 0; i < vocab; i++)
    order[i] = (int32_t)i;
  std::sort(order, order + vocab, [&](int32_t a, int32_t b) {
    return probs[a] > probs[b] || (probs[a] == probs[b] && a < b);
  });
  double above = 0;
  int64_t keep = 0;
  while (keep < vocab && (keep == 0 || above < s.config.topP)) {
    above += probs[order[keep]];
    keep++;
  }
  double kept = 0;
  for (int64_t j = 0; j < keep; j++)
    kept += probs[order[j]];
  for (int64_t j = keep; j < vocab; j++)
    s.probs[order[j]] = 0;
  for (int64_t j = 0; j < keep; j++)
    s.probs[order[j]] /= kept;
}

int64_t filterDistribution(Sampler &s, const float *logits) {
  checkLogits(logits, s.vocab);
  double *probs = s.probs.data();
  const SamplingConfig &c = s.config;
  if (c.mode == SamplingMode::Greedy) {
    std::fill(probs, probs + s.vocab, 0.0);
    probs[argmaxLogit(logits, s.vocab)] = 1.0;
    return 1;
  }
  if (c.mode == SamplingMode::TopK)
    markTopK(s, logits);
  else
    std::fill(probs, probs + s.vocab, 1.0);
  int64_t kept = softmaxKept(logits, s.vocab, c.temperature, probs);
  if (c.mode == SamplingMode::TopP) {
    keepTopP(s);
    kept = 0;
    for (int64_t i = 0; i < s.vocab; i++)
      kept += probs[i] > 0;
  }
  return kept;
}

int32_t drawToken(const double *probs, int64_t vocab, double u) {
  double total = 0;
  for (int64_t i = 0; i < vocab; i++)
    total += probs[i];
  double target = u * total, cumulative = 0;
  int64_t last = -1;
  for (int64_t i = 0; i < vocab; i++) {
    if (probs[i] <= 0)
      continue;
    cumulative += probs[i];
    last = i;
    if (cumulative > target)
      return (int32_t)i;
  }
  if (last < 0)
    fail("cannot draw a token from an empty distribution");
  return (int32_t)last; // u * total rounded up to the total: the last kept token
}

int32_t sampleToken(Context &ctx, Sampler &s, const float *logits, uint64_t step) {
  ProfileScope scope(ctx, KernelKind::Sampling);
  if (s.config.mode == SamplingMode::Greedy) {
    checkLogits(logits, s.vocab);
    return argmaxLogit(logits, s.vocab);
  }
  filterDistribution(s, logits);
  double u = philoxUniform(s.config.seed, step, kSamplingStream);
  return drawToken(s.probs.data(), s.vocab, u);
}

} // namespace bmrt
