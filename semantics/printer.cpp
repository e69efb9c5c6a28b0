#include "semantics/printer.h"

#include <functional>
#include <map>

#include "semantics/index_eval.h"
#include "semantics/lambda_eval.h"
#include "semantics/views.h"

namespace stax::sem {

namespace {

/// A lambda that is a single op over its parameters in order prints as the op.
std::optional<std::string> as_plain_op(const Lambda& f) {
  size_t n = f.param_types.size();
  if (f.code.size() != n + 1) return std::nullopt;
  for (size_t i = 0; i < n; ++i)
    if (f.code[i].kind != Instr::Kind::Param || f.code[i].a != int(i)) return std::nullopt;
  const Instr& last = f.code.back();
  if (last.kind != Instr::Kind::Op || op_arity(last.op) != int(n)) return std::nullopt;
  const int32_t idx[3] = {last.a, last.b, last.c};
  for (size_t i = 0; i < n; ++i)
    if (idx[i] != int(i)) return std::nullopt;
  return std::string(op_name(last.op));
}

class Printer {
 public:
  explicit Printer(const Program* prog) : prog_(prog) {}

  std::string expr(const Expr& e) {
    return std::visit(
        [&](const auto& x) -> std::string {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, NameE>) {
            return x.name;
          } else if constexpr (std::is_same_v<T, MapE>) {
            std::string s = "map(" + print_lambda(x.fn);
            for (const Expr& a : x.args) s += ", " + expr(a);
            return s + ")";
          } else if constexpr (std::is_same_v<T, ViewE>) {
            auto sugar = recognise_view_sugar(x.src->type.shape, e->type.shape, x.map,
                                              [&](const std::string& n) { return shape_of(n); });
            if (sugar) return sugar->keyword + "(" + expr(x.src) + sugar->rest;
            std::string s = "view(" + expr(x.src) + ", " + shape_text(e->type.shape) + ", (";
            for (size_t i = 0; i < x.map.vars.size(); ++i) s += (i ? ", " : "") + x.map.vars[i];
            s += ") -> (";
            for (size_t i = 0; i < x.map.exprs.size(); ++i)
              s += (i ? ", " : "") + print_iexpr(x.map.exprs[i], x.map.vars);
            return s + "))";
          } else if constexpr (std::is_same_v<T, RedE>) {
            return "red(" + std::string(red_name(x.op)) + ", " + const_to_string(x.init) + ", " +
                   shape_text(x.extents) + ", " + expr(x.src) + ")";
          } else if constexpr (std::is_same_v<T, IotaE>) {
            return "iota(" + std::string(dtype_name(e->type.dtype)) + ", " + shape_text(e->type.shape) + ", " +
                   std::to_string(x.dim) + ")";
          } else if constexpr (std::is_same_v<T, RandE>) {
            return "rand(" + std::string(dtype_name(e->type.dtype)) + ", " + shape_text(e->type.shape) + ", " +
                   std::to_string(x.key) + ")";
          } else if constexpr (std::is_same_v<T, FullE>) {
            return "full(" + type_str(e->type) + ", " + const_to_string(x.value) + ")";
          } else {
            local_[x.name].push_back(&x.value->type.shape);
            std::string s = "let " + x.name + " = " + expr(x.value) + " in " + expr(x.body);
            local_[x.name].pop_back();
            return s;
          }
        },
        e->p);
  }

 private:
  const Shape* shape_of(const std::string& n) {
    auto it = local_.find(n);
    if (it != local_.end() && !it->second.empty()) return it->second.back();
    if (!prog_) return nullptr;
    const TensorType* t = prog_->type_of(n);
    return t ? &t->shape : nullptr;
  }
  const Program* prog_;
  std::map<std::string, std::vector<const Shape*>> local_;
};

}  // namespace

namespace {

/// The Print domain of index expressions: the text, and whether it must be
/// parenthesised as an operand of *, // and % (anything but an atom) or as
/// the right operand of + and - (a sum or difference).
struct PrintIndexDomain {
  struct Value {
    std::string text;
    bool atomic = true, additive = false;
  };
  const std::vector<std::string>& vars;

  static std::string wrap(const Value& v) { return v.atomic ? v.text : "(" + v.text + ")"; }
  Value constant(const IExprNode&, int64_t c) { return {std::to_string(c)}; }
  Value var(const IExprNode&, int64_t k) {
    return {(k >= 0 && size_t(k) < vars.size()) ? vars[size_t(k)] : "v" + std::to_string(k)};
  }
  Value add(const IExprNode&, Value a, Value b) { return sum(std::move(a), " + ", b); }
  Value sub(const IExprNode&, Value a, Value b) { return sum(std::move(a), " - ", b); }
  static Value sum(Value a, const char* op, const Value& b) {
    a.text += op;
    a.text += b.additive ? "(" + b.text + ")" : b.text;
    return {std::move(a.text), false, true};
  }
  Value mul(const IExprNode&, int64_t c, Value a) { return {std::to_string(c) + "*" + wrap(a), false}; }
  Value floordiv(const IExprNode&, Value a, int64_t c) { return {wrap(a) + " // " + std::to_string(c), false}; }
  Value mod(const IExprNode&, Value a, int64_t c) { return {wrap(a) + " % " + std::to_string(c), false}; }
  template <class F>
  Value load(const IExprNode& e, F&& arg) {
    std::string s = "load(" + e.name;
    for (size_t k = 0; k < e.args.size(); ++k) s += ", " + arg(k).text;
    return {s + ")"};
  }
};

}  // namespace

std::string print_iexpr(const IExprNode& e, const std::vector<std::string>& vars) {
  PrintIndexDomain dom{vars};
  return eval_iexpr(e, dom).text;
}

std::string print_iexpr(const IExpr& e, const std::vector<std::string>& vars) { return print_iexpr(*e, vars); }

std::string print_lambda(const Lambda& f) {
  if (auto op = as_plain_op(f)) return *op;
  std::vector<std::string> names = f.params;
  for (size_t i = names.size(); i < f.param_types.size(); ++i) names.push_back("a" + std::to_string(i));
  PrintDomain dom{&names};
  std::vector<std::string> params(names.size());
  std::vector<std::string> regs;
  std::string body = eval_lambda(f, dom, std::span<const std::string>(params), regs);
  std::string s = "fn(";
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s + ") => " + body;
}

std::string print_expr(const Expr& e, const Program* scope) { return Printer(scope).expr(e); }

std::string print_program(const Program& p) {
  std::string s;
  for (const Input& in : p.inputs) s += "input " + in.name + " : " + type_str(in.type) + "\n";
  for (const Binding& b : p.bindings)
    s += "let " + b.name + " : " + type_str(b.expr->type) + " = " + print_expr(b.expr, &p) + "\n";
  if (!p.outputs.empty()) {
    s += "output ";
    for (size_t i = 0; i < p.outputs.size(); ++i) s += (i ? ", " : "") + p.outputs[i];
    s += "\n";
  }
  return s;
}

}  // namespace stax::sem
