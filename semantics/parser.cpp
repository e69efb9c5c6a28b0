#include "semantics/parser.h"

#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>
#include <sstream>

#include "semantics/lexer.h"
#include "semantics/views.h"

namespace stax::sem {

namespace {

using detail::Lexer;
using detail::Tok;
using detail::Token;

constexpr int kMaxDepth = 256;

// ------------------------------------------------------- untyped lambdas

struct SNode {
  enum class Kind { Const, Param, Op, Cast } kind;
  std::string text;  // const literal
  int param = -1;
  ScalarOp op = ScalarOp::Add;
  DType cast_to = DType::F32;
  std::vector<SNode> args;
  SourceLoc loc;
};

struct ULambda {
  std::vector<std::string> params;
  SNode body;
  bool plain_op = false;
  ScalarOp op = ScalarOp::Add;
  SourceLoc loc;
};

// ------------------------------------------------------------------ parser

}  // namespace

bool is_reserved_word(const std::string& s) {
  static const std::set<std::string> kw = {"input", "let", "output", "in", "map", "view", "red", "iota", "full",
                                           "fn", "load", "cast", "rand", "permute", "slice", "expand", "reshape",
                                           "unsqueeze", "squeeze", "gather", "nan", "inf", "true", "false"};
  return kw.count(s) || dtype_from_name(s).has_value();
}

namespace {

class Parser {
 public:
  Parser(std::vector<Token> toks, std::string file) : t_(std::move(toks)) { prog_.file = std::move(file); }

  Program run() {
    while (peek().kind != Tok::End) stmt();
    if (prog_.outputs.empty()) throw DiagError{peek().loc, "program has no 'output' statement"};
    return std::move(prog_);
  }

 private:
  // -- token helpers
  const Token& peek(size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  Token next() {
    Token t = peek();
    if (p_ < t_.size() - 1) ++p_;
    return t;
  }
  bool is(const char* punct) const { return peek().kind == Tok::Punct && peek().text == punct; }
  bool is_ident(const char* w) const { return peek().kind == Tok::Ident && peek().text == w; }
  static std::string describe(const Token& t) {
    if (t.kind == Tok::End) return "end of input";
    return "'" + t.text + "'";
  }
  [[noreturn]] void fail(const Token& t, const std::string& expected) {
    throw DiagError{t.loc, "expected " + expected + ", got " + describe(t)};
  }
  void expect(const char* punct) {
    if (!is(punct)) fail(peek(), std::string("'") + punct + "'");
    next();
  }
  void expect_word(const char* w) {
    if (!is_ident(w)) fail(peek(), std::string("'") + w + "'");
    next();
  }
  Token name(const char* what) {
    if (peek().kind != Tok::Ident || is_reserved_word(peek().text)) fail(peek(), what);
    return next();
  }
  int64_t integer(const char* what) {
    bool neg = false;
    Token first = peek();
    if (is("-")) {
      next();
      neg = true;
    }
    if (peek().kind != Tok::Int) fail(first, what);
    Token t = next();
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || ptr != t.text.data() + t.text.size())
      throw DiagError{t.loc, "integer '" + t.text + "' is out of range"};
    return neg ? -v : v;
  }
  DType dtype() {
    Token t = peek();
    if (t.kind == Tok::Ident)
      if (auto d = dtype_from_name(t.text)) {
        next();
        return *d;
      }
    fail(t, "a dtype (f32, f64, f16, bf16, i32, i64, bool)");
  }
  std::vector<int64_t> int_list(const char* what) {
    expect("[");
    std::vector<int64_t> v;
    if (!is("]")) {
      v.push_back(integer(what));
      while (is(",")) {
        next();
        v.push_back(integer(what));
      }
    }
    expect("]");
    return v;
  }
  Shape shape() {
    Token at = peek();
    Shape s = int_list("an extent");
    check_extents(at.loc, s);
    return s;
  }
  // Zero extents count as 1, so that strides of empty tensors cannot overflow either.
  static void check_extents(const SourceLoc& at, const Shape& s) {
    for (int64_t d : s)
      if (d < 0) throw DiagError{at, "extents must be non-negative, got " + std::to_string(d)};
    if (too_many_elements(s)) throw DiagError{at, "shape has more than 2^48 elements"};
  }
  TensorType type() {
    TensorType t;
    t.dtype = dtype();
    t.shape = shape();
    return t;
  }
  std::string const_text() {
    std::string s;
    Token first = peek();
    if (is("-")) {
      next();
      s = "-";
    }
    Token t = peek();
    if (t.kind == Tok::Int || t.kind == Tok::Float || (t.kind == Tok::Ident && (t.text == "nan" || t.text == "inf")) ||
        (s.empty() && t.kind == Tok::Ident && (t.text == "true" || t.text == "false"))) {
      next();
      return s + t.text;
    }
    fail(first, "a constant");
  }
  Const typed_const(const Token& at, const std::string& text, DType dt) {
    auto r = const_from_literal(text, dt);
    if (auto* msg = std::get_if<std::string>(&r)) throw DiagError{at.loc, *msg};
    return std::get<Const>(r);
  }

