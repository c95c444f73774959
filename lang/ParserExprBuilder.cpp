//===- ParserExprBuilder.cpp - Parse tree to AST: expressions -------------===//
//
// Expressions are built bottom-up; every builder returns the subtree with
// its depth (Built) so that chains the grammar parses as loops can be held
// to ParseLimits::maxExprDepth as they are folded.
//
//===----------------------------------------------------------------------===//
#include "lang/ParserBuilder.h"

namespace bmb::parser {

Built Builder::build(G::ExprContext *ctx) {
  // orExpr (IF orExpr ELSE orExpr)* (IF orExpr)?: `v0 if c1 else v1 if c2
  // else v2` is `v0 if c1 else (v1 if c2 else v2)`, so fold from the right.
  std::vector<Built> values;       // v0, v1, ... (the else-values)
  std::vector<Built> conds;        // c1, c2, ...
  std::vector<Token *> ifs;
  bool lastHasElse = false;
  for (ParseTree *child : ctx->children) {
    if (Token *t = tokenOf(child)) {
      if (t->getType() == G::IF)
        ifs.push_back(t);
      lastHasElse = t->getType() == G::ELSE;
      continue;
    }
    auto *sub = dynamic_cast<G::OrExprContext *>(child);
    Built b = binary(need(sub));
    if (ifs.size() > conds.size())
      conds.push_back(std::move(b));
    else
      values.push_back(std::move(b));
  }
  if (values.empty() || conds.size() != ifs.size())
    throw BrokenTree{};
  if (ifs.empty())
    return std::move(values.front());
  if (tooDeep(static_cast<unsigned>(ifs.size()) + 1, ifs.back()))
    return {std::make_unique<ast::EllipsisExpr>(loc(ctx)), 1};
  // Without a final else there is one value per condition, with it one more.
  Built acc;
  unsigned depth = 0;
  size_t v = values.size();
  if (lastHasElse || v > ifs.size()) {
    acc = std::move(values[--v]);
    depth = acc.depth;
  }
  for (size_t i = ifs.size(); i-- > 0;) {
    Built &value = values.at(i);
    depth = std::max({depth, value.depth, conds[i].depth}) + 1;
    acc.expr = std::make_unique<ast::CondExpr>(loc(ifs[i]), std::move(value.expr),
                                               std::move(conds[i].expr),
                                               std::move(acc.expr));
    acc.depth = depth;
  }
  return acc;
}

static bool binaryOp(size_t type, ast::BinaryOp &op) {
  switch (type) {
  case G::PLUS: op = ast::BinaryOp::Add; return true;
  case G::MINUS: op = ast::BinaryOp::Sub; return true;
  case G::STAR: op = ast::BinaryOp::Mul; return true;
  case G::SLASH: op = ast::BinaryOp::Div; return true;
  case G::PERCENT: op = ast::BinaryOp::Mod; return true;
  case G::EQ: op = ast::BinaryOp::Eq; return true;
  case G::NE: op = ast::BinaryOp::Ne; return true;
  case G::LT: op = ast::BinaryOp::Lt; return true;
  case G::LE: op = ast::BinaryOp::Le; return true;
  case G::GT: op = ast::BinaryOp::Gt; return true;
  case G::GE: op = ast::BinaryOp::Ge; return true;
  case G::AND: op = ast::BinaryOp::And; return true;
  case G::OR: op = ast::BinaryOp::Or; return true;
  default: return false;
  }
}

Built Builder::binary(ParserRuleContext *ctx) {
  // operand (op operand)*, folded to the left. notExpr and unaryExpr reach
  // here too, through operand().
  if (auto *n = dynamic_cast<G::NotExprContext *>(ctx)) {
    if (!n->NOT())
      return binary(need(n->cmpExpr()));
    Built inner = binary(need(n->notExpr()));
    return {std::make_unique<ast::UnaryExpr>(loc(n), ast::UnaryOp::Not, std::move(inner.expr)),
            inner.depth + 1};
  }
  Built acc;
  Token *op = nullptr;
  unsigned comparisons = 0;
  for (ParseTree *child : need(ctx)->children) {
    if (Token *t = tokenOf(child)) {
      op = t;
      continue;
    }
    Built next = operand(child);
    if (!op) {
      acc = std::move(next);
      continue;
    }
    ast::BinaryOp kind;
    if (!binaryOp(op->getType(), kind))
      throw BrokenTree{};
    if (ctx->getRuleIndex() == G::RuleCmpExpr && ++comparisons == 2)
      s.error(loc(op), "comparisons cannot be chained: write 'a < b and b < c'");
    unsigned depth = std::max(acc.depth, next.depth) + 1;
    if (tooDeep(depth, op))
      return acc;
    acc.expr = std::make_unique<ast::BinaryExpr>(loc(op), kind, std::move(acc.expr),
                                                 std::move(next.expr));
    acc.depth = depth;
    op = nullptr;
  }
  if (!acc.expr)
    throw BrokenTree{};
  return acc;
}

Built Builder::operand(ParseTree *t) {
  if (auto *u = dynamic_cast<G::UnaryExprContext *>(t))
    return unary(u);
  return binary(need(dynamic_cast<ParserRuleContext *>(t)));
}

Built Builder::unary(G::UnaryExprContext *ctx) {
  if (G::PostfixExprContext *p = ctx->postfixExpr())
    return postfix(p);
  if (G::UnaryExprContext *inner = ctx->unaryExpr()) {
    Built b = unary(inner);
    return {std::make_unique<ast::UnaryExpr>(loc(ctx), ast::UnaryOp::Neg, std::move(b.expr)),
            b.depth + 1};
  }
  // repeat(count) Layer(args)
  Built count = build(need(ctx->expr()));
  auto call = std::make_unique<ast::CallExpr>(
      loc(ctx->layer), std::make_unique<ast::NameExpr>(loc(ctx->layer), text(ctx->layer)));
  unsigned depth = 1;
  if (G::CallArgsContext *args = ctx->callArgs())
    callArgs(args, *call, depth);
  depth = std::max(depth + 1, count.depth) + 1;
  return {std::make_unique<ast::RepeatExpr>(loc(ctx), std::move(count.expr), std::move(call)),
          depth};
}

Built Builder::postfix(G::PostfixExprContext *ctx) {
  Built acc = primary(need(ctx->primary()));
  Token *dot = nullptr;
  for (ParseTree *child : ctx->children) {
    if (Token *t = tokenOf(child)) {
      dot = t;
    } else if (auto *key = dynamic_cast<G::KeyContext *>(child)) {
      if (tooDeep(acc.depth + 1, need(dot)))
        return acc;
      Loc start = acc.expr->loc;
      acc.expr = std::make_unique<ast::MemberExpr>(start, std::move(acc.expr), text(key),
                                                   loc(key));
      ++acc.depth;
    } else if (auto *args = dynamic_cast<G::CallArgsContext *>(child)) {
      if (!llvm::isa<ast::NameExpr, ast::MemberExpr>(acc.expr.get()))
        s.error(loc(args), "only a name such as 'f' or 'a.b' can be called");
      Loc start = acc.expr->loc;
      if (auto *m = llvm::dyn_cast<ast::MemberExpr>(acc.expr.get()))
        start = m->loc;
      auto call = std::make_unique<ast::CallExpr>(start, std::move(acc.expr));
      unsigned depth = acc.depth;
      callArgs(args, *call, depth);
      if (tooDeep(depth + 1, args->start))
        return {std::move(call), depth + 1};
      acc = {std::move(call), depth + 1};
    }
  }
  return acc;
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
      s.error(loc(a), "positional argument after keyword argument " +
                          quoted(map.text(firstKeyword)));
    }
    Built v = build(need(a->expr()));
    depth = std::max(depth, v.depth);
    arg.value = std::move(v.expr);
    call.args.push_back(std::move(arg));
  }
}

