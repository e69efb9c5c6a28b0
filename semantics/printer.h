// The `.stx` text printer (docs/design.md §2). Floats print so they read back to the
// same bits; views print in sugar form where they match one; print(parse(s))
// is a fixed point.
#pragma once

#include <string>

#include "semantics/ir.h"

namespace stax::sem {

std::string print_program(const Program& p);
/// `scope` resolves names (for gather sugar); may be null.
std::string print_expr(const Expr& e, const Program* scope = nullptr);
std::string print_lambda(const Lambda& f);
std::string print_iexpr(const IExpr& e, const std::vector<std::string>& vars);
std::string print_iexpr(const IExprNode& e, const std::vector<std::string>& vars);

}  // namespace stax::sem
