//===- EmitTrain.cpp - The training parts of an emitted program -----------===//
//
// A train job's program (docs/training-ir.md, section 4) prints like an
// infer program plus: a Grads and an OptState struct (pointers into the
// grads and optimizer-state allocations at the plan's offsets), entries with
// the bmrt::TrainFn signature that read bmrt::StepArgs, the backward and
// optimizer calls of kernels_backward.h and training.h, a TrainInfo table
// with the job's settings, and `main` handing over to bmrt::train_main.
//
// As in EmitProgram.cpp, every decision is in the IR (the program's `train`
// dictionary holds the resolved settings): this file only prints.
//
//===----------------------------------------------------------------------===//
#include "compiler/Emitter.h"

using namespace mlir;
using namespace mlir::bmb::exec;

namespace {

int64_t trainInt(DictionaryAttr train, StringRef key) {
  auto a = train.getAs<IntegerAttr>(key);
  return a ? a.getInt() : 0;
}

std::string trainNum(DictionaryAttr train, StringRef key) {
  auto a = train.getAs<FloatAttr>(key);
  return llvm::formatv("{0:e}", a ? a.getValueAsDouble() : 0.0).str();
}

std::string trainStr(DictionaryAttr train, StringRef key) {
  auto a = train.getAs<StringAttr>(key);
  return a ? a.str() : "";
}

// The job's precision as LowerTrain recorded it (fp32 when unset).
std::string precisionOf(Operation *program) {
  auto p = program->getAttrOfType<StringAttr>("precision");
  return p ? p.str() : "fp32";
}

// fp16's loss scaling (LowerMixedPrecision.cpp): "scale, window", or
// TrainInfo's defaults (unused) for other precisions.
std::string lossScaleOf(Operation *program) {
  auto s = program->getAttrOfType<FloatAttr>("loss_scale");
  auto w = program->getAttrOfType<IntegerAttr>("loss_scale_window");
  if (!s || !w)
    return "65536, 1000";
  return cDouble(s.getValueAsDouble()) + ", " + std::to_string(w.getInt());
}

std::string fp(double v) { return llvm::formatv("{0:e}", v).str(); }

} // namespace

bool Emitter::overlapsGrads() {
  bool any = false;
  program.walk([&](DeferAllReduceGradsOp) { any = true; });
  return any;
}

bool Emitter::stagesGrads() {
  auto train = program->getAttrOfType<DictionaryAttr>("train");
  return train && trainInt(train, "zero_stage") >= 2;
}

int64_t Emitter::gradSlotStrideElems(Operation *at) {
  auto stride = program->getAttrOfType<IntegerAttr>("grad_slot_stride");
  if (!stride) {
    error(at, "emission: the zero = 2 or 3 program has no grad_slot_stride (run "
              "bmb-plan-memory)");
    return -1;
  }
  return stride.getInt() / (gradType() == "double" ? 8 : 4);
}

bool Emitter::stagesParams() {
  auto train = program->getAttrOfType<DictionaryAttr>("train");
  return train && trainInt(train, "zero_stage") == 3;
}

std::string Emitter::gradType() {
  std::string t;
  for (auto p : program.getOps<ParamOp>())
    if (p.getGradOffset()) {
      std::string pt = cType(cast<MemRefType>(p.getType()).getElementType());
      if (!t.empty() && t != pt)
        error(p, "emission: the grads allocation mixes element types (") << t << ", " << pt
                                                                         << ")";
      t = pt;
    }
  return t.empty() ? "float" : t;
}

int64_t Emitter::groupAttr(StringRef name) {
  auto a = program->getAttrOfType<IntegerAttr>(name);
  if (!a) {
    error(program, "emission: the program has no '") << name << "' (run bmb-plan-memory)";
    return 0;
  }
  return a.getInt();
}

void Emitter::emitGradsAndOptState() {
  auto train = program->getAttrOfType<DictionaryAttr>("train");
  int64_t slots = trainInt(train, "opt_slots");
  os << "// ---- Gradients (trainable params only): byte offsets into the grads allocation.\n"
     << "struct Grads {\n";
  for (auto p : program.getOps<ParamOp>())
    if (p.getGradOffset())
      os << "  " << cType(cast<MemRefType>(p.getType()).getElementType()) << " *"
         << cIdent(p.getSymName()) << "; // " << shapeStr(cast<MemRefType>(p.getType()).getShape())
         << "\n";
  os << "  char unused; // keeps the struct non-empty when every param is frozen\n};\n\n";
  // zero = 2: the backward writes into the staging allocation (one layer
  // of each repeat; a stacked param's every layer at its staging_offset),
  // and the grads allocation holds only the rank's partition.
  const bool staged = stagesGrads();
  if (staged)
    os << "// zero = 2 and 3: gradients are staged one unit at a time (Buffers::gradStaging).\n"
       << "Grads gradsOf(const Buffers &buf) {\n"
       << "  if (!buf.gradStaging)\n"
       << "    fail(\"this zero = " << (stagesParams() ? 3 : 2)
       << " program needs Buffers::gradStaging, which the app did not allocate\");\n"
       << "  char *base = (char *)buf.gradStaging;\n  Grads g;\n";
  else
    os << "Grads gradsOf(const Buffers &buf) {\n  char *base = (char *)buf.grads;\n  Grads g;\n";
  for (auto p : program.getOps<ParamOp>())
    if (p.getGradOffset()) {
      if (staged && !p.getStagingOffset()) {
        error(p, "emission: a zero = 2 or 3 program's trainable param has no staging_offset "
                 "(run bmb-plan-memory)");
        return;
      }
      os << "  g." << cIdent(p.getSymName()) << " = ("
         << cType(cast<MemRefType>(p.getType()).getElementType()) << " *)(base + "
         << (staged ? *p.getStagingOffset() : *p.getGradOffset()) << ");\n";
    }
  os << "  g.unused = 0;\n  return g;\n}\n\n";
  os << "// ---- Optimizer state: " << slots << " slot(s)"
     << (trainStr(train, "optimizer") == "adamw" ? " (exp_avg, exp_avg_sq)" : "")
     << " over the rank's partition of the trainable group (bmrt::Partition).\n\n";
}

