//===- fake_lm.cpp - A hand-written "compiled" causal LM for the CLI tests -===//
//
// What bmbc emits for an infer job is a ProgramInfo table plus entry points;
// this file writes both by hand so the infer app is tested without the
// compiler. The "model" is tiny and deterministic, and test_cli.py computes
// the same function with numpy from the same safetensors file:
//   cache[p] = token at position p                         (the "KV cache")
//   hidden[r] = probe[token_r] + p_r                        ([rows, C])
//   logits = emb[t_last] + prev[t_{last-1}] (if last > 0) + pos[last]
// where `last` is the position of the last row of the call. Decoding thus
// depends on the state written by earlier calls and on the start position,
// which is what the app must get right. The entry points also check the
// app's side of the contract (rows within capacity, padding rows zeroed) and
// fail loudly if it is broken.
//
// Built twice: FAKE_TOKENIZER names the job's tokenizer setting ("byte", or
// "" to test runs without a tokenizer).
//
//===----------------------------------------------------------------------===//
#include "bmrt/program.h"

#include <string>

#ifndef FAKE_TOKENIZER
#define FAKE_TOKENIZER "byte"
#endif

namespace {

using bmrt::DType;

constexpr int64_t V = 257; // 256 bytes + EOS
constexpr int64_t T = 12;  // context
constexpr int64_t C = 4;   // width of "hidden"

// Params, packed and 64-byte aligned like the memory plan.
constexpr int64_t kEmb = 0;                                  // f32 [V, V]
constexpr int64_t kPrev = kEmb + (V * V * 4 + 63) / 64 * 64; // f32 [V, V]
constexpr int64_t kPos = kPrev + (V * V * 4 + 63) / 64 * 64; // f32 [T, V]
constexpr int64_t kProbe = kPos + (T * V * 4 + 63) / 64 * 64; // f32 [V, C]
constexpr int64_t kParamBytes = kProbe + (V * C * 4 + 63) / 64 * 64;

// Activations: prefill's tensors, then decode's.
constexpr int64_t kPrefillTokens = 0;     // i32 [1, T]
constexpr int64_t kPrefillLogits = 64;    // f32 [1, V]
constexpr int64_t kPrefillHidden = 1152;  // f32 [1, T, C]
constexpr int64_t kDecodeTokens = 1344;   // i32 [1, 1]
constexpr int64_t kDecodeLogits = 1408;   // f32 [1, V]
constexpr int64_t kDecodeHidden = 2496;   // f32 [1, 1, C]
constexpr int64_t kActivationBytes = 2560;
constexpr int64_t kStateBytes = 64;       // i32 [T] token cache

const bmrt::ParamInfo kParams[] = {
    {"emb", DType::F32, 2, {V, V}, kEmb, false, false},
    {"prev", DType::F32, 2, {V, V}, kPrev, false, false},
    {"pos", DType::F32, 2, {T, V}, kPos, false, false},
    {"probe", DType::F32, 2, {V, C}, kProbe, false, false},
};

// The "hf" layout: emb and prev stacked into one table, pos transposed.
const char *const kTables[] = {"emb", "prev"};
const char *const kPosParts[] = {"pos"};
const char *const kProbeParts[] = {"probe"};
const bmrt::NameRule kHfRules[] = {
    {"lm.tables.weight", kTables, 2, 0, false, false},
    {"lm.positions.weight", kPosParts, 1, 0, true, false},
    {"probe.weight", kProbeParts, 1, 0, false, false},
};
const bmrt::NameMap kNameMaps[] = {{"hf", kHfRules, 3}};

void forward(bmrt::Context &, const bmrt::Buffers &buf, int64_t start, int64_t rows,
             int64_t capacity, int64_t tokensAt, int64_t logitsAt, int64_t hiddenAt) {
  if (rows < 1 || rows > capacity || start < 0 || start + rows > T)
    bmrt::fail("fake_lm: called with start " + std::to_string(start) + ", rows " +
               std::to_string(rows));
  const char *params = (const char *)buf.params;
  const float *emb = (const float *)(params + kEmb);
  const float *prev = (const float *)(params + kPrev);
  const float *pos = (const float *)(params + kPos);
  const float *probe = (const float *)(params + kProbe);
  char *act = (char *)buf.activations;
  const int32_t *tokens = (const int32_t *)(act + tokensAt);
  float *logits = (float *)(act + logitsAt);
  float *hidden = (float *)(act + hiddenAt);
  int32_t *cache = (int32_t *)buf.state;

  for (int64_t r = rows; r < capacity; r++)
    if (tokens[r] != 0)
      bmrt::fail("fake_lm: padding row " + std::to_string(r) + " of the tokens is not zero");
  for (int64_t r = 0; r < rows; r++) {
    int32_t t = tokens[r];
    if (t < 0 || t >= V)
      bmrt::fail("fake_lm: token " + std::to_string(t) + " reached the model");
    cache[start + r] = t;
    for (int64_t c = 0; c < C; c++)
      hidden[r * C + c] = probe[t * C + c] + (float)(start + r);
  }
  int64_t last = start + rows - 1;
  for (int64_t v = 0; v < V; v++) {
    float x = emb[cache[last] * V + v] + pos[last * V + v];
    if (last > 0)
      x += prev[cache[last - 1] * V + v];
    logits[v] = x;
  }
}

void prefill(bmrt::Context &ctx, const bmrt::Buffers &buf, int64_t start, int64_t rows) {
  forward(ctx, buf, start, rows, T, kPrefillTokens, kPrefillLogits, kPrefillHidden);
}
void decode(bmrt::Context &ctx, const bmrt::Buffers &buf, int64_t start, int64_t rows) {
  forward(ctx, buf, start, rows, 1, kDecodeTokens, kDecodeLogits, kDecodeHidden);
}

// name, dtype, rank, shape, offset, rowsDim
const bmrt::TensorRef kPrefillInputs[] = {
    {"tokens", DType::I32, 2, {1, T}, kPrefillTokens, 1}};
const bmrt::TensorRef kPrefillOutputs[] = {
    {"logits", DType::F32, 2, {1, V}, kPrefillLogits, -1},
    {"hidden", DType::F32, 3, {1, T, C}, kPrefillHidden, 1}};
const bmrt::TensorRef kDecodeInputs[] = {{"tokens", DType::I32, 2, {1, 1}, kDecodeTokens, 1}};
const bmrt::TensorRef kDecodeOutputs[] = {
    {"logits", DType::F32, 2, {1, V}, kDecodeLogits, -1},
    {"hidden", DType::F32, 3, {1, 1, C}, kDecodeHidden, 1}};
const bmrt::InputKind kTokenKinds[] = {bmrt::InputKind::Tokens};

const bmrt::EntryPoint kEntries[] = {
    {"prefill", prefill, T, kPrefillInputs, kTokenKinds, 1, kPrefillOutputs, 2},
    {"decode", decode, 1, kDecodeInputs, kTokenKinds, 1, kDecodeOutputs, 2},
};

const bmrt::ProgramInfo kProgram = {
    "fake_lm.bmb", "chat", "FakeLM", "fake_lm.safetensors", bmrt::ModelKind::CausalLM,
    V, T, kParams, 4, kNameMaps, 1, kParamBytes, kStateBytes, kActivationBytes,
    kEntries, 2,
    "top_k", 0.5, 0.9, 3, // the job's sampling = top_k(3, temperature = 0.5)
    FAKE_TOKENIZER,
};

} // namespace

int main(int argc, char **argv) { return bmrt::infer_main(argc, argv, kProgram); }
