// Policies after realization: kernel normal form (views pushed into maps,
// then the `normalize` transform), flexible layouts fixed so that writes
// follow the reads (6.4, Example 6.1), the GPU split of Algorithm 6.1 (6.5,
// Example 6.2, through the split-reduction transform), loop canonicalisation
// (6.8: size-1 loops dropped, Prop. 6.3 merges proved by Z3, loops ordered by
// stride; the program form through merge-loops) and value ranges feeding the
// in-bounds and int32 obligations (Def. 6.4, Example 6.3).
#include "compiler/policy.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <set>

#include "semantics/expr_util.h"
#include "semantics/printer.h"
#include "semantics/program_obligations.h"
#include "semantics/views.h"
#include "transforms/index_simplify.h"
#include "transforms/passes.h"

namespace stax::compiler {

using namespace sem;

int64_t split_segments(int64_t nr, int64_t n, const Device& d, std::string* why) {
  // Algorithm 6.1. The prose of 6.5 says "no split when n >= 2*32*S"; the
  // algorithm (and Inductor's inner_reduction_splits) says n >= 2S: we
  // implement the algorithm. The no-split threshold of line 4 is not given
  // in the text: Inductor's 8192.
  const int64_t e_min = d.warp, e_max = 512, m = 8 * d.warp;
  const int64_t dmin = e_min * d.sm * d.threads_per_sm, dmax = e_max * d.sm * d.threads_per_sm;
  auto say = [&](const std::string& s) {
    if (why) *why = s;
  };
  if (n >= 2 * d.sm) {
    say("n = " + std::to_string(n) + " >= 2S = " + std::to_string(2 * d.sm) + ": enough outputs, no split");
    return 1;
  }
  if (nr <= 8192) {
    say("n_r = " + std::to_string(nr) + " <= 8192: too short to split");
    return 1;
  }
  int64_t s;
  std::string branch;
  auto closest_divisor = [&](int64_t target) {
    int64_t best = 1;
    for (int64_t q = 1; q * q <= nr; ++q)
      if (nr % q == 0)
        for (int64_t c : {q, nr / q})
          if (std::llabs(c - target) < std::llabs(best - target)) best = c;
    return best;
  };
  if (n * nr <= dmin) {
    s = e_min;
    branch = "n*n_r = " + std::to_string(n * nr) + " <= D_min = " + std::to_string(dmin) + ": s = e_min = " + std::to_string(s);
  } else if (n * nr < dmax) {
    int64_t b = d.sm * d.threads_per_sm / (2 * m);
    int64_t per = (b + n - 1) / n;
    int64_t target = (nr + m * per - 1) / (m * per);
    int64_t c = closest_divisor(target);
    s = std::llabs(c - target) < 30 ? std::max(c, e_min) : target;
    branch = "D_min < n*n_r < D_max: " + std::to_string(per) + " blocks per output, s = " + std::to_string(s);
  } else {
    int64_t c = closest_divisor(e_max);
    s = std::llabs(c - e_max) < 50 ? c : e_max;
    branch = "n*n_r >= D_max: s = " + std::to_string(s);
  }
  int64_t k = (nr + s * m - 1) / (s * m);
  say("m = " + std::to_string(m) + ", " + branch + ", k = ceil(" + std::to_string(nr) + " / (" + std::to_string(s) +
      " * " + std::to_string(m) + ")) = " + std::to_string(k));
  return k;
}

namespace {

Expr push_views(const Expr& e) {
  return sem::rewrite_bottom_up(e, [](const Expr& x) -> std::optional<Expr> {
    const auto* v = std::get_if<ViewE>(&x->p);
    if (!v) return std::nullopt;
    if (const auto* m = std::get_if<MapE>(&v->src->p)) {
      std::vector<Expr> args;
      for (const Expr& a : m->args) args.push_back(push_views(make_expr({a->type.dtype, x->type.shape}, ViewE{a, v->map})));
      return make_expr(x->type, MapE{m->fn, std::move(args)});
    }
    if (const auto* f = std::get_if<FullE>(&v->src->p)) {
      bool loads = false;
      for (const IExpr& q : v->map.exprs) loads = loads || iexpr_has_load(q);
      if (!loads && view_statically_in_bounds(v->src->type.shape, x->type.shape, v->map)) return make_expr(x->type, FullE{f->value});
    }
    return std::nullopt;
  });
}

std::set<std::string> output_set(const Program& p) { return {p.outputs.begin(), p.outputs.end()}; }

/// Views pushed through maps, then `normalize`: every binding in kernel
/// normal form, views composed and simplified.
xform::SemClass to_normal_form(Program& p) {
  for (Binding& b : p.bindings) b.expr = push_views(b.expr);
  xform::Context ctx;
  xform::Result r = xform::normalize(p, {}, ctx);
  p = std::move(r.program);
  return r.cls;
}

/// Address (row-major) of an access over the kernel's domain, simplified; the
/// name read; nullopt for iota/full operands.
std::optional<std::pair<std::string, IExpr>> address(const Expr& acc, const Shape& domain) {
  const NameE* n = nullptr;
  IndexMap m;
  if ((n = std::get_if<NameE>(&acc->p))) {
    for (size_t k = 0; k < domain.size(); ++k) m.exprs.push_back(ivar(int(k)));
  } else if (const auto* v = std::get_if<ViewE>(&acc->p)) {
    n = std::get_if<NameE>(&v->src->p);
    m = v->map;
  }
  if (!n) return std::nullopt;
  const auto* view = std::get_if<ViewE>(&acc->p);
  std::vector<int64_t> t = row_major_strides(view ? view->src->type.shape : acc->type.shape);
  IExpr a = iconst(0);
  for (size_t k = 0; k < m.exprs.size(); ++k) a = iadd(a, imul(t[k], m.exprs[k]));
  return std::make_pair(n->name, xform::simplify_index(a, domain));
}

// ---- flexible layouts (6.4) ----

std::string layout_pass(Program& p) {
  std::string notes;
  std::set<std::string> outs = output_set(p);
  for (const Binding& b : p.bindings)
    if (outs.count(b.name) && !b.expr->type.shape.empty()) {
      const Shape& s = b.expr->type.shape;
      notes += "layout " + b.name + ": output, fixed layout size " + shape_text(s) + " stride " +
               shape_text(row_major_strides(s)) + "\n";
    }
  for (size_t bi = 0; bi < p.bindings.size(); ++bi) {
    Binding& b = p.bindings[bi];
    if (outs.count(b.name) || std::holds_alternative<RedE>(b.expr->p)) continue;
    const Shape& s = b.expr->type.shape;
    if (s.size() < 2) continue;
    sem::Uses u = sem::count_uses(p, b.name);
    if (u.load > 0) continue;  // an index tensor: its layout is read by loads
    const sem::Kernel k = sem::kernel_of(b.expr);
    // Read strides per loop: the sum of |coefficient| over the accesses.
    std::vector<int64_t> score(s.size(), 0);
    bool any = false;
    for (const Expr& a : k.accesses) {
      auto ad = address(a, s);
      if (!ad) continue;
      IndexMap one{{}, {ad->second}};
      auto aff = as_affine(one, int(s.size()));
      if (!aff) continue;
      for (size_t d = 0; d < s.size(); ++d) score[d] += std::llabs(aff->a[0][d]);
      any = true;
    }
    if (!any) continue;
    std::vector<int64_t> order(s.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return score[size_t(x)] > score[size_t(y)]; });
    bool ident = true;
    for (size_t d = 0; d < order.size(); ++d) ident = ident && order[d] == int64_t(d);
    std::string sc;
    for (size_t d = 0; d < s.size(); ++d) sc += (d ? ", " : "") + std::to_string(score[d]);
    if (ident) {
      notes += "layout " + b.name + ": flexible, reads favour the row-major order (read strides per loop: " + sc + ")\n";
      continue;
    }
    if (const auto* v = std::get_if<ViewE>(&b.expr->p); v && std::holds_alternative<NameE>(v->src->p)) {
      // Only a view of a stored tensor (a transpose realized for its
      // readers, e.g. a matrix product's second operand): stored in the
      // order of its reads it would be that tensor again.
      notes += "layout " + b.name + ": flexible, kept row-major: a view of " + std::get<NameE>(v->src->p).name +
               " copied for its readers\n";
      continue;
    }
    auto pv = expand_permute(s, order);
    const ViewShape& phys = std::get<ViewShape>(pv);
    std::vector<int64_t> inv(order.size());
    for (size_t q = 0; q < order.size(); ++q) inv[size_t(order[q])] = int64_t(q);
    ViewShape back = std::get<ViewShape>(expand_permute(phys.shape, inv));
    b.expr = make_expr({b.expr->type.dtype, phys.shape}, ViewE{b.expr, phys.map});
    Expr stored = make_expr({b.expr->type.dtype, phys.shape}, NameE{b.name});
    Expr logical = make_expr({b.expr->type.dtype, s}, ViewE{stored, back.map});
    for (size_t j = bi + 1; j < p.bindings.size(); ++j) p.bindings[j].expr = sem::substitute(p.bindings[j].expr, b.name, logical);
    std::vector<int64_t> st(s.size());
    std::vector<int64_t> pst = row_major_strides(phys.shape);
    for (size_t q = 0; q < order.size(); ++q) st[size_t(order[q])] = pst[q];
    notes += "layout " + b.name + ": flexible, fixed to loop order " + shape_text(order) +
             " so that writes follow the reads (read strides per loop: " + sc + "): stored as " + shape_text(order) +
             "-permuted, logical strides " + shape_text(st) + "\n";
  }
  return notes;
}

// ---- Algorithm 6.1 ----

std::string split_pass(Program& p, const Device& d, xform::SemClass& cls) {
  std::string notes;
  for (size_t bi = 0; bi < p.bindings.size(); ++bi) {
    const auto* r = std::get_if<RedE>(&p.bindings[bi].expr->p);
    if (!r) continue;
    std::string name = p.bindings[bi].name;
    int64_t n = num_elements(p.bindings[bi].expr->type.shape), nr = num_elements(r->extents);
    if (red_is_arg(r->op)) {
      notes += "split " + name + ": " + std::string(red_name(r->op)) + " carries an index: never split\n";
      continue;
    }
    std::string why;
    int64_t k = split_segments(nr, n, d, &why);
    if (k <= 1) {
      notes += "split " + name + ": Algorithm 6.1 (n = " + std::to_string(n) + ", n_r = " + std::to_string(nr) + "): " + why + "\n";
      continue;
    }
    xform::SplitReductionOptions split;
    split.binding = name;
    split.k = k;
    xform::Context ctx;
    xform::Result res = xform::split_reduction(p, split, ctx);
    // The first level (the partials) becomes its own buffer (Listing 6.4).
    // A half-precision reduction accumulates in f32 (docs/design.md §3): the split
    // gives map(cast, red(op, init, [k], red(...))), its f32 partials kept as
    // they are and rounded to the half once, after the outer level. A split
    // that the transform refused (a red nested too deep) leaves the binding
    // as it was: then it is not split.
    const Expr& split_expr = res.program.bindings[bi].expr;
    const auto* rounding = std::get_if<MapE>(&split_expr->p);
    const Expr top = rounding && rounding->args.size() == 1 ? rounding->args[0] : split_expr;
    const auto* outer = std::get_if<RedE>(&top->p);
    if (!outer || !std::holds_alternative<RedE>(outer->src->p)) {
      notes += "split " + name + ": Algorithm 6.1 asked for " + std::to_string(k) + " segments, but split-reduction left " +
               name + " unsplit\n";
      continue;
    }
    cls = xform::weaker(cls, res.cls);
    p = std::move(res.program);
    Binding& b = p.bindings[bi];
    std::string part = sem::fresh_name(p, name + "_partial");
    Expr inner = push_views(outer->src);
    Expr ref = make_expr(inner->type, NameE{part});
    Expr combined = make_expr(top->type, RedE{outer->op, outer->init, outer->extents, ref});
    b.expr = top == b.expr ? combined : make_expr(b.expr->type, MapE{rounding->fn, {combined}});
    p.bindings.insert(p.bindings.begin() + std::ptrdiff_t(bi), Binding{part, inner, {}});
    notes += "split " + name + ": Algorithm 6.1 (n = " + std::to_string(n) + ", n_r = " + std::to_string(nr) + "): " + why +
             "; partials " + part + " : " + shape_text(inner->type.shape) + ", class " +
             std::string(xform::class_name(res.cls)) + "\n";
    ++bi;
  }
  return notes;
}

// ---- loop canonicalisation (6.8) ----

struct Access {
  std::string what;  // "load x" / "store b"
  std::vector<int64_t> a;
  int64_t c = 0;
  bool affine = true;
  IExpr expr;
};

std::string affine_text(const Access& x, const std::vector<std::string>& vars) {
  std::string s;
  for (size_t v = 0; v < x.a.size(); ++v) {
    if (x.a[v] == 0) continue;
    std::string term = x.a[v] == 1 ? vars[v] : std::to_string(x.a[v]) + "*" + vars[v];
    s += s.empty() ? term : (x.a[v] < 0 ? " - " + (x.a[v] == -1 ? vars[v] : std::to_string(-x.a[v]) + "*" + vars[v]) : " + " + term);
  }
  if (x.c != 0 || s.empty()) s += s.empty() ? std::to_string(x.c) : (x.c < 0 ? " - " + std::to_string(-x.c) : " + " + std::to_string(x.c));
  return s;
}

LoopNest loop_nest(const Binding& b) {
  LoopNest ln;
  ln.binding = b.name;
  const sem::Kernel k = sem::kernel_of(b.expr);
  const Shape& dom = k.domain;
  size_t outer = k.outer, nred = dom.size() - outer;
  std::vector<std::string> vars;
  for (size_t v = 0; v < outer; ++v) vars.push_back("i" + std::to_string(v));
  for (size_t v = 0; v < nred; ++v) vars.push_back(nred == 1 ? "r" : "r" + std::to_string(v));
  std::vector<Access> acc;
  for (const Expr& a : k.accesses) {
    auto ad = address(a, dom);
    if (!ad) continue;
    Access x{"load " + ad->first, {}, 0, false, ad->second};
    if (auto aff = as_affine(IndexMap{{}, {ad->second}}, int(dom.size()))) {
      x.a = aff->a[0];
      x.c = aff->c[0];
      x.affine = true;
    }
    acc.push_back(x);
  }
  Access w{"store " + b.name, std::vector<int64_t>(dom.size(), 0), 0, true, nullptr};
  std::vector<int64_t> t = row_major_strides(b.expr->type.shape);
  for (size_t v = 0; v < outer; ++v) w.a[v] = t[v];
  acc.push_back(w);
  auto describe = [&](const std::vector<std::string>& names, const Shape& ext, const std::vector<bool>& is_red) {
    std::vector<std::string> out;
    for (size_t v = 0; v < names.size(); ++v) out.push_back(names[v] + (is_red[v] ? ":R[" : ":[") + std::to_string(ext[v]) + "]");
    return out;
  };
  std::vector<bool> is_red(dom.size(), false);
  for (size_t v = outer; v < dom.size(); ++v) is_red[v] = true;
  ln.loops = describe(vars, dom, is_red);
  for (const Access& x : acc) ln.accesses.push_back(x.what + "[" + (x.affine ? affine_text(x, vars) : print_iexpr(x.expr, vars)) + "]");
  bool all_affine = std::all_of(acc.begin(), acc.end(), [](const Access& x) { return x.affine; });
  if (!all_affine) {
    ln.steps.push_back("not affine (floor/mod or indirect indexing): loops kept as they are");
    return ln;
  }
  // 1. drop size-1 loops.
  Shape ext = dom;
  for (size_t v = ext.size(); v-- > 0;)
    if (ext[v] == 1 && ext.size() > 1) {
      ln.steps.push_back("dropped size-1 loop " + vars[v]);
      ext.erase(ext.begin() + std::ptrdiff_t(v));
      vars.erase(vars.begin() + std::ptrdiff_t(v));
      is_red.erase(is_red.begin() + std::ptrdiff_t(v));
      for (Access& x : acc) x.a.erase(x.a.begin() + std::ptrdiff_t(v));
    }
  // 2. merge adjacent loops of the same kind when a_j = s_{j+1}·a_{j+1} for
  // every access (Prop. 6.3), each merge proved for the concrete values.
  for (size_t j = 0; j + 1 < ext.size();) {
    bool ok = is_red[j] == is_red[j + 1];
    for (const Access& x : acc) ok = ok && x.a[j] == ext[j + 1] * x.a[j + 1];
    if (!ok) {
      ++j;
      continue;
    }
    std::string proof = "proved";
    for (const Access& x : acc) {
      sem::MergeRuleGoal g;
      g.s_j = ext[j];
      g.s_j1 = ext[j + 1];
      g.t_j = x.a[j];
      g.t_j1 = x.a[j + 1];
      auto v = sem::discharge_default(sem::merge_rule_obligation(g));
      if (v.kind != sem::ProofVerdict::Proved) proof = std::string(sem::verdict_name(v.kind));
    }
    if (proof != "proved") {
      ln.steps.push_back("merge of " + vars[j] + ", " + vars[j + 1] + " not proved (" + proof + "): kept");
      ++j;
      continue;
    }
    ln.steps.push_back("merged " + vars[j] + ", " + vars[j + 1] + " (Prop. 6.3: a_j = " + std::to_string(ext[j + 1]) +
                       "*a_{j+1} for every access, proved by Z3)");
    ext[j] *= ext[j + 1];
    ext.erase(ext.begin() + std::ptrdiff_t(j + 1));
    vars.erase(vars.begin() + std::ptrdiff_t(j + 1));
    is_red.erase(is_red.begin() + std::ptrdiff_t(j + 1));
    for (Access& x : acc) x.a.erase(x.a.begin() + std::ptrdiff_t(j));
  }
  // 3. order the outer loops by stride (largest outermost), reduction loops last.
  std::vector<size_t> order(ext.size());
  std::iota(order.begin(), order.end(), 0);
  auto stride = [&](size_t v) {
    int64_t m = 0;
    for (const Access& x : acc) m = std::max<int64_t>(m, std::llabs(x.a[v]));
    return m;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (is_red[x] != is_red[y]) return !is_red[x];
    return !is_red[x] && stride(x) > stride(y);
  });
  bool moved = false;
  for (size_t q = 0; q < order.size(); ++q) moved = moved || order[q] != q;
  if (moved) ln.steps.push_back("loops reordered by stride");
  // Canonical names: x0.. for the outer loops, r.. for the reduction.
  size_t nx = 0, nr = 0;
  for (size_t v = 0; v < ext.size(); ++v) (is_red[v] ? nr : nx)++;
  std::vector<std::string> cv(ext.size());
  size_t ix = 0, ir = 0;
  for (size_t q : order) cv[q] = is_red[q] ? (nr == 1 ? "r" : "r" + std::to_string(ir++)) : "x" + std::to_string(ix++);
  std::string loops;
  for (size_t q : order) loops += (loops.empty() ? "" : ", ") + cv[q] + (is_red[q] ? ":R[" : ":[") + std::to_string(ext[q]) + "]";
  std::string accs;
  for (const Access& x : acc) accs += (accs.empty() ? "" : "; ") + x.what + "[" + affine_text(x, cv) + "]";
  ln.steps.push_back("canonical loops " + loops + ": " + accs);
  return ln;
}

