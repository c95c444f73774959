//===- app/program_check.h - Is the emitted table usable? -----------------===//
//
// The app trusts the ProgramInfo tables for every pointer it computes, so it
// checks them once before allocating: a table that points outside its
// allocation is a compiler bug and must fail with a message, not corrupt
// memory.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_PROGRAM_CHECK_H
#define BMRT_APP_PROGRAM_CHECK_H

#include "bmrt/program.h"

namespace bmrt {

/// Fails (bmrt::fail) naming the program and the inconsistency.
void checkProgram(const ProgramInfo &program);

} // namespace bmrt

#endif // BMRT_APP_PROGRAM_CHECK_H
