// Theorem 6.1 read left to right: let y = e; b  ==  b[e/y].
#include <map>
#include <set>

#include "semantics/expr_util.h"
#include "semantics/printer.h"
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
  // Every binding with one operand use, in order. Inlining b into its user
  // moves b's uses into the user, so the counts, taken once, stay right; each
  // name's users are kept up to date instead of rescanning the program (a
  // chain of n bindings took time quadratic in n).
  size_t n = cur.bindings.size();
  std::map<std::string, Uses> uses;
  std::vector<std::map<std::string, Uses>> refs(n);
  std::map<std::string, std::set<size_t>> users;
  for (size_t j = 0; j < n; ++j) {
    count_all_uses_in(cur.bindings[j].expr, refs[j]);
    for (const auto& [name, u] : refs[j]) {
      Uses& t = uses[name];
      t.operand += u.operand;
      t.load += u.load;
      if (u.operand) users[name].insert(j);
    }
  }
  for (const std::string& o : cur.outputs) ++uses[o].output;
  std::vector<bool> gone(n, false);
  for (size_t k = 0; k < n; ++k) {
    const Binding& b = cur.bindings[k];
    const Uses& u = uses[b.name];
    if (u.output || u.load || u.operand != 1 || users[b.name].size() != 1) continue;
    size_t j = *users[b.name].begin();
    if (expr_depth(b.expr) + expr_depth(cur.bindings[j].expr) > kMaxExprDepth || !ctx.allow()) continue;
    ctx.note("inline: " + b.name);
    cur.bindings[j].expr = substitute(cur.bindings[j].expr, b.name, b.expr);
    gone[k] = true;
    refs[j].erase(b.name);
    for (const auto& [name, ru] : refs[k]) {
      Uses& t = refs[j][name];
      t.operand += ru.operand;
      t.load += ru.load;
      if (ru.operand) {
        users[name].erase(k);
        users[name].insert(j);
      }
    }
  }
  std::vector<Binding> kept;
  for (size_t k = 0; k < n; ++k)
    if (!gone[k]) kept.push_back(std::move(cur.bindings[k]));
  cur.bindings = std::move(kept);
  return {cur, SemClass::Exact};
}

}  // namespace stax::xform
