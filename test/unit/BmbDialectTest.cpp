//===- BmbDialectTest.cpp - Building bmb IR from C++ ----------------------===//
//
// Builds GPT-2 (124M) with the C++ builders the way MLIRGen does for
// models/gpt2.bmb: parameters first (repeat-stacked), then the forward graph
// with one bmb.layer per instance and a rolled bmb.repeat, and its Hugging
// Face checkpoint map; verifies it, round trips it through text, runs the
// frontend pipeline and checks the parameter statistics against GPT-2's
// well-known 124,439,808.
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/BmbDialect.h"
#include "dialects/Bmb/BmbOps.h"
#include "passes/ParamStats.h"
#include "passes/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::bmb;

namespace {

struct GPT2Config {
  int64_t vocab = 50257, ctx = 1024, dim = 768, layers = 12, heads = 12;
  int64_t batch = 1, seq = 1024;
};

/// What MLIRGen does for GPT2, written against the public builders.
class GPT2Builder {
public:
  GPT2Builder(MLIRContext *ctx, const GPT2Config &c)
      : b(ctx), c(c), loc(FileLineColLoc::get(ctx, "gpt2.bmb", 5, 1)),
        f32(b.getF32Type()) {}

  OwningOpRef<ModuleOp> build() {
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    auto model = b.create<ModelOp>(loc, "GPT2", "GPT2");
    b.setInsertionPointToEnd(&model.getBody().front());
    buildParams();
    buildCheckpointMap();
    buildForward();
    b.setInsertionPointToEnd(module->getBody());
    buildJob();
    return module;
  }

private:
  RankedTensorType t(ArrayRef<int64_t> shape, Type e = {}) {
    return RankedTensorType::get(shape, e ? e : f32);
  }

  void param(StringRef name, ArrayRef<int64_t> shape, InitKind init,
             bool stacked = false) {
    SmallVector<int64_t> full;
    if (stacked)
      full.push_back(c.layers); // repeat(layers): stacked [n, ...]
    full.append(shape.begin(), shape.end());
    double a = init == InitKind::Normal ? 0.02 : 0.0;
    params[name] = b.create<ParamOp>(
        loc, name, t(full), InitAttr::get(b.getContext(), init, a),
        /*frozen=*/false, /*stacked=*/stacked ? 1 : 0);
  }

  void buildParams() {
    int64_t d = c.dim;
    param("wte.w", {c.vocab, d}, InitKind::Normal);
    param("wpe.w", {c.ctx, d}, InitKind::Normal);
    for (StringRef ln : {"h.ln1", "h.ln2"}) {
      param((ln + ".w").str(), {d}, InitKind::Ones, true);
      param((ln + ".b").str(), {d}, InitKind::Zeros, true);
    }
    for (StringRef p : {"h.attn.q", "h.attn.k", "h.attn.v", "h.attn.o"}) {
      param((p + ".w").str(), {d, d}, InitKind::Normal, true);
      param((p + ".b").str(), {d}, InitKind::Zeros, true);
    }
    param("h.mlp.up.w", {4 * d, d}, InitKind::Normal, true);
    param("h.mlp.up.b", {4 * d}, InitKind::Zeros, true);
    param("h.mlp.down.w", {d, 4 * d}, InitKind::Normal, true);
    param("h.mlp.down.b", {d}, InitKind::Zeros, true);
    param("ln_f.w", {d}, InitKind::Ones);
    param("ln_f.b", {d}, InitKind::Zeros);
  }

