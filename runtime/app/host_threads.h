//===- app/host_threads.h - The host mains' thread count -------------------===//
//
// The infer, train and tune mains of the host backend run our OpenMP loops
// and OpenBLAS on one thread count: --threads, else OMP_NUM_THREADS or
// every core. The OpenMP build of OpenBLAS shares the pool but keeps its own
// count, so both are set.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_HOST_THREADS_H
#define BMRT_APP_HOST_THREADS_H

#include "bmrt/context.h"

namespace bmrt {

/// Sets OpenMP's and OpenBLAS's thread count and ctx.numThreads from the
/// --threads flag (0: not given); returns the count.
int useHostThreads(Context &ctx, int threadsFlag);

} // namespace bmrt

#endif // BMRT_APP_HOST_THREADS_H
