//===- bmrt/sampling.h - Choosing the next token from logits --------------===//
//
// The filters follow Hugging Face transformers' logits warpers (4.40), so a
// model run here and in `generate()` draws from the same distribution:
//  - temperature: logits / T (TemperatureLogitsWarper);
//  - top_k: keep every token whose logit is >= the k-th largest (ties at the
//    boundary are all kept, as TopKLogitsWarper does);
//  - top_p: keep the smallest set of most likely tokens whose cumulative
//    probability reaches p, always at least one (TopPLogitsWarper);
// applied after the temperature, then renormalized. Greedy is the argmax
// (lowest index on ties, as torch.argmax).
// The draw is counter-based (bmrt/philox.h): token k of a generation uses the
// uniform number at (seed, k), so a seed reproduces a run anywhere.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_SAMPLING_H
#define BMRT_SAMPLING_H

#include "bmrt/context.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bmrt {

enum class SamplingMode : int { Greedy, Temperature, TopK, TopP };

/// "greedy", "temperature", "top_k", "top_p".
const char *samplingModeName(SamplingMode mode);
/// Parses one of the names above; false if `name` is none of them.
bool parseSamplingMode(const std::string &name, SamplingMode &mode);

struct SamplingConfig {
  SamplingMode mode = SamplingMode::Greedy;
  double temperature = 1.0; // > 0; used by every mode but greedy
  int64_t topK = 0;         // TopK: > 0
  double topP = 1.0;        // TopP: in [0, 1]
  uint64_t seed = 0;
};

/// The Philox stream id of sampling draws ("SAMP"), apart from dropout's.
constexpr uint32_t kSamplingStream = 0x53414D50u;

/// Fails (bmrt::fail) with a message naming the bad setting.
void validateSamplingConfig(const SamplingConfig &config);

/// The scratch of sampling: vocab-sized buffers allocated once per run.
struct Sampler {
  SamplingConfig config;
  int64_t vocab = 0;
  std::vector<double> probs;   // [vocab] the filtered distribution (0 = removed)
  std::vector<int32_t> order;  // [vocab] token ids, sorted for top-k/top-p
};

/// Validates `config` and sizes the buffers.
Sampler makeSampler(const SamplingConfig &config, int64_t vocab);

/// Fills sampler.probs with the distribution the configured mode draws from
/// (greedy: one-hot at the argmax) and returns how many tokens it keeps.
/// Fails on NaN or +inf logits (a broken model, not a distribution).
int64_t filterDistribution(Sampler &sampler, const float *logits);

/// The token drawn from `probs` (summing to about 1) with uniform u in [0, 1):
/// the first id whose cumulative probability exceeds u.
int32_t drawToken(const double *probs, int64_t vocab, double u);

/// The next token for logits [vocab]; `step` is the index of this token in
/// its generation (0 = the token after the prompt). Timed as Sampling.
int32_t sampleToken(Context &ctx, Sampler &sampler, const float *logits, uint64_t step);

} // namespace bmrt

#endif // BMRT_SAMPLING_H