  /// models/gpt2.bmb's `checkpoint hf for GPT2`.
  void buildCheckpointMap() {
    MLIRContext *ctx = b.getContext();
    SmallVector<NameRuleAttr> rules;
    auto rule = [&](StringRef external, ArrayRef<StringRef> parts,
                    bool transpose = false, bool tied = false) {
      SmallVector<FlatSymbolRefAttr> refs;
      for (StringRef p : parts)
        refs.push_back(FlatSymbolRefAttr::get(ctx, p));
      rules.push_back(
          NameRuleAttr::get(ctx, external, refs, 0, transpose, tied));
    };
    rule("transformer.wte.weight", {"wte.w"});
    rule("transformer.wpe.weight", {"wpe.w"});
    rule("transformer.h.{i}.ln_1.weight", {"h.ln1.w"});
    rule("transformer.h.{i}.ln_1.bias", {"h.ln1.b"});
    rule("transformer.h.{i}.attn.c_attn.weight",
         {"h.attn.q.w", "h.attn.k.w", "h.attn.v.w"}, /*transpose=*/true);
    rule("transformer.h.{i}.attn.c_attn.bias",
         {"h.attn.q.b", "h.attn.k.b", "h.attn.v.b"});
    rule("transformer.h.{i}.attn.c_proj.weight", {"h.attn.o.w"}, true);
    rule("transformer.h.{i}.attn.c_proj.bias", {"h.attn.o.b"});
    rule("transformer.h.{i}.ln_2.weight", {"h.ln2.w"});
    rule("transformer.h.{i}.ln_2.bias", {"h.ln2.b"});
    rule("transformer.h.{i}.mlp.c_fc.weight", {"h.mlp.up.w"}, true);
    rule("transformer.h.{i}.mlp.c_fc.bias", {"h.mlp.up.b"});
    rule("transformer.h.{i}.mlp.c_proj.weight", {"h.mlp.down.w"}, true);
    rule("transformer.h.{i}.mlp.c_proj.bias", {"h.mlp.down.b"});
    rule("transformer.ln_f.weight", {"ln_f.w"});
    rule("transformer.ln_f.bias", {"ln_f.b"});
    rule("lm_head.weight", {"wte.w"}, false, /*tied=*/true);
    b.create<CheckpointMapOp>(loc, "hf", rules);
  }

  /// One bmb.layer: creates the op, fills its body with `body(args)` and
  /// yields the result.
  Value layer(StringRef instance, StringRef decl, ValueRange inputs,
              Type result, function_ref<Value(ValueRange)> body) {
    auto op = b.create<LayerOp>(loc, instance, decl, TypeRange{result}, inputs);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(op.getBodyBlock());
    b.create<YieldOp>(loc, body(op.getBodyBlock()->getArguments()));
    return op.getResult(0);
  }

  /// Reads a parameter; `iv` is the iteration index inside the repeat.
  Value get(const std::string &name, Value iv = {}) {
    return b.create<ParamGetOp>(loc, params[name],
                                iv ? ValueRange{iv} : ValueRange{});
  }

  /// Linear(in, out) as a child instance inside the repeat body: the
  /// induction variable is passed in because layers are isolated.
  Value linear(StringRef path, StringRef instance, Value iv, Value x,
               int64_t out) {
    SmallVector<int64_t> shape(cast<RankedTensorType>(x.getType()).getShape());
    shape.back() = out;
    std::string prefix = (path + "." + instance).str();
    return layer(instance, "Linear", {iv, x}, t(shape), [&](ValueRange a) {
      return b.create<LinearOp>(loc, a[1], get(prefix + ".w", a[0]),
                                get(prefix + ".b", a[0]));
    });
  }

  Value layerNorm(StringRef instance, Value iv, Value x) {
    std::string prefix = ("h." + instance).str();
    return layer(
        instance, "LayerNorm", {iv, x}, x.getType(), [&](ValueRange a) {
          return b.create<LayerNormOp>(loc, a[1], get(prefix + ".w", a[0]),
                                       get(prefix + ".b", a[0]),
                                       llvm::APFloat(1e-5));
        });
  }

