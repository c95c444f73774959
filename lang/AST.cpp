//===- AST.cpp - Operator spellings and the AST dump ----------------------===//
//
// The dump is what `bmbc --emit=ast` prints and what the parser's lit tests
// check, so its form is stable: one declaration, member, setting or
// statement per line, indented by nesting; expressions on one line as
// s-expressions. Every declaration and expression carries `@line:col`.
//
//   (layer Linear @10:1
//     (hyper in : int @10:14)
//     (param b @12:9 (type @12:12 (name out @12:13)) (init (name zeros @12:20))
//       (if (name bias @12:29)))
//     (forward @13:3 ...
//
//===----------------------------------------------------------------------===//
#include "lang/AST.h"

#include <charconv>
#include <ostream>

namespace bmb::ast {

const char *spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::Mod:
    return "%";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Ge:
    return ">=";
  case BinaryOp::And:
    return "and";
  case BinaryOp::Or:
    return "or";
  }
  return "?";
}

const char *spelling(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg:
    return "-";
  case UnaryOp::Not:
    return "not";
  }
  return "?";
}

const char *spelling(JobKind kind) {
  switch (kind) {
  case JobKind::Train:
    return "train";
  case JobKind::Tune:
    return "tune";
  case JobKind::Compress:
    return "compress";
  case JobKind::Infer:
    return "infer";
  }
  return "?";
}

namespace {

class Dumper {
public:
  explicit Dumper(std::ostream &os) : os(os) {}

  void file(const File &f, const std::string &path);

private:
  void line(unsigned indent) { os << '\n' << std::string(2 * indent, ' '); }
  void at(const Loc &l) { os << " @" << l.line << ':' << l.col; }
  void str(const std::string &s);
  void expr(const Expr *e);
  void type(const TensorTypeExpr &t);
  void call(const CallExpr *c) { expr(c); }
  void decl(const Decl &d, unsigned indent);
  void layer(const LayerDecl &d, unsigned indent);
  void stmts(const std::vector<StmtPtr> &body, unsigned indent);
  void stmt(const Stmt &s, unsigned indent);
  void setting(const Setting &s, unsigned indent);

  std::ostream &os;
};

void Dumper::str(const std::string &s) {
  static const char hex[] = "0123456789abcdef";
  os << '"';
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
    case '"':
      os << "\\\"";
      break;
    case '\\':
      os << "\\\\";
      break;
    case '\n':
      os << "\\n";
      break;
    case '\t':
      os << "\\t";
      break;
    case '\r':
      os << "\\r";
      break;
    default:
      if (c < 0x20 || c == 0x7f)
        os << "\\u{" << hex[c >> 4] << hex[c & 15] << '}';
      else
        os << ch;
    }
  }
  os << '"';
}

void Dumper::expr(const Expr *e) {
  if (!e) {
    os << "(null)";
    return;
  }
  switch (e->getKind()) {
  case Expr::Kind::Int:
    os << "(int " << llvm::cast<IntExpr>(e)->value;
    break;
  case Expr::Kind::Float: {
    // Shortest round-trip form, always with a '.' or exponent.
    char buf[64];
    double v = llvm::cast<FloatExpr>(e)->value;
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    std::string s(buf, res.ptr);
    if (s.find_first_of(".eIn") == std::string::npos)
      s += ".0";
    os << "(float " << s;
    break;
  }
  case Expr::Kind::String:
    os << "(string ";
    str(llvm::cast<StringExpr>(e)->value);
    break;
  case Expr::Kind::Bool:
    os << "(bool " << (llvm::cast<BoolExpr>(e)->value ? "true" : "false");
    break;
  case Expr::Kind::Name:
    os << "(name " << llvm::cast<NameExpr>(e)->name;
    break;
  case Expr::Kind::Member: {
    auto *m = llvm::cast<MemberExpr>(e);
    os << "(member " << m->member;
    at(e->loc);
    os << ' ';
    expr(m->base.get());
    os << ')';
    return;
  }
  case Expr::Kind::Call: {
    auto *c = llvm::cast<CallExpr>(e);
    os << "(call";
    at(e->loc);
    os << ' ';
    expr(c->callee.get());
    for (const Arg &a : c->args) {
      os << ' ';
      if (!a.keyword.empty())
        os << "(kw " << a.keyword << ' ';
      expr(a.value.get());
      if (!a.keyword.empty())
        os << ')';
    }
    os << ')';
    return;
  }
  case Expr::Kind::Binary: {
    auto *b = llvm::cast<BinaryExpr>(e);
    os << '(' << spelling(b->op);
    at(e->loc);
    os << ' ';
    expr(b->lhs.get());
    os << ' ';
    expr(b->rhs.get());
    os << ')';
    return;
  }
  case Expr::Kind::Unary: {
    auto *u = llvm::cast<UnaryExpr>(e);
    os << (u->op == UnaryOp::Neg ? "(neg" : "(not");
    at(e->loc);
    os << ' ';
    expr(u->operand.get());
    os << ')';
    return;
  }
  case Expr::Kind::List:
  case Expr::Kind::Tuple: {
    bool isList = e->getKind() == Expr::Kind::List;
    const auto &elems =
        isList ? llvm::cast<ListExpr>(e)->elements : llvm::cast<TupleExpr>(e)->elements;
    os << (isList ? "(list" : "(tuple");
    at(e->loc);
    for (const ExprPtr &x : elems) {
      os << ' ';
      expr(x.get());
    }
    os << ')';
    return;
  }
  case Expr::Kind::Ellipsis:
    os << "(...";
    break;
  case Expr::Kind::Cond: {
    auto *c = llvm::cast<CondExpr>(e);
    os << "(if";
    at(e->loc);
    os << ' ';
    expr(c->value.get());
    os << ' ';
    expr(c->cond.get());
    if (c->elseValue) {
      os << ' ';
      expr(c->elseValue.get());
    }
    os << ')';
    return;
  }
  case Expr::Kind::Repeat: {
    auto *r = llvm::cast<RepeatExpr>(e);
    os << "(repeat";
    at(e->loc);
    os << ' ';
    expr(r->count.get());
    os << ' ';
    expr(r->layer.get());
    os << ')';
    return;
  }
  case Expr::Kind::Pair: {
    auto *p = llvm::cast<PairExpr>(e);
    os << "(pair " << (p->sep == PairSep::Colon ? ":" : "->");
    at(e->loc);
    os << ' ';
    expr(p->first.get());
    os << ' ';
    expr(p->second.get());
    os << ')';
    return;
  }
  }
  at(e->loc);
  os << ')';
}

