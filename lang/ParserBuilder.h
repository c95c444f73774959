//===- ParserBuilder.h - Parse tree to AST, shared by two files -*- C++ -*-===//
//
// Private to lang/ParserBuilder.cpp (declarations, statements) and
// lang/ParserExprBuilder.cpp (expressions).
//
//===----------------------------------------------------------------------===//
#ifndef BMB_LANG_PARSERBUILDER_H
#define BMB_LANG_PARSERBUILDER_H

#include "lang/ParserImpl.h"

namespace bmb::parser {

using antlr4::ParserRuleContext;
using antlr4::Token;
using antlr4::tree::ParseTree;
using antlr4::tree::TerminalNode;

/// Thrown when the tree lacks a child the grammar guarantees.
struct BrokenTree {};

template <typename T> T *need(T *p) {
  if (!p)
    throw BrokenTree{};
  return p;
}

inline Token *tokenOf(ParseTree *t) {
  auto *term = dynamic_cast<TerminalNode *>(t);
  return term ? term->getSymbol() : nullptr;
}

/// An expression and the depth of its tree.
struct Built {
  ast::ExprPtr expr;
  unsigned depth = 1;
};

class Builder {
public:
  explicit Builder(Session &s) : s(s), map(s.map) {}

  std::unique_ptr<ast::File> file(G::FileContext *ctx);

private:
  Loc loc(const Token *t) { return map.loc(need(t)); }
  Loc loc(ParserRuleContext *c) { return map.loc(need(need(c)->start)); }
  std::string text(const Token *t) { return std::string(map.text(need(t))); }
  std::string text(ParserRuleContext *c) { return text(need(c)->start); }

  /// Reports once per expression that its tree grew past the depth limit.
  bool tooDeep(unsigned depth, const Token *at);

  ast::DeclPtr decl(G::DeclContext *ctx);
  std::unique_ptr<ast::LayerDecl> layer(ParserRuleContext *ctx, Token *name,
                                        G::HyperParamsContext *hyper, G::LayerBodyContext *body,
                                        bool isModel);
  ast::TensorTypeExpr tensorType(G::TensorTypeContext *ctx);
  std::unique_ptr<ast::ForwardDecl> forward(G::ForwardDeclContext *ctx);
  std::vector<ast::StmtPtr> block(G::BlockContext *ctx);
  ast::StmtPtr stmt(G::StmtContext *ctx);
  ast::StmtPtr ifStmt(G::IfStmtContext *ctx);
  std::unique_ptr<ast::CallExpr> modelRef(Token *name, G::CallArgsContext *args);
  void settings(G::SettingsBlockContext *ctx, std::vector<ast::Setting> &out);
  ast::Setting setting(G::KeyContext *key, G::SettingValueContext *value);
  ast::Directive directive(G::DirectiveContext *ctx);
  std::string str(G::StrContext *ctx);

  ast::ExprPtr expr(G::ExprContext *ctx) { return build(ctx).expr; }
  ast::ExprPtr expr(G::OpExprContext *ctx) { return op(ctx).expr; }
  Built build(G::ExprContext *ctx);
  Built op(G::OpExprContext *ctx);
  Built leaf(G::OpExprContext *ctx);
  Built number(Token *t);
  Built paren(G::ParenExprContext *ctx);
  Built list(G::ListContext *ctx);
  Built pairOrExpr(G::ExprContext *a, Token *sep, G::ExprContext *b);
  Built dirAtom(G::DirAtomContext *ctx);
  void callArgs(G::CallArgsContext *ctx, ast::CallExpr &call, unsigned &depth);

  Session &s;
  const SourceMap &map;
  bool depthReported = false;
};

} // namespace bmb::parser

#endif // BMB_LANG_PARSERBUILDER_H
