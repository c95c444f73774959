//===- cuda/gemm.cpp - GEMMs through cuBLASLt -----------------------------===//
//
// Why it is shaped like this:
//  - One function (matmul) builds every cuBLASLt call, so the row-major to
//    column-major translation is written once: our row-major
//    c[m, n] = op(a) . op(b) is cuBLAS's column-major c^T[n, m] =
//    op(b)^T . op(a)^T with the stored matrices unchanged, i.e. cuBLASLt's A
//    is our b, its B our a, and its m and n are our n and m. Our bias[n] then
//    runs along cuBLASLt's rows, which is the vector its BIAS epilogues add.
//  - fp32 is computed in strict fp32 (CUBLAS_COMPUTE_32F, no TF32); bf16
//    and fp16 operands accumulate in fp32 on the tensor cores.
//  - The residual (c = act(ab + bias) + residual) rides on beta * C only
//    without an activation: cuBLASLt adds beta * C before its epilogue.
//    Otherwise one element-wise pass (activation_residual) follows, with the
//    activation from bmrt/elementwise.h. GELU (tanh form) and ReLU are
//    cuBLASLt epilogues; GELU (erf), SiLU and tanh are not, and use that pass.
//  - The algorithm comes from cuBLASLt's heuristic with the device's
//    workspace and the operands' real alignment (they are offsets into the
//    role allocations, not 256-byte aligned buffers); descriptors are
//    created per call (microseconds, no memory).
//
//===----------------------------------------------------------------------===//
#include "cuda/check.h"
#include "cuda/kernels_cuda.h"

#include <string>

namespace bmrt::cuda {
namespace {

cublasOperation_t op(Trans t) { return t == Trans::T ? CUBLAS_OP_T : CUBLAS_OP_N; }

// Descriptors released at scope end, also when a check throws.
struct Layout {
  cublasLtMatrixLayout_t h = nullptr;
  Layout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
         int64_t stride) {
    BMRT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&h, type, (uint64_t)rows, (uint64_t)cols, ld));
    if (batch > 1) {
      int32_t count = (int32_t)batch;
      BMRT_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(h, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                         &count, sizeof count));
      BMRT_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
          h, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
    }
  }
  ~Layout() { cublasLtMatrixLayoutDestroy(h); }
};

struct OpDesc {
  cublasLtMatmulDesc_t h = nullptr;
  OpDesc() { BMRT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&h, CUBLAS_COMPUTE_32F, CUDA_R_32F)); }
  ~OpDesc() { cublasLtMatmulDescDestroy(h); }
  template <class V> void set(cublasLtMatmulDescAttributes_t attr, const V &value) {
    BMRT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(h, attr, &value, sizeof value));
  }
};

struct Preference {
  cublasLtMatmulPreference_t h = nullptr;
  explicit Preference(size_t workspace) {
    BMRT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&h));
    set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace);
  }
  ~Preference() { cublasLtMatmulPreferenceDestroy(h); }
  template <class V> void set(cublasLtMatmulPreferenceAttributes_t attr, const V &value) {
    BMRT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(h, attr, &value, sizeof value));
  }
};

size_t bytesOf(cudaDataType_t t) { return t == CUDA_R_32F ? 4 : 2; }

// The alignment an operand guarantees (a power of two up to 256 bytes):
// cuBLASLt's heuristic assumes 256 unless told, and our operands are
// offsets into role allocations (a head's columns, a layer's slice). Every
// column and every batch starts at base + multiples of ld and stride.
uint32_t alignmentOf(const void *p, int64_t ld, int64_t stride, int64_t batch, size_t bytes) {
  uintptr_t a = (uintptr_t)p | (uintptr_t)(ld * (int64_t)bytes);
  if (batch > 1)
    a |= (uintptr_t)(stride * (int64_t)bytes);
  uint32_t align = 256;
  while (align > 1 && a % align != 0)
    align /= 2;
  return align;
}

cublasLtEpilogue_t epilogueOf(const Matmul &mm) {
  const bool bias = mm.bias != nullptr;
  switch (mm.act) {
  case Epilogue::None:
    return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  case Epilogue::GeluTanh:
    return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  case Epilogue::Relu:
    return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  default:
    fail("cuda matmul: the activation " + std::to_string((int)mm.act) +
         " has no cuBLASLt epilogue (gemm applies it in a separate pass)");
  }
}

std::string shapeOf(const Matmul &mm) {
  return "m " + std::to_string(mm.m) + ", n " + std::to_string(mm.n) + ", k " +
         std::to_string(mm.k) + ", batch " + std::to_string(mm.batch);
}

} // namespace

