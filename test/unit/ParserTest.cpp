//===- ParserTest.cpp - The parser on valid input: files and AST shapes ---===//
//
// Every shipped .bmb file and the design notes' language sketch must parse;
// spot checks pin the AST the parser builds (precedence, folding of chains,
// locations, literal values). Error messages are in ParserErrorTest.cpp,
// hostile input in ParserRobustnessTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "ParserTestHelpers.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace bmb;
using namespace bmb::test;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

std::string dumpOf(const std::string &text) {
  Parsed p = parseText(text);
  EXPECT_TRUE(p.file) << p.output;
  if (!p.file)
    return {};
  SourceManager sources;
  sources.addBuffer("t.bmb", text);
  std::ostringstream os;
  ast::dump(*p.file, sources, os);
  return os.str();
}

/// The dump of `<expr>` as the only binding of `layer A {\nx = <expr>\n}`.
std::string exprDump(const std::string &expr) {
  std::string d = dumpOf("layer A {\nx = " + expr + "\n}\n");
  // The binding is the last line: "    (bind x @2:1 EXPR)))" closes the
  // binding, the layer and the file.
  const std::string prefix = "    (bind x @2:1 ";
  size_t at = d.find(prefix);
  if (at == std::string::npos || d.size() < at + prefix.size() + 4)
    return d;
  return d.substr(at + prefix.size(), d.size() - 4 - (at + prefix.size()));
}

template <typename T> const T *declNamed(const ast::File &f, const std::string &name) {
  for (const ast::DeclPtr &d : f.decls)
    if (d->name == name)
      if (auto *t = dyn_cast<T>(d.get()))
        return t;
  return nullptr;
}

const ast::Binding *binding(const ast::LayerDecl &l, const std::string &name) {
  for (const ast::LayerItem &item : l.items)
    if (item.binding && item.binding->name == name)
      return item.binding.get();
  return nullptr;
}

TEST(ParserFiles, EveryShippedFileParses) {
  unsigned count = 0;
  for (const char *dir : {"stdlib", "models"}) {
    for (const auto &entry : std::filesystem::directory_iterator(sourcePath(dir))) {
      if (entry.path().extension() != ".bmb")
        continue;
      Parsed p = parseText(readFile(entry.path().string()), {}, entry.path().string());
      EXPECT_TRUE(p.file) << entry.path() << "\n" << p.output;
      EXPECT_EQ(p.errors, 0u) << p.output;
      ++count;
    }
  }
  EXPECT_GE(count, 4u); // nn, gpt2, bert, llama
}

