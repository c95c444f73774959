//===- AST.h - The bmb abstract syntax tree ---------------------*- C++ -*-===//
//
// The plain tree the parser returns: no ANTLR types, no MLIR types. Nodes own
// their children through unique_ptr; kinds drive LLVM-style isa/dyn_cast.
// Nothing here is evaluated: hyperparameters, shapes and names are resolved
// by Sema.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_LANG_AST_H
#define BMB_LANG_AST_H

#include "lang/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bmb::ast {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind {
    Int,      // 42            (parsed with overflow diagnostics)
    Float,    // 6e-4, 1.0
    String,   // "corpus.txt"  (escapes already decoded)
    Bool,     // true, false
    Name,     // dim, gelu, x, B
    Member,   // wte.w, bert.word.w
    Call,     // Linear(dim, 4 * dim, bias = false), adamw(lr = 1e-3), h(x)
    Binary,   // a + b, a == b, a and b
    Unary,    // -a, not a
    List,     // [a, b]      (also shapes: [B, T, dim])
    Tuple,    // (0.9, 0.95)
    Ellipsis, // ...         (only as a shape dimension)
    Cond,     // a if c, a if c else b
    Repeat,   // repeat(n) Block(dim, heads)
    Pair,     // "h.5" : "h.11", 2:4, sentiment -> polarity
  };
  Expr(Kind kind, Loc loc) : kind(kind), loc(loc) {}
  virtual ~Expr() = default;
  Kind getKind() const { return kind; }
  const Kind kind;
  Loc loc;
};
using ExprPtr = std::unique_ptr<Expr>;

struct IntExpr : Expr {
  IntExpr(Loc l, int64_t v) : Expr(Kind::Int, l), value(v) {}
  int64_t value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Int; }
};

struct FloatExpr : Expr {
  FloatExpr(Loc l, double v) : Expr(Kind::Float, l), value(v) {}
  double value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Float; }
};

struct StringExpr : Expr {
  StringExpr(Loc l, std::string v) : Expr(Kind::String, l), value(std::move(v)) {}
  std::string value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::String; }
};

struct BoolExpr : Expr {
  BoolExpr(Loc l, bool v) : Expr(Kind::Bool, l), value(v) {}
  bool value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Bool; }
};

struct NameExpr : Expr {
  NameExpr(Loc l, std::string n) : Expr(Kind::Name, l), name(std::move(n)) {}
  std::string name;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Name; }
};

struct MemberExpr : Expr {
  MemberExpr(Loc l, ExprPtr b, std::string m, Loc ml)
      : Expr(Kind::Member, l), base(std::move(b)), member(std::move(m)),
        memberLoc(ml) {}
  ExprPtr base;
  std::string member;
  Loc memberLoc;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Member; }
};

/// One argument of a call: positional when `keyword` is empty.
struct Arg {
  std::string keyword;
  Loc keywordLoc;
  ExprPtr value;
};

struct CallExpr : Expr {
  CallExpr(Loc l, ExprPtr c) : Expr(Kind::Call, l), callee(std::move(c)) {}
  ExprPtr callee; // a NameExpr or MemberExpr
  std::vector<Arg> args;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Call; }
};

// No floor division: `//` starts a comment.
enum class BinaryOp { Add, Sub, Mul, Div, Mod, Eq, Ne, Lt, Le, Gt, Ge, And, Or };
const char *spelling(BinaryOp op);

struct BinaryExpr : Expr {
  BinaryExpr(Loc l, BinaryOp o, ExprPtr a, ExprPtr b)
      : Expr(Kind::Binary, l), op(o), lhs(std::move(a)), rhs(std::move(b)) {}
  BinaryOp op;
  ExprPtr lhs, rhs;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Binary; }
};

enum class UnaryOp { Neg, Not };
const char *spelling(UnaryOp op);

