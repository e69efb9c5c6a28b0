#include "semantics/program_obligations.h"

#include <set>

#include "semantics/ir_visit.h"
#include "semantics/printer.h"
#include "semantics/value_range.h"
#include "semantics/views.h"

namespace stax::sem {

namespace {

void collect_loads(const IExpr& e, std::vector<const IExprNode*>& out) {
  for_each_inode(e, [&](const IExprNode& n) {
    if (n.kind == IExprNode::Kind::Load) out.push_back(&n);
  });
}

std::vector<std::string> var_names(const IndexMap& m, size_t n) {
  std::vector<std::string> v = m.vars;
  for (size_t k = v.size(); k < n; ++k) v.push_back("i" + std::to_string(k));
  v.resize(n);
  return v;
}

std::vector<DomainDim> make_domain(const std::vector<std::string>& vars, const Shape& ext, bool symbolic) {
  std::vector<DomainDim> d;
  for (size_t v = 0; v < ext.size(); ++v) d.push_back({vars[v], symbolic ? -1 : ext[v]});
  return d;
}

std::string domain_text(const std::vector<DomainDim>& d) {
  if (d.empty()) return "";
  std::string vars, box;
  for (size_t v = 0; v < d.size(); ++v) {
    vars += (v ? ", " : "") + d[v].var;
    box += (v ? "×" : "") + ("[0, " + (d[v].extent >= 0 ? std::to_string(d[v].extent) : "n_" + d[v].var) + ")");
  }
  return "∀ (" + vars + ") ∈ " + box + ": ";
}


std::string map_text(const IndexMap& m) {
  std::string s = "(";
  for (size_t k = 0; k < m.exprs.size(); ++k) s += (k ? ", " : "") + print_iexpr(m.exprs[k], m.vars);
  return s + ")";
}

/// Facts for loads whose producer is not known here: any int64 value.
std::vector<LoadFact> generic_load_facts(const std::vector<const IndexMap*>& maps) {
  std::vector<LoadFact> out;
  std::set<std::string> seen;
  for (const IndexMap* m : maps) {
    std::vector<const IExprNode*> ls;
    for (const IExpr& e : m->exprs) collect_loads(e, ls);
    for (const IExprNode* l : ls)
      if (seen.insert(l->name).second) {
        ValueRange r = dtype_range(DType::I64);
        out.push_back({l->name, {}, r.lo, r.hi, true, "load(" + l->name + ", ...): any i64 value"});
      }
  }
  return out;
}

struct Collector {
  const Program& p;
  std::map<std::string, ValueRange> ranges;
  std::vector<Obligation> out;

  std::vector<LoadFact> load_facts(const IndexMap& m, std::vector<std::string>& facts) {
    std::vector<const IExprNode*> ls;
    for (const IExpr& e : m.exprs) collect_loads(e, ls);
    std::vector<LoadFact> lf;
    std::set<std::string> seen;
    for (const IExprNode* l : ls) {
      if (!seen.insert(l->name).second) continue;
      const TensorType* t = p.type_of(l->name);
      auto it = ranges.find(l->name);
      ValueRange r = it != ranges.end() ? it->second : dtype_range(t ? t->dtype : DType::I64);
      LoadFact f{l->name, t ? t->shape : Shape{}, r.lo, r.hi, r.from_memory, r.why};
      facts.push_back("load(" + l->name + ", ...) ∈ [" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + "]: " + r.why);
      lf.push_back(std::move(f));
    }
    return lf;
  }