bool tryMatmul(Device &dev, const Matmul &mm) {
  if (mm.m < 0 || mm.n < 0 || mm.k < 0 || mm.batch < 1)
    fail("cuda matmul: bad shape (" + shapeOf(mm) + ")");
  if (mm.m == 0 || mm.n == 0)
    return true;
  if (mm.k == 0) // cuBLASLt rejects k = 0; c = beta * c (+ epilogue) is not needed by callers
    fail("cuda matmul: k = 0 (" + shapeOf(mm) + ")");
  // cuBLASLt's A is our b, its B our a (see the file comment).
  Layout A(mm.abType, mm.transB == Trans::N ? mm.n : mm.k, mm.transB == Trans::N ? mm.k : mm.n,
           mm.ldb, mm.batch, mm.strideB);
  Layout B(mm.abType, mm.transA == Trans::N ? mm.k : mm.m, mm.transA == Trans::N ? mm.m : mm.k,
           mm.lda, mm.batch, mm.strideA);
  Layout C(mm.cType, mm.n, mm.m, mm.ldc, mm.batch, mm.strideC);
  OpDesc desc;
  desc.set(CUBLASLT_MATMUL_DESC_TRANSA, op(mm.transB));
  desc.set(CUBLASLT_MATMUL_DESC_TRANSB, op(mm.transA));
  desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogueOf(mm));
  if (mm.bias) {
    desc.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, mm.bias);
    desc.set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, CUDA_R_32F);
  }
  Preference pref(dev.workspaceBytes);
  const size_t ab = bytesOf(mm.abType), cb = bytesOf(mm.cType);
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
           alignmentOf(mm.b, mm.ldb, mm.strideB, mm.batch, ab));
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
           alignmentOf(mm.a, mm.lda, mm.strideA, mm.batch, ab));
  const uint32_t alignC = alignmentOf(mm.c, mm.ldc, mm.strideC, mm.batch, cb);
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignC);
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignC);
  cublasLtMatmulHeuristicResult_t result = {};
  int found = 0;
  BMRT_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(dev.lt, desc.h, A.h, B.h, C.h, C.h, pref.h,
                                                   1, &result, &found));
  if (found == 0)
    return false;
  BMRT_CUBLAS_CHECK(cublasLtMatmul(dev.lt, desc.h, &mm.alpha, mm.b, A.h, mm.a, B.h, &mm.beta,
                                   mm.c, C.h, mm.c, C.h, &result.algo, dev.workspace,
                                   dev.workspaceBytes, dev.compute));
  return true;
}

void matmul(Device &dev, const Matmul &mm) {
  if (!tryMatmul(dev, mm))
    fail("cuda matmul: cuBLASLt has no algorithm for " + shapeOf(mm));
}

void gemm_epilogue(Device &dev, Matmul mm, Epilogue act, const float *residual) {
  float *c = (float *)mm.c;
  const bool fusedAct = act == Epilogue::None || act == Epilogue::GeluTanh || act == Epilogue::Relu;
  if (residual && act == Epilogue::None) {
    // c = a.b + residual + bias: the residual is cuBLASLt's C (beta = 1).
    if (residual != c)
      BMRT_CUDA_CHECK(cudaMemcpy2DAsync(c, mm.ldc * sizeof(float), residual,
                                        mm.ldc * sizeof(float), mm.n * sizeof(float), mm.m,
                                        cudaMemcpyDeviceToDevice, dev.compute));
    mm.beta = 1;
    matmul(dev, mm);
    return;
  }
  if (!residual && fusedAct) {
    mm.act = act;
    if (tryMatmul(dev, mm))
      return;
    mm.act = Epilogue::None; // no algorithm with that epilogue here: the pass below
  }
  // An activation cuBLASLt lacks, or an activation followed by a residual:
  // bias in the matmul, then one pass. A residual aliasing c would be
  // overwritten by the matmul before that pass reads it.
  if (residual == c)
    fail("cuda gemm: an in-place residual after an activation is not supported "
         "(the compiler emits it only without an activation)");
  matmul(dev, mm);
  activation_residual(dev, c, mm.ldc, mm.m, mm.n, act, residual);
}

void gemm(Device &dev, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
          const float *b, int64_t ldb, Trans transB, float *c, int64_t ldc, const float *bias,
          Epilogue act, const float *residual) {
  Matmul mm;
  mm.transB = transB;
  mm.m = m, mm.n = n, mm.k = k;
  mm.a = a, mm.lda = lda, mm.b = b, mm.ldb = ldb, mm.c = c, mm.ldc = ldc;
  mm.bias = bias;
  gemm_epilogue(dev, mm, act, residual);
}

void gemm_ex(Device &dev, Trans transA, Trans transB, int64_t m, int64_t n, int64_t k,
             const float *a, int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc,
             bool accumulate) {
  Matmul mm;
  mm.transA = transA, mm.transB = transB;
  mm.m = m, mm.n = n, mm.k = k;
  mm.a = a, mm.lda = lda, mm.b = b, mm.ldb = ldb, mm.c = c, mm.ldc = ldc;
  mm.beta = accumulate ? 1.0f : 0.0f;
  matmul(dev, mm);
}

} // namespace bmrt::cuda
