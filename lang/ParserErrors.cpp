//===- ParserErrors.cpp - Syntax error messages ---------------------------===//
//
// ANTLR's default messages print token sets ("mismatched input 'x'
// expecting {'(', '[', IDENT, ...}"). This strategy keeps ANTLR's recovery
// (so one run reports several errors) but words every message itself, from
// the rule being parsed and the set of tokens that would have been accepted:
//
//   expected ')' to close the call opened at 3:14
//   expected '=' after setting name 'batch'
//   expected an expression, found '}'
//   expected a statement or '}', found '+'
//   expected 'for' after 'pretrain', found 'GPT2'
//
// Expected sets are first reduced to what a user would type next: "an
// expression" stands for every token that may start one, "a name" for
// identifiers and the keywords allowed as keys, and operators that could
// merely continue the previous expression are dropped when something more
// specific is expected.
//
//===----------------------------------------------------------------------===//
#include "lang/ParserImpl.h"

#include <algorithm>

namespace bmb::parser {

using antlr4::Token;
using antlr4::misc::IntervalSet;

bool isErrorToken(size_t type) { return type == G::BAD_STRING || type == G::BAD_NUMBER; }

static bool isKeyword(size_t type) { return type >= G::IMPORT && type <= G::NOT; }

std::string describeToken(const SourceMap &map, const Token *t) {
  if (t->getType() == Token::EOF)
    return "end of file";
  std::string_view text = map.text(t);
  if (t->getType() == G::STRING || t->getType() == G::BAD_STRING) {
    // quoted() cuts on a character boundary; swap its quotes for the
    // string's own.
    std::string q = quoted(text, 24);
    return "string " + q.substr(1, q.size() - 2) + (text.size() > 24 ? "\"" : "");
  }
  if (isKeyword(t->getType()))
    return "keyword " + quoted(text);
  return quoted(text);
}

namespace {

const size_t kExprStarts[] = {G::INT,        G::FLOAT,  G::SIZE,  G::BAD_NUMBER, G::STRING,
                              G::BAD_STRING, G::TRUE,   G::FALSE, G::IDENT,      G::ELLIPSIS,
                              G::LPAREN,     G::LBRACK, G::MINUS, G::NOT,        G::REPEAT};
// Keywords the grammar's `key` rule accepts as setting / argument names.
const size_t kKeyKeywords[] = {G::IMPORT,     G::LAYER,  G::MODEL,  G::TRAIN,   G::TUNE,
                               G::COMPRESS,   G::INFER,  G::TEMPLATE, G::VERBALIZER,
                               G::RECIPE,     G::CHECKPOINT, G::PARAM, G::FROZEN, G::FORWARD,
                               G::FOR,        G::FROM,   G::WITH,   G::ON,      G::REPEAT};
// Tokens that would only continue what came before.
const size_t kContinuations[] = {
    G::DOT,  G::LPAREN, G::EQ,      G::NE,  G::LT, G::LE, G::GT,   G::GE,    G::PLUS, G::MINUS,
    G::STAR, G::SLASH,  G::PERCENT, G::AND, G::OR, G::IF, G::ELSE, G::COLON, G::ARROW};

/// What may come next, reduced to what a user would type.
struct Expected {
  bool expr = false;
  bool name = false;
  std::vector<size_t> tokens; // specific tokens, in display order
  bool has(size_t t) const { return std::find(tokens.begin(), tokens.end(), t) != tokens.end(); }
  bool onlyTokens(std::initializer_list<size_t> allowed) const {
    if (expr || name)
      return false;
    for (size_t t : tokens)
      if (std::find(allowed.begin(), allowed.end(), t) == allowed.end())
        return false;
    return true;
  }
};

/// Display order: keywords and openers first, separators, then closers.
int rank(size_t t) {
  switch (t) {
  case G::COMMA:
  case G::SEMI:
    return 2;
  case G::RPAREN:
  case G::RBRACK:
  case G::RBRACE:
    return 3;
  default:
    return 1;
  }
}

Expected reduce(const IntervalSet &set) {
  std::vector<size_t> all;
  for (ssize_t t : set.toList())
    if (t >= 1 && t <= static_cast<ssize_t>(G::VERB) && !isErrorToken(static_cast<size_t>(t)))
      all.push_back(static_cast<size_t>(t));
  auto contains = [&](size_t t) { return std::find(all.begin(), all.end(), t) != all.end(); };
  auto removeAll = [&](const size_t *b, const size_t *e) {
    all.erase(
        std::remove_if(all.begin(), all.end(), [&](size_t t) { return std::find(b, e, t) != e; }),
        all.end());
  };
  Expected ex;
  if (contains(G::INT) && contains(G::IDENT) && contains(G::LBRACK) && contains(G::MINUS)) {
    ex.expr = true;
    removeAll(std::begin(kExprStarts), std::end(kExprStarts));
  }
  if (contains(G::IDENT)) {
    ex.name = true;
    all.erase(std::remove(all.begin(), all.end(), G::IDENT), all.end());
  }
  if (ex.expr || ex.name) {
    size_t keys = std::count_if(all.begin(), all.end(), [](size_t t) {
      return std::find(std::begin(kKeyKeywords), std::end(kKeyKeywords), t) !=
             std::end(kKeyKeywords);
    });
    if (keys >= 5)
      removeAll(std::begin(kKeyKeywords), std::end(kKeyKeywords));
  }
  // Right after an expression (binary operators are expected), drop what
  // would merely continue it when something more specific remains.
  bool afterExpr = contains(G::PLUS) && contains(G::STAR);
  bool specific = ex.expr || ex.name || std::any_of(all.begin(), all.end(), [](size_t t) {
                    return std::find(std::begin(kContinuations), std::end(kContinuations), t) ==
                           std::end(kContinuations);
                  });
  if (afterExpr && specific)
    removeAll(std::begin(kContinuations), std::end(kContinuations));
  std::sort(all.begin(), all.end(),
            [](size_t a, size_t b) { return rank(a) != rank(b) ? rank(a) < rank(b) : a < b; });
  ex.tokens = std::move(all);
  return ex;
}

std::string tokenPhrase(antlr4::Parser *parser, size_t t) {
  if (t == Token::EOF)
    return "end of file";
  std::string lit = parser->getVocabulary().getLiteralName(t);
  if (!lit.empty())
    return lit; // already quoted: '('
  switch (t) {
  case G::INT:
    return "an integer";
  case G::FLOAT:
    return "a number";
  case G::STRING:
    return "a string";
  case G::VERB:
    return "a recipe directive";
  default:
    return "a name";
  }
}

std::string joinOr(const std::vector<std::string> &items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

std::string phrase(antlr4::Parser *parser, const Expected &ex) {
  std::vector<std::string> items;
  if (ex.expr)
    items.push_back("an expression");
  else if (ex.name)
    items.push_back("a name");
  for (size_t t : ex.tokens)
    if (t != Token::EOF || (items.empty() && ex.tokens.size() == 1))
      items.push_back(tokenPhrase(parser, t));
  return joinOr(items);
}

antlr4::Token *firstToken(antlr4::ParserRuleContext *ctx, size_t type) {
  for (antlr4::tree::ParseTree *child : ctx->children)
    if (auto *term = dynamic_cast<antlr4::tree::TerminalNode *>(child))
      if (term->getSymbol()->getType() == type)
        return term->getSymbol();
  return nullptr;
}

/// The name token of the declaration that owns `ctx`, if any.
std::string ownerName(const SourceMap &map, antlr4::ParserRuleContext *ctx) {
  if (!ctx)
    return {};
  if (auto *l = dynamic_cast<G::LayerDeclContext *>(ctx); l && l->name)
    return "layer " + quoted(map.text(l->name));
  if (auto *m = dynamic_cast<G::ModelDeclContext *>(ctx); m && m->name)
    return "model " + quoted(map.text(m->name));
  if (auto *j = dynamic_cast<G::JobDeclContext *>(ctx); j && j->name)
    return quoted(map.text(j->name));
  if (auto *d = dynamic_cast<G::DirectiveContext *>(ctx); d && d->verb)
    return quoted(map.text(d->verb));
  return {};
}

/// A construct with an opening bracket whose closer may be missing.
struct Bracket {
  antlr4::Token *open = nullptr;
  size_t closer = 0;
  std::string what;   // "the call", "the body of layer 'Block'"
  bool items = false; // a `{ ... }` list of items (settings, statements, ...)
};

Bracket bracketOf(const SourceMap &map, antlr4::ParserRuleContext *ctx) {
  auto *parent = dynamic_cast<antlr4::ParserRuleContext *>(ctx->parent);
  switch (ctx->getRuleIndex()) {
  case G::RuleCallArgs:
    return {firstToken(ctx, G::LPAREN), G::RPAREN, "the call"};
  case G::RuleParenExpr:
    return {firstToken(ctx, G::LPAREN), G::RPAREN, "the '('"};
  case G::RuleList:
    return {firstToken(ctx, G::LBRACK), G::RBRACK, "the list"};
  case G::RuleHyperParams:
    return {firstToken(ctx, G::LPAREN), G::RPAREN, "the parameter list"};
  case G::RuleForwardDecl:
    return {firstToken(ctx, G::LPAREN), G::RPAREN, "the inputs of forward"};
  case G::RuleResultTypes:
    return {firstToken(ctx, G::LPAREN), G::RPAREN, "the result list"};
  case G::RuleTensorType:
    return {firstToken(ctx, G::LBRACK), G::RBRACK, "the shape"};
  case G::RuleOpExpr:
    if (dynamic_cast<G::RepeatExprContext *>(ctx))
      return {firstToken(ctx, G::LPAREN), G::RPAREN, "'repeat('"};
    return {};
  case G::RuleLabel:
    return {firstToken(ctx, G::LBRACK), G::RBRACK, "the word list"};
  case G::RuleLayerBody: {
    std::string owner = ownerName(map, parent);
    return {firstToken(ctx, G::LBRACE), G::RBRACE,
            owner.empty() ? "the body" : "the body of " + owner, true};
  }
  case G::RuleBlock: {
    bool isForward = parent && parent->getRuleIndex() == G::RuleForwardDecl;
    return {firstToken(ctx, G::LBRACE), G::RBRACE, isForward ? "the body of forward" : "the block",
            true};
  }
  case G::RuleSettingsBlock: {
    std::string owner = ownerName(map, parent);
    return {firstToken(ctx, G::LBRACE), G::RBRACE,
            owner.empty() ? "the settings" : "the settings of " + owner, true};
  }
  case G::RuleVerbalizerDecl: {
    auto *v = static_cast<G::VerbalizerDeclContext *>(ctx);
    return {firstToken(ctx, G::LBRACE), G::RBRACE,
            v->name ? "verbalizer " + quoted(map.text(v->name)) : "the verbalizer", true};
  }
  case G::RuleRecipeDecl: {
    auto *r = static_cast<G::RecipeDeclContext *>(ctx);
    return {firstToken(ctx, G::LBRACE), G::RBRACE,
            r->name ? "recipe " + quoted(map.text(r->name)) : "the recipe", true};
  }
  case G::RuleCheckpointDecl: {
    auto *c = static_cast<G::CheckpointDeclContext *>(ctx);
    return {firstToken(ctx, G::LBRACE), G::RBRACE,
            c->name ? "checkpoint map " + quoted(map.text(c->name)) : "the checkpoint map",
            true};
  }
  default:
    return {};
  }
}

std::string at(const Loc &l) { return std::to_string(l.line) + ":" + std::to_string(l.col); }

/// The message for an item list (`{ ... }` bodies and the file itself) when
/// `ex` shows that the parser is between two items.
std::string itemMessage(size_t rule, const Expected &ex) {
  switch (rule) {
  case G::RuleFile:
    if (ex.has(G::IMPORT))
      return "expected a declaration (import, layer, model, train, tune, compress, "
             "infer, template, verbalizer, recipe or checkpoint)";
    break;
  case G::RuleLayerBody:
    if (ex.has(G::PARAM))
      return "expected a layer member ('param', a binding 'name = ...' or 'forward') or '}'";
    break;
  case G::RuleBlock:
    if (ex.has(G::RETURN))
      return "expected a statement (an assignment, 'return' or 'if') or '}'";
    break;
  case G::RuleSettingsBlock:
    if (ex.name && ex.has(G::RBRACE))
      return "expected a setting 'name = value' or '}'";
    break;
  case G::RuleVerbalizerDecl:
    if (ex.name && ex.has(G::RBRACE))
      return "expected a label 'name = [\"word\", ...]' or '}'";
    break;
  case G::RuleRecipeDecl:
    if (ex.has(G::VERB) && ex.has(G::RBRACE))
      return "expected a recipe directive or '}'";
    break;
  case G::RuleCheckpointDecl:
    if (ex.has(G::STRING) && ex.has(G::RBRACE))
      return "expected a rule '\"external.name\" = param.path' or '}'";
    break;
  default:
    break;
  }
  return {};
}

/// Tokens after which an expression must follow.
bool wantsOperand(size_t t) {
  switch (t) {
  case G::ASSIGN:
  case G::IF:
  case G::ELSE:
  case G::RETURN:
  case G::NOT:
  case G::AND:
  case G::OR:
  case G::EQ:
  case G::NE:
  case G::LT:
  case G::LE:
  case G::GT:
  case G::GE:
  case G::PLUS:
  case G::MINUS:
  case G::STAR:
  case G::SLASH:
  case G::PERCENT:
  case G::ARROW:
  case G::COLON:
  case G::COMMA:
  case G::LPAREN:
  case G::LBRACK:
  case G::ON:
    return true;
  default:
    return false;
  }
}

antlr4::Token *previousToken(antlr4::Parser *parser, antlr4::Token *t) {
  auto *stream = dynamic_cast<antlr4::BufferedTokenStream *>(parser->getTokenStream());
  size_t i = t->getTokenIndex();
  if (!stream || i == INVALID_INDEX)
    return nullptr;
  while (i-- > 0) {
    antlr4::Token *p = stream->get(i);
    if (p->getChannel() == Token::DEFAULT_CHANNEL)
      return p;
  }
  return nullptr;
}

} // namespace

void ErrorStrategy::report(antlr4::Parser *parser, Token *offending, const IntervalSet &expectedSet,
                           bool deepFailure) {
  session.syntaxFailed = true;
  if (!offending || isErrorToken(offending->getType()))
    return; // reported when lexed
  if (offending->getType() == Token::EOF && session.unterminatedComment)
    return; // the comment swallowed the rest of the file
  const SourceMap &map = session.map;
  const Loc loc = map.loc(offending);
  const std::string found = describeToken(map, offending);
  Token *prev = previousToken(parser, offending);
  const Loc prevLoc = prev ? map.loc(prev) : Loc{};
  const std::string after = prev ? " after " + describeToken(map, prev) : "";

  if (deepFailure) {
    // Prediction looked several tokens ahead and every alternative died at
    // `offending`: say what the previous token needed if we can tell.
    if (prev && wantsOperand(prev->getType()))
      session.syntaxError(loc, prevLoc, "expected an expression, found " + found);
    else
      session.syntaxError(loc, prevLoc, "unexpected " + found + after);
    return;
  }

  Expected ex = reduce(expectedSet);
  antlr4::ParserRuleContext *ctx = parser->getContext();
  const size_t rule = ctx ? ctx->getRuleIndex() : INVALID_INDEX;

  // A missing closer: name the construct and where it was opened.
  for (antlr4::ParserRuleContext *c = ctx; c;
       c = dynamic_cast<antlr4::ParserRuleContext *>(c->parent)) {
    Bracket b = bracketOf(map, c);
    if (!b.open || !ex.has(b.closer))
      continue;
    bool closing =
        b.items ? offending->getType() == Token::EOF : ex.onlyTokens({b.closer, G::COMMA, G::SEMI});
    if (!closing)
      break;
    std::string closer = parser->getVocabulary().getLiteralName(b.closer);
    std::string what = ex.has(G::COMMA) && !b.items ? "',' or " + closer : closer;
    session.syntaxError(loc, prevLoc,
                        "expected " + what + " to close " + b.what + " opened at " +
                            at(map.loc(b.open)));
    return;
  }

  if (rule == G::RuleRecipeDecl && offending->getType() == G::IDENT && prev &&
      prev->getLine() == offending->getLine()) {
    // A name that continues a directive's line but is not an argument here.
    session.syntaxError(loc, prevLoc,
                        "a recipe directive starts on a new line or after ';': "
                        "unexpected " +
                            found + after);
    return;
  }
  if (std::string msg = itemMessage(rule, ex); !msg.empty()) {
    session.syntaxError(loc, prevLoc, msg + ", found " + found);
    return;
  }

  if (rule == G::RuleAssignStmt && ex.has(G::ASSIGN) && prev) {
    session.syntaxError(loc, prevLoc,
                        "expected '=' after " + describeToken(map, prev) + ", found " + found);
    return;
  }
  if ((rule == G::RuleResultTypes || rule == G::RuleTensorType || rule == G::RuleParamDecl ||
       rule == G::RuleForwardInput) &&
      ex.has(G::LBRACK) && ex.name) {
    session.syntaxError(loc, prevLoc,
                        "expected a tensor type such as '[B, T, dim]' or "
                        "'i32[B, T]', found " +
                            found);
    return;
  }
  if (dynamic_cast<G::RepeatExprContext *>(ctx) && ex.name && ex.tokens.empty()) {
    session.syntaxError(loc, prevLoc,
                        "expected a layer such as 'Block(dim, heads)' after "
                        "'repeat(...)', found " +
                            found);
    return;
  }
  if (ex.onlyTokens({G::ASSIGN}) && ctx && ctx->start) {
    std::string_view key = map.text(ctx->start);
    if (rule == G::RuleSetting || rule == G::RuleDirectiveSetting) {
      session.syntaxError(loc, prevLoc, "expected '=' after setting name " + quoted(key));
      return;
    }
    if (rule == G::RuleLabel) {
      session.syntaxError(loc, prevLoc, "expected '=' after label name " + quoted(key));
      return;
    }
  }

  if (ex.expr || ex.name || !ex.tokens.empty()) {
    std::string what = phrase(parser, ex);
    bool single = !ex.expr && ex.tokens.size() + (ex.name ? 1 : 0) == 1;
    session.syntaxError(loc, prevLoc,
                        "expected " + what + (single ? after : "") + ", found " + found);
    return;
  }
  session.syntaxError(loc, prevLoc, "unexpected " + found + after);
}

void ErrorStrategy::sync(antlr4::Parser *parser) {
  // ANTLR's default gives up the whole rule when the token at the start of a
  // `(...)*` loop can neither start an element nor end the loop (unless
  // deleting that one token helps), so one stray token in a body would skip
  // the rest of the body. Skip to the next token that can start an element
  // or end the loop instead, as ANTLR already does between iterations.
  const antlr4::atn::ATN &atn = parser->getATN();
  antlr4::atn::ATNState *state = atn.states[parser->getState()];
  if (inErrorRecoveryMode(parser) ||
      state->getStateType() != antlr4::atn::ATNState::STAR_LOOP_ENTRY)
    return DefaultErrorStrategy::sync(parser);
  size_t la = parser->getTokenStream()->LA(1);
  IntervalSet next = atn.nextTokens(state);
  if (next.contains(Token::EPSILON) || next.contains(la))
    return;
  if (singleTokenDeletion(parser) != nullptr)
    return;
  reportUnwantedToken(parser);
  consumeUntil(parser, parser->getExpectedTokens().Or(getErrorRecoverySet(parser)));
}

void ErrorStrategy::reportNoViableAlternative(antlr4::Parser *parser,
                                              const antlr4::NoViableAltException &e) {
  Token *start = e.getStartToken();
  Token *offending = e.getOffendingToken();
  bool deep = start && offending && offending->getTokenIndex() != start->getTokenIndex();
  report(parser, offending, e.getExpectedTokens(), deep);
}

void ErrorStrategy::reportInputMismatch(antlr4::Parser *parser,
                                        const antlr4::InputMismatchException &e) {
  report(parser, e.getOffendingToken(), e.getExpectedTokens(), false);
}

void ErrorStrategy::reportFailedPredicate(antlr4::Parser *parser,
                                          const antlr4::FailedPredicateException &e) {
  // The grammar has no semantic predicates; should one be added and fail,
  // the message must still be ours.
  report(parser, e.getOffendingToken(), IntervalSet(), true);
}

void ErrorStrategy::reportUnwantedToken(antlr4::Parser *parser) {
  session.syntaxFailed = true;
  if (inErrorRecoveryMode(parser))
    return;
  beginErrorCondition(parser);
  report(parser, parser->getCurrentToken(), getExpectedTokens(parser), false);
}

void ErrorStrategy::reportMissingToken(antlr4::Parser *parser) {
  session.syntaxFailed = true;
  if (inErrorRecoveryMode(parser))
    return;
  beginErrorCondition(parser);
  report(parser, parser->getCurrentToken(), getExpectedTokens(parser), false);
}

} // namespace bmb::parser