TEST(ParserFiles, DesignSketchParses) {
  Parsed p = parseText(readFile(sourcePath("test/lit/lang/Inputs/design-sketch.bmb")));
  ASSERT_TRUE(p.file) << p.output;

  auto *cook = declNamed<ast::RecipeDecl>(*p.file, "cook");
  ASSERT_TRUE(cook);
  ASSERT_EQ(cook->directives.size(), 4u);
  const ast::Directive &distill = cook->directives[0];
  EXPECT_EQ(distill.verb, "distill");
  ASSERT_TRUE(distill.fromModel);
  EXPECT_EQ(cast<ast::NameExpr>(distill.fromModel->callee.get())->name, "GPT2");
  EXPECT_EQ(distill.fromPath.value_or(""), "teacher.safetensors");
  ASSERT_EQ(distill.settings.size(), 2u);
  EXPECT_EQ(distill.settings[1].key, "mse_hidden");
  auto *hidden = cast<ast::ListExpr>(distill.settings[1].value.get());
  auto *pair = cast<ast::PairExpr>(hidden->elements.at(0).get());
  EXPECT_EQ(pair->sep, ast::PairSep::Colon);
  EXPECT_EQ(cast<ast::StringExpr>(pair->second.get())->value, "h.11");

  const ast::Directive &prune = cook->directives[1];
  ASSERT_EQ(prune.args.size(), 1u);
  auto *ratio = cast<ast::PairExpr>(prune.args[0].get());
  EXPECT_EQ(cast<ast::IntExpr>(ratio->first.get())->value, 2);
  EXPECT_EQ(cast<ast::IntExpr>(ratio->second.get())->value, 4);
  EXPECT_TRUE(isa<ast::ListExpr>(prune.on.get()));

  const ast::Directive &quantize = cook->directives[2];
  ASSERT_EQ(quantize.args.size(), 2u);
  EXPECT_EQ(cast<ast::NameExpr>(quantize.args[1].get())->name, "qat");
  EXPECT_EQ(cast<ast::NameExpr>(quantize.on.get())->name, "linear");

  const ast::Directive &moefy = cook->directives[3];
  ASSERT_EQ(moefy.settings.size(), 2u);
  EXPECT_EQ(moefy.settings[0].key, "experts");
  EXPECT_EQ(moefy.settings[1].key, "top");

  auto *small = declNamed<ast::JobDecl>(*p.file, "small");
  ASSERT_TRUE(small);
  EXPECT_EQ(small->jobKind, ast::JobKind::Compress);
  EXPECT_EQ(small->recipe, "cook");
  ASSERT_EQ(small->model->args.size(), 1u);
  EXPECT_EQ(small->model->args[0].keyword, "layers");
  ASSERT_EQ(small->settings.size(), 2u); // `data = ...   steps = 2000` on one line

  auto *sst2 = declNamed<ast::JobDecl>(*p.file, "sst2");
  ASSERT_TRUE(sst2);
  EXPECT_EQ(sst2->jobKind, ast::JobKind::Tune);
  EXPECT_EQ(sst2->from.value_or(""), "bert-base.safetensors");
  auto *prompt = cast<ast::PairExpr>(sst2->settings.at(0).value.get());
  EXPECT_EQ(prompt->sep, ast::PairSep::Arrow);

  auto *chat = declNamed<ast::JobDecl>(*p.file, "chat");
  ASSERT_TRUE(chat);
  EXPECT_EQ(chat->jobKind, ast::JobKind::Infer);
  EXPECT_EQ(chat->settings.at(1).key, "memory");
  EXPECT_EQ(cast<ast::IntExpr>(chat->settings.at(1).value.get())->value, 6LL << 30);

  auto *block = declNamed<ast::LayerDecl>(*p.file, "Block");
  ASSERT_TRUE(block); // `ln1 = LayerNorm(dim)   attn = ...` on one line
  EXPECT_EQ(block->items.size(), 4u);
  auto *pretrain = declNamed<ast::JobDecl>(*p.file, "pretrain");
  ASSERT_TRUE(pretrain);
  EXPECT_EQ(pretrain->settings.size(), 9u);
}

/// The 1-based line of the first line of `text` that starts with `prefix`
/// (0 if none), so location checks survive edits elsewhere in the file.
static unsigned lineStartingWith(const std::string &text, const std::string &prefix) {
  unsigned line = 1;
  for (size_t at = 0; at < text.size(); ++line) {
    if (text.compare(at, prefix.size(), prefix) == 0)
      return line;
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos)
      break;
    at = nl + 1;
  }
  return 0;
}