  void buildForward() {
    int64_t d = c.dim, hd = c.dim / c.heads;
    RankedTensorType act = t({c.batch, c.seq, d});
    auto fn = b.create<func::FuncOp>(
        loc, "forward",
        b.getFunctionType({t({c.batch, c.seq}, b.getI32Type())},
                          {t({c.batch, c.seq, c.vocab})}));
    Block *entry = fn.addEntryBlock();
    b.setInsertionPointToStart(entry);

    Value tok = layer("wte", "Embedding", entry->getArgument(0), act,
                      [&](ValueRange a) {
                        return b.create<EmbeddingOp>(loc, a[0], get("wte.w"));
                      });
    Value positions = b.create<ArangeOp>(loc, uint64_t(c.seq));
    Value pos =
        layer("wpe", "Embedding", positions, t({c.seq, d}), [&](ValueRange a) {
          return b.create<EmbeddingOp>(loc, a[0], get("wpe.w"));
        });
    Value x = b.create<AddOp>(loc, tok, pos); // broadcast over the batch

    auto h = b.create<RepeatOp>(loc, c.layers, "h", "Block", ValueRange{x});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(h.getBodyBlock());
      Value i = h.getInductionVar(), a = h.getCarriedArgs()[0];
      Value n1 = layerNorm("ln1", i, a);
      Value att = layer("attn", "Attention", {i, n1}, act, [&](ValueRange v) {
        Value q = linear("h.attn", "q", v[0], v[1], d);
        Value k = linear("h.attn", "k", v[0], v[1], d);
        Value vv = linear("h.attn", "v", v[0], v[1], d);
        Value y = b.create<AttentionOp>(
            loc, q, k, vv, /*mask=*/Value(), /*prefix_key=*/Value(), /*prefix_value=*/Value(),
            /*prefix_gate=*/Value(),
            c.heads, c.heads, /*causal=*/true,
            llvm::APFloat(1.0 / std::sqrt(double(hd))));
        return linear("h.attn", "o", v[0], y, d);
      });
      Value r1 = b.create<AddOp>(loc, a, att);
      Value n2 = layerNorm("ln2", i, r1);
      Value mlp = layer("mlp", "MLP", {i, n2}, act, [&](ValueRange v) {
        Value up = linear("h.mlp", "up", v[0], v[1], 4 * d);
        Value g = b.create<GeluOp>(loc, up, GeluApproximation::Tanh);
        return linear("h.mlp", "down", v[0], g, d);
      });
      b.create<YieldOp>(loc, ValueRange{b.create<AddOp>(loc, r1, mlp)});
    }

    Value f =
        layer("ln_f", "LayerNorm", h.getResult(0), act, [&](ValueRange a) {
          return b.create<LayerNormOp>(loc, a[0], get("ln_f.w"), get("ln_f.b"),
                                       llvm::APFloat(1e-5));
        });
    Value logits = b.create<LMHeadOp>(loc, f, get("wte.w"), Value());
    b.create<func::ReturnOp>(loc, logits);
  }

  void buildJob() {
    NamedAttrList optimizer;
    optimizer.append("kind", b.getStringAttr("adamw"));
    optimizer.append("lr", b.getF64FloatAttr(6e-4));
    NamedAttrList settings;
    settings.append("batch", b.getI64IntegerAttr(c.batch));
    settings.append("seq", b.getI64IntegerAttr(c.seq));
    settings.append("optimizer", optimizer.getDictionary(b.getContext()));
    b.create<JobOp>(loc, "pretrain", JobKind::Train, "GPT2",
                    settings.getDictionary(b.getContext()));
  }

  OpBuilder b;
  GPT2Config c;
  Location loc;
  Type f32;
  llvm::StringMap<ParamOp> params;
};

class BmbDialectTest : public ::testing::Test {
protected:
  BmbDialectTest() { ctx.loadDialect<BmbDialect, func::FuncDialect>(); }
  MLIRContext ctx;
};

