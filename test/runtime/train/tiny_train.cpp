//===- tiny_train.cpp - A hand-written "compiled" training program --------===//
//
// What bmbc will emit for a train job, written by hand so train_main is
// tested without the compiler: the ProgramInfo/TrainInfo tables and the
// three train entries, made of the real runtime kernels.
//
//   x      = wte[tokens] + wpe[t]               [B*T, C]
//   h      = tanh(x . fc.w^T + fc.b)            [B*T, C]
//   logits = h . wte^T                          [B*T, V]   (tied head)
//   loss   = cross_entropy(logits, targets)     (fused classifier)
//
// test_train.py builds the same model in torch. Build variants:
//   TINY_C      width (default 8; 16 makes "another model" for the tests)
//   TINY_SGD    SGD with momentum and a constant schedule instead of AdamW
//               with clipping and a cosine schedule
// Test hooks (environment): TINY_TRAIN_SLEEP_MS slows every micro-batch
// (to signal a run mid-way), TINY_TRAIN_NAN_AT_STEP poisons that step's
// activations.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels_backward.h"
#include "bmrt/program.h"
#include "bmrt/training.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <unistd.h>

#ifndef TINY_C
#define TINY_C 8
#endif

namespace {

using namespace bmrt;

constexpr int64_t V = 257, C = TINY_C, T = 8, B = 4, R = B * T;

constexpr int64_t align(int64_t n) { return (n + 63) / 64 * 64; }

// One layout for params and grads (gradOffset == offset): every param is
// trainable, so the trainable group starts at 0 (TrainInfo::groupParamOffset).
constexpr int64_t kWte = 0;                                 // f32 [V, C]
constexpr int64_t kWpe = kWte + align(V * C * 4);           // f32 [T, C]
constexpr int64_t kFcW = kWpe + align(T * C * 4);           // f32 [C, C]
constexpr int64_t kFcB = kFcW + align(C * C * 4);           // f32 [C]
constexpr int64_t kParamBytes = kFcB + align(C * 4);

#ifdef TINY_SGD
constexpr int kSlots = 1;
#else
constexpr int kSlots = 2;
#endif
// Optimizer state: kSlots slots over the group, each laid out like the
// grads (optOffset == gradOffset within a slot; slot k at k * kParamBytes).
constexpr int64_t kOptBytes = kSlots * kParamBytes;

// Activations.
constexpr int64_t kTokens = 0;                      // i32 [B, T]
constexpr int64_t kTargets = kTokens + align(R * 4); // i32 [B, T]
constexpr int64_t kLosses = kTargets + align(R * 4); // f32 [B*T]
constexpr int64_t kX = kLosses + align(R * 4);       // f32 [R, C]
constexpr int64_t kPre = kX + align(R * C * 4);      // f32 [R, C]
constexpr int64_t kH = kPre + align(R * C * 4);      // f32 [R, C]
constexpr int64_t kLogits = kH + align(R * C * 4);   // f32 [R, V] (dlogits in place)
constexpr int64_t kDh = kLogits + align(R * V * 4);  // f32 [R, C]
constexpr int64_t kDpre = kDh + align(R * C * 4);    // f32 [R, C]
constexpr int64_t kDx = kDpre + align(R * C * 4);    // f32 [R, C]
constexpr int64_t kActivationBytes = kDx + align(R * C * 4);

// name, dtype, rank, shape, offset, stacked, frozen, init, a, b, gradOffset, optOffset, decay
const ParamInfo kParams[] = {
    {"wte", DType::F32, 2, {V, C}, kWte, false, false, InitKind::Normal, 0.3, 0, kWte, kWte, false},
    {"wpe", DType::F32, 2, {T, C}, kWpe, false, false, InitKind::Normal, 0.1, 0, kWpe, kWpe, false},
    {"fc.w", DType::F32, 2, {C, C}, kFcW, false, false, InitKind::Normal, 0.3, 0, kFcW, kFcW, true},
    {"fc.b", DType::F32, 1, {C}, kFcB, false, false, InitKind::Zeros, 0, 0, kFcB, kFcB, false},
};
constexpr int kNumParams = 4;

const char *const kWteParts[] = {"wte"};
const char *const kWpeParts[] = {"wpe"};
const char *const kFcWParts[] = {"fc.w"};
const char *const kFcBParts[] = {"fc.b"};
const NameRule kHfRules[] = {
    {"transformer.wte.weight", kWteParts, 1, 0, false, false},
    {"transformer.wpe.weight", kWpeParts, 1, 0, false, false},
    {"transformer.fc.weight", kFcWParts, 1, 0, false, false},
    {"transformer.fc.bias", kFcBParts, 1, 0, false, false},
    {"lm_head.weight", kWteParts, 1, 0, false, true},
};
const NameMap kNameMaps[] = {{"hf", kHfRules, 5}};

template <class P> P *at(void *base, int64_t offset) { return (P *)((char *)base + offset); }

void maybeSleep() {
  if (const char *ms = std::getenv("TINY_TRAIN_SLEEP_MS"))
    usleep((useconds_t)(std::atoi(ms) * 1000));
}

// Forward through the logits; returns nothing, fills x, pre, h, logits.
void forward(Context &ctx, const Buffers &buf, int64_t step) {
  const int32_t *tokens = at<int32_t>(buf.activations, kTokens);
  float *x = at<float>(buf.activations, kX), *pre = at<float>(buf.activations, kPre);
  float *h = at<float>(buf.activations, kH), *logits = at<float>(buf.activations, kLogits);
  const float *wte = at<float>(buf.params, kWte), *wpe = at<float>(buf.params, kWpe);
  embedding_forward<float>(ctx, x, tokens, wte, R, V, C);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c)
      x[r * C + c] += wpe[(r % T) * C + c];
  if (const char *nanAt = std::getenv("TINY_TRAIN_NAN_AT_STEP"))
    if (std::atoll(nanAt) == step)
      x[0] = NAN;
  gemm<float>(ctx, R, C, C, x, C, at<float>(buf.params, kFcW), C, Trans::T, pre, C,
              at<float>(buf.params, kFcB), Epilogue::None, nullptr);
  for (int64_t i = 0; i < R * C; ++i)
    h[i] = std::tanh(pre[i]);
  gemm<float>(ctx, R, V, C, h, C, wte, C, Trans::T, logits, V, nullptr, Epilogue::None,
              nullptr);
}