TEST(ParserAst, Gpt2Structure) {
  std::string source = readFile(sourcePath("models/gpt2.bmb"));
  Parsed p = parseText(source);
  ASSERT_TRUE(p.file) << p.output;
  ASSERT_TRUE(isa<ast::ImportDecl>(p.file->decls.at(0).get()));
  EXPECT_EQ(cast<ast::ImportDecl>(p.file->decls[0].get())->path, "stdlib/nn.bmb");

  auto *gpt2 = declNamed<ast::LayerDecl>(*p.file, "GPT2");
  ASSERT_TRUE(gpt2);
  EXPECT_TRUE(gpt2->isModel);
  ASSERT_EQ(gpt2->hyperParams.size(), 6u);
  EXPECT_EQ(gpt2->hyperParams[0].name, "vocab");
  EXPECT_EQ(gpt2->hyperParams[0].type, "int");
  EXPECT_EQ(cast<ast::IntExpr>(gpt2->hyperParams[0].defaultValue.get())->value, 50257);
  EXPECT_EQ(cast<ast::FloatExpr>(gpt2->hyperParams[5].defaultValue.get())->value, 0.0);

  const ast::Binding *h = binding(*gpt2, "h");
  ASSERT_TRUE(h);
  auto *rep = cast<ast::RepeatExpr>(h->value.get());
  EXPECT_EQ(cast<ast::NameExpr>(rep->count.get())->name, "layers");
  auto *block = cast<ast::CallExpr>(rep->layer.get());
  EXPECT_EQ(cast<ast::NameExpr>(block->callee.get())->name, "Block");
  ASSERT_EQ(block->args.size(), 3u);
  EXPECT_EQ(block->args[2].keyword, "pdrop");

  ASSERT_TRUE(gpt2->forward);
  const ast::ForwardDecl &fwd = *gpt2->forward;
  ASSERT_EQ(fwd.inputs.size(), 1u);
  ASSERT_TRUE(fwd.inputs[0].type);
  EXPECT_EQ(fwd.inputs[0].type->dtype, "i32");
  EXPECT_EQ(fwd.inputs[0].type->dims.size(), 2u);
  ASSERT_EQ(fwd.results.size(), 1u);
  EXPECT_EQ(fwd.results[0].dims.size(), 3u);
  ASSERT_EQ(fwd.body.size(), 2u);
  auto *ret = cast<ast::ReturnStmt>(fwd.body[1].get());
  auto *head = cast<ast::CallExpr>(ret->values.at(0).get());
  auto *tied = cast<ast::MemberExpr>(head->args.at(1).value.get());
  EXPECT_EQ(tied->member, "w");
  EXPECT_EQ(tied->memberLoc.line, 13u);
  EXPECT_EQ(tied->memberLoc.col, 36u);

  auto *tiny = declNamed<ast::ModelAliasDecl>(*p.file, "GPT2Tiny");
  ASSERT_TRUE(tiny);
  EXPECT_EQ(cast<ast::NameExpr>(tiny->target->callee.get())->name, "GPT2");
  EXPECT_EQ(tiny->target->args.size(), 4u);

  auto *chat = declNamed<ast::JobDecl>(*p.file, "chat");
  ASSERT_TRUE(chat);
  EXPECT_EQ(chat->from.value_or(""), "ckpt/");
  EXPECT_EQ(chat->fromLoc.line, lineStartingWith(source, "infer chat for GPT2 from"));
  EXPECT_EQ(chat->fromLoc.col, 26u);

  // The Hugging Face name map: a declaration of its own kind, kept out of
  // the model; rule values stay expressions for Sema.
  auto *hf = declNamed<ast::CheckpointDecl>(*p.file, "hf");
  ASSERT_TRUE(hf);
  EXPECT_EQ(hf->model, "GPT2");
  EXPECT_EQ(hf->modelLoc.line, 20u);
  ASSERT_EQ(hf->rules.size(), 17u);
  const ast::NameRule &cAttn = hf->rules[4];
  EXPECT_EQ(cAttn.external, "transformer.h.{i}.attn.c_attn.weight");
  EXPECT_EQ(cAttn.loc.line, 25u);
  EXPECT_EQ(cAttn.loc.col, 3u);
  auto *transpose = cast<ast::CallExpr>(cAttn.value.get());
  EXPECT_EQ(cast<ast::NameExpr>(transpose->callee.get())->name, "transpose");
  auto *concat = cast<ast::CallExpr>(transpose->args.at(0).value.get());
  EXPECT_EQ(concat->args.size(), 3u);
  EXPECT_FALSE(cAttn.cond);
}