  void view(const std::string& binding, const Expr& e, const ViewE& v, bool outermost) {
    const Shape& out_shape = e->type.shape;
    const Shape& src = v.src->type.shape;
    std::vector<std::string> vars = var_names(v.map, out_shape.size());
    std::vector<DomainDim> dom = make_domain(vars, out_shape, false);
    std::string q = domain_text(dom);
    std::vector<std::string> facts;
    std::vector<LoadFact> loads = load_facts(v.map, facts);
    std::string src_name = std::holds_alternative<NameE>(v.src->p) ? std::get<NameE>(v.src->p).name
                                                                    : "a " + type_str(v.src->type) + " operand";
    auto base = [&](ObligationKind k, std::string site, Consequence c) {
      Obligation ob;
      ob.kind = k;
      ob.binding = binding;
      ob.site = std::move(site);
      ob.facts = facts;
      ob.if_not_proved = c;
      ob.domain = dom;
      ob.loads = loads;
      return ob;
    };
    for (size_t k = 0; k < v.map.exprs.size(); ++k) {
      const IExpr& c = v.map.exprs[k];
      bool load = iexpr_has_load(c);
      std::string ct = print_iexpr(c, vars);
      Obligation ib = base(ObligationKind::InBounds, "view of " + src_name + ", dim " + std::to_string(k),
                           load ? Consequence::RuntimeCheck : Consequence::Fails);
      std::string lim = std::to_string(src[k]);
      ib.formula = q + "0 ≤ " + (load ? "wrap(" + ct + ", " + lim + ")" : ct) + " < " + lim;
      ib.goal = InBoundsGoal{c, src[k], load};
      out.push_back(std::move(ib));
      // The indices of each indirect load (no wrapping there).
      std::vector<const IExprNode*> ls;
      collect_loads(c, ls);
      for (const IExprNode* l : ls) {
        const TensorType* t = p.type_of(l->name);
        if (!t) continue;
        for (size_t d = 0; d < l->args.size() && d < t->shape.size(); ++d) {
          const IExpr& a = l->args[d];
          Obligation lb = base(ObligationKind::InBounds,
                               "load(" + l->name + ") in view of " + src_name + ", dim " + std::to_string(d),
                               iexpr_has_load(a) ? Consequence::RuntimeCheck : Consequence::Fails);
          lb.formula = q + "0 ≤ " + print_iexpr(a, vars) + " < " + std::to_string(t->shape[d]);
          lb.goal = InBoundsGoal{a, t->shape[d], false};
          out.push_back(std::move(lb));
        }
      }
      if (!load && c->kind != IExprNode::Kind::Var && c->kind != IExprNode::Kind::Const) {
        Interval r = iexpr_range(c, out_shape);
        Obligation iv = base(ObligationKind::Interval, "view of " + src_name + ", dim " + std::to_string(k),
                             Consequence::AnalysisBug);
        iv.formula = q + ct + " ∈ " + interval_text(r) + " (iexpr_range)";
        iv.goal = IntervalGoal{c, int64_t(r.lo), int64_t(r.hi)};
        out.push_back(std::move(iv));
      }
    }
    Obligation i32 = base(ObligationKind::Int32, "address of view of " + src_name, Consequence::WideIndex);
    std::string addr;
    {
      std::vector<int64_t> t = row_major_strides(src);
      for (size_t k = 0; k < src.size(); ++k)
        addr += (k ? " + " : "") + std::to_string(t[k]) + "·π" + std::to_string(k);
      if (addr.empty()) addr = "0";
    }
    i32.formula = q + addr + " < 2^31 (π = " + map_text(v.map) + ", in bounds), every term in int32";
    i32.goal = Int32Goal{v.map.exprs, src, 0};
    out.push_back(std::move(i32));
    if (outermost) affinity_chain(binding, e, dom, q, facts, loads);
  }

  // The address in the stored tensor of a chain of views starting at e.
  void affinity_chain(const std::string& binding, const Expr& e, const std::vector<DomainDim>& dom,
                      const std::string& q, const std::vector<std::string>& facts, const std::vector<LoadFact>& loads) {
    AffinityGoal g;
    bool floor_mod = false;
    Expr cur = e;
    while (const auto* v = std::get_if<ViewE>(&cur->p)) {
      for (const IExpr& c : v->map.exprs) {
        if (iexpr_has_load(c)) return;  // not an affine question
        floor_mod = floor_mod || has_floor_mod(c);
      }
      IndexMap m = v->map;
      m.vars = var_names(v->map, cur->type.shape.size());
      g.chain.push_back(std::move(m));
      g.shapes.push_back(v->src->type.shape);
      cur = v->src;
    }
    if (!floor_mod) return;  // structurally affine (Prop. 6.2)
    Obligation ob;
    ob.kind = ObligationKind::Affinity;
    ob.binding = binding;
    ob.site = g.chain.size() == 1 ? "view of " + print_expr(cur, &p) : std::to_string(g.chain.size()) + " nested views of " + print_expr(cur, &p);
    if (ob.site.size() > 60) ob.site = ob.site.substr(0, 57) + "...";
    std::string maps;
    for (const IndexMap& m : g.chain) maps += (maps.empty() ? "" : " then ") + map_text(m);
    ob.formula = q + "addr(i) = addr(0) + Σ_v (addr(e_v) − addr(0))·i_v, addr = row-major address in " +
                 shape_text(g.shapes.back()) + " of " + maps;
    ob.facts = facts;
    ob.if_not_proved = Consequence::NotAffine;
    ob.domain = dom;
    ob.loads = loads;
    ob.goal = std::move(g);
    out.push_back(std::move(ob));
  }

