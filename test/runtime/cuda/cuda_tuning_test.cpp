//===- cuda_tuning_test.cpp - The tuning kernels' refusals, without a GPU -===//
//
// What the device forms of bmrt/tuning.h (runtime/cuda/tuning.cu) refuse on
// the host before launching anything, so a description-only Device (no GPU
// opened) reaches them: the shapes the cuda backend does not take.
//
//===----------------------------------------------------------------------===//
#include "cuda/device.h"
#include "cuda/tuning_cuda.h"

#include <gtest/gtest.h>

#include <string>

namespace {

template <class F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const bmrt::Error &e) {
    return e.what();
  }
  return "";
}

TEST(CudaTuning, MoreMasksThanTheKernelTakesAreRefused) {
  bmrt::cuda::Device dev; // a description only: nothing is opened
  bmrt::VerbalizerShape s;
  s.batch = 2, s.masks = 17, s.labels = 2, s.words = 1, s.wordTokens = 1, s.vocab = 10;
  EXPECT_EQ(errorOf([&] {
              bmrt::cuda::verbalizer_loss_forward_backward(dev, s, nullptr, nullptr, nullptr,
                                                           nullptr, nullptr, nullptr, nullptr,
                                                           nullptr, nullptr, -100, 1.0);
            }),
            "verbalizer_loss_forward_backward: the cuda backend takes up to 16 masks per "
            "prompt (got 17)");
  s.masks = 1, s.labels = 0;
  EXPECT_EQ(errorOf([&] {
              bmrt::cuda::verbalizer_loss_forward_backward(dev, s, nullptr, nullptr, nullptr,
                                                           nullptr, nullptr, nullptr, nullptr,
                                                           nullptr, nullptr, -100, 1.0);
            }),
            "verbalizer_loss_forward_backward: bad shape (batch 2, masks 1, labels 0, words 1, "
            "word tokens 1, vocab 10)");
}

TEST(CudaTuning, GathersRefuseAnEmptyRowWidth) {
  bmrt::cuda::Device dev;
  EXPECT_EQ(errorOf([&] {
              bmrt::cuda::soft_embedding_forward(dev, nullptr, nullptr, nullptr, nullptr, 4, 10,
                                                 1, 0);
            }),
            "soft_embedding_forward: needs rows >= 0 and dim >= 1 (got rows 4, dim 0)");
  EXPECT_EQ(errorOf([&] {
              bmrt::cuda::gather_rows_backward(dev, nullptr, nullptr, nullptr, 2, 8, 1, 0);
            }),
            "gather_rows_backward: needs rows >= 0 and dim >= 1 (got rows 2, dim 0)");
}

// Nothing to do launches nothing (the device is not open): an empty batch.
TEST(CudaTuning, AnEmptyBatchLaunchesNothing) {
  bmrt::cuda::Device dev;
  bmrt::VerbalizerShape s;
  s.batch = 0, s.masks = 1, s.labels = 2, s.words = 1, s.wordTokens = 1, s.vocab = 10;
  EXPECT_EQ(errorOf([&] {
              bmrt::cuda::verbalizer_loss_forward_backward(dev, s, nullptr, nullptr, nullptr,
                                                           nullptr, nullptr, nullptr, nullptr,
                                                           nullptr, nullptr, -100, 1.0);
              bmrt::cuda::soft_embedding_backward(dev, nullptr, nullptr, nullptr, nullptr, 0,
                                                  10, 1, 4);
            }),
            "");
}

} // namespace