TEST(ParserAst, BertStructure) {
  Parsed p = parseText(readFile(sourcePath("models/bert.bmb")));
  ASSERT_TRUE(p.file) << p.output;
  auto *bert = declNamed<ast::LayerDecl>(*p.file, "BERT");
  ASSERT_TRUE(bert);
  EXPECT_TRUE(binding(*bert, "type")); // `type` is an ordinary name
  const ast::Binding *pool = binding(*bert, "pool");
  ASSERT_TRUE(pool);
  auto *cond = cast<ast::CondExpr>(pool->value.get());
  EXPECT_EQ(cond->elseValue, nullptr);
  EXPECT_EQ(cast<ast::NameExpr>(cond->cond.get())->name, "pooler");

  auto *ifs = cast<ast::IfStmt>(bert->forward->body.at(2).get());
  auto *twoResults = cast<ast::ReturnStmt>(ifs->thenBody.at(0).get());
  EXPECT_EQ(twoResults->values.size(), 2u);
  EXPECT_TRUE(ifs->elseBody.empty());

  auto *mlm = declNamed<ast::LayerDecl>(*p.file, "BertMLM");
  ASSERT_TRUE(mlm);
  const ast::ParamDecl *bias = nullptr;
  for (const ast::LayerItem &item : mlm->items)
    if (item.param)
      bias = item.param.get();
  ASSERT_TRUE(bias);
  EXPECT_EQ(bias->name, "bias");
  EXPECT_FALSE(bias->frozen);

  auto *v = declNamed<ast::VerbalizerDecl>(*p.file, "polarity");
  ASSERT_TRUE(v);
  ASSERT_EQ(v->labels.size(), 2u);
  EXPECT_EQ(v->labels[1].words.size(), 3u);
  EXPECT_EQ(v->labels[1].words[1], "wonderful");
  auto *t = declNamed<ast::TemplateDecl>(*p.file, "sentiment");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->text, "{text_a} It was {mask}.");
}

