//===- gemm_api_test.cpp - Context, profiling and gemm's argument checks --===//
//
// What is not numerics: fail() throws bmrt::Error, profiling counts only
// when switched on and prints a sorted table, gemm routes m == 1 to the gemv
// kind, and bad arguments fail with a message naming the argument instead of
// reading out of bounds. The numerics are in gemm_reference_test.py.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

using namespace bmrt;

namespace {

// Runs fn, expecting a bmrt::Error whose message contains `needle`.
template <class F> void expectError(F &&fn, const std::string &needle) {
  try {
    fn();
    ADD_FAILURE() << "expected bmrt::Error containing '" << needle << "'";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message: " << e.what();
  }
}

} // namespace

TEST(Context, FailThrowsErrorWithMessage) {
  try {
    fail("bad token id 7");
    FAIL() << "fail() returned";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "bad token id 7");
  }
}

TEST(Context, KernelKindNamesAreDistinct) {
  std::set<std::string> names;
  for (int i = 0; i < (int)KernelKind::Count; i++)
    names.insert(kernelKindName((KernelKind)i));
  EXPECT_EQ(names.size(), (size_t)KernelKind::Count);
  EXPECT_STREQ(kernelKindName(KernelKind::Gemm), "gemm");
  EXPECT_STREQ(kernelKindName(KernelKind::Gemv), "gemv");
}

TEST(Context, ProfileScopeCountsOnlyWhenProfiling) {
  Context ctx;
  { ProfileScope p(ctx, KernelKind::Norm); }
  EXPECT_EQ(ctx.calls[(int)KernelKind::Norm], 0);
  ctx.profile = true;
  { ProfileScope p(ctx, KernelKind::Norm); }
  { ProfileScope p(ctx, KernelKind::Norm); }
  EXPECT_EQ(ctx.calls[(int)KernelKind::Norm], 2);
  EXPECT_GE(ctx.seconds[(int)KernelKind::Norm], 0.0);
  EXPECT_EQ(ctx.calls[(int)KernelKind::Gemm], 0);
}

TEST(Context, PrintProfileSortsByTime) {
  Context ctx;
  ctx.seconds[(int)KernelKind::Softmax] = 1.0, ctx.calls[(int)KernelKind::Softmax] = 3;
  ctx.seconds[(int)KernelKind::Gemm] = 3.0, ctx.calls[(int)KernelKind::Gemm] = 10;
  testing::internal::CaptureStderr();
  printProfile(ctx);
  std::string out = testing::internal::GetCapturedStderr();
  size_t gemmAt = out.find("gemm"), softmaxAt = out.find("softmax");
  ASSERT_NE(gemmAt, std::string::npos) << out;
  ASSERT_NE(softmaxAt, std::string::npos) << out;
  EXPECT_LT(gemmAt, softmaxAt) << out;
  EXPECT_NE(out.find("75.0%"), std::string::npos) << out; // 3 s of 4
  EXPECT_EQ(out.find("attention"), std::string::npos) << "kinds never called: " << out;
}

TEST(Gemm, RoutesBatchOneToGemvKind) {
  const int64_t n = 5, k = 3;
  std::vector<float> a(64 * k, 1.0f), b(n * k, 1.0f), c(64 * n);
  Context ctx;
  ctx.profile = true;
  gemm<float>(ctx, 1, n, k, a.data(), k, b.data(), k, Trans::T, c.data(), n, nullptr,
              Epilogue::None, nullptr);
  gemm<float>(ctx, 1, n, k, a.data(), k, b.data(), n, Trans::N, c.data(), n, nullptr,
              Epilogue::None, nullptr);
  EXPECT_EQ(ctx.calls[(int)KernelKind::Gemv], 2);
  gemm<float>(ctx, 64, n, k, a.data(), k, b.data(), k, Trans::T, c.data(), n, nullptr,
              Epilogue::None, nullptr);
  EXPECT_EQ(ctx.calls[(int)KernelKind::Gemm], 1);
}

TEST(Gemm, EmptyOutputTouchesNothing) {
  Context ctx;
  float c[2] = {5.0f, 6.0f};
  gemm<float>(ctx, 0, 2, 3, nullptr, 3, nullptr, 3, Trans::T, c, 2, nullptr,
              Epilogue::Relu, nullptr);
  gemm<float>(ctx, 1, 0, 3, nullptr, 3, nullptr, 3, Trans::T, c, 2, nullptr,
              Epilogue::Relu, nullptr);
  EXPECT_EQ(c[0], 5.0f);
  EXPECT_EQ(c[1], 6.0f);
}

TEST(Gemm, RejectsBadArguments) {
  Context ctx;
  std::vector<double> a(64), b(64), c(64);
  auto call = [&](int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, Trans t,
                  int64_t ldc, Epilogue act, const double *residual) {
    return [=, &ctx, &a, &b, &c] {
      gemm<double>(ctx, m, n, k, a.data(), lda, b.data(), ldb, t, c.data(), ldc, nullptr,
                   act, residual);
    };
  };
  expectError(call(2, 3, 4, 3, 4, Trans::T, 3, Epilogue::None, nullptr), "lda=3");
  expectError(call(2, 3, 4, 4, 3, Trans::T, 3, Epilogue::None, nullptr),
              "ldb=3 is less than k");
  expectError(call(2, 3, 4, 4, 2, Trans::N, 3, Epilogue::None, nullptr),
              "ldb=2 is less than n");
  expectError(call(2, 3, 4, 4, 4, Trans::T, 2, Epilogue::None, nullptr), "ldc=2");
  expectError(call(-1, 3, 4, 4, 4, Trans::T, 3, Epilogue::None, nullptr),
              "negative dimension");
  expectError(call(2, 3, 4, 4, 4, (Trans)7, 3, Epilogue::None, nullptr), "transB 7");
  expectError(call(2, 3, 4, 4, 4, Trans::T, 3, (Epilogue)42, nullptr), "epilogue 42");
  expectError(call(2, 3, 4, 4, 4, Trans::T, 3, Epilogue::None, c.data() + 1),
              "residual overlaps c");
  expectError(
      [&] {
        gemm<double>(ctx, 2, 3, 4, nullptr, 4, b.data(), 4, Trans::T, c.data(), 3,
                     nullptr, Epilogue::None, nullptr);
      },
      "null");
}
