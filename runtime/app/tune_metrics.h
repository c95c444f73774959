//===- app/tune_metrics.h - Accuracy and macro-F1 of a classifier ---------===//
//
// What the tune executable reports on its held-out split. Macro-F1 is the
// unweighted mean of 2·P·R / (P + R) over the classes that occur among the
// gold or the predicted labels (scikit-learn's f1_score(average="macro")
// with its default labels); a class never predicted, or predicted but never
// true, has F1 = 0.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TUNE_METRICS_H
#define BMRT_APP_TUNE_METRICS_H

#include <cstdint>
#include <vector>

namespace bmrt {

struct ClassMetrics {
  int64_t examples = 0;
  double accuracy = 0;
  double macroF1 = 0;
  std::vector<double> f1;        // per class
  std::vector<int64_t> support;  // true examples per class
};

/// `gold` and `predicted` are class indices in [0, numClasses).
ClassMetrics classMetrics(const std::vector<int32_t> &gold, const std::vector<int32_t> &predicted,
                          int numClasses);

/// The most frequent class of `train` (ties: the lowest index): the
/// majority baseline predicts it for every example.
int32_t majorityClass(const std::vector<int32_t> &train, int numClasses);

} // namespace bmrt

#endif // BMRT_APP_TUNE_METRICS_H
