//===- app/tune_batch.cpp - Prompt-assembled examples into a tune entry ---===//
#include "app/tune_batch.h"

#include "bmrt/json.h"

#include <cstring>

namespace bmrt {

namespace {

const TensorRef *findRef(const TensorRef *list, int count, const char *name) {
  for (int i = 0; i < count; ++i)
    if (std::strcmp(list[i].name, name) == 0)
      return &list[i];
  return nullptr;
}

const TensorRef &needRef(const TrainEntry &e, const char *name) {
  const TensorRef *r = findRef(e.inputs, e.numInputs, name);
  if (!r)
    fail(std::string("tune entry ") + e.name + " has no input '" + name + "' (a bmbc bug)");
  return *r;
}

int64_t numel(const TensorRef &r) {
  int64_t n = 1;
  for (int d = 0; d < r.rank; ++d)
    n *= r.shape[d];
  return n;
}

} // namespace

TunePrompt readTunePrompt(const ProgramInfo &program, const Tokenizer &tok) {
  const TuneInfo &tune = *program.tune;
  TunePrompt p;
  json::Value plan = json::parse(tune.prompt, std::string(program.job) + " prompt plan");
  readPromptPlan(plan, std::string(program.job) + " prompt plan", p.tmpl, p.verbalizers);
  if (const json::Value *vs = plan.get("verbalizers"))
    for (const json::Value &v : vs->array) {
      const json::Value *c = v.get("calibrate");
      p.calibrate.push_back(c && c->kind == json::Value::Kind::Bool && c->boolean);
    }
  for (const PromptSegment &s : p.tmpl.segments)
    if (s.kind == PromptSegment::Kind::Field || s.kind == PromptSegment::Kind::Meta)
      p.fields.push_back(s.text);
  const int64_t M = tune.numMasks, C = tune.numLabels, W = tune.maxWords, K = tune.maxWordTokens;
  if ((int64_t)p.verbalizers.size() != M)
    fail(std::string(program.job) + ": the prompt plan has " +
         std::to_string(p.verbalizers.size()) + " verbalizers for " + std::to_string(M) +
         " masks (a bmbc bug)");
  p.labelWords.assign((size_t)(M * C * W * K), -1);
  for (int64_t m = 0; m < M; ++m) {
    const PromptVerbalizer &v = p.verbalizers[(size_t)m];
    auto ids = labelWordIds(v, p.tmpl, tok, (size_t)m);
    for (int64_t c = 0; c < C && c < (int64_t)ids.size(); ++c)
      for (int64_t w = 0; w < W && w < (int64_t)ids[c].size(); ++w) {
        const std::vector<int32_t> &word = ids[c][w];
        if ((int64_t)word.size() > K)
          fail("label word '" + v.words[c][w] + "' of label '" + v.labels[c] + "' is " +
               std::to_string(word.size()) + " tokens; the tune program takes at most " +
               std::to_string(K) + " per word (TuneInfo::maxWordTokens): choose a shorter word");
        for (size_t k = 0; k < word.size(); ++k)
          p.labelWords[(size_t)(((m * C + c) * W + w) * K + (int64_t)k)] = word[k];
      }
  }
  return p;
}

std::vector<TuneExample> assembleExamples(const std::vector<LabelledExample> &examples,
                                          const TunePrompt &prompt, const Tokenizer &tok) {
  std::vector<TuneExample> out;
  out.reserve(examples.size());
  for (const LabelledExample &e : examples)
    out.push_back({assemblePrompt(prompt.tmpl, e.example, tok), e.label});
  return out;
}

void writeTuneInputs(const ProgramInfo &program, const TrainEntry &e, TuneMemory &mem,
                     const TuneExample *const *batch, int64_t n, const TunePrompt &prompt,
                     const std::vector<double> &calibration) {
  const TrainInfo &t = *program.train;
  const TuneInfo &tune = *program.tune;
  const int64_t B = t.batch, T = t.seq, M = tune.numMasks;
  const TensorRef &tokensRef = needRef(e, "tokens");
  const TensorRef &maskPosRef = needRef(e, "mask_pos");
  const TensorRef &labelsRef = needRef(e, "labels");
  const TensorRef *mask = findRef(e.inputs, e.numInputs, "mask");
  const TensorRef *types = findRef(e.inputs, e.numInputs, "token_types");
  std::vector<int32_t> tokens((size_t)(B * T), 0), maskPos((size_t)(B * M), 0),
      labels((size_t)B, -100), attention(mask ? (size_t)(B * T) : 0, 0);
  for (int64_t b = 0; b < n; ++b) {
    const AssembledPrompt &a = batch[b]->prompt;
    if ((int64_t)a.ids.size() > T || (int64_t)a.maskPositions.size() != M)
      fail("an assembled prompt of " + std::to_string(a.ids.size()) + " tokens and " +
           std::to_string(a.maskPositions.size()) + " masks does not fit [" + std::to_string(T) +
           "] with " + std::to_string(M) + " masks (a bmbc bug)");
    for (size_t i = 0; i < a.ids.size(); ++i)
      tokens[(size_t)(b * T) + i] = a.ids[i];
    for (const auto &[pos, k] : a.softSlots)
      tokens[(size_t)(b * T + pos)] = (int32_t)(program.vocab + k);
    if (mask)
      for (size_t i = 0; i < a.ids.size(); ++i)
        attention[(size_t)(b * T) + i] = 1;
    for (int64_t m = 0; m < M; ++m)
      maskPos[(size_t)(b * M + m)] = (int32_t)a.maskPositions[(size_t)m];
    labels[(size_t)b] = batch[b]->label;
  }
  mem.writeInput(tokensRef, tokens.data(), tokens.size() * sizeof(int32_t));
  mem.writeInput(maskPosRef, maskPos.data(), maskPos.size() * sizeof(int32_t));
  mem.writeInput(labelsRef, labels.data(), labels.size() * sizeof(int32_t));
  if (mask)
    mem.writeInput(*mask, attention.data(), attention.size() * sizeof(int32_t));
  if (types) { // one segment: every token type 0
    const std::vector<int32_t> zeros((size_t)(B * T), 0);
    mem.writeInput(*types, zeros.data(), zeros.size() * sizeof(int32_t));
  }
  // A soft verbalizer's entries read neither label words nor calibration.
  if (const TensorRef *words = findRef(e.inputs, e.numInputs, "label_words")) {
    if (numel(*words) != (int64_t)prompt.labelWords.size())
      fail("label_words of the tune entry hold " + std::to_string(numel(*words)) + " ids, not " +
           std::to_string(prompt.labelWords.size()) + " (a bmbc bug)");
    mem.writeInput(*words, prompt.labelWords.data(), prompt.labelWords.size() * sizeof(int32_t));
  }
  if (const TensorRef *calib = findRef(e.inputs, e.numInputs, "calibration")) {
    const size_t count = (size_t)numel(*calib);
    if (calib->dtype == DType::F64) {
      mem.writeInput(*calib, calibration.data(), count * sizeof(double));
    } else {
      std::vector<float> f(count);
      for (size_t i = 0; i < count; ++i)
        f[i] = (float)calibration[i];
      mem.writeInput(*calib, f.data(), count * sizeof(float));
    }
  }
}

std::vector<double> readTuneOutput(const TrainEntry &e, TuneMemory &mem, const char *name) {
  const TensorRef *r = findRef(e.outputs, e.numOutputs, name);
  if (!r)
    return {};
  const size_t count = (size_t)numel(*r);
  std::vector<double> out(count);
  if (r->dtype == DType::F64) {
    mem.readOutput(*r, out.data(), count * sizeof(double));
    return out;
  }
  std::vector<float> f(count);
  mem.readOutput(*r, f.data(), count * sizeof(float));
  for (size_t i = 0; i < count; ++i)
    out[i] = (double)f[i];
  return out;
}

} // namespace bmrt