TEST(ParserAst, ParamsTypesAndForwardForms) {
  Parsed p = parseText(R"(
layer L(n: int, act: activation = gelu, k = 3) {
  frozen param w: [..., n] = normal(0.02) if k > 1
  param s: i32[] 
  forward(x: [B, T], y) -> ([B, T], [B]) {
    a, b = split(x, 2)
    return a, b
  }
}
layer M { forward(x) = x }
)");
  ASSERT_TRUE(p.file) << p.output;
  auto *l = cast<ast::LayerDecl>(p.file->decls[0].get());
  EXPECT_FALSE(l->isModel);
  EXPECT_EQ(l->hyperParams[1].type, "activation");
  EXPECT_EQ(l->hyperParams[2].type, "");
  EXPECT_EQ(cast<ast::IntExpr>(l->hyperParams[2].defaultValue.get())->value, 3);
  const ast::ParamDecl &w = *l->items[0].param;
  EXPECT_TRUE(w.frozen);
  EXPECT_TRUE(isa<ast::EllipsisExpr>(w.type.dims[0].get()));
  EXPECT_TRUE(isa<ast::CallExpr>(w.init.get()));
  EXPECT_TRUE(isa<ast::BinaryExpr>(w.cond.get()));
  EXPECT_EQ(w.loc.line, 3u);
  EXPECT_EQ(w.loc.col, 16u); // at the name
  const ast::ParamDecl &s = *l->items[1].param;
  EXPECT_EQ(s.type.dtype, "i32");
  EXPECT_TRUE(s.type.dims.empty());
  EXPECT_EQ(s.init, nullptr);
  EXPECT_EQ(l->forward->inputs.size(), 2u);
  EXPECT_FALSE(l->forward->inputs[1].type);
  EXPECT_EQ(l->forward->results.size(), 2u);
  auto *assign = cast<ast::AssignStmt>(l->forward->body[0].get());
  EXPECT_EQ(assign->targets, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(assign->targetLocs[1].col, 8u);

  auto *m = cast<ast::LayerDecl>(p.file->decls[1].get());
  ASSERT_EQ(m->forward->body.size(), 1u);
  EXPECT_TRUE(isa<ast::ReturnStmt>(m->forward->body[0].get()));
  EXPECT_TRUE(m->hyperParams.empty());
}

TEST(ParserAst, Precedence) {
  EXPECT_EQ(exprDump("a + b * c"), "(+ @2:7 (name a @2:5) (* @2:11 (name b @2:9) (name c @2:13)))");
  EXPECT_EQ(exprDump("a - b - c"), "(- @2:11 (- @2:7 (name a @2:5) (name b @2:9)) (name c @2:13))");
  EXPECT_EQ(exprDump("-a * b"), "(* @2:8 (neg @2:5 (name a @2:6)) (name b @2:10))");
  EXPECT_EQ(exprDump("not a == b"), "(not @2:5 (== @2:11 (name a @2:9) (name b @2:14)))");
  EXPECT_EQ(exprDump("a or b and c"),
            "(or @2:7 (name a @2:5) (and @2:12 (name b @2:10) (name c @2:16)))");
  EXPECT_EQ(exprDump("(a + b) % c"),
            "(% @2:13 (+ @2:8 (name a @2:6) (name b @2:10)) (name c @2:15))");
  EXPECT_EQ(exprDump("a if c"), "(if @2:7 (name a @2:5) (name c @2:10))");
  EXPECT_EQ(exprDump("a if c else b if d else e"),
            "(if @2:7 (name a @2:5) (name c @2:10) (if @2:19 (name b @2:17) (name d "
            "@2:22) (name e @2:29)))");
  EXPECT_EQ(exprDump("a + 1 if c or d else 2"),
            "(if @2:11 (+ @2:7 (name a @2:5) (int 1 @2:9)) (or @2:16 (name c @2:14) "
            "(name d @2:19)) (int 2 @2:26))");
  EXPECT_EQ(exprDump("f(x).w.v(k = 1)"),
            "(call @2:5 (member v @2:5 (member w @2:5 (call @2:5 (name f @2:5) (name x "
            "@2:7)))) (kw k (int 1 @2:18)))");
}

TEST(ParserAst, LiteralsAndCollections) {
  EXPECT_EQ(exprDump("9223372036854775807"), "(int 9223372036854775807 @2:5)");
  EXPECT_EQ(exprDump("[1e-5, 6e-4, 1.0, 10000.0]"),
            "(list @2:5 (float 1e-05 @2:6) (float 6e-04 @2:12) (float 1.0 @2:18) (float "
            "10000.0 @2:23))");
  EXPECT_EQ(exprDump("(0.9, 0.95)"), "(tuple @2:5 (float 0.9 @2:6) (float 0.95 @2:11))");
  EXPECT_EQ(exprDump("(x,)"), "(tuple @2:5 (name x @2:6))");
  EXPECT_EQ(exprDump("()"), "(tuple @2:5)");
  EXPECT_EQ(exprDump("[true, false, ...]"),
            "(list @2:5 (bool true @2:6) (bool false @2:12) (... @2:19))");
  EXPECT_EQ(exprDump("[\"a\" : \"b\", x -> y]"),
            "(list @2:5 (pair : @2:10 (string \"a\" @2:6) (string \"b\" @2:12)) (pair -> "
            "@2:19 (name x @2:17) (name y @2:22)))");
  EXPECT_EQ(exprDump("[512MB, 1.5GiB, 2TB]"),
            "(list @2:5 (int 512000000 @2:6) (int 1610612736 @2:13) (int 2000000000000 "
            "@2:21))");
  EXPECT_EQ(exprDump("repeat(n + 1) B"),
            "(repeat @2:5 (+ @2:14 (name n @2:12) (int 1 @2:16)) (call @2:19 (name B @2:19)))");
}

TEST(ParserAst, StringEscapes) {
  Parsed p = parseText(R"(template t = "a\n\t\"\\ \u{48}\u{e9}\u{1F600} é")");
  ASSERT_TRUE(p.file) << p.output;
  EXPECT_EQ(cast<ast::TemplateDecl>(p.file->decls[0].get())->text,
            "a\n\t\"\\ H\xC3\xA9\xF0\x9F\x98\x80 \xC3\xA9");
}

TEST(ParserAst, ElseIfChainsNest) {
  Parsed p = parseText(R"(
layer L { forward(x) {
  if a { y = 1 } else if b { y = 2 } else if c { y = 3 } else { y = 4 }
  return y
} }
)");
  ASSERT_TRUE(p.file) << p.output;
  auto *l = cast<ast::LayerDecl>(p.file->decls[0].get());
  auto *s1 = cast<ast::IfStmt>(l->forward->body[0].get());
  auto *s2 = cast<ast::IfStmt>(s1->elseBody.at(0).get());
  auto *s3 = cast<ast::IfStmt>(s2->elseBody.at(0).get());
  EXPECT_EQ(cast<ast::NameExpr>(s3->cond.get())->name, "c");
  ASSERT_EQ(s3->elseBody.size(), 1u);
  EXPECT_TRUE(isa<ast::AssignStmt>(s3->elseBody[0].get()));
  EXPECT_EQ(s2->loc.col, 23u); // at its 'if'
}

TEST(ParserAst, StatementFollowingExpressionIsNotAConditional) {
  // `kx = k(x)` then `if rope { ... }`: the statement, not `k(x) if rope`.
  Parsed p = parseText(R"(
layer L { forward(x) {
  kx = k(x)
  if rope { kx = r(kx) }
  y = a if c else b
  z = a if c
  return kx
} }
)");
  ASSERT_TRUE(p.file) << p.output;
  auto *l = cast<ast::LayerDecl>(p.file->decls[0].get());
  ASSERT_EQ(l->forward->body.size(), 5u);
  EXPECT_TRUE(isa<ast::CallExpr>(cast<ast::AssignStmt>(l->forward->body[0].get())->value.get()));
  EXPECT_TRUE(isa<ast::IfStmt>(l->forward->body[1].get()));
  auto *z = cast<ast::CondExpr>(cast<ast::AssignStmt>(l->forward->body[3].get())->value.get());
  EXPECT_EQ(z->elseValue, nullptr);
}

TEST(ParserAst, KeywordsAsKeysAndSeparators) {
  Parsed p = parseText(R"(
train t for M(layers = 2) { delta = lora(on = ["*.q"], from = 1, with = 2), model = x; for = 1, }
verbalizer v { a = ["x"] b = "y"; c = ["p", "q",] }
layer L { y = x.from.on; ; z = 1 };
)");
  ASSERT_TRUE(p.file) << p.output;
  auto *t = cast<ast::JobDecl>(p.file->decls[0].get());
  ASSERT_EQ(t->settings.size(), 3u);
  auto *lora = cast<ast::CallExpr>(t->settings[0].value.get());
  EXPECT_EQ(lora->args[0].keyword, "on");
  EXPECT_EQ(lora->args[1].keyword, "from");
  EXPECT_EQ(t->settings[2].key, "for");
  auto *v = cast<ast::VerbalizerDecl>(p.file->decls[1].get());
  ASSERT_EQ(v->labels.size(), 3u);
  EXPECT_EQ(v->labels[1].words, (std::vector<std::string>{"y"}));
  auto *l = cast<ast::LayerDecl>(p.file->decls[2].get());
  EXPECT_EQ(cast<ast::MemberExpr>(l->items[0].binding->value.get())->member, "on");
}

TEST(ParserAst, DirectivesStartOnNewLines) {
  Parsed p = parseText("recipe r {\n  quantize int8 qat\n  prune 2:4 on x\n"
                       "  distill from T(layers = 2) @ \"t.st\" kl = 1.0 { mse = 2 }\n"
                       "  moefy \"*.mlp\"\n    experts = 16; scale -1.5 true [1, 2] a->b\n}\n");
  ASSERT_TRUE(p.file) << p.output;
  auto *r = cast<ast::RecipeDecl>(p.file->decls[0].get());
  ASSERT_EQ(r->directives.size(), 5u);
  EXPECT_EQ(r->directives[0].args.size(), 2u);
  EXPECT_EQ(r->directives[1].verb, "prune");
  const ast::Directive &distill = r->directives[2];
  EXPECT_EQ(distill.fromModel->args.size(), 1u);
  EXPECT_EQ(distill.settings.size(), 2u);
  EXPECT_EQ(r->directives[3].settings.size(), 1u);
  const ast::Directive &scale = r->directives[4];
  EXPECT_EQ(scale.verb, "scale");
  ASSERT_EQ(scale.args.size(), 4u);
  EXPECT_TRUE(isa<ast::UnaryExpr>(scale.args[0].get()));
  EXPECT_TRUE(isa<ast::PairExpr>(scale.args[3].get()));
}

TEST(ParserAst, ByteColumnsWithUnicodeTabsCrlfAndBom) {
  // Columns count bytes: 'é' is two, a tab one; CRLF ends lines; a BOM is
  // skipped.
  Parsed p = parseText("\xEF\xBB\xBFtemplate t = \"\xC3\xA9\"\r\n\tlayer L { y = 1 }\r\n");
  ASSERT_TRUE(p.file) << p.output;
  EXPECT_EQ(p.file->decls[0]->loc.col, 4u);
  auto *l = cast<ast::LayerDecl>(p.file->decls[1].get());
  EXPECT_EQ(l->loc.line, 2u);
  EXPECT_EQ(l->loc.col, 2u);
  EXPECT_EQ(l->items[0].binding->value->loc.col, 16u);

  Parsed q = parseText("template t = \"\xC3\xA9\xE2\x82\xAC\" $");
  EXPECT_EQ(q.firstError(), "t.bmb:1:22: error: unknown character '$'");
  Parsed r = parseText("\xEF\xBB\xBFlayer A { y = \xEF\xBB\xBF }");
  EXPECT_EQ(r.firstError(), "t.bmb:1:18: error: unknown character U+FEFF");
}

TEST(ParserAst, ModelAliasWithoutArguments) {
  Parsed p = parseText("model Small = GPT2\nmodel Tiny = GPT2()\n");
  ASSERT_TRUE(p.file) << p.output;
  for (const ast::DeclPtr &d : p.file->decls) {
    auto *alias = cast<ast::ModelAliasDecl>(d.get());
    EXPECT_EQ(cast<ast::NameExpr>(alias->target->callee.get())->name, "GPT2");
    EXPECT_TRUE(alias->target->args.empty());
  }
}

TEST(ParserAst, DumpIsStable) {
  std::string d = dumpOf(R"(import "lib.bmb"
model M(d: int = 2) { param w: [d] = ones  h = repeat(2) B(d)  forward(x) -> [d] { return x } }
model T = M(d = 4)
tune j for T from "c/" with r { lr = 1e-3 }
recipe r { prune 2:4 }
)");
  EXPECT_EQ(d, R"((file "t.bmb"
  (import "lib.bmb" @1:1)
  (model M @2:1
    (hyper d : int @2:9 (default (int 2 @2:18)))
    (param w @2:29 (type @2:32 (name d @2:33)) (init (name ones @2:38)))
    (bind h @2:44 (repeat @2:48 (int 2 @2:55) (call @2:58 (name B @2:58) (name d @2:60))))
    (forward @2:64
      (input x @2:72)
      (result (type @2:78 (name d @2:79)))
      (return @2:84 (name x @2:91))))
  (model-alias T @3:1 (call @3:11 (name M @3:11) (kw d (int 4 @3:17))))
  (tune j @4:1 (for (call @4:12 (name T @4:12))) (from "c/" @4:19) (with r @4:29)
    (set lr @4:33 (float 0.001 @4:38)))
  (recipe r @5:1
    (directive prune @5:12 (pair : @5:19 (int 2 @5:18) (int 4 @5:20)))))
)");
}

} // namespace
