// Theorem 6.1 read left to right: let y = e; b  ==  b[e/y].
#include "semantics/printer.h"
#include "transforms/expr_util.h"
#include "transforms/passes.h"

namespace stax::xform {

using namespace sem;

namespace {

bool inlinable(const Program& p, const Binding& b, std::string* why) {
  Uses u = count_uses(p, b.name);
  if (u.output) return *why = "'" + b.name + "' is an output", false;
  if (u.load) return *why = "'" + b.name + "' is read by an indirect load(...)", false;
  if (u.operand == 0) return *why = "'" + b.name + "' has no use (that is dce)", false;
  return true;
}

/// Whether substituting binding k into its users keeps every expression
/// within kMaxExprDepth levels (a long chain would otherwise nest past what
/// the printed program can be read back with).
bool keeps_depth(const Program& p, size_t k) {
  const Binding& b = p.bindings[k];
  int db = expr_depth(b.expr);
  for (const Binding& o : p.bindings) {
    Uses u;
    count_uses_in(o.expr, b.name, u);
    if (u.operand && db + expr_depth(o.expr) > kMaxExprDepth) return false;
  }
  return true;
}

Program inline_one(const Program& p, size_t k) {
  Program r = p;
  const Binding b = p.bindings[k];
  r.bindings.erase(r.bindings.begin() + std::ptrdiff_t(k));
  for (Binding& o : r.bindings) o.expr = substitute(o.expr, b.name, b.expr);
  return r;
}

}  // namespace

Result inline_bindings(const Program& p, const InlineOptions& opt, Context& ctx) {
  Program cur = p;
  if (const auto& name = opt.name) {
    for (size_t k = 0; k < cur.bindings.size(); ++k) {
      if (cur.bindings[k].name != *name) continue;
      std::string why;
      if (!inlinable(cur, cur.bindings[k], &why)) throw TransformError{"inline: cannot inline " + why};
      if (!keeps_depth(cur, k))
        throw TransformError{"inline: inlining '" + *name + "' would nest an expression deeper than " +
                             std::to_string(kMaxExprDepth) + " levels"};
      if (ctx.allow()) {
        ctx.note("inline: " + *name);
        cur = inline_one(cur, k);
      }
      return {cur, SemClass::Exact};
    }
    throw TransformError{"inline: no binding named '" + *name + "'"};
  }
  for (size_t k = 0; k < cur.bindings.size();) {
    std::string why;
    if (inlinable(cur, cur.bindings[k], &why) && count_uses(cur, cur.bindings[k].name).operand == 1 &&
        keeps_depth(cur, k) && ctx.allow()) {
      ctx.note("inline: " + cur.bindings[k].name);
      cur = inline_one(cur, k);
    } else {
      ++k;
    }
  }
  return {cur, SemClass::Exact};
}

}  // namespace stax::xform
