//===- checkpoint_tool.cpp - Drives loadCheckpoint/saveCheckpoint for tests -===//
//
// The Python reference test (check_gpt2_checkpoint.py) runs this on files
// that Hugging Face wrote, then checks what we wrote with torch and
// transformers. The program is the hand-written tiny GPT-2 (2 layers,
// 64 channels, vocab 128, 32 positions) of tiny_gpt2_program.h.
//
//   checkpoint_tool load <checkpoint>
//   checkpoint_tool convert <checkpoint> <out.safetensors> ours|hf
//
// Prints "layout=<hf|ours> tensors=<n>" on success; "error: ..." on stderr and
// exit status 1 on a bmrt::Error, as the real executables do.
//
//===----------------------------------------------------------------------===//
#include "tiny_gpt2_program.h"

#include "bmrt/checkpoint.h"
#include "bmrt/context.h"

#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  bool load = argc == 3 && strcmp(argv[1], "load") == 0;
  bool convert = argc == 5 && strcmp(argv[1], "convert") == 0;
  if (!load && !convert) {
    fprintf(stderr, "usage: %s load <checkpoint> | convert <checkpoint> <out> ours|hf\n",
            argv[0]);
    return 2;
  }
  auto program = tiny_gpt2::make(/*L=*/2, /*C=*/64, /*V=*/128, /*P=*/32);
  // NaN-filled, so a param the loader forgot to write cannot pass for zeros.
  std::vector<float> params((size_t)program->info.paramBytes / 4, std::nanf(""));
  try {
    bmrt::LoadReport report = bmrt::loadCheckpoint(argv[2], program->info, params.data());
    printf("layout=%s tensors=%lld\n", report.nameMap.empty() ? "ours" : report.nameMap.c_str(),
           (long long)report.tensors);
    if (convert) {
      std::string layout = argv[4];
      bmrt::saveCheckpoint(argv[3], program->info, params.data(),
                           layout == "ours" ? "" : layout.c_str());
    }
  } catch (const bmrt::Error &e) {
    fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