// ---- value ranges and obligations (Def. 6.4, Example 6.3) ----

std::vector<std::string> obligation_notes(const Program& p) {
  std::vector<std::string> notes;
  std::map<std::string, bool> int32_ok;
  for (const sem::Obligation& ob : sem::program_obligations(p)) {
    if (ob.kind == sem::ObligationKind::Int32) {
      auto v = sem::discharge_default(ob);
      auto it = int32_ok.emplace(ob.binding, true).first;
      it->second = it->second && v.kind == sem::ProofVerdict::Proved;
      continue;
    }
    if (ob.kind != sem::ObligationKind::InBounds) continue;
    const auto* g = std::get_if<sem::InBoundsGoal>(&ob.goal);
    if (!g) continue;
    bool indirect = g->wrap || iexpr_has_load(g->expr);
    bool nontrivial = g->expr->kind == IExprNode::Kind::Mod || g->expr->kind == IExprNode::Kind::FloorDiv || indirect;
    if (!nontrivial) continue;
    auto v = sem::discharge_default(ob);
    std::string verdict(sem::verdict_name(v.kind));
    std::string line = "range " + ob.binding + ": " + ob.site + ": " + ob.formula + " " + verdict;
    for (const std::string& f : ob.facts) line += "; assuming " + f;
    if (indirect)
      line += v.kind == sem::ProofVerdict::Proved ? " => index proved in range: wrap and check dropped"
                                                      : " => index from memory: wrap and bounds check kept";
    else
      line += v.kind == sem::ProofVerdict::Proved ? " => direct index in [0, extent): no wrap, no check"
                                                      : " => not proved: the program fails (⊥) there";
    notes.push_back(line);
  }
  for (const auto& [b, ok] : int32_ok)
    notes.push_back("int32 " + b + ": " + (ok ? "every index expression and address proved < 2^31: 32-bit indexing"
                                              : "not proved: 64-bit indexing kept"));
  return notes;
}

