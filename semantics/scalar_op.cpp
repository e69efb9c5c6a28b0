#include "semantics/scalar_op.h"

#include <vector>

namespace stax::sem {

namespace {
enum class Cls { Num, Flt, Any, Bool };
enum class Res { Same, ToBool };
struct OpInfo {
  std::string_view name;
  int arity;
  Cls cls;
  Res res;
};
constexpr OpInfo kOps[] = {
#define X(name, text, arity, cls, res) {text, arity, Cls::cls, Res::res},
    STAX_SCALAR_OPS(X)
#undef X
};
const OpInfo& info(ScalarOp op) { return kOps[static_cast<int>(op)]; }

bool accepts(Cls c, DType t) {
  switch (c) {
    case Cls::Num: return is_float(t) || is_int(t);
    case Cls::Flt: return is_float(t);
    case Cls::Any: return true;
    case Cls::Bool: return is_bool(t);
  }
  return false;
}
std::string_view cls_text(Cls c) {
  switch (c) {
    case Cls::Num: return "an int or float operand";
    case Cls::Flt: return "a float operand";
    case Cls::Any: return "operands";
    case Cls::Bool: return "bool operands";
  }
  return "";
}
}  // namespace

std::string_view op_name(ScalarOp op) { return info(op).name; }

std::optional<ScalarOp> op_from_name(std::string_view s) {
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (kOps[i].name == s) return static_cast<ScalarOp>(i);
  return std::nullopt;
}

int op_arity(ScalarOp op) { return info(op).arity; }

bool op_may_fail(ScalarOp op, DType t) {
  return is_int(t) && (op == ScalarOp::Div || op == ScalarOp::Mod || op == ScalarOp::FloorDiv);
}

OpTyping type_op(ScalarOp op, std::span<const DType> args) {
  const OpInfo& oi = info(op);
  OpTyping r;
  if (int(args.size()) != oi.arity) {
    r.error = std::string(oi.name) + " expects " + std::to_string(oi.arity) + " operand(s), got " +
              std::to_string(args.size());
    return r;
  }
  std::span<const DType> vals = args;
  if (op == ScalarOp::Select) {
    if (!is_bool(args[0])) {
      r.error = "select expects a bool condition, got " + std::string(dtype_name(args[0]));
      return r;
    }
    vals = args.subspan(1);
  }
  for (DType t : vals) {
    if (t != vals[0]) {
      r.error = std::string(oi.name) + " expects operands of one dtype, got " +
                std::string(dtype_name(vals[0])) + " and " + std::string(dtype_name(t)) +
                " (insert a cast)";
      return r;
    }
    if (!accepts(oi.cls, t)) {
      r.error = std::string(oi.name) + " expects " + std::string(cls_text(oi.cls)) + ", got " +
                std::string(dtype_name(t));
      return r;
    }
  }
  r.result = oi.res == Res::ToBool ? DType::Bool : vals[0];
  return r;
}

}  // namespace stax::sem
