// Prop. 6.3: two adjacent loops i_j in [0, s_j), i_{j+1} in [0, s_{j+1}) merge
// into m = s_{j+1}·i_j + i_{j+1} when every access has address coefficients
// a_j = s_{j+1}·a_{j+1}; each address is then a_{j+1}·m + (the rest). The
// merged kernel reads each stored tensor at that affine address (written as
// the row-major unflattening of the address), and the binding keeps its shape
// through a reshape of the merged result.
#include "semantics/expr_util.h"
#include "semantics/mutants.h"
#include "semantics/program_obligations.h"
#include "semantics/views.h"
#include "transforms/index_simplify.h"
#include "transforms/passes.h"

namespace stax::xform {

using namespace sem;

namespace {

// Address coefficients (per domain var) and constant of an access.
struct Address {
  std::vector<int64_t> a;
  int64_t c = 0;
  const Expr* tensor = nullptr;
};

std::optional<Address> address_of(const Expr& acc, const Shape& domain) {
  Address ad;
  ad.a.assign(domain.size(), 0);
  if (std::holds_alternative<FullE>(acc->p)) return ad;
  // An access over another domain than the kernel's (a rank mismatch) has no
  // address in it: refuse rather than read past the stride vectors.
  if (acc->type.shape.size() != domain.size()) return std::nullopt;
  if (std::holds_alternative<NameE>(acc->p)) {
    std::vector<int64_t> t = row_major_strides(acc->type.shape);
    for (size_t v = 0; v < domain.size(); ++v) ad.a[v] = t[v];
    return ad;
  }
  const auto& v = std::get<ViewE>(acc->p);
  if (!view_statically_in_bounds(v.src->type.shape, domain, v.map)) return std::nullopt;
  auto af = as_affine(v.map, int(domain.size()));
  if (!af) return std::nullopt;
  std::vector<int64_t> t = row_major_strides(v.src->type.shape);
  for (size_t k = 0; k < t.size(); ++k) {
    ad.c += af->c[k] * t[k];
    for (size_t x = 0; x < domain.size(); ++x) ad.a[x] += af->a[k][x] * t[k];
  }
  return ad;
}

// The access, re-expressed over the merged domain.
Expr merged_access(const Expr& acc, const Address& ad, size_t j, const Shape& merged) {
  if (std::holds_alternative<FullE>(acc->p)) {
    return make_expr({acc->type.dtype, merged}, FullE{std::get<FullE>(acc->p).value}, acc->loc);
  }
  Expr x = acc;
  if (const auto* v = std::get_if<ViewE>(&acc->p)) x = v->src;
  // addr' = c + sum_{v<j} a_v i_v + a_{j+1} m + sum_{v>j+1} a_v i_{v-1}
  IExpr addr = iconst(ad.c);
  for (size_t v = 0; v < ad.a.size(); ++v) {
    if (v == j) continue;
    size_t nv = v < j ? v : v - 1;
    addr = iadd(addr, imul(ad.a[v], ivar(int(nv))));
  }
  const Shape& sx = x->type.shape;
  std::vector<int64_t> t = row_major_strides(sx);
  IndexMap m;
  for (size_t v = 0; v < merged.size(); ++v) m.vars.push_back("i" + std::to_string(v));
  for (size_t k = 0; k < sx.size(); ++k) {
    IExpr comp = t[k] == 1 ? addr : ifloordiv(addr, t[k]);
    if (k > 0) comp = imod(comp, sx[k]);
    m.exprs.push_back(comp);
  }
  m = simplify_map(m, merged);
  return make_expr({x->type.dtype, merged}, ViewE{x, std::move(m)}, acc->loc);
}

// Tries to merge dims j, j+1 of binding k; returns a refusal reason or the new program.
std::variant<Program, std::string> try_merge(const Program& p, size_t bi, size_t j, Context& ctx) {
  const Binding& b = p.bindings[bi];
  const Kernel k = kernel_of(b.expr);
  if (!k.accesses_are_direct()) return std::string("not in kernel normal form");
  if (!k.map && !k.red) return std::string("a bare view has no loop nest of its own");
  if (j + 1 >= k.outer) return "dims " + std::to_string(j) + ", " + std::to_string(j + 1) + " are not both domain dims";
  // A graph's shapes may be far larger than a program's: no int64 overflow.
  int64_t extent = 0;
  if (__builtin_mul_overflow(k.domain[j], k.domain[j + 1], &extent) || extent > (int64_t(1) << 48))
    return std::string("the merged extent would exceed 2^48");
  std::vector<Address> ads;
  for (const Expr& a : k.accesses) {
    auto ad = address_of(a, k.domain);
    if (!ad) return std::string("an access is not affine or not provably in bounds");
    int64_t s1 = k.domain[j + 1], want = 0;
    if (__builtin_mul_overflow(s1, ad->a[j + 1], &want)) return std::string("the stride s_j+1·a_j+1 overflows int64");
    // Seeded bug (semantics/mutants.h): no stride condition (and no proof of it).
    if (ad->a[j] != want && !mutant_active("merge-ignores-stride"))
      return "stride condition fails: a_" + std::to_string(j) + " = " + std::to_string(ad->a[j]) + " but s_" +
             std::to_string(j + 1) + "·a_" + std::to_string(j + 1) + " = " + std::to_string(want);
    ads.push_back(*ad);
  }
  Shape merged = k.domain;
  merged[j] = extent;
  merged.erase(merged.begin() + std::ptrdiff_t(j + 1));
  std::vector<Expr> accs;
  for (size_t i = 0; i < k.accesses.size(); ++i) accs.push_back(merged_access(k.accesses[i], ads[i], j, merged));
  // The stride condition above is the hand check of Prop. 6.3; Z3 must also
  // prove that every merged access reads the address it read before.
  for (size_t i = 0; i < accs.size() && !mutant_active("merge-ignores-stride"); ++i) {
    const auto* after = std::get_if<ViewE>(&accs[i]->p);
    if (!after) continue;  // a constant
    IndexMap before;
    if (const auto* v = std::get_if<ViewE>(&k.accesses[i]->p)) before = v->map;
    else
      for (size_t d = 0; d < k.domain.size(); ++d) before.exprs.push_back(ivar(int(d)));  // a name: the identity
    const Expr& x = after->src;
    std::string what = "access " + std::to_string(i) + " of " +
                       (std::holds_alternative<NameE>(x->p) ? std::get<NameE>(x->p).name : std::string("a tensor"));
    sem::ProofVerdict v = ctx.discharge(
        sem::loop_merge_obligation(b.name, what, before, after->map, x->type.shape, k.domain, j));
    if (v.kind != sem::ProofVerdict::Proved)
      return "loop-merge obligation for " + what + " " + std::string(sem::verdict_name(v.kind)) +
             (v.counterexample.empty() ? "" : ": " + v.counterexample) + (v.reason.empty() ? "" : " (" + v.reason + ")");
  }
  Expr body = k.map ? make_expr({k.map->fn.result_type(), merged}, MapE{k.map->fn, accs}, b.expr->loc) : accs[0];
  Shape out(merged.begin(), merged.begin() + std::ptrdiff_t(k.outer - 1));
  Expr kernel = body;
  if (k.red) kernel = make_expr({b.expr->type.dtype, out}, RedE{k.red->op, k.red->init, k.red->extents, body}, b.expr->loc);
  Program r = p;
  std::string n = fresh_name(p, b.name + "_m");
  auto back = std::get<ViewShape>(expand_reshape(out, b.expr->type.shape));
  r.bindings[bi].expr = make_expr(b.expr->type, ViewE{make_expr(kernel->type, NameE{n}), back.map}, b.loc);
  r.bindings.insert(r.bindings.begin() + std::ptrdiff_t(bi), Binding{n, kernel, b.loc});
  ctx.note("merge-loops: " + b.name + ": merged dims " + std::to_string(j) + ", " + std::to_string(j + 1) + " into " + n);
  return r;
}

}  // namespace

Result merge_loops(const Program& p, const MergeLoopsOptions& opt, Context& ctx) {
  Program cur = p;
  const auto& only = opt.binding;
  const int64_t dim = opt.dim;
  if (only && !p.type_of(*only)) throw TransformError{"merge-loops: no binding named '" + *only + "'"};
  for (size_t bi = 0; bi < cur.bindings.size(); ++bi) {
    if (only && cur.bindings[bi].name != *only) continue;
    for (size_t j = 0; ctx.allow();) {
      if (dim >= 0 && j != size_t(dim)) {
        if (j > size_t(dim)) break;
        j = size_t(dim);
        continue;
      }
      size_t rank = cur.bindings[bi].expr->type.shape.size();
      if (j + 1 >= rank) break;
      auto r = try_merge(cur, bi, j, ctx);
      if (auto* why = std::get_if<std::string>(&r)) {
        // Refusals are logged (not counted as rewrites) so --log says why.
        ctx.log.push_back("merge-loops: refused " + cur.bindings[bi].name + " dims " + std::to_string(j) + ", " +
                          std::to_string(j + 1) + ": " + *why);
        if (dim >= 0) break;
        ++j;
        continue;
      }
      // The merged kernel now sits at bi: keep merging it from the same j.
      cur = std::get<Program>(std::move(r));
      if (dim >= 0) break;
    }
  }
  return {cur, SemClass::Exact};
}

}  // namespace stax::xform