void Emitter::emitTrainEntry(func::FuncOp f) {
  if (f.getNumArguments() != 0) {
    error(f, "emission: a training entry takes no arguments (it reads bmrt::StepArgs "
             "through bmb_exec.step_arg)");
    return;
  }
  os << "// ---- " << f.getName() << "\n"
     << "// Activations: " << f->getAttrOfType<IntegerAttr>("activation_bytes").getInt()
     << " bytes planned.\n"
     << "void " << f.getName() << "(Context &ctx, const Buffers &buf, StepArgs &args) {\n"
     << "  const Params P = paramsOf(buf);\n  const State S = stateOf(buf);\n"
     << "  const Grads G = gradsOf(buf);\n"
     << "  [[maybe_unused]] char *act = (char *)buf.activations;\n"
     << "  (void)P; (void)S; (void)G; (void)act; (void)args;\n";
  emitBody(f.getBody().front());
  os << "}\n\n";
}

bool Emitter::emitTrainOp(Operation *op) {
  if (emitTuneOp(op))
    return true;
  std::string in = indent();
  auto elem = [&](Value v) { return cType(mt(v).getElementType()); };
  auto count = [&](Value v) { return std::to_string(mt(v).getNumElements()); };
  auto rowsOfStatic = [&](Value v) { return std::to_string(mt(v).getNumElements() / last(v)); };
  auto scalar = [&](Value result, const std::string &expr, const std::string &type) {
    std::string n = "s" + std::to_string(counter++);
    names[result] = n;
    os << in << "const " << type << " " << n << " = " << expr << ";\n";
  };
  if (auto g = dyn_cast<GradRefOp>(op)) {
    std::string base = "G." + cIdent(g.getParam());
    // zero = 2 and 3: a layer's gradient is staged in slot layer % 2 of
    // two, grad_slot_stride bytes apart (bmb_exec.reduce_scatter_ahead).
    if (g.getLayer() && stagesGrads()) {
      int64_t stride = gradSlotStrideElems(op);
      if (stride < 0)
        return true;
      names[g.getResult()] = "(" + base + " + (" + name(g.getLayer()) + ") % 2 * " +
                             std::to_string(stride) + ")";
      return true;
    }
    names[g.getResult()] = g.getLayer() ? "(" + base + " + " + name(g.getLayer()) + " * " +
                                              layerStrideElems(g.getParamAttr()) + ")"
                                        : base;
    return true;
  }
  if (auto l = dyn_cast<LayerViewOp>(op)) {
    names[l.getResult()] =
        "(" + name(l.getSource()) + " + " + name(l.getLayer()) + " * " + count(l.getResult()) + ")";
    return true;
  }
  if (auto s = dyn_cast<StepArgOp>(op)) {
    std::string field = llvm::StringSwitch<std::string>(s.getField())
                            .Case("step", "args.step")
                            .Case("lr", "args.lr")
                            .Case("dloss_scale", "args.dlossScale")
                            .Case("seed", "(int64_t)args.seed")
                            .Default("args.microStep");
    scalar(s.getResult(), field, s.getResult().getType().isF64() ? "double" : "int64_t");
    return true;
  }
  // The layer index of a dropout's key (LowerTrain.cpp): the loop's
  // counter as i64, or 0 outside a repeat.
  if (auto c = dyn_cast<arith::IndexCastOp>(op)) {
    names[c.getResult()] = "(int64_t)" + name(c.getIn());
    return true;
  }
  if (auto c = dyn_cast<arith::ConstantIntOp>(op); c && c.getType().isInteger(64)) {
    names[c.getResult()] = "int64_t(" + std::to_string(c.value()) + ")";
    return true;
  }
  if (auto s = dyn_cast<SetStepArgOp>(op)) {
    os << in << "args.gradNorm = " << name(s.getValue()) << ";\n";
    return true;
  }
  if (auto z = dyn_cast<ZeroOp>(op)) {
    os << in << "fill_zero<" << elem(z.getOut()) << ">(ctx, " << name(z.getOut()) << ", "
       << count(z.getOut()) << ");\n";
    return true;
  }
  if (auto m = dyn_cast<MatmulOp>(op)) {
    // A trainable weight as b (dx = dy . w) is read from the reduced copy.
    std::string p = lowPrecisionArg(m), w = p.empty() ? "" : lowWeight(m.getB());
    if (!w.empty())
      os << in << "gemm_ex_lowp_w(ctx, " << p << ", ";
    else if (!p.empty())
      os << in << "gemm_ex_lowp(ctx, " << p << ", ";
    else
      os << in << "gemm_ex<" << elem(m.getC()) << ">(ctx, ";
    os
       << (m.getTransA() ? "Trans::T" : "Trans::N") << ", "
       << (m.getTransB() ? "Trans::T" : "Trans::N") << ", " << m.getM() << ", " << m.getN()
       << ", " << m.getK() << ", " << name(m.getA()) << ", " << last(m.getA()) << ", "
       << (w.empty() ? name(m.getB()) : w) << ", " << last(m.getB()) << ", " << name(m.getC())
       << ", " << m.getN() << ", " << (m.getAccumulate() ? "true" : "false") << ");\n";
    return true;
  }
  if (auto s = dyn_cast<SumRowsOp>(op)) {
    int64_t c = mt(s.getOut()).getNumElements();
    os << in << "sum_rows<" << elem(s.getOut()) << ">(ctx, " << name(s.getOut()) << ", "
       << name(s.getX()) << ", " << mt(s.getX()).getNumElements() / c << ", " << c << ");\n";
    return true;
  }
  if (auto n = dyn_cast<NormGradOp>(op)) {
    bool ln = n.getKind() == "layernorm";
    std::string eps = llvm::formatv("{0:e}f", n.getEps().convertToDouble()).str();
    os << in << (ln ? "layernorm_backward" : "rmsnorm_backward") << "<" << elem(n.getX())
       << ">(ctx, " << opt(n.getDx()) << ", " << opt(n.getDw()) << ", "
       << (ln ? opt(n.getDb()) + ", " : "") << name(n.getDy()) << ", " << name(n.getX())
       << ", " << name(n.getW()) << ", " << (ln ? "nullptr, nullptr, " : "nullptr, ")
       << rowsOfStatic(n.getX()) << ", " << last(n.getX()) << ", " << eps << ");\n";
    return true;
  }
  if (auto a = dyn_cast<AttentionGradOp>(op)) {
    auto q = mt(a.getQ()), k = mt(a.getK());
    int64_t qRow = last(a.getQ()), kvRow = last(a.getK());
    int64_t rows = q.getDimSize(1), kvRows = k.getDimSize(1);
    os << in << "{\n"
       << in << "  AttentionArgs a;\n"
       << in << "  a.batch = " << q.getDimSize(0) << ";\n"
       << in << "  a.rows = " << rows << ";\n"
       << in << "  a.heads = " << a.getHeads() << "; a.kvHeads = " << a.getKvHeads()
       << "; a.headDim = " << a.getHeadDim() << ";\n"
       << in << "  a.qRowStride = " << qRow << "; a.qBatchStride = " << rows * qRow << ";\n"
       << in << "  a.kvRowStride = " << kvRow << "; a.kvBatchStride = " << kvRows * kvRow
       << ";\n"
       << in << "  a.outRowStride = " << qRow << "; a.outBatchStride = " << rows * qRow << ";\n"
       << in << "  a.cacheCapacity = " << kvRows << ";\n"
       << in << "  a.start = 0;\n"
       << in << "  a.causal = " << (a.getCausal() ? "true" : "false") << ";\n"
       << in << "  a.scale = " << llvm::formatv("{0:e}f", a.getScale().convertToDouble()).str()
       << ";\n"
       << in << "  a.keyMask = " << opt(a.getMask()) << ";\n";
    if (std::string p = lowPrecisionArg(a); !p.empty()) // bmb-autocast's mark
      os << in << "  a.lowp = true; a.lowPrecision = " << p << ";\n";
    os << in << "  attention" << (a.getPrefixK() ? "_prefix" : "") << "_backward<"
       << elem(a.getQ()) << ">(ctx, a, ";
    if (a.getPrefixK()) // prefix tuning: the prefixes, their gate and gradients
      os << mt(a.getPrefixK()).getDimSize(0) << ", " << name(a.getPrefixK()) << ", "
         << name(a.getPrefixV()) << ", " << opt(a.getPrefixGate()) << ", "
         << name(a.getDprefixK()) << ", " << name(a.getDprefixV()) << ", ";
    os << name(a.getDq())
       << ", " << name(a.getDk()) << ", " << name(a.getDv()) << ", " << name(a.getDy()) << ", "
       << name(a.getQ()) << ", " << name(a.getK()) << ", " << name(a.getV()) << ");\n"
       << in << "}\n";
    return true;
  }
  if (auto r = dyn_cast<RotaryGradOp>(op)) {
    // Positions cover one sequence: one call per sequence of the batch.
    int64_t rows = mt(r.getDy()).getNumElements() / last(r.getDy());
    int64_t perSeq = mt(r.getPositions()).getNumElements();
    int64_t seqs = perSeq ? rows / perSeq : 0;
    os << in << "for (int64_t s = 0; s < " << seqs << "; ++s)\n"
       << in << "  rotary_backward<" << elem(r.getDx()) << ">(ctx, " << name(r.getDx())
       << " + s * " << perSeq * last(r.getDy()) << ", " << name(r.getDy()) << " + s * "
       << perSeq * last(r.getDy()) << ", " << name(r.getPositions()) << ", " << perSeq << ", "
       << r.getHeads() << ", " << r.getHeadDim() << ", " << last(r.getDy()) << ", "
       << llvm::formatv("{0:e}f", r.getBase().convertToDouble()).str() << ");\n";
    return true;
  }
  if (auto s = dyn_cast<SoftmaxGradOp>(op)) {
    os << in << "softmax_backward<" << elem(s.getDx()) << ">(ctx, " << name(s.getDx()) << ", "
       << name(s.getY()) << ", " << name(s.getDy()) << ", " << rowsOfStatic(s.getY()) << ", "
       << last(s.getY()) << ");\n";
    return true;
  }
  if (auto e = dyn_cast<EmbeddingGradOp>(op)) {
    auto t = mt(e.getDtable());
    os << in << "embedding_backward<" << elem(e.getDtable()) << ">(ctx, " << name(e.getDtable())
       << ", " << name(e.getIds()) << ", " << name(e.getDy()) << ", " << count(e.getIds())
       << ", " << t.getDimSize(0) << ", " << t.getDimSize(1) << ");\n";
    return true;
  }
  if (auto t = dyn_cast<TakeGradOp>(op)) {
    ArrayRef<int64_t> s = mt(t.getDx()).getShape();
    int64_t axis = t.getAxis();
    int64_t outer = product(s.take_front(axis)), inner = product(s.drop_front(axis + 1));
    os << in << "copy_strided_backward<" << elem(t.getDx()) << ">(ctx, " << name(t.getDx())
       << ", " << name(t.getDy()) << ", " << outer << ", " << inner << ", " << s[axis] * inner
       << ", " << t.getIndex() * inner << ");\n";
    return true;
  }
  if (auto c = dyn_cast<ClassifierOp>(op)) {
    os << in << "fused_classifier_forward_backward<" << elem(c.getLogits()) << ">(ctx, "
       << name(c.getLosses()) << ", " << opt(c.getDlogits()) << ", " << name(c.getLogits())
       << ", " << name(c.getTargets()) << ", " << rowsOfStatic(c.getLogits()) << ", "
       << last(c.getLogits()) << ", " << static_cast<int64_t>(c.getIgnoreIndex()) << ", "
       << (c.getScale() ? name(c.getScale()) : std::string("1.0")) << ");\n";
    return true;
  }
  // The optimizer step works on the rank's partition of the flat trainable
  // group (bmrt::Partition, docs/distributed.md): the runtime functions clip
  // each update to it, so one rank (the whole group) and N ranks print alike.
  if (auto g = dyn_cast<GradNormOp>(op)) {
    scalar(g.getResult(),
           "grad_norm_part<" + gradType() + ">(ctx, buf, " +
               std::to_string(groupAttr("group_elems")) + ", " +
               std::to_string(groupAttr("partition_align")) + ")",
           "double");
    return true;
  }
  if (auto c = dyn_cast<ClipGradsOp>(op)) {
    std::string k = "s" + std::to_string(counter++);
    os << in << "const double " << k << " = clip_coefficient(" << name(c.getNorm()) << ", "
       << fp(c.getMaxNorm().convertToDouble()) << ");\n"
       << in << "if (" << k << " < 1.0)\n"
       << in << "  scale_part<" << gradType() << ">(ctx, buf, " << k << ");\n";
    return true;
  }
  // A param's elements in the group: where its first layer's slice starts
  // (its gradient's offset), the slice's size, its layers and the elements
  // from one layer's slice to the next (the group is layer-major).
  struct GroupRange {
    int64_t offset = 0, slice = 0, layers = 1, stride = 0;
    std::string type;
  };
  auto groupRange = [&](Operation *at, FlatSymbolRefAttr param, GroupRange &r) {
    auto p = SymbolTable::lookupNearestSymbolFrom<ParamOp>(at, param);
    if (!p || !p.getGradOffset()) {
      error(at, "emission: the param has no place in the trainable group (run bmb-plan-memory)");
      return false;
    }
    auto t = cast<MemRefType>(p.getType());
    int64_t size = t.getElementTypeBitWidth() / 8;
    r.offset = *p.getGradOffset() / size;
    r.slice = p.getSliceBytes() / size;
    r.layers = p.getStacked() ? t.getDimSize(0) : 1;
    r.stride = p.getLayerStrideBytes() / size;
    r.type = cType(t.getElementType());
    return true;
  };
  // An update of every layer of a param: one call when the slices are back
  // to back, else one per layer (the update is elementwise, so the split
  // does not change a bit).
  auto emitUpdate = [&](const GroupRange &r, const std::string &fn, const std::string &args,
                        StringRef param) {
    std::string head = in + fn + "<" + r.type + ">(ctx, buf, " +
                       std::to_string(groupAttr("group_param_offset")) + ", ";
    if (r.layers == 1 || r.stride == r.slice) {
      os << head << r.offset << ", " << r.slice * r.layers << ", " << args << "); // " << param
         << "\n";
      return;
    }
    os << in << "for (int64_t l = 0; l < " << r.layers << "; ++l) // " << param << ", per layer\n"
       << "  " << head << r.offset << " + l * " << r.stride << ", " << r.slice << ", " << args
       << ");\n";
  };
  if (auto a = dyn_cast<AdamWUpdateOp>(op)) {
    GroupRange r;
    if (!groupRange(op, a.getParamAttr(), r))
      return true;
    emitUpdate(r, "adamw_update_part",
               name(a.getLr()) + ", " + fp(a.getBeta1().convertToDouble()) + ", " +
                   fp(a.getBeta2().convertToDouble()) + ", " + fp(a.getEps().convertToDouble()) +
                   ", " + fp(a.getWeightDecay().convertToDouble()) + ", " + name(a.getStep()),
               a.getParam());
    return true;
  }
  if (auto s = dyn_cast<SGDUpdateOp>(op)) {
    GroupRange r;
    if (!groupRange(op, s.getParamAttr(), r))
      return true;
    emitUpdate(r, "sgd_update_part",
               name(s.getLr()) + ", " + fp(s.getMomentum().convertToDouble()) + ", " +
                   fp(s.getWeightDecay().convertToDouble()) + ", " + name(s.getStep()),
               s.getParam());
    return true;
  }
  // offload = optimizer (bmb-offload-optimizer; bmrt/offload.h): the
  // gradients out in chunks, AdamW on the host, the params back.
  if (auto c = dyn_cast<ClipCoefficientOp>(op)) {
    scalar(c.getResult(),
           "clip_coefficient(" + name(c.getNorm()) + ", " +
               fp(c.getMaxNorm().convertToDouble()) + ")",
           "double");
    return true;
  }
  if (auto o = dyn_cast<OffloadGradsOutOp>(op)) {
    std::string n = "r" + std::to_string(counter++);
    names[o.getRequest()] = n;
    os << in << "const OffloadRequest " << n << " = offload_grads_out<" << gradType()
       << ">(ctx, buf, " << o.getChunk() << ");\n";
    return true;
  }
  if (auto u = dyn_cast<OffloadAdamWUpdateOp>(op)) {
    // The params' ranges of the group (one per layer when a stacked
    // param's layers are a unit apart), in group order, with their decay.
    std::vector<std::tuple<int64_t, int64_t, double>> segments;
    for (auto [a, wd] : llvm::zip(u.getParams(), u.getWeightDecays())) {
      GroupRange r;
      if (!groupRange(op, cast<FlatSymbolRefAttr>(a), r))
        return true;
      if (r.layers == 1 || r.stride == r.slice)
        segments.push_back({r.offset, r.slice * r.layers, wd});
      else
        for (int64_t l = 0; l < r.layers; ++l)
          segments.push_back({r.offset + l * r.stride, r.slice, wd});
    }
    std::sort(segments.begin(), segments.end());
    std::string table = "kOffloadSegments" + std::to_string(counter++);
    os << in << "static const OffloadSegment " << table << "[] = {\n";
    for (auto [at, n, wd] : segments)
      os << in << "  {" << at << ", " << n << ", " << fp(wd) << "},\n";
    os << in << "};\n";
    std::string n = "r" + std::to_string(counter++);
    names[u.getRequest()] = n;
    os << in << "const OffloadRequest " << n << " = offload_adamw_update<" << gradType()
       << ">(ctx, buf, " << name(u.getOut()) << ", " << groupAttr("group_param_offset") << ", "
       << table << ", " << segments.size() << ", " << name(u.getLr()) << ", "
       << fp(u.getBeta1().convertToDouble()) << ", " << fp(u.getBeta2().convertToDouble())
       << ", " << fp(u.getEps().convertToDouble()) << ", " << name(u.getStep()) << ", "
       << (u.getScale() ? name(u.getScale()) : std::string("1.0")) << ");\n";
    return true;
  }
  if (isa<ZeroGradsOp>(op)) {
    os << in << "fill_zero<" << gradType() << ">(ctx, (" << gradType()
       << " *)buf.grads, buf.part.gradElems);\n";
    return true;
  }
  // Collectives (bmrt/comm.h): issue, then wait.
  std::string dtype = gradType() == "double" ? "DType::F64" : "DType::F32";
  auto request = [&](Value r, const std::string &call) {
    std::string n = "r" + std::to_string(counter++);
    names[r] = n;
    os << in << "const CommHandle " << n << " = commOf(ctx)." << call << ";\n";
  };
  if (auto r = dyn_cast<AllReduceGradsOp>(op)) {
    // One contiguous range of the grads allocation: the bucket's slices
    // (whole params, or the layers of its units) are back to back in the
    // group, up to the 64-byte alignment between them.
    std::vector<std::pair<int64_t, int64_t>> slices; // [begin, end) in elements
    int64_t size = gradType() == "double" ? 8 : 4;
    for (Attribute a : r.getParams()) {
      GroupRange g;
      if (!groupRange(op, cast<FlatSymbolRefAttr>(a), g))
        return true;
      int64_t first = 0, end = g.layers;
      if (auto layers = r.getLayers()) {
        first = (*layers)[0];
        end = (*layers)[1];
      }
      for (int64_t l = first; l < end; ++l)
        slices.push_back({g.offset + l * g.stride, g.offset + l * g.stride + g.slice});
    }
    std::sort(slices.begin(), slices.end());
    for (size_t i = 1; i < slices.size(); ++i)
      if (slices[i].first * size != (slices[i - 1].second * size + 63) / 64 * 64) {
        error(op, "emission: the bucket's gradients are not one contiguous range of the "
                  "trainable group");
        return true;
      }
    int64_t first = slices.front().first, end = slices.back().second;
    std::string call = "allReduce((" + gradType() + " *)buf.grads + " + std::to_string(first) +
                       ", " + std::to_string(end - first) + ", " + dtype + ")";
    // The backward may have issued these sums already (defer_all_reduce_grads).
    if (r.getUnlessOverlapped()) {
      std::string n = "r" + std::to_string(counter++);
      names[r.getRequest()] = n;
      os << in << "const CommHandle " << n << " = args.overlapGrads ? CommHandle{} : commOf(ctx)."
         << call << ";\n";
      return true;
    }
    request(r.getRequest(), call);
    return true;
  }
  if (auto d = dyn_cast<DeferAllReduceGradsOp>(op)) {
    // One layer's unit (its params' slices of that layer are back to back)
    // or whole unstacked params: one contiguous range from `first`, `layer`
    // units further on for a layer.
    int64_t first = -1, end = -1, stride = -1;
    for (Attribute a : d.getParams()) {
      GroupRange g;
      if (!groupRange(op, cast<FlatSymbolRefAttr>(a), g))
        return true;
      if (d.getLayer() && stride >= 0 && g.stride != stride) {
        error(op, "emission: the layer's params are not in one unit (different layer strides)");
        return true;
      }
      stride = g.stride;
      int64_t n = d.getLayer() ? g.slice : g.slice * g.layers;
      first = first < 0 ? g.offset : std::min(first, g.offset);
      end = std::max(end, g.offset + n);
    }
    int64_t size = gradType() == "double" ? 8 : 4;
    if (d.getLayer() && (end - first) * size > stride * size) {
      error(op, "emission: the layer's params span more than one unit");
      return true;
    }
    std::string at = std::to_string(first);
    if (d.getLayer())
      at += " + " + name(d.getLayer()) + " * " + std::to_string(stride);
    os << in << "if (args.overlapGrads)\n"
       << in << "  commDefer(ctx, commOf(ctx).allReduce((" << gradType() << " *)buf.grads + " << at
       << ", " << end - first << ", " << dtype << "));\n";
    return true;
  }
  // ZeRO-2: one staged unit, group elements [at, at + n) staged at
  // element stagingAt; a layer's unit is `layer` strides further on in the
  // group and in the same place of the staging.
  struct StagedUnit {
    int64_t stagingAt = -1, first = -1, end = -1, stride = 0;
  };
  auto stagedUnit = [&](Operation *at, ArrayAttr params, Value layer, StagedUnit &u) {
    for (Attribute a : params) {
      GroupRange g;
      if (!groupRange(at, cast<FlatSymbolRefAttr>(a), g))
        return false;
      auto p = SymbolTable::lookupNearestSymbolFrom<ParamOp>(at, cast<FlatSymbolRefAttr>(a));
      if (!p.getStagingOffset()) {
        error(at, "emission: the param has no staging_offset (run bmb-plan-memory)");
        return false;
      }
      int64_t staging = *p.getStagingOffset() / (gradType() == "double" ? 8 : 4);
      int64_t n = layer ? g.slice : g.slice * g.layers;
      u.stagingAt = u.stagingAt < 0 ? staging : std::min(u.stagingAt, staging);
      u.first = u.first < 0 ? g.offset : std::min(u.first, g.offset);
      u.end = std::max(u.end, g.offset + n);
      u.stride = g.stride;
    }
    return true;
  };
  auto unitArgs = [&](const StagedUnit &u, Value layer) {
    std::string at = std::to_string(u.first);
    if (layer)
      at += " + " + name(layer) + " * " + std::to_string(u.stride);
    return std::to_string(u.stagingAt) + ", " + at + ", " + std::to_string(u.end - u.first);
  };
  if (auto g = dyn_cast<GatherUnitOp>(op)) {
    StagedUnit u;
    if (!stagedUnit(op, g.getParams(), g.getLayer(), u))
      return true;
    std::string n = "r" + std::to_string(counter++);
    names[g.getRequest()] = n;
    os << in << "const CommHandle " << n << " = gather_unit<" << gradType() << ">(ctx, buf, "
       << program->getAttrOfType<IntegerAttr>("group_param_offset").getInt() << ", "
       << unitArgs(u, g.getLayer()) << ");\n";
    return true;
  }
  // ZeRO-3's layers: two slots, `param_slot_stride` bytes apart.
  auto slotArgs = [&](Operation *at, ArrayAttr params, Value layer, std::string &out) {
    StagedUnit u;
    if (!stagedUnit(at, params, layer, u))
      return false;
    auto stride = program->getAttrOfType<IntegerAttr>("param_slot_stride");
    if (!stride) {
      error(at, "emission: the zero = 3 program has no param_slot_stride (run bmb-plan-memory)");
      return false;
    }
    const int64_t elemBytes = gradType() == "double" ? 8 : 4;
    out = std::to_string(program->getAttrOfType<IntegerAttr>("group_param_offset").getInt()) +
          ", " + std::to_string(u.stagingAt) + ", " +
          std::to_string(stride.getInt() / elemBytes) + ", " + std::to_string(u.first) + " + " +
          name(layer) + " * " + std::to_string(u.stride) + ", " +
          std::to_string(u.end - u.first) + ", " + name(layer);
    return true;
  };
  if (auto w = dyn_cast<WaitUnitOp>(op)) {
    std::string args;
    if (slotArgs(op, w.getParams(), w.getLayer(), args))
      os << in << "wait_unit<" << gradType() << ">(ctx, buf, " << args << ");\n";
    return true;
  }
  if (auto r = dyn_cast<RoundUnitOp>(op)) {
    // Unit 0 at its staging place; a layer in its slot, as wait_unit put it.
    StagedUnit u;
    if (!stagedUnit(op, r.getParams(), r.getLayer(), u))
      return true;
    std::string at = std::to_string(u.stagingAt);
    if (r.getLayer()) {
      auto stride = program->getAttrOfType<IntegerAttr>("param_slot_stride");
      if (!stride) {
        error(op, "emission: the zero = 3 program has no param_slot_stride (run bmb-plan-memory)");
        return true;
      }
      at += " + (" + name(r.getLayer()) + ") % 2 * " + std::to_string(stride.getInt() / 4);
    }
    os << in << "round_unit(ctx, " << (r.getTo().isBF16() ? "LowPrecision::BF16" : "LowPrecision::FP16")
       << ", buf, " << at << ", " << u.end - u.first << ");\n";
    return true;
  }
  if (auto f = dyn_cast<PrefetchUnitOp>(op)) {
    std::string args;
    if (slotArgs(op, f.getParams(), f.getLayer(), args))
      os << in << "if (args.prefetchParams)\n"
         << in << "  prefetch_unit<" << gradType() << ">(ctx, buf, " << args << ", "
         << f.getLayers() << ");\n";
    return true;
  }
  if (auto r = dyn_cast<ReduceScatterUnitOp>(op)) {
    StagedUnit u;
    if (!stagedUnit(op, r.getParams(), r.getLayer(), u))
      return true;
    std::string n = "r" + std::to_string(counter++);
    names[r.getRequest()] = n;
    os << in << "const CommHandle " << n << " = reduce_scatter_unit<" << gradType()
       << ">(ctx, buf, " << unitArgs(u, r.getLayer()) << ");\n";
    return true;
  }
  // ZeRO-2's layers, one ahead: two slots, grad_slot_stride bytes apart.
  auto gradSlotArgs = [&](Operation *at, ArrayAttr params, Value layer, std::string &out) {
    StagedUnit u;
    if (!stagedUnit(at, params, layer, u))
      return false;
    int64_t stride = gradSlotStrideElems(at);
    if (stride < 0)
      return false;
    out = std::to_string(u.stagingAt) + ", " + std::to_string(stride) + ", " +
          std::to_string(u.first) + " + " + name(layer) + " * " + std::to_string(u.stride) +
          ", " + std::to_string(u.end - u.first) + ", " + name(layer);
    return true;
  };
  if (auto r = dyn_cast<ReduceScatterAheadOp>(op)) {
    std::string args;
    if (gradSlotArgs(op, r.getParams(), r.getLayer(), args))
      os << in << "reduce_scatter_ahead<" << gradType() << ">(ctx, buf, " << args
         << ", args.reduceScatterAhead);\n";
    return true;
  }
  if (auto w = dyn_cast<WaitUnitGradsOp>(op)) {
    std::string args;
    if (gradSlotArgs(op, w.getParams(), w.getLayer(), args))
      os << in << "wait_unit_grads<" << gradType() << ">(ctx, buf, " << args << ");\n";
    return true;
  }
  if (auto a = dyn_cast<AddUnitGradsOp>(op)) {
    StagedUnit u;
    if (!stagedUnit(op, a.getParams(), a.getLayer(), u))
      return true;
    os << in << "add_unit_grads<" << gradType() << ">(ctx, buf, " << unitArgs(u, a.getLayer())
       << ");\n";
    return true;
  }
  if (isa<WaitDeferredOp>(op)) {
    os << in << "commWaitDeferred(ctx);\n";
    return true;
  }
  if (auto r = dyn_cast<ReduceScatterGradsOp>(op)) {
    request(r.getRequest(), "reduceScatter(buf.grads, buf.part.size, " + dtype + ")");
    return true;
  }
  if (auto r = dyn_cast<AllGatherParamsOp>(op)) {
    request(r.getRequest(), "allGather((char *)buf.params + " +
                                std::to_string(groupAttr("group_param_offset")) +
                                ", buf.part.size, " + dtype + ")");
    return true;
  }
  if (auto w = dyn_cast<WaitOp>(op); w && w.getRequest().getDefiningOp<OffloadAdamWUpdateOp>()) {
    os << in << "offload_wait(ctx, " << name(w.getRequest()) << ");\n";
    return true;
  }
  if (auto w = dyn_cast<WaitOp>(op)) {
    auto skipped = w.getRequest().getDefiningOp<AllReduceGradsOp>();
    os << in << (skipped && skipped.getUnlessOverlapped() ? "if (!args.overlapGrads) " : "")
       << "commWait(ctx, " << name(w.getRequest()) << ");\n";
    return true;
  }
  return false;
}