Built Builder::primary(G::PrimaryContext *ctx) {
  if (G::NumberContext *n = ctx->number())
    return number(n);
  if (G::StrContext *st = ctx->str())
    return {std::make_unique<ast::StringExpr>(loc(st), str(st)), 1};
  if (G::ListContext *l = ctx->list())
    return list(l);
  if (G::ParenExprContext *p = ctx->parenExpr()) {
    std::vector<G::ExprContext *> elems = p->expr();
    if (elems.size() == 1 && p->COMMA().empty())
      return build(elems[0]); // plain parentheses
    auto tuple = std::make_unique<ast::TupleExpr>(loc(p));
    unsigned depth = 0;
    for (G::ExprContext *e : elems) {
      Built b = build(e);
      depth = std::max(depth, b.depth);
      tuple->elements.push_back(std::move(b.expr));
    }
    return {std::move(tuple), depth + 1};
  }
  Token *t = need(ctx->start);
  switch (t->getType()) {
  case G::TRUE: return {std::make_unique<ast::BoolExpr>(loc(t), true), 1};
  case G::FALSE: return {std::make_unique<ast::BoolExpr>(loc(t), false), 1};
  case G::ELLIPSIS: return {std::make_unique<ast::EllipsisExpr>(loc(t)), 1};
  case G::IDENT: return {std::make_unique<ast::NameExpr>(loc(t), text(t)), 1};
  default: throw BrokenTree{};
  }
}

Built Builder::number(G::NumberContext *ctx) {
  Token *t = need(ctx->start);
  std::string_view txt = map.text(t);
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

Built Builder::dirLiteral(G::DirLiteralContext *ctx) {
  need(ctx);
  if (G::NumberContext *n = ctx->number()) {
    Built b = number(n);
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
  case G::TRUE: return {std::make_unique<ast::BoolExpr>(loc(t), true), 1};
  case G::FALSE: return {std::make_unique<ast::BoolExpr>(loc(t), false), 1};
  default: throw BrokenTree{};
  }
}

} // namespace bmb::parser