TEST_F(BmbDialectTest, BuildsAndVerifiesGPT2) {
  OwningOpRef<ModuleOp> module = GPT2Builder(&ctx, {}).build();
  ASSERT_TRUE(succeeded(verify(*module)));

  // The builders inferred every primitive's type from the shape rules.
  func::FuncOp forward;
  module->walk([&](func::FuncOp f) { forward = f; });
  ASSERT_TRUE(forward);
  auto ret = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
  EXPECT_EQ(ret.getOperand(0).getType(),
            RankedTensorType::get({1, 1024, 50257}, Float32Type::get(&ctx)));

  // Stacked parameters are read with the (forwarded) induction variable.
  int stackedReads = 0;
  module->walk(
      [&](ParamGetOp op) { stackedReads += !op.getIndices().empty(); });
  EXPECT_EQ(stackedReads, 16); // 2 layer norms x 2 + 6 linears x 2
}

TEST_F(BmbDialectTest, RoundTripsThroughText) {
  OwningOpRef<ModuleOp> module = GPT2Builder(&ctx, {}).build();
  std::string text;
  llvm::raw_string_ostream(text) << *module;
  OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(text, &ctx);
  ASSERT_TRUE(parsed);
  ASSERT_TRUE(succeeded(verify(*parsed)));
  std::string again;
  llvm::raw_string_ostream(again) << *parsed;
  EXPECT_EQ(text, again);
}