void Dumper::type(const TensorTypeExpr &t) {
  os << "(type";
  if (!t.dtype.empty())
    os << ' ' << t.dtype;
  at(t.loc);
  for (const ExprPtr &d : t.dims) {
    os << ' ';
    expr(d.get());
  }
  os << ')';
}

void Dumper::setting(const Setting &s, unsigned indent) {
  line(indent);
  os << "(set " << s.key;
  at(s.loc);
  os << ' ';
  expr(s.value.get());
  os << ')';
}

void Dumper::stmts(const std::vector<StmtPtr> &body, unsigned indent) {
  for (const StmtPtr &s : body)
    if (s)
      stmt(*s, indent);
}

void Dumper::stmt(const Stmt &s, unsigned indent) {
  line(indent);
  switch (s.getKind()) {
  case Stmt::Kind::Assign: {
    auto &a = llvm::cast<AssignStmt>(s);
    os << "(assign";
    for (size_t i = 0; i < a.targets.size(); ++i)
      os << (i ? ", " : " ") << a.targets[i];
    at(s.loc);
    os << ' ';
    expr(a.value.get());
    os << ')';
    return;
  }
  case Stmt::Kind::Return: {
    auto &r = llvm::cast<ReturnStmt>(s);
    os << "(return";
    at(s.loc);
    for (const ExprPtr &v : r.values) {
      os << ' ';
      expr(v.get());
    }
    os << ')';
    return;
  }
  case Stmt::Kind::If: {
    auto &i = llvm::cast<IfStmt>(s);
    os << "(if";
    at(s.loc);
    os << ' ';
    expr(i.cond.get());
    line(indent + 1);
    os << "(then";
    stmts(i.thenBody, indent + 2);
    os << ')';
    if (!i.elseBody.empty()) {
      line(indent + 1);
      os << "(else";
      stmts(i.elseBody, indent + 2);
      os << ')';
    }
    os << ')';
    return;
  }
  }
}

void Dumper::layer(const LayerDecl &d, unsigned indent) {
  for (const HyperParam &h : d.hyperParams) {
    line(indent);
    os << "(hyper " << h.name;
    if (!h.type.empty())
      os << " : " << h.type;
    at(h.loc);
    if (h.defaultValue) {
      os << " (default ";
      expr(h.defaultValue.get());
      os << ')';
    }
    os << ')';
  }
  for (const LayerItem &item : d.items) {
    line(indent);
    if (item.kind == LayerItem::Kind::Param && item.param) {
      const ParamDecl &p = *item.param;
      os << (p.frozen ? "(frozen-param " : "(param ") << p.name;
      at(p.loc);
      os << ' ';
      type(p.type);
      if (p.init) {
        os << " (init ";
        expr(p.init.get());
        os << ')';
      }
      if (p.cond) {
        os << " (if ";
        expr(p.cond.get());
        os << ')';
      }
      os << ')';
    } else if (item.binding) {
      os << "(bind " << item.binding->name;
      at(item.binding->loc);
      os << ' ';
      expr(item.binding->value.get());
      os << ')';
    }
  }
  if (const ForwardDecl *f = d.forward.get()) {
    line(indent);
    os << "(forward";
    at(f->loc);
    for (const ForwardInput &in : f->inputs) {
      line(indent + 1);
      os << "(input " << in.name;
      at(in.loc);
      if (in.type) {
        os << ' ';
        type(*in.type);
      }
      os << ')';
    }
    for (const TensorTypeExpr &r : f->results) {
      line(indent + 1);
      os << "(result ";
      type(r);
      os << ')';
    }
    stmts(f->body, indent + 1);
    os << ')';
  }
}