  // -- environment
  const TensorType* lookup(const std::string& n) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (it->first == n) return &it->second;
    auto it = globals_.find(n);
    return it == globals_.end() ? nullptr : &it->second;
  }
  void declare_global(const Token& t) {
    if (globals_.count(t.text)) throw DiagError{t.loc, "'" + t.text + "' is already defined"};
  }

  // -- statements
  void stmt() {
    Token kw = peek();
    if (is_ident("input")) {
      next();
      Token n = name("an input name");
      declare_global(n);
      // The printer lists inputs first, so an input must not reuse an earlier let-in name.
      if (let_names_.count(n.text)) throw DiagError{n.loc, "'" + n.text + "' is already defined as a let-in name"};
      expect(":");
      prog_.inputs.push_back({n.text, type(), n.loc});
      globals_.emplace(n.text, prog_.inputs.back().type);
    } else if (is_ident("let")) {
      next();
      Token n = name("a binding name");
      declare_global(n);
      std::optional<TensorType> declared;
      Token at = peek();
      if (is(":")) {
        next();
        at = peek();
        declared = type();
      }
      expect("=");
      Expr e = expr(0);
      if (declared && !(*declared == e->type))
        throw DiagError{at.loc, "binding '" + n.text + "' is declared " + type_str(*declared) + " but its value is " +
                                    type_str(e->type)};
      prog_.bindings.push_back({n.text, e, n.loc});
      globals_.emplace(n.text, e->type);
    } else if (is_ident("output")) {
      next();
      for (;;) {
        Token n = name("an output name");
        if (!globals_.count(n.text)) throw DiagError{n.loc, "output '" + n.text + "' is not defined"};
        if (!outputs_seen_.insert(n.text).second) throw DiagError{n.loc, "output '" + n.text + "' is listed twice"};
        prog_.outputs.push_back(n.text);
        if (!is(",")) break;
        next();
      }
    } else {
      fail(kw, "'input', 'let' or 'output'");
    }
  }

  // -- tensor expressions
  Expr expr(int depth) {
    if (depth > kMaxDepth) throw DiagError{peek().loc, "expression nested deeper than 256 levels"};
    Token t = peek();
    if (t.kind != Tok::Ident) fail(t, "an expression");
    const std::string& w = t.text;
    if (w == "map") return map_expr(depth);
    if (w == "view") return view_expr(depth);
    if (w == "red") return red_expr(depth);
    if (w == "iota") return iota_expr();
    if (w == "full") return full_expr();
    if (w == "rand") return rand_expr();
    if (w == "let") return let_expr(depth);
    if (w == "permute" || w == "slice" || w == "expand" || w == "reshape" || w == "unsqueeze" || w == "squeeze" ||
        w == "gather")
      return sugar_expr(depth);
    Token n = name("an expression");
    const TensorType* ty = lookup(n.text);
    if (!ty) throw DiagError{n.loc, "unknown name '" + n.text + "'"};
    return make_expr(*ty, NameE{n.text}, n.loc);
  }

