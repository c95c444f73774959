//===- Driver.h - bmbc's command line and its stages ------------*- C++ -*-===//
#ifndef BMB_COMPILER_DRIVER_H
#define BMB_COMPILER_DRIVER_H

namespace bmb {

/// Exit statuses of bmbc (documented in README.md and `bmbc --help`).
enum ExitCode : int {
  kExitSuccess = 0,
  kExitInputError = 1,     // the input has errors; diagnostics were printed
  kExitUsageError = 2,     // the command line is wrong
  kExitNotImplemented = 3, // a feature that does not exist yet was requested
};

/// Parses the command line and runs bmbc; returns the exit status.
int driverMain(int argc, char **argv);

} // namespace bmb

#endif // BMB_COMPILER_DRIVER_H
