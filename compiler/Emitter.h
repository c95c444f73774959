//===- Emitter.h - Printing a bmb_exec program (private) --------*- C++ -*-===//
//
// The emitter's state and its helpers, shared by EmitProgram.cpp (the parts
// of every program, inference entries) and EmitTrain.cpp (the training
// ops, entries and tables). Not a public interface: see EmitProgram.h.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_COMPILER_EMITTER_H
#define BMB_COMPILER_EMITTER_H

#include "dialects/BmbExec/BmbExecOps.h"
#include "passes/Autocast.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace mlir::bmb::exec {


inline std::string cIdent(StringRef s) {
  std::string out;
  for (char c : s)
    out += llvm::isAlnum(c) ? c : '_';
  if (out.empty() || llvm::isDigit(out[0]))
    out = "_" + out;
  return out;
}

inline std::string cType(Type t) {
  if (t.isF32())
    return "float";
  if (t.isF64())
    return "double";
  if (t.isInteger(32))
    return "int32_t";
  return "";
}

inline std::string shapeStr(ArrayRef<int64_t> s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

inline int64_t product(ArrayRef<int64_t> s) {
  int64_t p = 1;
  for (int64_t d : s)
    p *= d;
  return p;
}

/// The shortest decimal that reads back as `v`: a generated kernel's
/// constant must be the compiler's constant to the last bit (a 6-digit
/// sqrt(2/pi) in the GELU of an f64 forward is off by 5e-8 from the runtime's
/// backward, which finite-difference checks in f64 see).
inline std::string cDouble(double v) {
  char b[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(b, sizeof b, "%.*e", digits - 1, v);
    if (std::strtod(b, nullptr) == v)
      break;
  }
  return b;
}

/// The LowPrecision enumerator (bmrt/lowp.h) of a GEMM that bmb-autocast
/// marked, or "" for an unmarked (fp32) one.
inline std::string lowPrecisionArg(Operation *op) {
  Type t = mlir::bmb::autocastType(op);
  if (!t)
    return "";
  return t.isBF16() ? "LowPrecision::BF16" : "LowPrecision::FP16";
}

/// A DType enumerator of program.h.
inline const char *dtypeEnum(Type t) {
  return t.isF32() ? "DType::F32" : t.isF64() ? "DType::F64" : "DType::I32";
}

/// A shape as a C++ array initializer: {4, 64}.
inline std::string shapeInit(ArrayRef<int64_t> s) {
  std::string out = "{";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "}";
}

inline std::string cString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

class Emitter {
public:
  Emitter(ProgramOp program, raw_ostream &os, StringRef source)
      : program(program), os(os), source(source) {}
  LogicalResult run();

private:
  ProgramOp program;
  raw_ostream &os;
  std::string source;
  DenseMap<Value, std::string> names; // buffers and indices -> C++ expressions
  int counter = 0, loopDepth = 0;
  bool failed = false;

  InFlightDiagnostic error(Operation *op, const Twine &msg) {
    failed = true;
    return op->emitError(msg);
  }
  std::string name(Value v) {
    auto it = names.find(v);
    if (it != names.end())
      return it->second;
    if (Operation *def = v.getDefiningOp())
      error(def, "emission: value has no C++ name");
    return "/*?*/";
  }
  std::string indent() { return std::string(2 + 2 * loopDepth, ' '); }
  MemRefType mt(Value v) { return cast<MemRefType>(v.getType()); }
  int64_t last(Value v) { return mt(v).getRank() ? mt(v).getShape().back() : 1; }
  /// The row count of an op over `v`: %rows when given, else static.
  std::string rowsOf(Value v, Value rows) {
    return rows ? name(rows) : std::to_string(mt(v).getNumElements() / last(v));
  }
  std::string opt(Value v) { return v ? name(v) : "nullptr"; }
  /// For an autocast GEMM operand that is a trainable f32 param (or one
  /// layer of a stacked one), the same elements in the reduced-precision
  /// weight copy Buffers::lowParams (laid out as the trainable group: the
  /// param's grad offset; under zero = 3 as the param staging, which
  /// bmb_exec.round_unit fills: its staging offset, layer l in slot l % 2);
  /// "" for anything else.
  std::string lowWeight(Value v) {
    auto ref = v.getDefiningOp<ParamRefOp>();
    if (!ref)
      return "";
    auto param = program.lookupSymbol<ParamOp>(ref.getParam());
    if (!param || param.getFrozen() || !param.getGradOffset() ||
        !mt(v).getElementType().isF32())
      return "";
    if (stagesParams()) {
      auto stride = program->getAttrOfType<IntegerAttr>("param_slot_stride");
      if (!param.getStagingOffset() || (ref.getLayer() && !stride)) {
        error(ref, "emission: the zero = 3 program has no staging layout (run bmb-plan-memory)");
        return "";
      }
      std::string at = std::to_string(*param.getStagingOffset() / 4);
      if (ref.getLayer())
        at += " + (" + name(ref.getLayer()) + ") % 2 * " + std::to_string(stride.getInt() / 4);
      return "((const uint16_t *)buf.lowParams + " + at + ")";
    }
    std::string at = std::to_string(*param.getGradOffset() / 4);
    if (ref.getLayer())
      at += " + " + name(ref.getLayer()) + " * " + layerStrideElems(ref.getParamAttr());
    return "((const uint16_t *)buf.lowParams + " + at + ")";
  }
  /// Elements from layer i's slice of a stacked param to layer i + 1's
  /// (its layer_stride: a trainable param's layers are one unit apart in
  /// the layer-major group), in the params, grads and low-precision copies.
  std::string layerStrideElems(FlatSymbolRefAttr param) {
    auto p = program.lookupSymbol<ParamOp>(param.getAttr());
    if (!p) {
      error(program, "emission: no bmb_exec.param ") << param;
      return "0";
    }
    int64_t elemBytes = (cast<MemRefType>(p.getType()).getElementTypeBitWidth() + 7) / 8;
    return std::to_string(p.getLayerStrideBytes() / elemBytes);
  }
  std::string settingStr(StringRef key, StringRef def);
  double settingNum(StringRef key, double def);

  void emitHeader();
  void emitParamsAndState();
  void emitKernelFunctor(KernelOp k);
  void emitKernelOps(KernelOp k, DenseMap<Value, std::string> &local, bool asLane);
  void emitKernelQuad(KernelOp k);
  void emitEntry(func::FuncOp f);
  void emitBody(Block &block);
  void emitOp(Operation *op);
  void emitTables(ArrayRef<func::FuncOp> entries);
  void emitParamTable();

  // Training programs (EmitTrain.cpp).
  bool train = false;
  void emitGradsAndOptState();
  void emitTrainEntry(func::FuncOp f);
  /// Prints `op` if it is one of the training ops; false if it is not.
  bool emitTrainOp(Operation *op);
  void emitTrainTables(ArrayRef<func::FuncOp> entries);
  // Tune programs (EmitTune.cpp): the prompt-tuning ops and TuneInfo.
  bool emitTuneOp(Operation *op);
  void emitTuneInfo();
  /// Whether the backward defers gradient all-reduces (TrainInfo::overlapGrads).
  bool overlapsGrads();
  /// zero = 2: the backward writes gradients into the staging allocation.
  bool stagesGrads();
  /// zero = 3: the entries read the trainable params from the param staging.
  bool stagesParams();
  /// zero = 2 and 3: grad_slot_stride in gradient elements; -1 (reported at
  /// `at`) when bmb-plan-memory did not set it.
  int64_t gradSlotStrideElems(Operation *at);
  /// The C++ element type of every gradient (one type per program: the
  /// whole-allocation ops need it).
  std::string gradType();
  /// An integer attribute of the program that bmb-plan-memory sets
  /// (group_param_offset, group_elems, partition_align).
  int64_t groupAttr(StringRef name);
};

} // namespace mlir::bmb::exec

#endif // BMB_COMPILER_EMITTER_H