  void walk(const std::string& binding, const Expr& e, bool parent_is_view) {
    if (const auto* v = std::get_if<ViewE>(&e->p)) view(binding, e, *v, !parent_is_view);
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, MapE>) {
            for (const Expr& a : x.args) walk(binding, a, false);
          } else if constexpr (std::is_same_v<T, ViewE>) {
            walk(binding, x.src, true);
          } else if constexpr (std::is_same_v<T, RedE>) {
            walk(binding, x.src, false);
          } else if constexpr (std::is_same_v<T, LetE>) {
            walk(binding, x.value, false);
            walk(binding, x.body, false);
          }
        },
        e->p);
  }

  void binding_domain(const Binding& b) {
    Shape dom = b.expr->type.shape;
    if (const auto* r = std::get_if<RedE>(&b.expr->p)) dom = r->src->type.shape;
    std::vector<std::string> vars;
    std::vector<IExpr> comps;
    for (size_t v = 0; v < dom.size(); ++v) {
      vars.push_back("i" + std::to_string(v));
      comps.push_back(ivar(int(v)));
    }
    Obligation ob;
    ob.kind = ObligationKind::Int32;
    ob.binding = b.name;
    ob.site = "loop nest " + shape_text(dom);
    ob.domain = make_domain(vars, dom, false);
    ob.formula = domain_text(ob.domain) + "flat(i) + 1 < 2^31 (the iteration count fits int32)";
    ob.if_not_proved = Consequence::WideIndex;
    ob.goal = Int32Goal{comps, dom, 1};
    out.push_back(std::move(ob));
  }
};

}  // namespace


std::vector<Obligation> program_obligations(const Program& p) {
  Collector c{p, value_ranges(p), {}};
  for (const Binding& b : p.bindings) {
    c.binding_domain(b);
    c.walk(b.name, b.expr, false);
  }
  return std::move(c.out);
}

Obligation composition_obligation(const std::string& binding, const IndexMap& inner, const Shape& base,
                                  const IndexMap& outer, const Shape& middle, const Shape& out,
                                  const IndexMap& composed, bool symbolic) {
  Obligation ob;
  ob.kind = ObligationKind::Composition;
  ob.binding = binding;
  ob.site = "view" + map_text(inner) + " ∘ view" + map_text(outer);
  ob.domain = make_domain(var_names(outer, out.size()), out, symbolic);
  ob.formula = domain_text(ob.domain) + map_text(composed) + " = inner(outer(i)), inner = " + map_text(inner) +
               ", outer = " + map_text(outer);
  ob.facts.push_back("the source view is defined: outer(i) ∈ " + shape_text(middle) + ", inner(outer(i)) ∈ " +
                     shape_text(base));
  ob.if_not_proved = Consequence::Refused;
  ob.loads = generic_load_facts({&inner, &outer, &composed});
  IndexMap c = composed;
  c.vars = var_names(outer, out.size());
  ob.goal = CompositionGoal{inner, outer, c, base, middle};
  return ob;
}

Obligation loop_merge_obligation(const std::string& binding, const std::string& site, const IndexMap& before,
                                 const IndexMap& after, const Shape& src, const Shape& domain, size_t j) {
  Obligation ob;
  ob.kind = ObligationKind::LoopMerge;
  ob.binding = binding;
  ob.site = site + ", dims " + std::to_string(j) + ", " + std::to_string(j + 1);
  std::vector<std::string> vars = var_names(before, domain.size());
  ob.domain = make_domain(vars, domain, false);
  ob.formula = domain_text(ob.domain) + "addr" + map_text(before) + " = addr" + map_text(after) + "[i" +
               std::to_string(j) + " := " + std::to_string(j + 1 < domain.size() ? domain[j + 1] : 0) + "·" +
               vars[j] + " + " + (j + 1 < vars.size() ? vars[j + 1] : "?") + "], addr = row-major in " +
               shape_text(src);
  ob.facts.push_back("every access before the merge is in bounds");
  ob.if_not_proved = Consequence::Refused;
  ob.loads = generic_load_facts({&before, &after});
  ob.goal = LoopMergeGoal{before, after, src, j};
  return ob;
}

Obligation merge_rule_obligation(const MergeRuleGoal& g) {
  auto v = [](const std::optional<int64_t>& x, const char* n) { return x ? std::to_string(*x) : std::string(n); };
  Obligation ob;
  ob.kind = ObligationKind::Affinity;
  ob.binding = "(rule)";
  ob.site = "merge of dims j, j+1 (Prop. 6.3)";
  std::string tj = v(g.t_j, "t_j"), tj1 = v(g.t_j1, "t_j1"), sj = v(g.s_j, "s_j"), sj1 = v(g.s_j1, "s_j1");
  ob.formula = "∀ m ∈ [0, " + sj + "·" + sj1 + "): " + tj + "·(m // " + sj1 + ") + " + tj1 + "·(m % " + sj1 +
               ") = " + tj1 + "·m";
  ob.facts.push_back("s_j ≥ 1, s_j1 ≥ 1, t_j1 ≥ 0");
  ob.facts.push_back("t_j = " + (g.scale == 1 ? std::string() : std::to_string(g.scale) + "·") + "s_j1·t_j1" +
                     (g.offset ? " + " + std::to_string(g.offset) : ""));
  ob.if_not_proved = Consequence::NotAffine;
  ob.goal = g;
  return ob;
}

}  // namespace stax::sem