  Expr map_expr(int depth) {
    Token kw = next();
    expect("(");
    ULambda f = func(depth);
    std::vector<Expr> args;
    std::vector<SourceLoc> locs;
    while (is(",")) {
      next();
      locs.push_back(peek().loc);
      args.push_back(expr(depth + 1));
    }
    expect(")");
    if (args.empty()) throw DiagError{kw.loc, "map expects at least one operand"};
    for (size_t k = 1; k < args.size(); ++k)
      if (args[k]->type.shape != args[0]->type.shape)
        throw DiagError{locs[k], "map operands share one domain: expected shape " + type_str({args[0]->type.dtype, args[0]->type.shape}).substr(dtype_name(args[0]->type.dtype).size()) +
                                     ", got " + type_str(args[k]->type)};
    std::vector<DType> pt;
    for (const Expr& a : args) pt.push_back(a->type.dtype);
    Lambda lam = type_lambda(f, pt);
    TensorType ty{lam.result_type(), args[0]->type.shape};
    return make_expr(ty, MapE{std::move(lam), std::move(args)}, kw.loc);
  }

  ULambda func(int depth) {
    ULambda f;
    f.loc = peek().loc;
    if (is_ident("fn")) {
      next();
      expect("(");
      f.params.push_back(name("a parameter name").text);
      while (is(",")) {
        next();
        Token p = name("a parameter name");
        for (const auto& q : f.params)
          if (q == p.text) throw DiagError{p.loc, "parameter '" + p.text + "' is listed twice"};
        f.params.push_back(p.text);
      }
      expect(")");
      expect("=>");
      f.body = sexpr(f.params, depth + 1);
      return f;
    }
    Token t = peek();
    if (t.kind == Tok::Ident)
      if (auto op = op_from_name(t.text)) {
        next();
        f.plain_op = true;
        f.op = *op;
        return f;
      }
    fail(t, "a scalar op name or 'fn(...) => ...'");
  }