TEST_F(BmbDialectTest, ParamStatsOfGPT2) {
  OwningOpRef<ModuleOp> module = GPT2Builder(&ctx, {}).build();
  FailureOr<ParamStats> stats = computeParamStats(*module);
  ASSERT_TRUE(succeeded(stats));
  ASSERT_EQ(stats->models.size(), 1u);
  const ModelParamStats &m = stats->models[0];
  EXPECT_EQ(m.model, "GPT2");
  EXPECT_EQ(m.elements, 124439808);
  EXPECT_EQ(m.bytes, 497759232);
  EXPECT_EQ(formatCount(m.elements), "124,439,808");
  EXPECT_EQ(formatBytes(m.bytes), "474.7 MiB");
  EXPECT_EQ(m.trainableElements, m.elements);

  ASSERT_EQ(m.instances.size(), 11u);
  EXPECT_EQ(m.instances[0].instance, "wte");
  EXPECT_EQ(m.instances[0].elements, 50257 * 768);
  const InstanceParamStats &up = m.instances[8];
  EXPECT_EQ(up.instance, "h.mlp.up");
  EXPECT_EQ(up.repeat, 12);
  EXPECT_EQ(up.elements, 12 * (3072 * 768 + 3072));
  ASSERT_EQ(m.dtypes.size(), 1u);
  EXPECT_EQ(m.dtypes[0].dtype, "f32");

  ASSERT_EQ(m.jobs.size(), 1u);
  const JobMemoryStats &job = m.jobs[0];
  EXPECT_EQ(job.optimizer, "adamw");
  EXPECT_EQ(job.gradBytes, 497759232);
  EXPECT_EQ(job.optimizerBytes, 995518464); // 2 x f32 per parameter
  EXPECT_EQ(job.totalBytes, 1991036928);
  EXPECT_EQ(formatBytes(job.totalBytes), "1.9 GiB");

  std::string table;
  llvm::raw_string_ostream os(table);
  printParamStats(*stats, os);
  EXPECT_NE(table.find("  h.mlp.up       x12       28,348,416   108.1 MiB\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("124,439,808   474.7 MiB"), std::string::npos) << table;
}

TEST_F(BmbDialectTest, FrontendPipelineKeepsAValidModel) {
  OwningOpRef<ModuleOp> module = GPT2Builder(&ctx, {}).build();
  PassManager pm(&ctx);
  populateFrontendPipeline(pm);
  ASSERT_TRUE(succeeded(pm.run(*module)));
  ASSERT_TRUE(succeeded(verify(*module)));
  int repeats = 0;
  module->walk([&](RepeatOp) { ++repeats; });
  EXPECT_EQ(repeats, 1); // still rolled
  // The checkpoint map is kept, whole.
  SmallVector<CheckpointMapOp> maps;
  module->walk([&](CheckpointMapOp op) { maps.push_back(op); });
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_EQ(maps[0].getRules().size(), 17u);
}

TEST_F(BmbDialectTest, NameRuleChecksWhatTextCannotSay) {
  // The textual form cannot spell a rule without parts or a transposed tied
  // rule; the builder can, and getChecked refuses them.
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  auto emit = [&] { return mlir::emitError(UnknownLoc::get(&ctx)); };
  // The generated (out-of-line) getChecked: exact argument types.
  auto rule = [&](ArrayRef<FlatSymbolRefAttr> parts, bool transpose,
                  bool tied) {
    return NameRuleAttr::getChecked(function_ref<InFlightDiagnostic()>(emit),
                                    &ctx, StringRef("x"), parts, int64_t(0),
                                    transpose, tied);
  };
  FlatSymbolRefAttr w = FlatSymbolRefAttr::get(&ctx, "w");
  EXPECT_FALSE(rule({}, false, false));
  EXPECT_EQ(message, "\"x\": a rule needs one or more parameter symbols");
  EXPECT_FALSE(rule(w, /*transpose=*/true, /*tied=*/true));
  EXPECT_EQ(message, "\"x\": tied(...) names one parameter, untransposed");
  EXPECT_TRUE(rule(w, /*transpose=*/true, false));
}

TEST_F(BmbDialectTest, VerifierReportsTheShapeRule) {
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  Type f32 = b.getF32Type();
  auto fn = b.create<func::FuncOp>(
      loc, "f",
      b.getFunctionType({RankedTensorType::get({8, 256, 768}, f32),
                         RankedTensorType::get({2304, 512}, f32)},
                        {}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  // A bad operand still builds (the type falls back to the input's); the
  // verifier then reports the rule's message.
  b.create<LinearOp>(loc, entry->getArgument(0), entry->getArgument(1),
                     Value());
  b.create<func::ReturnOp>(loc);

  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    if (message.empty())
      message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed(verify(*module)));
  EXPECT_EQ(message, "linear: input's last dimension 768 does not match the "
                     "weight's in-dimension 512 (input f32[8, 256, 768], "
                     "weight f32[2304, 512])");
}

TEST_F(BmbDialectTest, SigConversions) {
  Builder b(&ctx);
  auto type = RankedTensorType::get({8, 0}, b.getBF16Type());
  std::optional<shapes::Sig> sig = getSig(type);
  ASSERT_TRUE(sig);
  EXPECT_EQ(shapes::str(*sig), "bf16[8, 0]");
  EXPECT_EQ(getTensorType(&ctx, *sig), type);
  EXPECT_FALSE(
      getSig(RankedTensorType::get({ShapedType::kDynamic}, b.getF32Type())));
  EXPECT_FALSE(getSig(RankedTensorType::get({4}, b.getI1Type())));
  EXPECT_FALSE(getSig(b.getF32Type()));
  EXPECT_EQ(getTensorType(&ctx, shapes::Sig{shapes::DType::F32, {}}),
            RankedTensorType::get({}, b.getF32Type()));
}

TEST(ParamStatsFormatTest, Numbers) {
  EXPECT_EQ(formatCount(0), "0");
  EXPECT_EQ(formatCount(999), "999");
  EXPECT_EQ(formatCount(1000), "1,000");
  EXPECT_EQ(formatCount(124439808), "124,439,808");
  EXPECT_EQ(formatCount(-1234), "-1,234");
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(1023), "1023 B");
  EXPECT_EQ(formatBytes(1024), "1.0 KiB");
  EXPECT_EQ(formatBytes(1048575), "1.0 MiB"); // rounds up across the unit
  EXPECT_EQ(formatBytes(int64_t(3) << 40), "3.0 TiB");
  EXPECT_EQ(formatBytes(INT64_MAX), "8.0 EiB");
}

} // namespace
