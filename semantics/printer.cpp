#include "semantics/printer.h"

#include <functional>
#include <map>

#include "semantics/lambda_eval.h"
#include "semantics/views.h"

namespace stax::sem {

namespace {


bool is_atomic(const IExpr& e) {
  return e->kind == IExprNode::Kind::Const || e->kind == IExprNode::Kind::Var || e->kind == IExprNode::Kind::Load;
}

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

std::string print_iexpr(const IExpr& e, const std::vector<std::string>& vars) {
  auto wrap = [&](const IExpr& c) { return is_atomic(c) ? print_iexpr(c, vars) : "(" + print_iexpr(c, vars) + ")"; };
  switch (e->kind) {
    case IExprNode::Kind::Const: return std::to_string(e->value);
    case IExprNode::Kind::Var:
      return (e->value >= 0 && size_t(e->value) < vars.size()) ? vars[size_t(e->value)]
                                                                : "v" + std::to_string(e->value);
    case IExprNode::Kind::Add:
    case IExprNode::Kind::Sub: {
      const IExpr& r = e->args[1];
      bool paren = r->kind == IExprNode::Kind::Add || r->kind == IExprNode::Kind::Sub;
      std::string rs = print_iexpr(r, vars);
      return print_iexpr(e->args[0], vars) + (e->kind == IExprNode::Kind::Add ? " + " : " - ") +
             (paren ? "(" + rs + ")" : rs);
    }
    case IExprNode::Kind::Mul: return std::to_string(e->value) + "*" + wrap(e->args[0]);
    case IExprNode::Kind::FloorDiv: return wrap(e->args[0]) + " // " + std::to_string(e->value);
    case IExprNode::Kind::Mod: return wrap(e->args[0]) + " % " + std::to_string(e->value);
    case IExprNode::Kind::Load: {
      std::string s = "load(" + e->name;
      for (const IExpr& a : e->args) s += ", " + print_iexpr(a, vars);
      return s + ")";
    }
  }
  return "?";
}

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