void Emitter::emitTrainTables(ArrayRef<func::FuncOp> entries) {
  auto train = program->getAttrOfType<DictionaryAttr>("train");
  for (const char *attr : {"grad_bytes", "opt_state_bytes"})
    if (!program->getAttrOfType<IntegerAttr>(attr)) {
      error(program, "emission: the program has no '")
          << attr << "' attribute (run bmb-plan-memory first)";
      return;
    }
  func::FuncOp byName[3];
  const char *kNames[3] = {"forward_backward", "optimizer_step", "evaluate"};
  for (func::FuncOp f : entries)
    for (int i = 0; i < 3; ++i)
      if (f.getName() == kNames[i])
        byName[i] = f;
  for (int i = 0; i < 3; ++i)
    if (!byName[i]) {
      error(program, "emission: a training program needs the entry @") << kNames[i];
      return;
    }
  // Inputs and outputs of each entry (optimizer_step has none).
  int counts[3][2] = {};
  for (int i = 0; i < 3; ++i) {
    std::string fn = kNames[i];
    os << "const TensorRef k" << fn << "Inputs[] = {\n";
    byName[i].walk([&](InputOp in) {
      auto t = mt(in.getResult());
      os << "  {" << cString(in.getName()) << ", " << dtypeEnum(t.getElementType()) << ", "
         << t.getRank() << ", " << shapeInit(t.getShape()) << ", " << *in.getOffset() << ", "
         << static_cast<int64_t>(in.getRowsDim()) << "},\n";
      ++counts[i][0];
    });
    if (!counts[i][0])
      os << "  {\"\", DType::F32, 0, {}, 0, -1}, // none\n";
    os << "};\nconst TensorRef k" << fn << "Outputs[] = {\n";
    byName[i].walk([&](OutputOp o) {
      auto t = mt(o.getBuffer());
      auto a = o.getBuffer().getDefiningOp<AllocOp>();
      os << "  {" << cString(o.getName()) << ", " << dtypeEnum(t.getElementType()) << ", "
         << t.getRank() << ", " << shapeInit(t.getShape()) << ", " << *a.getOffset() << ", "
         << static_cast<int64_t>(o.getRowsDim()) << "},\n";
      ++counts[i][1];
    });
    if (!counts[i][1])
      os << "  {\"\", DType::F32, 0, {}, 0, -1}, // none\n";
    os << "};\n\n";
  }
  auto entry = [&](int i) {
    std::string fn = kNames[i];
    return "{" + cString(fn) + ", " + fn + ", k" + fn + "Inputs, " +
           std::to_string(counts[i][0]) + ", k" + fn + "Outputs, " +
           std::to_string(counts[i][1]) + "}";
  };
  // offload = optimizer: bmb-offload-optimizer must have rewritten the step.
  int64_t offloadChunk = 0;
  program.walk([&](OffloadGradsOutOp o) { offloadChunk = o.getChunk(); });
  if (auto settings = program->getAttrOfType<DictionaryAttr>("settings"))
    if (auto o = settings.getAs<StringAttr>("offload");
        o && o.getValue() == "optimizer" && !offloadChunk) {
      error(program, "emission: the job sets offload = optimizer but @optimizer_step was not "
                     "offloaded (run bmb-offload-optimizer)");
      return;
    }
  std::string optimizer = trainStr(train, "optimizer");
  std::string schedule = trainStr(train, "schedule");
  std::string scheduleEnum = schedule == "cosine" ? "LrSchedule::Cosine"
                             : schedule == "linear" ? "LrSchedule::Linear"
                                                    : "LrSchedule::Constant";
  auto units = program->getAttrOfType<DenseI64ArrayAttr>("group_units");
  if (!units || units.size() < 2) {
    error(program, "emission: the program has no 'group_units' (run bmb-plan-memory)");
    return;
  }
  os << "// The units of the trainable group (element offsets; unit 0: the params\n"
     << "// outside repeats, then one unit per layer).\n"
     << "const int64_t kGroupUnits[] = {";
  for (auto [i, u] : llvm::enumerate(units.asArrayRef()))
    os << (i ? ", " : "") << u;
  os << "};\n\n";
  os << "const TrainInfo kTrain = {\n"
     << "  " << trainInt(train, "batch") << ", " << trainInt(train, "seq") << ", // batch, seq\n"
     << "  " << program->getAttrOfType<IntegerAttr>("grad_bytes").getInt() << ", "
     << program->getAttrOfType<IntegerAttr>("opt_state_bytes").getInt()
     << ", // grad bytes, optimizer-state bytes\n"
     << "  " << (optimizer == "sgd" ? "OptimizerKind::SGD" : "OptimizerKind::AdamW") << ", "
     << trainInt(train, "opt_slots") << ",\n"
     << "  " << trainNum(train, "lr") << ", " << trainNum(train, "beta1") << ", "
     << trainNum(train, "beta2") << ", " << trainNum(train, "eps") << ", "
     << trainNum(train, "weight_decay") << ", " << trainNum(train, "momentum")
     << ", // lr, beta1, beta2, eps, weight_decay, momentum\n"
     << "  " << trainNum(train, "clip") << ", // clip norm (0: none)\n"
     << "  (int)" << scheduleEnum << ", " << trainInt(train, "warmup") << ", "
     << trainInt(train, "steps") << ", // schedule, warmup, steps\n"
     << "  " << trainInt(train, "accumulate") << ", // micro-batches per update\n"
     << "  " << cString(trainStr(train, "data")) << ", "
     << cString(trainStr(train, "data_tokenizer")) << ",\n"
     << "  " << entry(0) << ",\n  " << entry(1) << ",\n  " << entry(2) << ",\n"
     << "  "
     << (trainStr(train, "objective") == "masked_lm" ? "TrainObjective::MaskedLM"
                                                      : "TrainObjective::CausalLM")
     << ", " << trainNum(train, "mask_prob") << ", " << trainInt(train, "mask_id")
     << ", // objective, mask prob, mask id\n"
     << "  " << trainInt(train, "eval_every") << ", " << trainInt(train, "save_every") << ", "
     << trainInt(train, "log_every") << ", // the job's eval_every, save_every, log_every\n"
     << "  " << trainInt(train, "zero_stage") << ", " << groupAttr("group_param_offset") << ", "
     << groupAttr("group_elems") << ", " << groupAttr("partition_align")
     << ", // ZeRO stage, trainable group: param offset, elements, partition align\n"
     << "  " << cString(precisionOf(program)) << ", " << lossScaleOf(program)
     << ", // precision, fp16 loss scale and window\n"
     << "  kGroupUnits, " << units.size() - 1 << ", // units of the trainable group\n"
     << "  " << (overlapsGrads() ? "true" : "false")
     << ", // the backward can issue the gradient all-reduces (StepArgs::overlapGrads)\n"
     << "  "
     << (program->getAttrOfType<IntegerAttr>("grad_staging_bytes")
             ? program->getAttrOfType<IntegerAttr>("grad_staging_bytes").getInt()
             : 0)
     << ", // zero = 2 and 3: bytes of the gradient staging (unit 0, two layer slots)\n"
     << "  " << trainNum(train, "min_lr") << ", // the schedule's min_lr\n"
     << "  " << (offloadChunk ? "true" : "false") << ", " << offloadChunk
     << ", // offload = optimizer, elements per chunk\n"
     << "  "
     << (program->getAttrOfType<IntegerAttr>("param_staging_bytes")
             ? program->getAttrOfType<IntegerAttr>("param_staging_bytes").getInt()
             : 0)
     << ", // zero = 3: bytes of the param staging (one unit at a time)\n"
     << "  "
     << (program->getAttrOfType<IntegerAttr>("grad_slot_stride")
             ? program->getAttrOfType<IntegerAttr>("grad_slot_stride").getInt()
             : 0)
     << ", // zero = 2 and 3: bytes between a layer's two gradient slots\n"
     << "};\n\n";
  bool tune = program->hasAttr("tune");
  if (tune)
    emitTuneInfo();
  int64_t numParams = llvm::range_size(program.getOps<ParamOp>());
  int64_t numMaps = llvm::range_size(program.getOps<NameMapOp>());
  os << "const ProgramInfo kProgram = {\n"
     << "  " << cString(source) << ", " << cString(program->getAttrOfType<StringAttr>("job"))
     << ", " << cString(program->getAttrOfType<StringAttr>("model")) << ", "
     << cString(program->getAttrOfType<StringAttr>("from").getValue()) << ",\n"
     << "  ModelKind::CausalLM, " << program->getAttrOfType<IntegerAttr>("vocab").getInt()
     << ", " << program->getAttrOfType<IntegerAttr>("ctx").getInt() << ",\n"
     << "  kParams, " << numParams << ", kNameMaps, " << numMaps << ",\n"
     << "  " << program->getAttrOfType<IntegerAttr>("param_bytes").getInt() << ", "
     << program->getAttrOfType<IntegerAttr>("state_bytes").getInt() << ", "
     << program->getAttrOfType<IntegerAttr>("activation_bytes").getInt() << ",\n"
     << "  nullptr, 0, // no infer entries\n"
     << "  \"greedy\", 1.0, 1.0, 0,\n"
     << "  " << cString(trainStr(train, "data_tokenizer")) << ",\n"
     << "  &kTrain,\n"
     << (tune ? "  nullptr, 0, // no merged deltas\n  &kTune,\n" : "")
     << "};\n\n} // namespace\n\n"
     << "int main(int argc, char **argv) { return bmrt::"
     << (tune ? "tune_main" : "train_main") << "(argc, argv, kProgram); }\n";
}
