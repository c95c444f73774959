//===- EmitTune.cpp - The prompt-tuning parts of an emitted program -------===//
//
// A tune job's program prints like a train job's (EmitTrain.cpp) plus the
// calls of bmrt/tuning.h (soft embedding, mask-row gather, the verbalizer
// loss), a TuneInfo table from the program's `tune` attribute (LowerTune.cpp)
// and `main` handing over to bmrt::tune_main.
//
//===----------------------------------------------------------------------===//
#include "compiler/Emitter.h"

using namespace mlir;
using namespace mlir::bmb::exec;

bool Emitter::emitTuneOp(Operation *op) {
  std::string in = indent();
  auto elem = [&](Value v) { return cType(mt(v).getElementType()); };
  auto count = [&](Value v) { return std::to_string(mt(v).getNumElements()); };
  if (auto e = dyn_cast<SoftEmbeddingOp>(op)) {
    auto t = mt(e.getTable());
    os << in << "soft_embedding_forward<" << elem(e.getOut()) << ">(ctx, " << name(e.getOut())
       << ", " << name(e.getIds()) << ", " << name(e.getTable()) << ", " << name(e.getSoft())
       << ", " << count(e.getIds()) << ", " << t.getDimSize(0) << ", "
       << mt(e.getSoft()).getDimSize(0) << ", " << t.getDimSize(1) << ");\n";
    return true;
  }
  if (auto e = dyn_cast<SoftEmbeddingGradOp>(op)) {
    int64_t dim = last(e.getDy());
    int64_t numSoft = e.getDsoft() ? mt(e.getDsoft()).getDimSize(0) : 0;
    os << in << "soft_embedding_backward<" << elem(e.getDy()) << ">(ctx, " << opt(e.getDtable())
       << ", " << opt(e.getDsoft()) << ", " << name(e.getIds()) << ", " << name(e.getDy())
       << ", " << count(e.getIds()) << ", " << e.getNum() << ", " << numSoft << ", " << dim
       << ");\n";
    return true;
  }
  auto gatherArgs = [&](Value x, Value positions) {
    auto s = mt(x).getShape();
    return std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " +
           std::to_string(mt(positions).getDimSize(1)) + ", " + std::to_string(s[2]);
  };
  if (auto g = dyn_cast<GatherRowsOp>(op)) {
    os << in << "gather_rows_forward<" << elem(g.getOut()) << ">(ctx, " << name(g.getOut())
       << ", " << name(g.getX()) << ", " << name(g.getPositions()) << ", "
       << gatherArgs(g.getX(), g.getPositions()) << ");\n";
    return true;
  }
  if (auto g = dyn_cast<GatherRowsGradOp>(op)) {
    os << in << "gather_rows_backward<" << elem(g.getDx()) << ">(ctx, " << name(g.getDx())
       << ", " << name(g.getDy()) << ", " << name(g.getPositions()) << ", "
       << gatherArgs(g.getDx(), g.getPositions()) << ");\n";
    return true;
  }
  if (auto v = dyn_cast<VerbalizerLossOp>(op)) {
    auto words = mt(v.getLabelWords()).getShape(); // [M, C, W, K]
    std::string reduce;
    for (Attribute r : v.getReduce()) {
      StringRef s = cast<StringAttr>(r).getValue();
      reduce += std::string(reduce.empty() ? "" : ", ") +
                (s == "mean" ? "WordReduce::Mean" : s == "max" ? "WordReduce::Max"
                                                               : "WordReduce::First");
    }
    os << in << "{\n"
       << in << "  static const WordReduce reduce[] = {" << reduce << "};\n"
       << in << "  VerbalizerShape s;\n"
       << in << "  s.batch = " << mt(v.getLabels()).getDimSize(0) << "; s.masks = " << words[0]
       << "; s.labels = " << words[1] << "; s.words = " << words[2]
       << "; s.wordTokens = " << words[3] << "; s.vocab = " << last(v.getLogits()) << ";\n"
       << in << "  verbalizer_loss_forward_backward<" << elem(v.getLogits()) << ">(ctx, s, reduce, "
       << name(v.getLosses()) << ", " << name(v.getScores()) << ", " << name(v.getWordProbs())
       << ", " << opt(v.getDlogits()) << ", " << name(v.getLogits()) << ", "
       << name(v.getLabels()) << ", " << name(v.getLabelWords()) << ", "
       << name(v.getCalibration()) << ", " << static_cast<int64_t>(v.getIgnoreIndex()) << ", "
       << (v.getScale() ? name(v.getScale()) : std::string("1.0")) << ");\n"
       << in << "}\n";
    return true;
  }
  return false;
}

void Emitter::emitTuneInfo() {
  auto tune = program->getAttrOfType<DictionaryAttr>("tune");
  auto str = [&](StringRef key) {
    auto a = tune.getAs<StringAttr>(key);
    return cString(a ? a.getValue() : "");
  };
  auto num = [&](StringRef key) {
    auto a = tune.getAs<IntegerAttr>(key);
    return std::to_string(a ? a.getInt() : 0);
  };
  os << "const TuneInfo kTune = {\n"
     << "  " << str("prompt") << ",\n"
     << "  " << str("data") << ",\n"
     << "  " << num("num_labels") << ", " << num("num_masks") << ", " << num("max_words") << ", "
     << num("max_word_tokens") << ", // labels C, masks M, words W, tokens per word K\n"
     << "  " << num("num_soft") << ", " << str("soft_param") << ", " << str("embedding_param")
     << ", " << str("label_param") << ", " << str("head_param") << ", "
     << str("label_init_param") << ",\n"
     << "};\n\n";
}