  SNode sexpr(const std::vector<std::string>& params, int depth) {
    if (depth > kMaxDepth) throw DiagError{peek().loc, "expression nested deeper than 256 levels"};
    SNode n;
    n.loc = peek().loc;
    Token t = peek();
    if (t.kind == Tok::Int || t.kind == Tok::Float || is("-") ||
        (t.kind == Tok::Ident && (t.text == "nan" || t.text == "inf" || t.text == "true" || t.text == "false"))) {
      n.kind = SNode::Kind::Const;
      n.text = const_text();
      return n;
    }
    if (t.kind != Tok::Ident) fail(t, "a scalar expression");
    if (t.text == "cast") {
      next();
      expect("(");
      n.kind = SNode::Kind::Cast;
      n.args.push_back(sexpr(params, depth + 1));
      expect(",");
      n.cast_to = dtype();
      expect(")");
      return n;
    }
    if (auto op = op_from_name(t.text); op && peek(1).kind == Tok::Punct && peek(1).text == "(") {
      next();
      next();
      n.kind = SNode::Kind::Op;
      n.op = *op;
      n.args.push_back(sexpr(params, depth + 1));
      while (is(",")) {
        next();
        n.args.push_back(sexpr(params, depth + 1));
      }
      expect(")");
      if (int(n.args.size()) != op_arity(*op))
        throw DiagError{t.loc, std::string(op_name(*op)) + " expects " + std::to_string(op_arity(*op)) +
                                   " operand(s), got " + std::to_string(n.args.size())};
      return n;
    }
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i] == t.text) {
        next();
        n.kind = SNode::Kind::Param;
        n.param = int(i);
        return n;
      }
    if (peek(1).kind == Tok::Punct && peek(1).text == "(") throw DiagError{t.loc, "unknown scalar op '" + t.text + "'"};
    throw DiagError{t.loc, "unknown name '" + t.text + "' in lambda (parameters: " + join(params) + ")"};
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  }

  // Types a lambda against its operand dtypes and flattens it to SSA.
  Lambda type_lambda(const ULambda& f, const std::vector<DType>& pt) {
    Lambda lam;
    lam.param_types = pt;
    if (f.plain_op) {
      if (int(pt.size()) != op_arity(f.op))
        throw DiagError{f.loc, std::string(op_name(f.op)) + " expects " + std::to_string(op_arity(f.op)) +
                                   " operand(s), got " + std::to_string(pt.size())};
      for (size_t i = 0; i < pt.size(); ++i) {
        lam.params.push_back("a" + std::to_string(i));
        lam.code.push_back({Instr::Kind::Param, ScalarOp::Add, pt[i], int32_t(i), -1, -1, {}});
      }
      auto ty = type_op(f.op, pt);
      if (!ty.result) throw DiagError{f.loc, ty.error};
      Instr in{Instr::Kind::Op, f.op, *ty.result, -1, -1, -1, {}};
      int32_t* slots[3] = {&in.a, &in.b, &in.c};
      for (size_t i = 0; i < pt.size(); ++i) *slots[i] = int32_t(i);
      lam.code.push_back(in);
      return lam;
    }
    if (f.params.size() != pt.size())
      throw DiagError{f.loc, "lambda takes " + std::to_string(f.params.size()) + " parameter(s) but map has " +
                                 std::to_string(pt.size()) + " operand(s)"};
    lam.params = f.params;
    if (f.body.kind == SNode::Kind::Const)
      throw DiagError{f.body.loc, "cannot infer the dtype of a constant lambda body; use full(...)"};
    emit(lam, f.body, std::nullopt);
    return lam;
  }

  std::optional<DType> infer(const Lambda& lam, const SNode& n) {
    switch (n.kind) {
      case SNode::Kind::Const: return std::nullopt;
      case SNode::Kind::Param: return lam.param_types[size_t(n.param)];
      case SNode::Kind::Cast: return n.cast_to;
      case SNode::Kind::Op: {
        if (n.op == ScalarOp::Eq || n.op == ScalarOp::Ne || n.op == ScalarOp::Lt || n.op == ScalarOp::Le ||
            n.op == ScalarOp::Gt || n.op == ScalarOp::Ge)
          return DType::Bool;
        // The first typed value operand (select: after the condition). Each
        // operand is inferred at most once, so nested selects stay linear.
        for (size_t k = n.op == ScalarOp::Select ? 1 : 0; k < n.args.size(); ++k)
          if (auto t = infer(lam, n.args[k])) return t;
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  int32_t emit(Lambda& lam, const SNode& n, std::optional<DType> want) {
    Instr in{};
    switch (n.kind) {
      case SNode::Kind::Const: {
        if (!want) throw DiagError{n.loc, "cannot infer the dtype of constant '" + n.text + "'"};
        in.kind = Instr::Kind::Const;
        in.type = *want;
        in.value = typed_const({Tok::Float, n.text, n.loc}, n.text, *want);
        break;
      }
      case SNode::Kind::Param:
        for (size_t i = 0; i < lam.code.size(); ++i)
          if (lam.code[i].kind == Instr::Kind::Param && lam.code[i].a == n.param) return int32_t(i);
        in.kind = Instr::Kind::Param;
        in.type = lam.param_types[size_t(n.param)];
        in.a = n.param;
        break;
      case SNode::Kind::Cast: {
        auto src = infer(lam, n.args[0]);
        if (!src) throw DiagError{n.args[0].loc, "cannot infer the dtype of a constant inside cast; write it in the target dtype"};
        in.kind = Instr::Kind::Cast;
        in.a = emit(lam, n.args[0], src);
        in.type = n.cast_to;
        break;
      }
      case SNode::Kind::Op: {
        // The dtype the constants take: from the typed value operands.
        std::optional<DType> vt;
        size_t first = n.op == ScalarOp::Select ? 1 : 0;
        for (size_t k = first; k < n.args.size() && !vt; ++k) vt = infer(lam, n.args[k]);
        if (!vt) {
          bool logical = n.op == ScalarOp::And || n.op == ScalarOp::Or || n.op == ScalarOp::Not;
          if (logical) vt = DType::Bool;
          else if (want && n.op != ScalarOp::Eq && n.op != ScalarOp::Ne && n.op != ScalarOp::Lt &&
                   n.op != ScalarOp::Le && n.op != ScalarOp::Gt && n.op != ScalarOp::Ge)
            vt = want;
          else
            throw DiagError{n.loc, "cannot infer the dtype of the operands of " + std::string(op_name(n.op))};
        }
        std::vector<int32_t> ids;
        std::vector<DType> ts;
        for (size_t k = 0; k < n.args.size(); ++k) {
          std::optional<DType> w = (n.op == ScalarOp::Select && k == 0) ? std::optional<DType>(DType::Bool) : vt;
          // A constant-only operand (e.g. neg(1.0)) takes the dtype of the other operands.
          if (n.args[k].kind != SNode::Kind::Const)
            if (auto t = infer(lam, n.args[k])) w = t;
          int32_t id = emit(lam, n.args[k], w);
          ids.push_back(id);
          ts.push_back(lam.code[size_t(id)].type);
        }
        auto ty = type_op(n.op, ts);
        if (!ty.result) throw DiagError{n.loc, ty.error};
        in.kind = Instr::Kind::Op;
        in.op = n.op;
        in.type = *ty.result;
        in.a = ids.size() > 0 ? ids[0] : -1;
        in.b = ids.size() > 1 ? ids[1] : -1;
        in.c = ids.size() > 2 ? ids[2] : -1;
        break;
      }
    }
    lam.code.push_back(in);
    return int32_t(lam.code.size() - 1);
  }

  Expr view_expr(int depth) {
    Token kw = next();
    expect("(");
    Expr src = expr(depth + 1);
    expect(",");
    Shape out = shape();
    expect(",");
    Token at = peek();
    IndexMap m = imap(depth);
    expect(")");
    if (m.vars.size() != out.size())
      throw DiagError{at.loc, "index map has " + std::to_string(m.vars.size()) + " variable(s) but the view has rank " +
                                  std::to_string(out.size())};
    if (m.exprs.size() != src->type.shape.size())
      throw DiagError{at.loc, "index map gives " + std::to_string(m.exprs.size()) +
                                  " index expression(s) but the viewed tensor has rank " +
                                  std::to_string(src->type.shape.size())};
    return make_expr({src->type.dtype, out}, ViewE{src, std::move(m)}, kw.loc);
  }

  IndexMap imap(int depth) {
    IndexMap m;
    expect("(");
    if (!is(")")) {
      for (;;) {
        Token v = name("an index variable");
        for (const auto& q : m.vars)
          if (q == v.text) throw DiagError{v.loc, "index variable '" + v.text + "' is listed twice"};
        m.vars.push_back(v.text);
        if (!is(",")) break;
        next();
      }
    }
    expect(")");
    expect("->");
    expect("(");
    if (!is(")")) {
      m.exprs.push_back(iexpr(m.vars, depth + 1));
      while (is(",")) {
        next();
        m.exprs.push_back(iexpr(m.vars, depth + 1));
      }
    }
    expect(")");
    return m;
  }

  IExpr iexpr(const std::vector<std::string>& vars, int depth) {
    if (depth > kMaxDepth) throw DiagError{peek().loc, "index expression nested deeper than 256 levels"};
    IExpr e = iterm(vars, depth);
    while (is("+") || is("-")) {
      // Each term deepens the (left-nested) tree: bound it like nesting.
      if (++depth > kMaxDepth) throw DiagError{peek().loc, "index expression nested deeper than 256 levels"};
      bool add = next().text == "+";
      IExpr r = iterm(vars, depth);
      e = add ? iadd(e, r) : isub(e, r);
    }
    return e;
  }
  IExpr iterm(const std::vector<std::string>& vars, int depth) {
    IExpr e = ifactor(vars, depth);
    while (is("*") || is("//") || is("%")) {
      if (++depth > kMaxDepth) throw DiagError{peek().loc, "index expression nested deeper than 256 levels"};
      Token op = next();
      Token at = peek();
      IExpr r = ifactor(vars, depth);
      if (op.text == "*") {
        if (e->kind == IExprNode::Kind::Const) e = imul(e->value, r);
        else if (r->kind == IExprNode::Kind::Const) e = imul(r->value, e);
        else throw DiagError{op.loc, "'*' in an index expression needs an integer constant on one side"};
      } else {
        if (r->kind != IExprNode::Kind::Const) throw DiagError{at.loc, "expected a positive integer constant after '" + op.text + "'"};
        if (r->value <= 0) throw DiagError{at.loc, "'" + op.text + "' needs a positive constant, got " + std::to_string(r->value)};
        e = op.text == "//" ? ifloordiv(e, r->value) : imod(e, r->value);
      }
    }
    return e;
  }
  IExpr ifactor(const std::vector<std::string>& vars, int depth) {
    Token t = peek();
    if (is("(")) {
      next();
      IExpr e = iexpr(vars, depth + 1);
      expect(")");
      return e;
    }
    if (t.kind == Tok::Int || is("-")) return iconst(integer("an integer"));
    if (t.kind == Tok::Ident && t.text == "load") {
      next();
      expect("(");
      Token n = name("an index tensor name");
      const TensorType* ty = lookup(n.text);
      if (!ty) throw DiagError{n.loc, "unknown name '" + n.text + "'"};
      if (!is_int(ty->dtype))
        throw DiagError{n.loc, "load expects an integer tensor, '" + n.text + "' is " + type_str(*ty)};
      std::vector<IExpr> args;
      while (is(",")) {
        next();
        args.push_back(iexpr(vars, depth + 1));
      }
      expect(")");
      if (args.size() != ty->shape.size())
        throw DiagError{n.loc, "load of '" + n.text + "' expects " + std::to_string(ty->shape.size()) +
                                   " index(es), got " + std::to_string(args.size())};
      auto e = std::const_pointer_cast<IExprNode>(iload(n.text, std::move(args)));
      e->loc = n.loc;
      return e;
    }
    if (t.kind == Tok::Ident) {
      for (size_t i = 0; i < vars.size(); ++i)
        if (vars[i] == t.text) {
          next();
          return ivar(int(i));
        }
      throw DiagError{t.loc, "unknown index variable '" + t.text + "'"};
    }
    fail(t, "an index expression");
  }

  Expr red_expr(int depth) {
    Token kw = next();
    expect("(");
    Token opt = peek();
    std::optional<RedOp> op;
    if (opt.kind == Tok::Ident) op = red_from_name(opt.text);
    if (!op) fail(opt, "a reduction op (sum, prod, max, min, argmax, argmin)");
    next();
    expect(",");
    Token ct = peek();
    std::string init = const_text();
    expect(",");
    Token st = peek();
    Shape ext = shape();
    expect(",");
    Token et = peek();
    Expr src = expr(depth + 1);
    expect(")");
    const Shape& s = src->type.shape;
    if (ext.size() > s.size() || !std::equal(ext.begin(), ext.end(), s.end() - std::ptrdiff_t(ext.size())))
      throw DiagError{st.loc, "red reduces the trailing dims of its operand: expected extents matching the end of " +
                                  type_str(src->type) + ", got " + shape_text(ext)};
    DType dt = src->type.dtype;
    if (is_bool(dt)) throw DiagError{et.loc, std::string("red(") + std::string(red_name(*op)) + ") expects an int or float operand, got " + type_str(src->type)};
    Const c = typed_const(ct, init, dt);
    TensorType ty{red_is_arg(*op) ? DType::I64 : dt, Shape(s.begin(), s.end() - std::ptrdiff_t(ext.size()))};
    return make_expr(ty, RedE{*op, c, ext, src}, kw.loc);
  }

  Expr iota_expr() {
    Token kw = next();
    expect("(");
    Token dt_tok = peek();
    DType dt = dtype();
    if (is_bool(dt)) throw DiagError{dt_tok.loc, "iota expects an int or float dtype, got bool"};
    expect(",");
    Shape s = shape();
    expect(",");
    Token dtk = peek();
    int64_t d = integer("a dim");
    expect(")");
    if (d < 0 || d >= int64_t(s.size()))
      throw DiagError{dtk.loc, "iota dim " + std::to_string(d) + " out of range for rank " + std::to_string(s.size())};
    return make_expr({dt, s}, IotaE{int(d)}, kw.loc);
  }

  Expr rand_expr() {
    Token kw = next();
    expect("(");
    Token dt_tok = peek();
    DType dt = dtype();
    if (!is_float(dt)) throw DiagError{dt_tok.loc, "rand expects a float dtype, got " + std::string(dtype_name(dt))};
    expect(",");
    Shape s = shape();
    expect(",");
    Token kt = peek();
    int64_t key = integer("a key");
    if (key < 0) throw DiagError{kt.loc, "rand key must be non-negative"};
    expect(")");
    return make_expr({dt, s}, RandE{uint64_t(key)}, kw.loc);
  }

  Expr full_expr() {
    Token kw = next();
    expect("(");
    TensorType ty = type();
    expect(",");
    Token ct = peek();
    std::string v = const_text();
    expect(")");
    return make_expr(ty, FullE{typed_const(ct, v, ty.dtype)}, kw.loc);
  }

  Expr let_expr(int depth) {
    Token kw = next();
    Token n = name("a name");
    if (lookup(n.text)) throw DiagError{n.loc, "'" + n.text + "' is already defined"};
    expect("=");
    Expr v = expr(depth + 1);
    expect_word("in");
    let_names_.insert(n.text);
    scopes_.push_back({n.text, v->type});
    Expr body = expr(depth + 1);
    scopes_.pop_back();
    return make_expr(body->type, LetE{n.text, v, body}, kw.loc);
  }

  Expr sugar_expr(int depth) {
    Token kw = next();
    expect("(");
    Expr src = expr(depth + 1);
    expect(",");
    Token at = peek();
    const Shape& s = src->type.shape;
    ViewResult r;
    const std::string& w = kw.text;
    if (w == "permute") {
      r = expand_permute(s, int_list("a dim"));
    } else if (w == "slice") {
      int64_t d = integer("a dim");
      expect(",");
      int64_t a = integer("a start");
      expect(",");
      int64_t b = integer("a stop");
      expect(",");
      int64_t c = integer("a step");
      r = expand_slice(s, d, a, b, c);
    } else if (w == "expand") {
      r = expand_expand(s, int_list("an extent"));
    } else if (w == "reshape") {
      r = expand_reshape(s, int_list("an extent"));
    } else if (w == "unsqueeze") {
      r = expand_unsqueeze(s, integer("a dim"));
    } else if (w == "squeeze") {
      r = expand_squeeze(s, integer("a dim"));
    } else {
      int64_t d = integer("a dim");
      expect(",");
      Token n = name("an index tensor name");
      const TensorType* ty = lookup(n.text);
      if (!ty) throw DiagError{n.loc, "unknown name '" + n.text + "'"};
      if (!is_int(ty->dtype))
        throw DiagError{n.loc, "gather expects an integer index tensor, '" + n.text + "' is " + type_str(*ty)};
      r = expand_gather(s, d, n.text, ty->shape);
    }
    expect(")");
    if (auto* msg = std::get_if<std::string>(&r)) throw DiagError{at.loc, *msg};
    ViewShape v = std::get<ViewShape>(std::move(r));
    check_extents(at.loc, v.shape);  // expand and gather can build shapes no type could declare
    return make_expr({src->type.dtype, v.shape}, ViewE{src, std::move(v.map)}, kw.loc);
  }

  std::vector<Token> t_;
  size_t p_ = 0;
  Program prog_;
  std::vector<std::pair<std::string, TensorType>> scopes_;
  // Program names by name (Program::type_of is a linear scan: quadratic over a long file).
  std::unordered_map<std::string, TensorType> globals_;
  std::set<std::string> outputs_seen_;
  std::set<std::string> let_names_;  ///< every let-in name so far
};

}  // namespace

ParseResult parse_program(std::string_view text, std::string file) {
  try {
    Lexer lx(text);
    Parser p(lx.run(), file);
    return p.run();
  } catch (const DiagError& e) {
    return Diag{file, e.loc, e.message};
  }
}

ParseResult parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Diag{path, {0, 0}, "cannot open file"};
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_program(ss.str(), path);
}

}  // namespace stax::sem
