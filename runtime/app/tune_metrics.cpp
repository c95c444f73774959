//===- app/tune_metrics.cpp - Accuracy and macro-F1 of a classifier -------===//
#include "app/tune_metrics.h"

#include "bmrt/context.h"

namespace bmrt {

ClassMetrics classMetrics(const std::vector<int32_t> &gold, const std::vector<int32_t> &predicted,
                          int numClasses) {
  if (gold.size() != predicted.size())
    fail("classMetrics: " + std::to_string(gold.size()) + " gold labels but " +
         std::to_string(predicted.size()) + " predictions");
  ClassMetrics m;
  m.examples = (int64_t)gold.size();
  m.f1.assign(numClasses, 0.0);
  m.support.assign(numClasses, 0);
  std::vector<int64_t> truePositive(numClasses, 0), predictedCount(numClasses, 0);
  int64_t correct = 0;
  for (size_t i = 0; i < gold.size(); ++i) {
    if (gold[i] < 0 || gold[i] >= numClasses || predicted[i] < 0 || predicted[i] >= numClasses)
      fail("classMetrics: a class index outside [0, " + std::to_string(numClasses) + ")");
    m.support[gold[i]] += 1;
    predictedCount[predicted[i]] += 1;
    if (gold[i] == predicted[i]) {
      truePositive[gold[i]] += 1;
      correct += 1;
    }
  }
  if (m.examples == 0)
    return m;
  m.accuracy = (double)correct / (double)m.examples;
  // F1 = 2·TP / (2·TP + FP + FN) = 2·TP / (support + predicted): the same
  // as 2PR/(P+R), and 0 rather than 0/0 for a class never predicted.
  double sum = 0;
  int present = 0;
  for (int c = 0; c < numClasses; ++c) {
    int64_t denominator = m.support[c] + predictedCount[c];
    if (denominator == 0)
      continue; // in neither gold nor predictions: not part of the mean
    m.f1[c] = 2.0 * (double)truePositive[c] / (double)denominator;
    sum += m.f1[c];
    present += 1;
  }
  m.macroF1 = sum / present;
  return m;
}

int32_t majorityClass(const std::vector<int32_t> &train, int numClasses) {
  std::vector<int64_t> count(numClasses, 0);
  for (int32_t c : train)
    if (c >= 0 && c < numClasses)
      count[c] += 1;
  int32_t best = 0;
  for (int c = 1; c < numClasses; ++c)
    if (count[c] > count[best])
      best = c;
  return best;
}

} // namespace bmrt