struct UnaryExpr : Expr {
  UnaryExpr(Loc l, UnaryOp o, ExprPtr v)
      : Expr(Kind::Unary, l), op(o), operand(std::move(v)) {}
  UnaryOp op;
  ExprPtr operand;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Unary; }
};

struct ListExpr : Expr {
  explicit ListExpr(Loc l) : Expr(Kind::List, l) {}
  std::vector<ExprPtr> elements;
  static bool classof(const Expr *e) { return e->getKind() == Kind::List; }
};

struct TupleExpr : Expr {
  explicit TupleExpr(Loc l) : Expr(Kind::Tuple, l) {}
  std::vector<ExprPtr> elements;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Tuple; }
};

struct EllipsisExpr : Expr {
  explicit EllipsisExpr(Loc l) : Expr(Kind::Ellipsis, l) {}
  static bool classof(const Expr *e) { return e->getKind() == Kind::Ellipsis; }
};

/// `value if cond` (elseValue null) or `value if cond else elseValue`.
struct CondExpr : Expr {
  CondExpr(Loc l, ExprPtr v, ExprPtr c, ExprPtr e)
      : Expr(Kind::Cond, l), value(std::move(v)), cond(std::move(c)),
        elseValue(std::move(e)) {}
  ExprPtr value, cond, elseValue;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Cond; }
};

/// `repeat(count) Layer(args)`: `layer` is always a CallExpr.
struct RepeatExpr : Expr {
  RepeatExpr(Loc l, ExprPtr n, ExprPtr c)
      : Expr(Kind::Repeat, l), count(std::move(n)), layer(std::move(c)) {}
  ExprPtr count;
  ExprPtr layer;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Repeat; }
};

enum class PairSep { Colon, Arrow };

/// `a : b` (ranges, ratios such as 2:4, layer maps) or `a -> b` (prompt ->
/// verbalizer).
struct PairExpr : Expr {
  PairExpr(Loc l, PairSep s, ExprPtr a, ExprPtr b)
      : Expr(Kind::Pair, l), sep(s), first(std::move(a)), second(std::move(b)) {}
  PairSep sep;
  ExprPtr first, second;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Pair; }
};

//===----------------------------------------------------------------------===//
// Types: `[out, in]`, `i32[B, T]`, `[..., dim]`; in a hyperparameter
// position, a scalar type name (`int`, `float`, `bool`, `string`, or a
// built-in enum such as `activation`).
//===----------------------------------------------------------------------===//

struct TensorTypeExpr {
  Loc loc;
  std::string dtype;           // empty: the default (f32)
  Loc dtypeLoc;
  std::vector<ExprPtr> dims;   // may contain one EllipsisExpr
};

//===----------------------------------------------------------------------===//
// Forward bodies: straight-line statements; `if` takes a compile-time
// condition and is resolved by Sema.
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum class Kind { Assign, Return, If };
  Stmt(Kind kind, Loc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;
  Kind getKind() const { return kind; }
  const Kind kind;
  Loc loc;
};
using StmtPtr = std::unique_ptr<Stmt>;

/// `x = e` or `q, k = split(...)`.
struct AssignStmt : Stmt {
  explicit AssignStmt(Loc l) : Stmt(Kind::Assign, l) {}
  std::vector<std::string> targets;
  std::vector<Loc> targetLocs;
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Assign; }
};

/// `return a` or `return a, b`.
struct ReturnStmt : Stmt {
  explicit ReturnStmt(Loc l) : Stmt(Kind::Return, l) {}
  std::vector<ExprPtr> values;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Return; }
};

/// `if cond { ... } else { ... }` (else optional; `else if` nests an IfStmt).
struct IfStmt : Stmt {
  explicit IfStmt(Loc l) : Stmt(Kind::If, l) {}
  ExprPtr cond;
  std::vector<StmtPtr> thenBody, elseBody;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::If; }
};

//===----------------------------------------------------------------------===//
// Layers and models
//===----------------------------------------------------------------------===//

