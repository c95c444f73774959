//===- app/host_threads.cpp - The host mains' thread count -----------------===//
#include "app/host_threads.h"

#include <cblas.h> // openblas_set_num_threads (the OpenMP build of OpenBLAS)
#include <omp.h>

namespace bmrt {

int useHostThreads(Context &ctx, int threadsFlag) {
  const int threads = threadsFlag > 0 ? threadsFlag : omp_get_max_threads();
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  ctx.numThreads = threads;
  return threads;
}

} // namespace bmrt
