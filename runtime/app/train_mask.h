//===- app/train_mask.h - BERT's masked-LM batches ------------------------===//
//
// The masked-LM objective (TrainObjective::MaskedLM, docs/training-ir.md):
// each token of a window is picked with probability maskProb; a picked
// token's target is its id and its input becomes maskId (80%), a uniformly
// random id (10%) or stays (10%), as in Devlin et al. 2018 and transformers'
// DataCollatorForLanguageModeling; the other targets are -100. The draws are
// Philox keyed by (seed, step, micro-step, element), so a resumed run masks
// exactly as an uninterrupted one.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TRAIN_MASK_H
#define BMRT_APP_TRAIN_MASK_H

#include "bmrt/program.h"

#include <cstdint>

namespace bmrt {

/// Masks `rows` tokens in place and writes their targets. `step` and
/// `microStep` key the draws (evaluation passes its batch index and
/// kEvalMicroStep so that every evaluation masks a batch alike).
void maskTokens(const TrainInfo &t, int64_t vocab, uint64_t seed, int64_t step,
                uint32_t microStep, int32_t *tokens, int32_t *targets, int64_t rows);

constexpr uint32_t kEvalMicroStep = 0xFFFFFFFFu;

} // namespace bmrt

#endif // BMRT_APP_TRAIN_MASK_H
