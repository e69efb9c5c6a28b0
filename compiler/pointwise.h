// Listing 6.1's `pointwise` and the pieces the lowering rules (ops.cpp) build
// with: the type promotion of 6.2, constants of a compute type, a lambda
// builder, broadcast loaders, views and casts. Internal to the compiler
// library.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/ops.h"
#include "semantics/views.h"

namespace stax::compiler::detail {

/// A user error in the node being lowered (throws NodeError).
[[noreturn]] void fail(const std::string& message);

/// The index variables' names of a rank-n view: i0, i1, ...
std::vector<std::string> var_names(size_t n);
sem::Expr view_of(const sem::Expr& src, const sem::Shape& shape, std::vector<sem::IExpr> exprs);
/// The view a views.h expansion describes (its message is the node's error);
/// `src` itself when the view is the identity.
sem::Expr view_of(const sem::Expr& src, const sem::ViewResult& r);

/// 6.2's default promotion: the common type of the tensors; a scalar of a
/// higher category (bool < integer < float) gives that category's default type.
sem::DType promote(const std::vector<sem::DType>& tensors, const std::vector<nlohmann::json>& scalars);
sem::Const const_of(double v, sem::DType tag);
/// A JSON literal (number, bool, "inf", "-inf", "nan") as a constant of `tag`.
sem::Const const_of(const nlohmann::json& j, sem::DType tag);

/// Builds the flat SSA lambda of a pointwise op's body (the parser's
/// conventions: constants take the tag of the operation they feed, half tags
/// compute in f32); parameters are declared in operand order. (Not
/// xform::reassoc::LambdaBuilder, which re-emits an existing lambda in the
/// parser's instruction order.)
struct BodyBuilder {
  sem::Lambda lam;
  int32_t push(sem::Instr in);
  sem::DType tag(int32_t x) const { return lam.code[size_t(x)].type; }
  int32_t param(sem::DType t);
  int32_t konst(const sem::Const& c);
  int32_t op(sem::ScalarOp o, std::vector<int32_t> xs);
  int32_t cast(int32_t x, sem::DType to);
};

sem::Shape broadcast_shapes(const sem::Shape& a, const sem::Shape& b);
/// Listing 6.1's _broadcast_loader: a view reading x at the broadcast index.
sem::Expr broadcast_to(const sem::Expr& x, const sem::Shape& target);

/// How a pointwise op promotes (6.2): the common type; integers to float
/// (div, sqrt, exp, ...); comparisons compute in the common type and give bool.
enum class Promo { Default, IntToFloat, Compare };

/// An operand of a pointwise op: a tensor expression or a literal.
struct Operand {
  sem::Expr tensor;
  nlohmann::json literal;
};

/// The body of a pointwise op over the loaded operand values, in the compute type.
using Body = std::function<int32_t(BodyBuilder&, const std::vector<int32_t>&, sem::DType)>;

/// Listing 6.1: the output range by broadcasting, a loader per operand, the
/// body applied to the loaded values in the common compute type.
sem::Expr pointwise(const std::vector<Operand>& ops, Promo promo, const Body& body);
sem::Expr cast_to(const sem::Expr& x, sem::DType t);

}  // namespace stax::compiler::detail
