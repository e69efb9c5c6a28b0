// Lowering rules of the basis operators (§6.2, Table 6.1): each node
// becomes a core-language expression over the expressions of its operands.
// Internal to the compiler library.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "compiler/graph.h"
#include "semantics/ir.h"

namespace stax::compiler::detail {

/// A user error in one node; lower_graph turns it into a GraphError.
struct NodeError {
  std::string message;
};

/// The shortest fold of a product whose operands the CPU backend packs
/// (its row blocks' kMinRowFold, backends/cpu/kernel_spec.cpp).
inline constexpr int64_t kMinPackedFold = 32;

/// What a rule may ask of the graph interpreter.
struct RuleEnv {
  /// The expression of a referenced input or node: its name when it is in
  /// memory, else its (inlined) expression.
  std::function<sem::Expr(const std::string&)> ref;
  /// The name of a referenced value in memory, realizing it if needed
  /// (`why`: the reason printed with the decision).
  std::function<std::string(const std::string&, const std::string& why)> in_memory;
  /// Whether the referenced value is already in memory.
  std::function<bool(const std::string&)> is_realized;
  /// The longest fold of a matrix product (with an even number of rows and
  /// a fold of kMinPackedFold or more) whose second operand the device's
  /// code generator packs itself, a column block at a time into contiguous
  /// scratch (the CPU backend's row blocks: fold x lanes <= 65,536
  /// elements, lanes 16 with AVX2 and 64 with AVX-512, so 1,024 on either;
  /// backends/cpu/kernel_spec.cpp); 0 when it packs none.
  int64_t max_packed_fold = 0;
};

/// Lowers one basis node by its rule in the lowering table (ops.cpp).
/// Throws NodeError.
sem::Expr lower_node(const Node& n, const RuleEnv& env);

/// The index expression an integer tensor expression computes at the
/// indices `vars` of its own domain, when it is built from iota, constants,
/// views and +, -, *c, //c, %c only and never leaves its dtype (Example
/// 6.3: arange(128)*3 % 128 is `(3*i) % 128`). index_expr.cpp.
std::optional<sem::IExpr> as_index_expr(const sem::Expr& e, const std::vector<sem::IExpr>& vars, const sem::Shape& box);

}  // namespace stax::compiler::detail
