//===- cuda_attention_prefix_test.cpp - Prefix attention's refusals, no GPU ===//
//
// What the device forms of prefix tuning's attention (runtime/cuda/
// attention_prefix.cu) refuse on the host before launching anything, so a
// description-only Device (no GPU opened) reaches them: the host kernels'
// shape errors, in the host kernels' words, and the batch a grid cannot
// hold. An empty backward launches nothing.
//
//===----------------------------------------------------------------------===//
#include "cuda/device.h"
#include "cuda/kernels_cuda.h"

#include <gtest/gtest.h>

#include <string>

namespace {

namespace cu = bmrt::cuda;

template <class F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const bmrt::Error &e) {
    return e.what();
  }
  return "";
}

// One sequence of `rows` queries, 2 heads of 4 over 1 kv head.
bmrt::AttentionArgs args(int64_t rows, int64_t cap, int64_t start) {
  bmrt::AttentionArgs a;
  a.batch = 1, a.rows = rows, a.heads = 2, a.kvHeads = 1, a.headDim = 4;
  a.qRowStride = a.outRowStride = 8, a.kvRowStride = 4;
  a.qBatchStride = a.outBatchStride = rows * 8, a.kvBatchStride = rows * 4;
  a.cacheCapacity = cap, a.start = start;
  return a;
}

std::string forward(const bmrt::AttentionArgs &a, int64_t prefixRows) {
  cu::Device dev; // a description only: nothing is opened
  return errorOf([&] {
    cu::attention_prefix_forward(dev, a, prefixRows, nullptr, nullptr, nullptr, nullptr,
                                 nullptr, nullptr, nullptr, nullptr, nullptr);
  });
}

std::string backward(const bmrt::AttentionArgs &a, int64_t prefixRows) {
  cu::Device dev;
  return errorOf([&] {
    cu::attention_prefix_backward(dev, a, prefixRows, nullptr, nullptr, nullptr, nullptr,
                                  nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                  nullptr);
  });
}

TEST(CudaAttentionPrefix, ForwardRefusesAPrefixTheCacheCannotHold) {
  EXPECT_EQ(forward(args(3, 8, 2), 4), "attention_prefix_forward: 4 prefix rows and rows [2, 5) "
                                       "do not fit the KV cache capacity 8");
  EXPECT_EQ(forward(args(3, 8, 0), 0), "attention_prefix_forward: 0 prefix rows and rows [0, 3) "
                                       "do not fit the KV cache capacity 8");
  bmrt::AttentionArgs a = args(3, 8, 0);
  a.heads = 3; // not a multiple of kvHeads 2
  a.kvHeads = 2;
  EXPECT_EQ(forward(a, 4), "attention_prefix_forward: heads (3) is not a multiple of kvHeads (2)");
  a = args(1, 8, 0);
  a.batch = 70000;
  EXPECT_EQ(forward(a, 4), "attention_prefix_forward: batch 70000 exceeds 65535 on the GPU");
}

TEST(CudaAttentionPrefix, BackwardRefusesItsHostShapes) {
  EXPECT_EQ(backward(args(3, 3, 1), 4),
            "attention_prefix_backward: needs prefixRows >= 1 and start 0 (got 4, 1)");
  EXPECT_EQ(backward(args(3, 3, 0), 0),
            "attention_prefix_backward: needs prefixRows >= 1 and start 0 (got 0, 0)");
  bmrt::AttentionArgs a = args(3, 2, 0);
  const int32_t mask[2] = {1, 1};
  a.keyMask = mask;
  EXPECT_EQ(backward(a, 4), "attention_prefix_backward: the key mask's row length "
                            "(cacheCapacity 2) is shorter than rows 3");
  EXPECT_EQ(backward(args(0, 0, 0), 4), "") << "no rows: nothing to launch";
}

} // namespace
