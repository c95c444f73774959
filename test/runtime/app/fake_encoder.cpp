//===- fake_encoder.cpp - A hand-written "compiled" encoder for CLI tests -===//
//
// An encoder job's table: prefill only, with the three inputs a BERT takes
// (tokens, token types, padding mask). The "model", recomputed with numpy in
// test_cli.py from the same safetensors file:
//   hidden[r] = probe[token_r] + 0.5 * r                           ([rows, C])
//   pooled    = tanh(scale * mean_r hidden[r])                     ([C])
// Built twice: with FAKE_POOLED the program has the "pooled" output (which
// the app must print), without it only "hidden" (the app prints its mean
// over the valid rows). The entry point checks the mask and token types the
// app wrote and fails loudly if they are wrong.
//
//===----------------------------------------------------------------------===//
#include "bmrt/program.h"

#include <cmath>
#include <string>

namespace {

using bmrt::DType;

constexpr int64_t V = 256, T = 8, C = 3;

constexpr int64_t kProbe = 0;                        // f32 [V, C]
constexpr int64_t kScale = (V * C * 4 + 63) / 64 * 64; // f32 [C]
constexpr int64_t kParamBytes = kScale + 64;

constexpr int64_t kTokens = 0, kTypes = 64, kMask = 128; // i32 [1, T] each
constexpr int64_t kHidden = 192;                          // f32 [1, T, C]
constexpr int64_t kPooled = 320;                          // f32 [1, C]
constexpr int64_t kActivationBytes = 384;

const bmrt::ParamInfo kParams[] = {
    {"probe", DType::F32, 2, {V, C}, kProbe, false, false},
    {"scale", DType::F32, 1, {C}, kScale, false, true},
};

void prefill(bmrt::Context &, const bmrt::Buffers &buf, int64_t start, int64_t rows) {
  if (start != 0 || rows < 1 || rows > T)
    bmrt::fail("fake_encoder: called with start " + std::to_string(start) + ", rows " +
               std::to_string(rows));
  const float *probe = (const float *)((const char *)buf.params + kProbe);
  const float *scale = (const float *)((const char *)buf.params + kScale);
  char *act = (char *)buf.activations;
  const int32_t *tokens = (const int32_t *)(act + kTokens);
  const int32_t *types = (const int32_t *)(act + kTypes);
  const int32_t *mask = (const int32_t *)(act + kMask);
  float *hidden = (float *)(act + kHidden);
  for (int64_t r = 0; r < T; r++) {
    if (types[r] != 0 || mask[r] != (r < rows ? 1 : 0))
      bmrt::fail("fake_encoder: wrong token type or mask at row " + std::to_string(r));
  }
  float mean[C] = {0, 0, 0};
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t c = 0; c < C; c++) {
      hidden[r * C + c] = probe[tokens[r] * C + c] + 0.5f * (float)r;
      mean[c] += hidden[r * C + c] / (float)rows;
    }
  }
#ifdef FAKE_POOLED
  float *pooled = (float *)(act + kPooled);
  for (int64_t c = 0; c < C; c++)
    pooled[c] = std::tanh(scale[c] * mean[c]);
#else
  (void)scale;
  (void)kPooled;
#endif
}

const bmrt::TensorRef kInputs[] = {
    {"tokens", DType::I32, 2, {1, T}, kTokens, 1},
    {"token_types", DType::I32, 2, {1, T}, kTypes, 1},
    {"mask", DType::I32, 2, {1, T}, kMask, 1},
};
const bmrt::InputKind kKinds[] = {bmrt::InputKind::Tokens, bmrt::InputKind::TokenTypes,
                                  bmrt::InputKind::Mask};
const bmrt::TensorRef kOutputs[] = {
    {"hidden", DType::F32, 3, {1, T, C}, kHidden, 1},
#ifdef FAKE_POOLED
    {"pooled", DType::F32, 2, {1, C}, kPooled, -1},
#endif
};
const bmrt::EntryPoint kEntries[] = {
    {"prefill", prefill, T, kInputs, kKinds, 3, kOutputs, (int)(sizeof kOutputs / sizeof kOutputs[0])},
};

const bmrt::ProgramInfo kProgram = {
    "fake_encoder.bmb", "embed", "FakeEncoder", "", bmrt::ModelKind::Encoder,
    V, T, kParams, 2, nullptr, 0, kParamBytes, 0, kActivationBytes,
    kEntries, 1,
    "greedy", 1.0, 1.0, 0,
    "byte",
};

} // namespace

int main(int argc, char **argv) { return bmrt::infer_main(argc, argv, kProgram); }