/// A hyperparameter: `dim: int`, `bias: bool = true`, `act: activation = gelu`,
/// `vocab = 50257` (type taken from the default).
struct HyperParam {
  Loc loc;
  std::string name;
  std::string type;   // empty when omitted
  Loc typeLoc;
  ExprPtr defaultValue; // null when required
};

/// `param w: [out, in] = normal(0.02) if bias`, optionally `frozen`.
struct ParamDecl {
  Loc loc;
  std::string name;
  TensorTypeExpr type;
  ExprPtr init;  // null: zeros
  ExprPtr cond;  // null: always present
  bool frozen = false;
};

/// A layer-scope binding `name = expr`: a sub-layer when the expression
/// instantiates a layer (`ln1 = LayerNorm(dim)`, `h = repeat(n) Block(...)`),
/// otherwise a compile-time constant (`head_dim = dim / heads`). A trailing
/// `if cond` is kept as a CondExpr.
struct Binding {
  Loc loc;
  std::string name;
  ExprPtr value;
};

/// An input of forward: `x: [B, T, dim]`, `tokens: i32[B, T]`, or just `x`.
struct ForwardInput {
  Loc loc;
  std::string name;
  std::optional<TensorTypeExpr> type;
};

struct ForwardDecl {
  Loc loc;
  std::vector<ForwardInput> inputs;
  std::vector<TensorTypeExpr> results; // empty: inferred; >1 for `-> (a, b)`
  /// `= expr` bodies are stored as one ReturnStmt.
  std::vector<StmtPtr> body;
};

/// A member of a layer body, kept in source order because bindings and
/// parameter shapes may refer to earlier bindings.
struct LayerItem {
  enum class Kind { Param, Binding } kind;
  std::unique_ptr<ParamDecl> param;
  std::unique_ptr<Binding> binding;
};

//===----------------------------------------------------------------------===//
// Top-level declarations
//===----------------------------------------------------------------------===//

class Decl {
public:
  enum class Kind {
    Import, Layer, ModelAlias, Job, Template, Verbalizer, Recipe, Checkpoint
  };
  Decl(Kind kind, Loc loc) : kind(kind), loc(loc) {}
  virtual ~Decl() = default;
  Kind getKind() const { return kind; }
  const Kind kind;
  Loc loc;
  std::string name; // empty for imports
  Loc nameLoc;
};
using DeclPtr = std::unique_ptr<Decl>;

/// `import "stdlib/nn.bmb"`.
struct ImportDecl : Decl {
  explicit ImportDecl(Loc l) : Decl(Kind::Import, l) {}
  std::string path;
  static bool classof(const Decl *d) { return d->getKind() == Kind::Import; }
};

/// `layer Name(hyper) { items forward }` or `model Name(hyper) { ... }`; a
/// model is a layer that may be the root of a job.
struct LayerDecl : Decl {
  explicit LayerDecl(Loc l) : Decl(Kind::Layer, l) {}
  bool isModel = false;
  std::vector<HyperParam> hyperParams;
  std::vector<LayerItem> items;
  std::unique_ptr<ForwardDecl> forward; // null: a layer without forward
  static bool classof(const Decl *d) { return d->getKind() == Kind::Layer; }
};

/// `model GPT2Tiny = GPT2(dim = 192, layers = 6)`: a model with some
/// hyperparameters fixed.
struct ModelAliasDecl : Decl {
  explicit ModelAliasDecl(Loc l) : Decl(Kind::ModelAlias, l) {}
  std::unique_ptr<CallExpr> target; // callee is a NameExpr; bare names become a call with no args
  static bool classof(const Decl *d) { return d->getKind() == Kind::ModelAlias; }
};

/// `key = value` inside a job, a verbalizer-free block or a recipe directive.
struct Setting {
  Loc loc;
  std::string key;
  ExprPtr value;
};

enum class JobKind { Train, Tune, Compress, Infer };
const char *spelling(JobKind kind);

