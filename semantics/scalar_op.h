// The scalar op table of the tensor core language (docs/design.md §2, §6.2, 6.7).
// Every op is listed once here; each domain switches over ScalarOp, so adding
// an op breaks the build wherever it must be handled.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "semantics/dtype.h"

namespace stax::sem {

// Operand classes: Num = int or float, Flt = float only, Any = any dtype,
// Bool = bool only. Result: Same = the operand type, ToBool = bool.
#define STAX_SCALAR_OPS(X)                      \
  X(Add, "add", 2, Num, Same)                   \
  X(Sub, "sub", 2, Num, Same)                   \
  X(Mul, "mul", 2, Num, Same)                   \
  X(Div, "div", 2, Num, Same)                   \
  X(Mod, "mod", 2, Num, Same)                   \
  X(FloorDiv, "floordiv", 2, Num, Same)         \
  X(Neg, "neg", 1, Num, Same)                   \
  X(Abs, "abs", 1, Num, Same)                   \
  X(Relu, "relu", 1, Num, Same)                 \
  X(Maximum, "maximum", 2, Num, Same)           \
  X(Minimum, "minimum", 2, Num, Same)           \
  X(Exp, "exp", 1, Flt, Same)                   \
  X(Log, "log", 1, Flt, Same)                   \
  X(Log2, "log2", 1, Flt, Same)                 \
  X(Log10, "log10", 1, Flt, Same)               \
  X(Log1p, "log1p", 1, Flt, Same)               \
  X(Expm1, "expm1", 1, Flt, Same)               \
  X(Tanh, "tanh", 1, Flt, Same)                 \
  X(Sigmoid, "sigmoid", 1, Flt, Same)           \
  X(Sqrt, "sqrt", 1, Flt, Same)                 \
  X(Rsqrt, "rsqrt", 1, Flt, Same)               \
  X(Erf, "erf", 1, Flt, Same)                   \
  X(Sin, "sin", 1, Flt, Same)                   \
  X(Cos, "cos", 1, Flt, Same)                   \
  X(Floor, "floor", 1, Flt, Same)               \
  X(Pow, "pow", 2, Flt, Same)                   \
  X(Eq, "eq", 2, Any, ToBool)                   \
  X(Ne, "ne", 2, Any, ToBool)                   \
  X(Lt, "lt", 2, Num, ToBool)                   \
  X(Le, "le", 2, Num, ToBool)                   \
  X(Gt, "gt", 2, Num, ToBool)                   \
  X(Ge, "ge", 2, Num, ToBool)                   \
  X(And, "logical_and", 2, Bool, Same)          \
  X(Or, "logical_or", 2, Bool, Same)            \
  X(Not, "logical_not", 1, Bool, Same)          \
  X(Select, "select", 3, Any, Same)             \
  X(Fma, "fma", 3, Num, Same)

enum class ScalarOp : uint8_t {
#define X(name, text, arity, cls, res) name,
  STAX_SCALAR_OPS(X)
#undef X
};

std::string_view op_name(ScalarOp op);
std::optional<ScalarOp> op_from_name(std::string_view s);
int op_arity(ScalarOp op);

/// Whether an op may raise ⊥ on a dtype (integer division by zero).
bool op_may_fail(ScalarOp op, DType t);

/// Type rule: the result tag of `op` applied to operands of the given tags, or
/// an error message saying what was expected. `select` takes (bool, T, T).
/// Half tags are kept: a half-tagged result is carried in f32 until a cast or
/// a store rounds it (docs/design.md §2).
struct OpTyping {
  std::optional<DType> result;
  std::string error;
};
OpTyping type_op(ScalarOp op, std::span<const DType> args);

}  // namespace stax::sem