void forwardBackward(Context &ctx, const Buffers &buf, StepArgs &args) {
  maybeSleep();
  forward(ctx, buf, args.step);
  const int32_t *tokens = at<int32_t>(buf.activations, kTokens);
  const int32_t *targets = at<int32_t>(buf.activations, kTargets);
  float *losses = at<float>(buf.activations, kLosses);
  float *x = at<float>(buf.activations, kX), *pre = at<float>(buf.activations, kPre);
  float *h = at<float>(buf.activations, kH), *logits = at<float>(buf.activations, kLogits);
  float *dh = at<float>(buf.activations, kDh), *dpre = at<float>(buf.activations, kDpre);
  float *dx = at<float>(buf.activations, kDx);
  const float *wte = at<float>(buf.params, kWte), *fcw = at<float>(buf.params, kFcW);
  float *dwte = at<float>(buf.grads, kWte), *dwpe = at<float>(buf.grads, kWpe);
  float *dfcw = at<float>(buf.grads, kFcW), *dfcb = at<float>(buf.grads, kFcB);

  fused_classifier_forward_backward<float>(ctx, losses, logits, logits, targets, R, V, -100,
                                           args.dlossScale);
  float *dlogits = logits;
  gemm_ex<float>(ctx, Trans::T, Trans::N, V, C, R, dlogits, V, h, C, dwte, C, true);
  gemm_ex<float>(ctx, Trans::N, Trans::N, R, C, V, dlogits, V, wte, C, dh, C, false);
  fill_zero<float>(ctx, dpre, R * C);
  act_backward<float>(ctx, dpre, pre, dh, R * C, Epilogue::Tanh);
  gemm_ex<float>(ctx, Trans::T, Trans::N, C, C, R, dpre, C, x, C, dfcw, C, true);
  sum_rows<float>(ctx, dfcb, dpre, R, C);
  gemm_ex<float>(ctx, Trans::N, Trans::N, R, C, C, dpre, C, fcw, C, dx, C, false);
  embedding_backward<float>(ctx, dwte, tokens, dx, R, V, C);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c)
      dwpe[(r % T) * C + c] += dx[r * C + c];
}

