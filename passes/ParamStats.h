//===- ParamStats.h - Parameter counts and training memory ------*- C++ -*-===//
//
// The computation behind `bmb-param-stats` and `bmbc --stats`: per model,
// parameters grouped by owning layer instance, per dtype and in total, plus
// gradient and optimizer memory for each train job on the model.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_PASSES_PARAMSTATS_H
#define BMB_PASSES_PARAMSTATS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::bmb {

/// The parameters one layer instance owns (all iterations of a repeat).
struct InstanceParamStats {
  std::string instance; // "h.attn.q"; empty for the model's own parameters
  int64_t repeat = 1;   // iterations: the product of the stacked dimensions
  int64_t elements = 0;
  int64_t bytes = 0;
};

struct DTypeParamStats {
  std::string dtype; // "f32", "bf16", ...
  int64_t elements = 0;
  int64_t bytes = 0;
};

/// Training memory of one train job: params + grads + optimizer state.
struct JobMemoryStats {
  std::string job;              // "pretrain"
  std::string optimizer;        // "adamw", "sgd", ...
  int64_t statesPerElement = 0; // optimizer states per trainable element
  std::string stateType = "f32"; // f64 in a precision = fp64 job
  int64_t paramBytes = 0;
  int64_t gradBytes = 0;      // trainable parameters only, in their dtype
  int64_t optimizerBytes = 0; // statesPerElement states of stateType per trainable element
  int64_t totalBytes = 0;
  // precision = bf16 / fp16: the GEMMs' reduced copy of the trainable
  // params (2 bytes per element; the params are the fp32 master weights).
  std::string lowType;        // "bf16", "fp16", or "" (none)
  int64_t lowCopyBytes = 0;
};

struct ModelParamStats {
  std::string model;                         // "GPT2Tiny"
  std::string layer;                         // "GPT2"
  std::vector<InstanceParamStats> instances; // in declaration order
  std::vector<DTypeParamStats> dtypes;       // in order of first appearance
  int64_t elements = 0, bytes = 0;
  int64_t trainableElements = 0, trainableBytes = 0;
  std::vector<JobMemoryStats> jobs;
};

struct ParamStats {
  std::vector<ModelParamStats> models;
};

/// Computes the statistics of every bmb.model in `module`. Emits an error
/// at the offending op and fails if a count or size overflows int64.
FailureOr<ParamStats> computeParamStats(ModuleOp module);

/// Prints the tables `bmb-param-stats` prints.
void printParamStats(const ParamStats &stats, llvm::raw_ostream &os);

/// 124439808 -> "124,439,808".
std::string formatCount(int64_t n);
/// 497759232 -> "474.7 MiB"; below 1 KiB: "512 B".
std::string formatBytes(int64_t n);

} // namespace mlir::bmb

#endif // BMB_PASSES_PARAMSTATS_H