/// `train NAME for MODEL(args) [from "path"] [with RECIPE] { settings }`.
struct JobDecl : Decl {
  explicit JobDecl(Loc l) : Decl(Kind::Job, l) {}
  JobKind jobKind = JobKind::Train;
  std::unique_ptr<CallExpr> model; // callee is a NameExpr; args override hyperparameters
  std::optional<std::string> from; // checkpoint to start from
  Loc fromLoc;
  std::string recipe;              // empty: none
  Loc recipeLoc;
  std::vector<Setting> settings;
  static bool classof(const Decl *d) { return d->getKind() == Kind::Job; }
};

/// `template sentiment = "{text_a} It was {mask}."`.
struct TemplateDecl : Decl {
  explicit TemplateDecl(Loc l) : Decl(Kind::Template, l) {}
  std::string text;
  Loc textLoc;
  static bool classof(const Decl *d) { return d->getKind() == Kind::Template; }
};

/// `verbalizer polarity { negative = ["bad"], positive = ["good", "great"] }`.
struct VerbalizerDecl : Decl {
  explicit VerbalizerDecl(Loc l) : Decl(Kind::Verbalizer, l) {}
  struct Label {
    Loc loc;
    std::string name;
    std::vector<std::string> words;
    std::vector<Loc> wordLocs;
    std::optional<std::string> option; // `key = word`: an option, not a label
  };
  std::vector<Label> labels;
  static bool classof(const Decl *d) { return d->getKind() == Kind::Verbalizer; }
};

/// One line of a recipe:
///   distill from GPT2 @ "teacher.safetensors" { kl = 1.0 }
///   prune 2:4 on ["*.mlp.*.w"]
///   quantize int8 qat on linear
///   moefy "*.mlp" experts = 16 top = 4
/// Generic form: `verb [from MODEL [@ "path"]] arg* [on expr] (key = expr)* [{ settings }]`.
struct Directive {
  Loc loc;
  std::string verb;
  std::unique_ptr<CallExpr> fromModel; // `from GPT2` / `from GPT2(layers = 6)`
  std::optional<std::string> fromPath; // `@ "teacher.safetensors"`
  Loc fromPathLoc;
  std::vector<ExprPtr> args;           // int8, qat, 2:4, "*.mlp"
  ExprPtr on;                          // the `on` target, null if absent
  std::vector<Setting> settings;       // inline `k = v` and `{ ... }` together
};

struct RecipeDecl : Decl {
  explicit RecipeDecl(Loc l) : Decl(Kind::Recipe, l) {}
  std::vector<Directive> directives;
  static bool classof(const Decl *d) { return d->getKind() == Kind::Recipe; }
};

/// One rule of a checkpoint name map: `"h.{i}.attn.c_attn.weight" =
/// transpose(concat(h.attn.q.w, h.attn.k.w, h.attn.v.w)) if cond`. The value
/// is kept as an expression (a parameter path, or transpose/concat/tied
/// calls) and read by Sema.
struct NameRule {
  Loc loc;             // the external name
  std::string external;
  ExprPtr value;
  ExprPtr cond;        // null: always applies
};

/// `checkpoint hf for GPT2 { rules }`: how the parameters of `model` (and of
/// its aliases) are named in a foreign checkpoint. Its name is not a global
/// symbol: each model has its own maps.
struct CheckpointDecl : Decl {
  explicit CheckpointDecl(Loc l) : Decl(Kind::Checkpoint, l) {}
  std::string model;
  Loc modelLoc;
  std::vector<NameRule> rules;
  static bool classof(const Decl *d) { return d->getKind() == Kind::Checkpoint; }
};

/// One parsed source file.
struct File {
  uint32_t fileId = 0; // index into the SourceManager
  std::vector<DeclPtr> decls;
};

/// Prints the tree in a stable, indented, s-expression-like form for
/// `bmbc --emit=ast` and the parser's lit tests.
void dump(const File &file, const SourceManager &sources, std::ostream &os);

} // namespace bmb::ast

#endif // BMB_LANG_AST_H
