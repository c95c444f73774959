//===- cuda_tuning_gpu_test.cu - The tuning kernels on the GPU vs the host's ===//
//
// The device forms of bmrt/tuning.h (runtime/cuda/tuning.cu) on random
// inputs against libbmrt's host kernels (host/tuning.cpp, themselves checked
// against torch by test/e2e/check_tune.py):
//  - soft embedding, mask-row gather and their backwards add the same fp32
//    values in the same order as the host (one thread per column, rows in
//    order): equal bit for bit;
//  - the verbalizer loss runs the host's double arithmetic
//    (bmrt/verbalizer_element.h) one example per block; only the libm's exp
//    and log (within 1 ulp in double) and fused multiply-adds differ, far
//    below fp32's rounding of the results: 1e-6 relative.
// Bad ids, positions and labels are reported with the host's words; the
// per-iteration gate writes 1 and 0.
// Needs a GPU: skipped without one (ctest label cuda-gpu).
//
//===----------------------------------------------------------------------===//
#include "bmrt/tuning.h"
#include "cuda/device.h"
#include "gpu_test.h"
#include "cuda/tuning_cuda.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using gpu_test::DeviceVector;
using gpu_test::expectNear;
using gpu_test::randomVector;

namespace cu = bmrt::cuda;
using bmrt::WordReduce;

class TuningGpu : public gpu_test::GpuTest {
protected:
  std::string deviceError() {
    try {
      cu::checkDeviceErrors(dev());
    } catch (const bmrt::Error &e) {
      return e.what();
    }
    return "";
  }
  // The device verbalizer loss against the host's on VerbalizerCase:
  // mask 1 reduced by `second`; d(logits) into its own buffer, or over the
  // logits (`alias`), or not asked for (`backward` false: evaluation).
  void compareVerbalizer(WordReduce second, bool alias, bool backward);
  bmrt::Context host;
};

void expectBitwise(const std::vector<float> &got, const std::vector<float> &want,
                   const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++)
    ASSERT_EQ(got[i], want[i]) << what << " at " << i;
}

TEST_F(TuningGpu, SoftEmbeddingAndItsBackwardAreTheHostsBits) {
  const int64_t num = 13, numSoft = 3, dim = 260, rows = 10;
  auto table = randomVector(num * dim, 1), soft = randomVector(numSoft * dim, 2),
       dout = randomVector(rows * dim, 3);
  // Repeated vocabulary and soft ids add in row order.
  std::vector<int32_t> ids = {14, 0, 12, 13, 5, 14, 0, 15, 12, 14};
  std::vector<float> out(rows * dim), dtable = randomVector(num * dim, 4),
      dsoft = randomVector(numSoft * dim, 5);
  DeviceVector<int32_t> dids(ids);
  DeviceVector<float> dtab(table), dsft(soft), ddout(dout), dres(out), dgt(dtable), dgs(dsoft);
  bmrt::soft_embedding_forward<float>(host, out.data(), ids.data(), table.data(), soft.data(),
                                      rows, num, numSoft, dim);
  bmrt::soft_embedding_backward<float>(host, dtable.data(), dsoft.data(), ids.data(),
                                       dout.data(), rows, num, numSoft, dim);
  cu::soft_embedding_forward(dev(), dres.p, dids.p, dtab.p, dsft.p, rows, num, numSoft, dim);
  cu::soft_embedding_backward(dev(), dgt.p, dgs.p, dids.p, ddout.p, rows, num, numSoft, dim);
  EXPECT_EQ(deviceError(), "");
  expectBitwise(dres.get(dev().compute), out, "soft embedding forward");
  expectBitwise(dgt.get(dev().compute), dtable, "soft embedding backward, table");
  expectBitwise(dgs.get(dev().compute), dsoft, "soft embedding backward, soft rows");
  // A frozen table (null): only the soft rows get gradients.
  std::vector<float> dsoft2 = randomVector(numSoft * dim, 6);
  DeviceVector<float> dgs2(dsoft2);
  bmrt::soft_embedding_backward<float>(host, nullptr, dsoft2.data(), ids.data(), dout.data(),
                                       rows, num, numSoft, dim);
  cu::soft_embedding_backward(dev(), nullptr, dgs2.p, dids.p, ddout.p, rows, num, numSoft, dim);
  EXPECT_EQ(deviceError(), "");
  expectBitwise(dgs2.get(dev().compute), dsoft2, "soft embedding backward, frozen table");
  // An id past the soft rows.
  DeviceVector<int32_t> dbad(std::vector<int32_t>{1, 16});
  cu::soft_embedding_forward(dev(), dres.p, dbad.p, dtab.p, dsft.p, 2, num, numSoft, dim);
  EXPECT_EQ(deviceError(),
            "soft_embedding: id 16 at row 1 is outside [0, 16) (vocabulary plus soft tokens)");
  EXPECT_EQ(deviceError(), ""); // reported once, then cleared
}

