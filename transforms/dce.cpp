// Theorem 6.2.2: let y = e; b == b when y is not free in b. With ⊥ in the
// language it is a refinement unless e cannot fail (the relation CompCert
// states), so the class of each application is computed, not assumed.
#include <set>

#include "semantics/expr_util.h"
#include "semantics/mutants.h"
#include "transforms/passes.h"

namespace stax::xform {

using namespace sem;

Result dce(const Program& p, Context& ctx) {
  std::set<std::string> live(p.outputs.begin(), p.outputs.end());
  std::vector<bool> keep(p.bindings.size(), false);
  for (size_t k = p.bindings.size(); k-- > 0;) {
    const Binding& b = p.bindings[k];
    if (!live.count(b.name)) continue;
    keep[k] = true;
    std::vector<std::string> names;
    collect_free_names(b.expr, names);
    live.insert(names.begin(), names.end());
  }
  Result r{p, SemClass::Exact};
  r.program.bindings.clear();
  for (size_t k = 0; k < p.bindings.size(); ++k) {
    if (keep[k] || !ctx.allow()) {
      r.program.bindings.push_back(p.bindings[k]);
      continue;
    }
    bool may_fail = expr_may_fail(p.bindings[k].expr);
    ctx.note("dce: " + p.bindings[k].name + (may_fail ? " (may fail: refines)" : ""));
    // Seeded bug (semantics/mutants.h): removing a failing binding claimed exact.
    if (may_fail && !mutant_active("dce-failing-exact")) r.cls = SemClass::Refines;
  }
  return r;
}

}  // namespace stax::xform