void Dumper::decl(const Decl &d, unsigned indent) {
  line(indent);
  switch (d.getKind()) {
  case Decl::Kind::Import:
    os << "(import ";
    str(llvm::cast<ImportDecl>(d).path);
    at(d.loc);
    break;
  case Decl::Kind::Layer: {
    auto &l = llvm::cast<LayerDecl>(d);
    os << (l.isModel ? "(model " : "(layer ") << d.name;
    at(d.loc);
    layer(l, indent + 1);
    break;
  }
  case Decl::Kind::ModelAlias:
    os << "(model-alias " << d.name;
    at(d.loc);
    os << ' ';
    call(llvm::cast<ModelAliasDecl>(d).target.get());
    break;
  case Decl::Kind::Job: {
    auto &j = llvm::cast<JobDecl>(d);
    os << '(' << spelling(j.jobKind) << ' ' << d.name;
    at(d.loc);
    os << " (for ";
    call(j.model.get());
    os << ')';
    if (j.from) {
      os << " (from ";
      str(*j.from);
      at(j.fromLoc);
      os << ')';
    }
    if (!j.recipe.empty()) {
      os << " (with " << j.recipe;
      at(j.recipeLoc);
      os << ')';
    }
    for (const Setting &s : j.settings)
      setting(s, indent + 1);
    break;
  }
  case Decl::Kind::Template:
    os << "(template " << d.name;
    at(d.loc);
    os << ' ';
    str(llvm::cast<TemplateDecl>(d).text);
    break;
  case Decl::Kind::Verbalizer:
    os << "(verbalizer " << d.name;
    at(d.loc);
    for (const VerbalizerDecl::Label &l : llvm::cast<VerbalizerDecl>(d).labels) {
      line(indent + 1);
      os << (l.option ? "(option " : "(label ") << l.name;
      at(l.loc);
      if (l.option)
        os << ' ' << *l.option;
      for (const std::string &w : l.words) {
        os << ' ';
        str(w);
      }
      os << ')';
    }
    break;
  case Decl::Kind::Recipe:
    os << "(recipe " << d.name;
    at(d.loc);
    for (const Directive &dir : llvm::cast<RecipeDecl>(d).directives) {
      line(indent + 1);
      os << "(directive " << dir.verb;
      at(dir.loc);
      if (dir.fromModel) {
        os << " (from ";
        call(dir.fromModel.get());
        if (dir.fromPath) {
          os << " @ ";
          str(*dir.fromPath);
        }
        os << ')';
      }
      for (const ExprPtr &a : dir.args) {
        os << ' ';
        expr(a.get());
      }
      if (dir.on) {
        os << " (on ";
        expr(dir.on.get());
        os << ')';
      }
      for (const Setting &s : dir.settings)
        setting(s, indent + 2);
      os << ')';
    }
    break;
  case Decl::Kind::Checkpoint: {
    auto &c = llvm::cast<CheckpointDecl>(d);
    os << "(checkpoint " << d.name;
    at(d.loc);
    os << " (for " << c.model;
    at(c.modelLoc);
    os << ')';
    for (const NameRule &r : c.rules) {
      line(indent + 1);
      os << "(rule ";
      str(r.external);
      at(r.loc);
      os << ' ';
      expr(r.value.get());
      if (r.cond) {
        os << " (if ";
        expr(r.cond.get());
        os << ')';
      }
      os << ')';
    }
    break;
  }
  }
  os << ')';
}

void Dumper::file(const File &f, const std::string &path) {
  os << "(file ";
  str(path);
  for (const DeclPtr &d : f.decls)
    if (d)
      decl(*d, 1);
  os << ")\n";
}

} // namespace

void dump(const File &file, const SourceManager &sources, std::ostream &os) {
  std::string path = file.fileId < sources.numFiles() ? sources.path(file.fileId) : "";
  Dumper(os).file(file, path);
}

} // namespace bmb::ast