// A per-iteration delta's gate, set on the compute stream.
TEST_F(TuningGpu, IterationGateOpensAndCloses) {
  DeviceVector<float> gate(std::vector<float>{7.0f});
  cu::iteration_gate(dev(), gate.p, true);
  EXPECT_EQ(gate.get(dev().compute), std::vector<float>{1.0f});
  cu::iteration_gate(dev(), gate.p, false);
  EXPECT_EQ(gate.get(dev().compute), std::vector<float>{0.0f});
}

TEST_F(TuningGpu, MaskRowGatherAndItsBackwardAreTheHostsBits) {
  const int64_t B = 3, T = 7, M = 2, D = 130;
  auto x = randomVector(B * T * D, 10), dout = randomVector(B * M * D, 11);
  std::vector<int32_t> pos = {2, 5, 6, 6, 0, 3}; // example 1's masks share a row
  std::vector<float> out(B * M * D), dx = randomVector(B * T * D, 12);
  DeviceVector<int32_t> dpos(pos);
  DeviceVector<float> dxin(x), ddout(dout), dres(out), dgx(dx);
  bmrt::gather_rows_forward<float>(host, out.data(), x.data(), pos.data(), B, T, M, D);
  bmrt::gather_rows_backward<float>(host, dx.data(), dout.data(), pos.data(), B, T, M, D);
  cu::gather_rows_forward(dev(), dres.p, dxin.p, dpos.p, B, T, M, D);
  cu::gather_rows_backward(dev(), dgx.p, ddout.p, dpos.p, B, T, M, D);
  EXPECT_EQ(deviceError(), "");
  expectBitwise(dres.get(dev().compute), out, "gather forward");
  expectBitwise(dgx.get(dev().compute), dx, "gather backward");
  DeviceVector<int32_t> dbad(std::vector<int32_t>{2, 5, 7, 1, 0, 0});
  cu::gather_rows_forward(dev(), dres.p, dxin.p, dbad.p, B, T, M, D);
  EXPECT_EQ(deviceError(), "gather_rows: mask position 7 of example 1 is outside [0, 7)");
}

// Two masks (reduce first and max, then mean), three classes of up to two
// words of up to three tokens, calibration, an ignored example.
struct VerbalizerCase {
  bmrt::VerbalizerShape s;
  std::vector<WordReduce> reduce;
  std::vector<int32_t> labels, words;
  std::vector<float> logits, calibration;
  VerbalizerCase(WordReduce second) {
    s.batch = 4, s.masks = 2, s.labels = 3, s.words = 2, s.wordTokens = 3, s.vocab = 97;
    reduce = {WordReduce::First, second};
    labels = {2, -100, 0, 1};
    // [M, C, W, K], -1 padded; class 1 of mask 0 has one word.
    words = {5, 6, -1, 7, -1, -1, /**/ 8, 9, 10, 11, -1, -1, /**/ 12, -1, -1, 13, 14, -1,
             20, 21, 22, 23, -1, -1, /**/ 24, -1, -1, 25, 26, -1, /**/ 27, 28, -1, 96, -1, -1};
    logits = randomVector((size_t)(s.batch * s.masks * s.vocab), 20, 2.0f);
    calibration = randomVector((size_t)(s.masks * s.labels * s.words), 21, 0.1f);
    for (float &c : calibration)
      c = 0.2f + std::fabs(c);
  }
};