void evaluate(Context &ctx, const Buffers &buf, StepArgs &args) {
  forward(ctx, buf, -1);
  fused_classifier_forward_backward<float>(
      ctx, at<float>(buf.activations, kLosses), (float *)nullptr,
      at<float>(buf.activations, kLogits), at<int32_t>(buf.activations, kTargets), R, V, -100,
      args.dlossScale);
}

int64_t numel(const ParamInfo &p) {
  int64_t n = 1;
  for (int d = 0; d < p.rank; ++d)
    n *= p.shape[d];
  return n;
}

extern const TrainInfo kTrain;

void optimizerStep(Context &ctx, const Buffers &buf, StepArgs &args) {
  double sq = 0;
  for (const ParamInfo &p : kParams)
    sq += grad_norm_squared<float>(ctx, at<float>(buf.grads, p.gradOffset), numel(p));
  args.gradNorm = std::sqrt(sq);
  if (kTrain.clipNorm > 0) {
    const double c = clip_coefficient(args.gradNorm, kTrain.clipNorm);
    if (c < 1)
      for (const ParamInfo &p : kParams)
        scale_inplace<float>(ctx, at<float>(buf.grads, p.gradOffset), numel(p), c);
  }
  for (const ParamInfo &p : kParams) {
    const int64_t n = numel(p);
    float *w = at<float>(buf.params, p.offset);
    const float *g = at<float>(buf.grads, p.gradOffset);
    float *m = at<float>(buf.optState, p.optOffset), *v = m + kParamBytes / 4;
    const double wd = p.decay ? kTrain.weightDecay : 0.0;
    if (kTrain.optimizer == OptimizerKind::AdamW)
      adamw_update<float>(ctx, w, g, m, v, n, args.lr, kTrain.beta1,
                          kTrain.beta2, kTrain.eps, wd, args.step);
    else
      sgd_update<float>(ctx, w, g, m, n, args.lr, kTrain.momentum, wd, args.step);
  }
  fill_zero<float>(ctx, (float *)buf.grads, kParamBytes / 4);
}

const TensorRef kInputs[] = {{"tokens", DType::I32, 2, {B, T}, kTokens, -1},
                             {"targets", DType::I32, 2, {B, T}, kTargets, -1}};
const TensorRef kOutputs[] = {{"losses", DType::F32, 1, {R}, kLosses, -1}};

// One unit: nothing is stacked.
const int64_t kUnits[] = {0, kParamBytes / 4};

const TrainInfo kTrain = {
    B, T, kParamBytes, kOptBytes,
#ifdef TINY_SGD
    OptimizerKind::SGD, kSlots,
    0.05, 0.9, 0.999, 1e-8, 0.01, 0.9, // lr, beta1, beta2, eps, weight decay, momentum
    0.0,                                // no clipping
    (int)LrSchedule::Constant, 0, 20,   // schedule, warmup, steps
#else
    OptimizerKind::AdamW, kSlots,
    0.02, 0.9, 0.95, 1e-8, 0.1, 0.0,
    1.0,
    (int)LrSchedule::Cosine, 2, 20,
#endif
    1, "", "byte",
    {"forward_backward", forwardBackward, kInputs, 2, kOutputs, 1},
    {"optimizer_step", optimizerStep, nullptr, 0, nullptr, 0},
    {"evaluate", evaluate, kInputs, 2, kOutputs, 1},
    TrainObjective::CausalLM, 0.0, -1, // objective, mask prob, mask id
    0, 0, 0,                            // eval_every, save_every, log_every
    0, 0, kParamBytes / 4, 16384,       // ZeRO stage, group offset, elements, align
    "fp32", 65536, 1000,                // precision, fp16 loss scale and window
    kUnits, 1,                          // units of the trainable group
};

const ProgramInfo kProgram = {
    "tiny_train.bmb", "pretrain", TINY_C == 8 ? "TinyLM" : "TinyLMWide", "",
    ModelKind::CausalLM, V, T, kParams, kNumParams, kNameMaps, 1, kParamBytes, 0,
    kActivationBytes, nullptr, 0, "greedy", 1.0, 1.0, 0, "byte", &kTrain,
};

} // namespace

int main(int argc, char **argv) { return bmrt::train_main(argc, argv, kProgram); }
