//===- ParserBuilder.cpp - Parse tree to AST ------------------------------===//
//
// Runs only on a parse tree without syntax or lexical errors, so every
// required child is present; accessors are still checked, and a missing one
// becomes an internal error rather than a crash.
//
// Locations: a declaration, setting or statement is located at its first
// token (ParamDecl, Binding, HyperParam and ForwardInput at their name); an
// expression at its first token, except binary-like nodes (Binary, Cond,
// Pair), which are located at their operator.
//
// Chains that the grammar parses as loops (`a + b + ... + z`, `x if c else
// y if d ...`, `else if`) become nested nodes here; their depth is bounded
// by ParseLimits::maxExprDepth so that later recursive walks, including the
// AST's own destructor, stay shallow.
//
//===----------------------------------------------------------------------===//
#include "lang/ParserBuilder.h"

namespace bmb::parser {

bool Builder::tooDeep(unsigned depth, const Token *at) {
  if (depth <= s.limits.maxExprDepth)
    return false;
  if (!depthReported)
    s.error(loc(at), "expression nested too deeply (the limit is " +
                         std::to_string(s.limits.maxExprDepth) + ")");
  depthReported = true;
  return true;
}

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

std::unique_ptr<ast::File> Builder::file(G::FileContext *ctx) {
  auto f = std::make_unique<ast::File>();
  f->fileId = map.file();
  for (G::DeclContext *d : ctx->decl())
    if (ast::DeclPtr p = decl(d))
      f->decls.push_back(std::move(p));
  return f;
}

ast::DeclPtr Builder::decl(G::DeclContext *ctx) {
  if (auto *c = ctx->importDecl()) {
    auto d = std::make_unique<ast::ImportDecl>(loc(c));
    d->path = str(c->str());
    return d;
  }
  if (auto *c = ctx->layerDecl())
    return layer(c, c->name, c->hyperParams(), c->layerBody(), false);
  if (auto *c = ctx->modelDecl()) {
    if (!c->ASSIGN())
      return layer(c, c->name, c->hyperParams(), c->layerBody(), true);
    auto d = std::make_unique<ast::ModelAliasDecl>(loc(c));
    d->name = text(c->name);
    d->nameLoc = loc(c->name);
    d->target = modelRef(c->target, c->callArgs());
    return d;
  }
  if (auto *c = ctx->jobDecl()) {
    auto d = std::make_unique<ast::JobDecl>(loc(c));
    switch (need(c->kind)->getType()) {
    case G::TUNE:
      d->jobKind = ast::JobKind::Tune;
      break;
    case G::COMPRESS:
      d->jobKind = ast::JobKind::Compress;
      break;
    case G::INFER:
      d->jobKind = ast::JobKind::Infer;
      break;
    default:
      d->jobKind = ast::JobKind::Train;
      break;
    }
    d->name = text(c->name);
    d->nameLoc = loc(c->name);
    G::ModelRefContext *m = need(c->modelRef());
    d->model = modelRef(m->name, m->callArgs());
    if (c->from) {
      d->from = str(c->from);
      d->fromLoc = loc(c->from);
    }
    if (c->recipe) {
      d->recipe = text(c->recipe);
      d->recipeLoc = loc(c->recipe);
    }
    settings(c->settingsBlock(), d->settings);
    return d;
  }
  if (auto *c = ctx->templateDecl()) {
    auto d = std::make_unique<ast::TemplateDecl>(loc(c));
    d->name = text(c->name);
    d->nameLoc = loc(c->name);
    d->text = str(c->str());
    d->textLoc = loc(c->str());
    return d;
  }
  if (auto *c = ctx->verbalizerDecl()) {
    auto d = std::make_unique<ast::VerbalizerDecl>(loc(c));
    d->name = text(c->name);
    d->nameLoc = loc(c->name);
    for (G::LabelContext *l : c->label()) {
      ast::VerbalizerDecl::Label label;
      label.loc = loc(l);
      label.name = text(l);
      for (G::StrContext *w : l->str()) {
        label.words.push_back(str(w));
        label.wordLocs.push_back(loc(w));
      }
      if (l->option)
        label.option = std::string(text(l->option));
      d->labels.push_back(std::move(label));
    }
    return d;
  }
  if (auto *c = ctx->recipeDecl()) {
    auto d = std::make_unique<ast::RecipeDecl>(loc(c));
    d->name = text(c->name);
    d->nameLoc = loc(c->name);
    for (G::DirectiveContext *dir : c->directive())
      d->directives.push_back(directive(dir));
    return d;
  }
  if (auto *c = ctx->checkpointDecl()) {
    auto d = std::make_unique<ast::CheckpointDecl>(loc(c));
    d->name = text(c->name);
    d->nameLoc = loc(c->name);
    d->model = text(c->model);
    d->modelLoc = loc(c->model);
    for (G::NameRuleContext *r : c->nameRule()) {
      ast::NameRule rule;
      rule.loc = loc(r->external);
      rule.external = str(r->external);
      rule.value = expr(need(r->value));
      if (r->cond)
        rule.cond = expr(r->cond);
      d->rules.push_back(std::move(rule));
    }
    return d;
  }
  throw BrokenTree{};
}

std::unique_ptr<ast::LayerDecl> Builder::layer(ParserRuleContext *ctx, Token *name,
                                               G::HyperParamsContext *hyper,
                                               G::LayerBodyContext *body, bool isModel) {
  auto d = std::make_unique<ast::LayerDecl>(loc(ctx));
  d->isModel = isModel;
  d->name = text(name);
  d->nameLoc = loc(name);
  if (hyper) {
    for (G::HyperParamContext *h : hyper->hyperParam()) {
      ast::HyperParam p;
      p.loc = loc(h->name);
      p.name = text(h->name);
      if (h->type) {
        p.type = text(h->type);
        p.typeLoc = loc(h->type);
      }
      if (h->expr())
        p.defaultValue = expr(h->expr());
      d->hyperParams.push_back(std::move(p));
    }
  }
  Token *firstForward = nullptr;
  for (G::LayerItemContext *item : need(body)->layerItem()) {
    if (auto *p = item->paramDecl()) {
      auto param = std::make_unique<ast::ParamDecl>();
      param->loc = loc(p->name);
      param->name = text(p->name);
      param->frozen = p->FROZEN() != nullptr;
      param->type = tensorType(p->tensorType());
      if (p->init)
        param->init = expr(p->init);
      if (p->cond)
        param->cond = expr(p->cond);
      d->items.push_back({ast::LayerItem::Kind::Param, std::move(param), nullptr});
    } else if (auto *b = item->binding()) {
      auto binding = std::make_unique<ast::Binding>();
      binding->loc = loc(b->name);
      binding->name = text(b->name);
      binding->value = expr(b->expr());
      d->items.push_back({ast::LayerItem::Kind::Binding, nullptr, std::move(binding)});
    } else if (auto *f = item->forwardDecl()) {
      if (firstForward) {
        s.error(loc(f), "unexpected 'forward' here: a layer has one forward")
            .note(loc(firstForward), "the first forward is here");
        continue;
      }
      firstForward = f->start;
      d->forward = forward(f);
    }
  }
  return d;
}

ast::TensorTypeExpr Builder::tensorType(G::TensorTypeContext *ctx) {
  ast::TensorTypeExpr t;
  t.loc = loc(ctx);
  if (ctx->dtype) {
    t.dtype = text(ctx->dtype);
    t.dtypeLoc = loc(ctx->dtype);
  }
  for (G::ExprContext *e : ctx->expr())
    t.dims.push_back(expr(e));
  return t;
}

std::unique_ptr<ast::ForwardDecl> Builder::forward(G::ForwardDeclContext *ctx) {
  auto f = std::make_unique<ast::ForwardDecl>();
  f->loc = loc(ctx);
  for (G::ForwardInputContext *in : ctx->forwardInput()) {
    ast::ForwardInput input;
    input.loc = loc(in->name);
    input.name = text(in->name);
    if (in->tensorType())
      input.type = tensorType(in->tensorType());
    f->inputs.push_back(std::move(input));
  }
  if (G::ResultTypesContext *r = ctx->resultTypes())
    for (G::TensorTypeContext *t : r->tensorType())
      f->results.push_back(tensorType(t));
  if (G::ExprContext *e = ctx->expr()) {
    auto ret = std::make_unique<ast::ReturnStmt>(loc(e));
    ret->values.push_back(expr(e));
    f->body.push_back(std::move(ret));
  } else {
    f->body = block(ctx->block());
  }
  return f;
}

std::unique_ptr<ast::CallExpr> Builder::modelRef(Token *name, G::CallArgsContext *args) {
  auto call = std::make_unique<ast::CallExpr>(
      loc(name), std::make_unique<ast::NameExpr>(loc(name), text(name)));
  unsigned depth = 1;
  if (args)
    callArgs(args, *call, depth);
  return call;
}

ast::Setting Builder::setting(G::KeyContext *key, G::SettingValueContext *value) {
  ast::Setting st;
  st.loc = loc(key);
  st.key = text(key);
  std::vector<G::ExprContext *> e = need(value)->expr();
  st.value = pairOrExpr(need(e.at(0)), value->sep, e.size() > 1 ? e[1] : nullptr).expr;
  return st;
}

void Builder::settings(G::SettingsBlockContext *ctx, std::vector<ast::Setting> &out) {
  for (G::SettingContext *c : need(ctx)->setting())
    out.push_back(setting(c->key(), c->settingValue()));
}

ast::Directive Builder::directive(G::DirectiveContext *ctx) {
  ast::Directive d;
  d.loc = loc(ctx->verb);
  d.verb = text(ctx->verb);
  if (G::ModelRefContext *m = ctx->modelRef())
    d.fromModel = modelRef(m->name, m->callArgs());
  if (ctx->path) {
    d.fromPath = str(ctx->path);
    d.fromPathLoc = loc(ctx->path);
  }
  for (G::DirectiveArgContext *a : ctx->directiveArg()) {
    std::vector<G::DirAtomContext *> atoms = a->dirAtom();
    Built first = dirAtom(need(atoms.at(0)));
    if (!a->sep) {
      d.args.push_back(std::move(first.expr));
      continue;
    }
    Built second = dirAtom(need(atoms.at(1)));
    auto sep = a->sep->getType() == G::ARROW ? ast::PairSep::Arrow : ast::PairSep::Colon;
    d.args.push_back(std::make_unique<ast::PairExpr>(loc(a->sep), sep, std::move(first.expr),
                                                     std::move(second.expr)));
  }
  if (ctx->on)
    d.on = expr(ctx->on);
  for (G::DirectiveSettingContext *c : ctx->directiveSetting())
    d.settings.push_back(setting(c->key(), c->settingValue()));
  if (G::SettingsBlockContext *b = ctx->settingsBlock())
    settings(b, d.settings);
  return d;
}

std::string Builder::str(G::StrContext *ctx) {
  std::string value;
  size_t offset;
  decodeString(map.text(need(ctx)->start), value, offset); // reported when lexed
  return value;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

std::vector<ast::StmtPtr> Builder::block(G::BlockContext *ctx) {
  std::vector<ast::StmtPtr> out;
  for (G::StmtContext *st : need(ctx)->stmt())
    if (ast::StmtPtr p = stmt(st))
      out.push_back(std::move(p));
  return out;
}

ast::StmtPtr Builder::stmt(G::StmtContext *ctx) {
  if (auto *a = ctx->assignStmt()) {
    auto st = std::make_unique<ast::AssignStmt>(loc(a));
    for (TerminalNode *id : a->IDENT()) {
      st->targets.push_back(text(id->getSymbol()));
      st->targetLocs.push_back(loc(id->getSymbol()));
    }
    st->value = expr(a->expr());
    return st;
  }
  if (auto *r = ctx->returnStmt()) {
    auto st = std::make_unique<ast::ReturnStmt>(loc(r));
    for (G::ExprContext *e : r->expr())
      st->values.push_back(expr(e));
    return st;
  }
  return ifStmt(need(ctx->ifStmt()));
}

ast::StmtPtr Builder::ifStmt(G::IfStmtContext *ctx) {
  // IF cond block (ELSE IF cond block)* (ELSE block)?: collect the branches
  // in source order, then nest them from the last one outwards.
  struct Branch {
    Token *ifTok;
    ast::ExprPtr cond;
    std::vector<ast::StmtPtr> body;
  };
  std::vector<Branch> branches;
  std::vector<ast::StmtPtr> elseBody;
  Token *pendingIf = nullptr;
  G::OpExprContext *pendingCond = nullptr;
  for (ParseTree *child : ctx->children) {
    if (Token *t = tokenOf(child)) {
      if (t->getType() == G::IF)
        pendingIf = t;
    } else if (auto *c = dynamic_cast<G::OpExprContext *>(child)) {
      pendingCond = c;
    } else if (auto *b = dynamic_cast<G::BlockContext *>(child)) {
      if (pendingIf) {
        if (tooDeep(static_cast<unsigned>(branches.size()) + 1, pendingIf))
          return nullptr;
        branches.push_back({pendingIf, expr(need(pendingCond)), block(b)});
        pendingIf = nullptr;
      } else {
        elseBody = block(b);
      }
    }
  }
  ast::StmtPtr result;
  for (size_t i = branches.size(); i-- > 0;) {
    auto st = std::make_unique<ast::IfStmt>(loc(branches[i].ifTok));
    st->cond = std::move(branches[i].cond);
    st->thenBody = std::move(branches[i].body);
    st->elseBody = std::move(elseBody);
    elseBody.clear();
    elseBody.push_back(std::move(st));
  }
  if (elseBody.size() != 1)
    throw BrokenTree{};
  return std::move(elseBody.front());
}

} // namespace bmb::parser

std::unique_ptr<bmb::ast::File> bmb::parser::buildAst(G::FileContext *tree, Session &session) {
  try {
    return Builder(session).file(tree);
  } catch (const BrokenTree &) {
    session.error(Loc{session.map.file(), 1, 1}, "internal parser error: incomplete parse tree");
    return nullptr;
  }
}