void TuningGpu::compareVerbalizer(WordReduce second, bool alias, bool backward) {
  VerbalizerCase c(second);
  const auto &s = c.s;
  const size_t B = (size_t)s.batch, MCW = (size_t)(s.masks * s.labels * s.words);
  std::vector<float> losses(B), scores(B * s.labels), probs(B * MCW),
      dlogits(c.logits.size(), 7.0f), logits = c.logits;
  float *hostD = !backward ? nullptr : alias ? logits.data() : dlogits.data();
  bmrt::verbalizer_loss_forward_backward<float>(
      host, s, c.reduce.data(), losses.data(), scores.data(), probs.data(), hostD, logits.data(),
      c.labels.data(), c.words.data(), c.calibration.data(), -100, 0.25);
  DeviceVector<float> dl{std::vector<float>(B)}, ds{std::vector<float>(scores.size())},
      dp{std::vector<float>(probs.size())}, dd{std::vector<float>(c.logits.size(), 7.0f)},
      dlog(c.logits), dcal(c.calibration);
  DeviceVector<int32_t> dlab(c.labels), dwords(c.words);
  float *devD = !backward ? nullptr : alias ? dlog.p : dd.p;
  cu::verbalizer_loss_forward_backward(dev(), s, c.reduce.data(), dl.p, ds.p, dp.p, devD, dlog.p,
                                       dlab.p, dwords.p, dcal.p, -100, 0.25);
  EXPECT_EQ(deviceError(), "");
  expectNear(dl.get(dev().compute), losses, 1e-6f, "losses");
  EXPECT_EQ(losses[1], 0.0f); // the ignored example
  expectNear(ds.get(dev().compute), scores, 1e-6f, "scores");
  expectNear(dp.get(dev().compute), probs, 1e-6f, "word probabilities");
  if (backward)
    expectNear(alias ? dlog.get(dev().compute) : dd.get(dev().compute),
               alias ? logits : dlogits, 1e-6f, "d(logits)");
  else
    expectBitwise(dd.get(dev().compute), dlogits, "d(logits) untouched");
}

TEST_F(TuningGpu, VerbalizerFirstAndMaxWithItsOwnGradientBuffer) {
  compareVerbalizer(WordReduce::Max, false, true);
}

TEST_F(TuningGpu, VerbalizerFirstAndMeanWithTheGradientOverTheLogits) {
  compareVerbalizer(WordReduce::Mean, true, true);
}

TEST_F(TuningGpu, VerbalizerEvaluationWritesNoGradient) {
  compareVerbalizer(WordReduce::Mean, false, false);
}

TEST_F(TuningGpu, VerbalizerReportsABadLabelAndALabelWordOutsideTheVocabulary) {
  VerbalizerCase c(WordReduce::First);
  const auto &s = c.s;
  DeviceVector<float> dl(std::vector<float>(s.batch)), ds(std::vector<float>(s.batch * s.labels)),
      dp(std::vector<float>(s.batch * s.masks * s.labels * s.words)), dlog(c.logits),
      dcal(c.calibration);
  std::vector<int32_t> labels = c.labels;
  labels[2] = 3;
  DeviceVector<int32_t> dlab(labels), dwords(c.words);
  cu::verbalizer_loss_forward_backward(dev(), s, c.reduce.data(), dl.p, ds.p, dp.p, nullptr,
                                       dlog.p, dlab.p, dwords.p, dcal.p, -100, 1.0);
  EXPECT_EQ(deviceError(),
            "verbalizer_loss: label 3 of example 2 is not a class index in [0, 3)");
  std::vector<int32_t> words = c.words;
  words[1] = 97;
  DeviceVector<int32_t> dlab2(c.labels), dwords2(words);
  cu::verbalizer_loss_forward_backward(dev(), s, c.reduce.data(), dl.p, ds.p, dp.p, nullptr,
                                       dlog.p, dlab2.p, dwords2.p, dcal.p, -100, 1.0);
  EXPECT_EQ(deviceError(),
            "verbalizer_loss: label word token 97 is outside the vocabulary [0, 97)");
}

} // namespace
