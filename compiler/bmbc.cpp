//===- bmbc.cpp - The bmb compiler driver ---------------------------------===//
//
// bmbc reads a .bmb file (or, with -x mlir, IR that --dump-ir printed),
// runs the front end and the job's pass pipeline, and prints what was asked
// for. Exit status: 0 success; 1 the input has errors (each reported as
// file:line:col: error: ...); 2 the command line is wrong; 3 a feature that
// is not implemented yet was requested (the message names it).
//
// The work runs on a thread with a large stack: the parser and Sema bound
// nesting depth, and this is the second line of defence against deep input.
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver.h"

#include <pthread.h>

#include <cstdio>

namespace {
struct MainArgs {
  int argc;
  char **argv;
  int result;
};

void *runMain(void *p) {
  auto *args = static_cast<MainArgs *>(p);
  args->result = bmb::driverMain(args->argc, args->argv);
  return nullptr;
}
} // namespace

int main(int argc, char **argv) {
  MainArgs args{argc, argv, 3};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, size_t(512) << 20); // reserved, not committed
  pthread_t thread;
  if (pthread_create(&thread, &attr, runMain, &args) != 0) {
    // No big thread (a tight ulimit -v): run on the main stack.
    pthread_attr_destroy(&attr);
    return bmb::driverMain(argc, argv);
  }
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  std::fflush(stdout);
  return args.result;
}