void split_lines(const std::string& s, std::vector<std::string>& out) {
  size_t pos = 0;
  while (pos < s.size()) {
    size_t e = s.find('\n', pos);
    out.push_back(s.substr(pos, e - pos));
    pos = e == std::string::npos ? s.size() : e + 1;
  }
}

}  // namespace

void run_policies(Lowered& l, const Device& d) {
  Program& p = l.program;
  l.cls = xform::weaker(l.cls, to_normal_form(p));
  split_lines(layout_pass(p), l.notes);
  l.cls = xform::weaker(l.cls, to_normal_form(p));
  if (d.gpu) {
    split_lines(split_pass(p, d, l.cls), l.notes);
    l.cls = xform::weaker(l.cls, to_normal_form(p));
  }
  for (const Binding& b : p.bindings) l.kernels.push_back(loop_nest(b));
  // The program form of the merges: merge-loops on each binding whose
  // accesses are names, views of names or constants (the shapes it handles).
  l.canonical = p;
  for (const Binding& b : p.bindings) {
    const sem::Kernel k = sem::kernel_of(b.expr);
    bool ok = true;
    for (const Expr& a : k.accesses) {
      if (std::holds_alternative<FullE>(a->p)) continue;
      if (std::holds_alternative<NameE>(a->p)) ok = ok && a->type.shape == k.domain;
      else if (const auto* v = std::get_if<ViewE>(&a->p)) ok = ok && std::holds_alternative<NameE>(v->src->p);
      else ok = false;
    }
    if (!ok) continue;
    // Merged in isolation: the binding over its operands as inputs.
    Program one;
    std::vector<std::string> free;
    collect_free_names(b.expr, free);
    std::set<std::string> seen;
    for (const std::string& f : free)
      if (seen.insert(f).second) one.inputs.push_back({f, *p.type_of(f), {}});
    one.bindings.push_back(b);
    one.outputs = {b.name};
    xform::Context ctx;
    xform::Result merged = xform::merge_loops(one, {}, ctx);
    std::vector<Binding> out;
    for (const Binding& c : l.canonical.bindings) {
      if (c.name != b.name) {
        out.push_back(c);
        continue;
      }
      for (const Binding& m : merged.program.bindings) out.push_back(m);
    }
    l.canonical.bindings = std::move(out);
  }
  for (std::string& s : obligation_notes(p)) l.notes.push_back(std::move(s));
}

}  // namespace stax::compiler
