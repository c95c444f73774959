//===- ParserExprBuilder.cpp - Parse tree to AST: expressions -------------===//
//
// ANTLR's precedence climbing builds `a + b + c` as a left-deep tree of
// contexts, as deep as the chain is long, so the left spine of binary, call
// and member nodes is walked with a loop, never recursively. Every other
// recursion here follows a bracket or a prefix operator, which Parser.cpp
// bounded before parsing. Each builder returns the subtree with its depth
// (Built) so that chains are held to ParseLimits::maxExprDepth as they are
// folded.
//
//===----------------------------------------------------------------------===//
#include "lang/ParserBuilder.h"

namespace bmb::parser {

Built Builder::build(G::ExprContext *ctx) {
  // opExpr (IF opExpr ELSE opExpr)* (IF opExpr)?: `v0 if c1 else v1 if c2
  // else v2` is `v0 if c1 else (v1 if c2 else v2)`, so fold from the right.
  std::vector<Built> values; // v0, v1, ... (the else-values)
  std::vector<Built> conds;  // c1, c2, ...
  std::vector<Token *> ifs;
  bool lastHasElse = false;
  for (ParseTree *child : ctx->children) {
    if (Token *t = tokenOf(child)) {
      if (t->getType() == G::IF)
        ifs.push_back(t);
      lastHasElse = t->getType() == G::ELSE;
      continue;
    }
    Built b = op(need(dynamic_cast<G::OpExprContext *>(child)));
    if (ifs.size() > conds.size())
      conds.push_back(std::move(b));
    else
      values.push_back(std::move(b));
  }
  if (values.empty() || conds.size() != ifs.size())
    throw BrokenTree{};
  if (ifs.empty())
    return std::move(values.front());
  const unsigned limit = s.limits.maxExprDepth;
  if (ifs.size() >= limit && tooDeep(static_cast<unsigned>(ifs.size()) + 1, ifs[limit - 1]))
    return {std::make_unique<ast::EllipsisExpr>(loc(ctx)), 1};
  // Without a final else there is one value per condition, with it one more.
  Built acc;
  unsigned depth = 0;
  if (lastHasElse || values.size() > ifs.size()) {
    acc = std::move(values.back());
    depth = acc.depth;
  }
  for (size_t i = ifs.size(); i-- > 0;) {
    Built &value = values.at(i);
    depth = std::max({depth, value.depth, conds[i].depth}) + 1;
    if (tooDeep(depth, ifs[i]))
      return acc;
    acc.expr = std::make_unique<ast::CondExpr>(loc(ifs[i]), std::move(value.expr),
                                               std::move(conds[i].expr), std::move(acc.expr));
    acc.depth = depth;
  }
  return acc;
}

static ast::BinaryOp binaryOp(size_t type) {
  switch (type) {
  case G::PLUS:
    return ast::BinaryOp::Add;
  case G::MINUS:
    return ast::BinaryOp::Sub;
  case G::STAR:
    return ast::BinaryOp::Mul;
  case G::SLASH:
    return ast::BinaryOp::Div;
  case G::PERCENT:
    return ast::BinaryOp::Mod;
  case G::EQ:
    return ast::BinaryOp::Eq;
  case G::NE:
    return ast::BinaryOp::Ne;
  case G::LT:
    return ast::BinaryOp::Lt;
  case G::LE:
    return ast::BinaryOp::Le;
  case G::GT:
    return ast::BinaryOp::Gt;
  case G::GE:
    return ast::BinaryOp::Ge;
  case G::AND:
    return ast::BinaryOp::And;
  case G::OR:
    return ast::BinaryOp::Or;
  default:
    throw BrokenTree{};
  }
}

static bool isComparison(ast::BinaryOp op) {
  return op >= ast::BinaryOp::Eq && op <= ast::BinaryOp::Ge;
}

/// The left operand of a left-recursive node (binary, call, member), or
/// null for every other kind of node.
static G::OpExprContext *leftOperand(G::OpExprContext *ctx) {
  if (auto *b = dynamic_cast<G::BinaryExprContext *>(ctx))
    return need(b->opExpr(0));
  if (auto *m = dynamic_cast<G::MemberExprContext *>(ctx))
    return need(m->opExpr());
  if (auto *c = dynamic_cast<G::CallExprContext *>(ctx))
    return need(c->opExpr());
  return nullptr;
}

Built Builder::op(G::OpExprContext *ctx) {
  std::vector<G::OpExprContext *> spine; // outermost first
  G::OpExprContext *base = need(ctx);
  while (G::OpExprContext *left = leftOperand(base)) {
    spine.push_back(base);
    base = left;
  }
  Built acc = leaf(base);
  bool accIsComparison = false; // made by a comparison of this same chain
  for (auto it = spine.rbegin(); it != spine.rend(); ++it) {
    G::OpExprContext *node = *it;
    if (auto *b = dynamic_cast<G::BinaryExprContext *>(node)) {
      ast::BinaryOp kind = binaryOp(need(b->op)->getType());
      if (isComparison(kind) && accIsComparison)
        s.error(loc(b->op), "comparisons cannot be chained: write 'a < b and b < c'");
      accIsComparison = isComparison(kind);
      Built rhs = op(need(b->opExpr(1)));
      unsigned depth = std::max(acc.depth, rhs.depth) + 1;
      if (tooDeep(depth, b->op))
        return acc;
      acc.expr = std::make_unique<ast::BinaryExpr>(loc(b->op), kind, std::move(acc.expr),
                                                   std::move(rhs.expr));
      acc.depth = depth;
      continue;
    }
    accIsComparison = false;
    if (auto *m = dynamic_cast<G::MemberExprContext *>(node)) {
      if (tooDeep(acc.depth + 1, need(m->DOT())->getSymbol()))
        return acc;
      acc.expr = std::make_unique<ast::MemberExpr>(loc(node), std::move(acc.expr), text(m->key()),
                                                   loc(m->key()));
      ++acc.depth;
      continue;
    }
    auto *c = static_cast<G::CallExprContext *>(node);
    G::CallArgsContext *args = need(c->callArgs());
    if (!llvm::isa<ast::NameExpr, ast::MemberExpr>(acc.expr.get()))
      s.error(loc(args), "only a name such as 'f' or 'a.b' can be called");
    auto call = std::make_unique<ast::CallExpr>(loc(node), std::move(acc.expr));
    unsigned depth = acc.depth;
    callArgs(args, *call, depth);
    acc = {std::move(call), depth + 1};
    if (tooDeep(acc.depth, args->start))
      return acc;
  }
  return acc;
}

Built Builder::leaf(G::OpExprContext *ctx) {
  if (dynamic_cast<G::NameExprContext *>(ctx))
    return {std::make_unique<ast::NameExpr>(loc(ctx), text(ctx)), 1};
  if (auto *n = dynamic_cast<G::NumberExprContext *>(ctx))
    return number(n->tok);
  if (auto *st = dynamic_cast<G::StringExprContext *>(ctx)) {
    std::string value;
    size_t offset;
    decodeString(map.text(need(st->tok)), value, offset); // reported when lexed
    return {std::make_unique<ast::StringExpr>(loc(ctx), std::move(value)), 1};
  }
  if (auto *b = dynamic_cast<G::BoolExprContext *>(ctx))
    return {std::make_unique<ast::BoolExpr>(loc(ctx), need(b->tok)->getType() == G::TRUE), 1};
  if (dynamic_cast<G::EllipsisExprContext *>(ctx))
    return {std::make_unique<ast::EllipsisExpr>(loc(ctx)), 1};
  if (auto *p = dynamic_cast<G::ParensExprContext *>(ctx))
    return paren(need(p->parenExpr()));
  if (auto *l = dynamic_cast<G::ListExprContext *>(ctx))
    return list(need(l->list()));
  if (auto *n = dynamic_cast<G::NegExprContext *>(ctx)) {
    Built inner = op(need(n->opExpr()));
    return {std::make_unique<ast::UnaryExpr>(loc(ctx), ast::UnaryOp::Neg, std::move(inner.expr)),
            inner.depth + 1};
  }
  if (auto *n = dynamic_cast<G::NotExprContext *>(ctx)) {
    Built inner = op(need(n->opExpr()));
    return {std::make_unique<ast::UnaryExpr>(loc(ctx), ast::UnaryOp::Not, std::move(inner.expr)),
            inner.depth + 1};
  }
  auto *r = dynamic_cast<G::RepeatExprContext *>(ctx);
  if (!r)
    throw BrokenTree{};
  // repeat(count) Layer(args): the layer is always a call.
  Built count = build(need(r->expr()));
  auto call = std::make_unique<ast::CallExpr>(
      loc(r->layer), std::make_unique<ast::NameExpr>(loc(r->layer), text(r->layer)));
  unsigned depth = 1;
  if (G::CallArgsContext *args = r->callArgs())
    callArgs(args, *call, depth);
  depth = std::max(depth + 1, count.depth) + 1;
  return {std::make_unique<ast::RepeatExpr>(loc(ctx), std::move(count.expr), std::move(call)),
          depth};
}

void Builder::callArgs(G::CallArgsContext *ctx, ast::CallExpr &call, unsigned &depth) {
  Token *firstKeyword = nullptr;
  for (G::CallArgContext *a : ctx->callArg()) {
    ast::Arg arg;
    if (G::KeyContext *k = a->key()) {
      arg.keyword = text(k);
      arg.keywordLoc = loc(k);
      if (!firstKeyword)
        firstKeyword = k->start;
    } else if (firstKeyword) {
      s.error(loc(a),
              "positional argument after keyword argument " + quoted(map.text(firstKeyword)));
    }
    Built v = build(need(a->expr()));
    depth = std::max(depth, v.depth);
    arg.value = std::move(v.expr);
    call.args.push_back(std::move(arg));
  }
}

Built Builder::paren(G::ParenExprContext *ctx) {
  std::vector<G::ExprContext *> elems = ctx->expr();
  if (elems.size() == 1 && ctx->COMMA().empty())
    return build(elems[0]); // plain parentheses
  auto tuple = std::make_unique<ast::TupleExpr>(loc(ctx));
  unsigned depth = 0;
  for (G::ExprContext *e : elems) {
    Built b = build(e);
    depth = std::max(depth, b.depth);
    tuple->elements.push_back(std::move(b.expr));
  }
  return {std::move(tuple), depth + 1};
}

Built Builder::number(Token *t) {
  std::string_view txt = map.text(need(t));
  // Errors were reported when the file was lexed; values default to 0.
  if (t->getType() == G::FLOAT) {
    double v;
    decodeFloat(txt, v);
    return {std::make_unique<ast::FloatExpr>(loc(t), v), 1};
  }
  int64_t v = 0;
  if (t->getType() == G::SIZE)
    decodeSize(txt, v);
  else if (t->getType() == G::INT)
    decodeInt(txt, v);
  return {std::make_unique<ast::IntExpr>(loc(t), v), 1};
}

Built Builder::pairOrExpr(G::ExprContext *a, Token *sep, G::ExprContext *b) {
  Built first = build(a);
  if (!sep)
    return first;
  Built second = build(need(b));
  auto kind = sep->getType() == G::ARROW ? ast::PairSep::Arrow : ast::PairSep::Colon;
  unsigned depth = std::max(first.depth, second.depth) + 1;
  return {std::make_unique<ast::PairExpr>(loc(sep), kind, std::move(first.expr),
                                          std::move(second.expr)),
          depth};
}

Built Builder::list(G::ListContext *ctx) {
  auto l = std::make_unique<ast::ListExpr>(loc(ctx));
  unsigned depth = 0;
  for (G::ListElemContext *e : ctx->listElem()) {
    std::vector<G::ExprContext *> parts = e->expr();
    Built b = pairOrExpr(need(parts.at(0)), e->sep, parts.size() > 1 ? parts[1] : nullptr);
    depth = std::max(depth, b.depth);
    l->elements.push_back(std::move(b.expr));
  }
  return {std::move(l), depth + 1};
}

Built Builder::dirAtom(G::DirAtomContext *ctx) {
  if (G::NumberContext *n = ctx->number()) {
    Built b = number(n->start);
    if (!ctx->MINUS())
      return b;
    return {std::make_unique<ast::UnaryExpr>(loc(ctx), ast::UnaryOp::Neg, std::move(b.expr)), 2};
  }
  if (G::StrContext *st = ctx->str())
    return {std::make_unique<ast::StringExpr>(loc(st), str(st)), 1};
  if (G::ListContext *l = ctx->list())
    return list(l);
  Token *t = need(ctx->start);
  switch (t->getType()) {
  case G::TRUE:
    return {std::make_unique<ast::BoolExpr>(loc(t), true), 1};
  case G::FALSE:
    return {std::make_unique<ast::BoolExpr>(loc(t), false), 1};
  case G::IDENT:
    return {std::make_unique<ast::NameExpr>(loc(t), text(t)), 1};
  default:
    throw BrokenTree{};
  }
}

} // namespace bmb::parser
