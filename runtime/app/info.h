//===- app/info.h - --info: what an executable was compiled to do ---------===//
#ifndef BMRT_APP_INFO_H
#define BMRT_APP_INFO_H

#include "bmrt/program.h"

#include <cstdio>

namespace bmrt {

/// Model, job, source, parameter count and bytes, the memory plan per role,
/// the entry points with their capacities and tensors, the name maps.
void printProgramInfo(FILE *out, const ProgramInfo &program);

/// The peak resident set of this process in KiB (VmHWM).
double peakRssKiB();

} // namespace bmrt

#endif // BMRT_APP_INFO_H
