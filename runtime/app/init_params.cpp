//===- app/init_params.cpp - Parameters from their declared initializers ---===//
//
// A program can start from fresh parameters instead of a checkpoint
// (`--init SEED`, and training's first step): each parameter is filled as
// its `.bmb` declaration says (normal(std), uniform(a, b), zeros, ones,
// constant). Randomness is counter-based (DESIGN decision 6): element e of
// parameter p takes Philox(seed, stream = p, counter = e) -- two draws for a
// Box-Muller normal -- so the values are the same for any thread count, on
// any machine, and one parameter's values do not depend on the others'.
//
//===----------------------------------------------------------------------===//
#include "app/kept_params.h"
#include "bmrt/philox.h"
#include "bmrt/program.h"
#include "io/param_slices.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace bmrt {

namespace {

int64_t numel(const ParamInfo &p) {
  int64_t n = 1;
  for (int d = 0; d < p.rank; ++d)
    n *= p.shape[d];
  return n;
}

template <class T> void fill(const ParamInfo &p, T *out, int64_t n, uint64_t seed, uint32_t stream) {
  const double a = p.initA, b = p.initB;
  switch (p.init) {
  case InitKind::Zeros:
    for (int64_t e = 0; e < n; ++e)
      out[e] = T(0);
    return;
  case InitKind::Ones:
    for (int64_t e = 0; e < n; ++e)
      out[e] = T(1);
    return;
  case InitKind::Constant:
    for (int64_t e = 0; e < n; ++e)
      out[e] = T(a);
    return;
  case InitKind::Uniform:
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < n; ++e)
      out[e] = T(a + (b - a) * philoxUniform(seed, (uint64_t)e, stream));
    return;
  case InitKind::Normal:
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < n; ++e) {
      // Box-Muller from two uniforms at counters 2e and 2e+1; 1 - u keeps
      // the logarithm's argument in (0, 1].
      double u1 = 1.0 - philoxUniform(seed, 2 * (uint64_t)e, stream);
      double u2 = philoxUniform(seed, 2 * (uint64_t)e + 1, stream);
      out[e] = T(a * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
    }
    return;
  case InitKind::None:
    break;
  }
  fail(std::string("parameter '") + p.name + "' has no declared initializer; pass --load");
}

} // namespace

namespace {

// Each param filled as one contiguous tensor (element e is the same draw
// whatever the layout), then handed to `place`.
using PlaceParam = std::function<void(const ParamInfo &p, const uint8_t *whole)>;

void initSome(const ProgramInfo &program, uint64_t seed, bool deltasOnly,
              const PlaceParam &place) {
  for (int i = 0; i < program.numParams; ++i) {
    const ParamInfo &p = program.params[i];
    if (deltasOnly && !p.delta)
      continue;
    std::vector<uint8_t> whole;
    // Streams above 1 << 16 keep away from sampling's (seed, token) keys.
    uint32_t stream = (1u << 16) + (uint32_t)i;
    switch (p.dtype) {
    case DType::F32:
      whole.resize((size_t)numel(p) * sizeof(float));
      fill(p, (float *)whole.data(), numel(p), seed, stream);
      break;
    case DType::F64:
      whole.resize((size_t)numel(p) * sizeof(double));
      fill(p, (double *)whole.data(), numel(p), seed, stream);
      break;
    case DType::I32:
      fail(std::string("parameter '") + p.name + "' is i32: no initializer applies");
    }
    place(p, whole.data());
  }
}

// Slice by slice into a whole params allocation (a trainable stacked
// param's layers are a unit apart).
PlaceParam intoParams(void *params) {
  return [params](const ParamInfo &p, const uint8_t *whole) {
    io::copyParamIn(p, (uint8_t *)params, p.offset, 0, paramLayers(p) * paramSliceBytes(p),
                    whole);
  };
}

} // namespace

void initParams(const ProgramInfo &program, void *params, uint64_t seed) {
  initSome(program, seed, false, intoParams(params));
}

void initKeptParams(const ProgramInfo &program, const Buffers &host, uint64_t seed) {
  initSome(program, seed, false, [&](const ParamInfo &p, const uint8_t *whole) {
    keepParam(program, host, p, whole);
  });
}

void initDeltaParams(const ProgramInfo &program, void *params, uint64_t seed) {
  initSome(program, seed, true, intoParams(params));
}

void initKeptDeltaParams(const ProgramInfo &program, const Buffers &host, uint64_t seed) {
  initSome(program, seed, true, [&](const ParamInfo &p, const uint8_t *whole) {
    keepParam(program, host, p, whole);
  });
}

} // namespace bmrt
