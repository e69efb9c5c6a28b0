#include "semantics/expr_util.h"

#include <algorithm>
#include <set>

#include "semantics/ir_visit.h"

namespace stax::sem {

std::vector<Expr> children(const Expr& e) {
  return std::visit(
      [](const auto& x) -> std::vector<Expr> {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, MapE>) return x.args;
        else if constexpr (std::is_same_v<X, ViewE>) return {x.src};
        else if constexpr (std::is_same_v<X, RedE>) return {x.src};
        else if constexpr (std::is_same_v<X, LetE>) return {x.value, x.body};
        else return {};
      },
      e->p);
}

Expr with_children(const Expr& e, const std::vector<Expr>& kids) {
  std::vector<Expr> old = children(e);
  bool same = old.size() == kids.size();
  for (size_t i = 0; same && i < old.size(); ++i) same = old[i].get() == kids[i].get();
  if (same) return e;
  ExprPayload p = e->p;
  std::visit(
      [&](auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, MapE>) x.args = kids;
        else if constexpr (std::is_same_v<X, ViewE>) x.src = kids[0];
        else if constexpr (std::is_same_v<X, RedE>) x.src = kids[0];
        else if constexpr (std::is_same_v<X, LetE>) x.value = kids[0], x.body = kids[1];
      },
      p);
  TensorType t = e->type;
  if (auto* l = std::get_if<LetE>(&p)) t = l->body->type;
  return make_expr(t, std::move(p), e->loc);
}

Expr rewrite_bottom_up(const Expr& e, const std::function<std::optional<Expr>(const Expr&)>& f) {
  std::vector<Expr> kids = children(e);
  for (Expr& k : kids) k = rewrite_bottom_up(k, f);
  Expr n = with_children(e, kids);
  if (auto r = f(n)) return *r;
  return n;
}

Expr replace_node(const Expr& e, const ExprNode* target, const Expr& by) {
  if (e.get() == target) return by;
  std::vector<Expr> kids = children(e);
  for (Expr& k : kids) k = replace_node(k, target, by);
  return with_children(e, kids);
}

Expr find_node(const Expr& e, const ExprNode* target) {
  if (e.get() == target) return e;
  for (const Expr& k : children(e))
    if (Expr f = find_node(k, target)) return f;
  return nullptr;
}

bool is_kernel_access(const Expr& a) {
  if (std::holds_alternative<NameE>(a->p) || std::holds_alternative<FullE>(a->p)) return true;
  if (const auto* v = std::get_if<ViewE>(&a->p)) return std::holds_alternative<NameE>(v->src->p);
  return false;
}

Kernel kernel_of(const Expr& e) {
  Kernel k;
  Expr body = e;
  if (const auto* r = std::get_if<RedE>(&e->p)) {
    k.red = r;
    body = r->src;
  }
  if (const auto* m = std::get_if<MapE>(&body->p)) {
    k.map = m;
    k.accesses = m->args;
  } else {
    k.accesses = {body};
  }
  k.domain = body->type.shape;
  k.outer = e->type.shape.size();
  return k;
}

bool Kernel::accesses_are_direct() const { return std::all_of(accesses.begin(), accesses.end(), is_kernel_access); }

namespace {

IExpr rename_iexpr(const IExpr& e, const std::string& from, const std::string& to) {
  return mutate_inode(e, [&](const IExpr& n) -> IExpr {
    if (n->kind != IExprNode::Kind::Load || n->name != from) return nullptr;
    auto r = std::make_shared<IExprNode>(*n);
    r->name = to;
    return r;
  });
}

Expr subst(const Expr& e, const std::string& name, const Expr& by, bool rename_loads) {
  if (auto* n = std::get_if<NameE>(&e->p)) return n->name == name ? by : e;
  if (auto* l = std::get_if<LetE>(&e->p)) {
    Expr v = subst(l->value, name, by, rename_loads);
    Expr b = l->name == name ? l->body : subst(l->body, name, by, rename_loads);
    return with_children(e, {v, b});
  }
  std::vector<Expr> kids = children(e);
  for (Expr& k : kids) k = subst(k, name, by, rename_loads);
  Expr r = with_children(e, kids);
  if (rename_loads)
    if (auto* v = std::get_if<ViewE>(&r->p)) {
      const auto* bn = std::get_if<NameE>(&by->p);
      IndexMap m = v->map;
      bool changed = false;
      for (IExpr& ie : m.exprs) {
        IExpr ne = rename_iexpr(ie, name, bn->name);
        changed |= ne.get() != ie.get();
        ie = ne;
      }
      if (changed) return make_expr(r->type, ViewE{v->src, std::move(m)}, r->loc);
    }
  return r;
}

void count_iexpr(const IExpr& e, const std::string& name, Uses& u) {
  for_each_inode(e, [&](const IExprNode& n) { u.load += n.kind == IExprNode::Kind::Load && n.name == name; });
}

/// count_all_uses_in's walk; `bound`: the lets' names around `e` (a use of
/// one of them is the let's, as count_uses_in skips a shadowing let's body).
void count_all(const Expr& e, std::map<std::string, Uses>& u, std::multiset<std::string>& bound) {
  if (auto* n = std::get_if<NameE>(&e->p)) {
    if (!bound.count(n->name)) ++u[n->name].operand;
    return;
  }
  if (auto* l = std::get_if<LetE>(&e->p)) {
    count_all(l->value, u, bound);
    auto it = bound.insert(l->name);
    count_all(l->body, u, bound);
    bound.erase(it);
    return;
  }
  if (auto* v = std::get_if<ViewE>(&e->p)) {
    for (const IExpr& ie : v->map.exprs)
      for_each_inode(ie, [&](const IExprNode& n) {
        if (n.kind == IExprNode::Kind::Load && !bound.count(n.name)) ++u[n.name].load;
      });
  }
  for (const Expr& k : children(e)) count_all(k, u, bound);
}

}  // namespace

Expr substitute(const Expr& e, const std::string& name, const Expr& by) {
  return subst(e, name, by, std::holds_alternative<NameE>(by->p));
}

Expr rename(const Expr& e, const std::string& from, const std::string& to) {
  TensorType t;
  // The type of the renamed reference is the type of the use it replaces; find one.
  Expr by;
  std::function<void(const Expr&)> find = [&](const Expr& x) {
    if (by) return;
    if (auto* n = std::get_if<NameE>(&x->p); n && n->name == from) by = make_expr(x->type, NameE{to}, x->loc);
    for (const Expr& k : children(x)) find(k);
  };
  find(e);
  if (!by) by = make_expr(TensorType{}, NameE{to});
  return subst(e, from, by, true);
}

void count_uses_in(const Expr& e, const std::string& name, Uses& u) {
  if (auto* n = std::get_if<NameE>(&e->p)) {
    if (n->name == name) ++u.operand;
    return;
  }
  if (auto* l = std::get_if<LetE>(&e->p)) {
    count_uses_in(l->value, name, u);
    if (l->name != name) count_uses_in(l->body, name, u);
    return;
  }
  if (auto* v = std::get_if<ViewE>(&e->p))
    for (const IExpr& ie : v->map.exprs) count_iexpr(ie, name, u);
  for (const Expr& k : children(e)) count_uses_in(k, name, u);
}

void count_all_uses_in(const Expr& e, std::map<std::string, Uses>& u) {
  std::multiset<std::string> bound;
  count_all(e, u, bound);
}

Uses count_uses(const Program& p, const std::string& name) {
  Uses u;
  for (const Binding& b : p.bindings) count_uses_in(b.expr, name, u);
  for (const std::string& o : p.outputs) u.output += o == name;
  return u;
}

int expr_depth(const Expr& e, std::map<const ExprNode*, int>* memo) {
  std::map<const ExprNode*, int> local;
  return fold_dag<int>(e, memo ? *memo : local, [](const ExprNode&, const std::vector<int>& kids) {
    return (kids.empty() ? 0 : *std::max_element(kids.begin(), kids.end())) + 1;
  });
}

std::string fresh_name(const Program& p, const std::string& stem) {
  std::set<std::string> used;
  for (const Input& i : p.inputs) used.insert(i.name);
  for (const Binding& b : p.bindings) used.insert(b.name);
  std::set<const ExprNode*> seen;
  for (const Binding& b : p.bindings)
    for_each_node_once(b.expr, seen, [&](const ExprNode& e) {
      if (auto* l = std::get_if<LetE>(&e.p)) used.insert(l->name);
    });
  for (int i = 0;; ++i) {
    std::string n = stem + std::to_string(i);
    if (!used.count(n)) return n;
  }
}

Lambda compose_lambda(const Lambda& g, size_t k, const Lambda& f, std::optional<DType> round_to) {
  Lambda r;
  size_t nf = f.param_types.size();
  // Parameter order: g[0, k), f, g(k, n).
  auto g_param_index = [&](size_t i) { return i < k ? i : i - 1 + nf; };
  for (size_t i = 0; i < k; ++i) r.params.push_back(i < g.params.size() ? g.params[i] : "a" + std::to_string(i)),
                                 r.param_types.push_back(g.param_types[i]);
  for (size_t i = 0; i < nf; ++i) {
    std::string n = i < f.params.size() ? f.params[i] : "b" + std::to_string(i);
    r.params.push_back(n);
    r.param_types.push_back(f.param_types[i]);
  }
  for (size_t i = k + 1; i < g.param_types.size(); ++i)
    r.params.push_back(i < g.params.size() ? g.params[i] : "a" + std::to_string(i)),
        r.param_types.push_back(g.param_types[i]);
  // Make parameter names distinct.
  std::set<std::string> seen;
  for (size_t i = 0; i < r.params.size(); ++i) {
    std::string base = r.params[i];
    for (int s = 1; seen.count(r.params[i]); ++s) r.params[i] = base + "_" + std::to_string(s);
    seen.insert(r.params[i]);
  }
  // f's code, with parameter indices shifted by k.
  for (const Instr& in : f.code) {
    Instr c = in;
    if (c.kind == Instr::Kind::Param) c.a += int32_t(k);
    r.code.push_back(c);
  }
  int32_t f_result = int32_t(r.code.size() - 1);
  if (round_to && is_half(*round_to)) {
    Instr c{};
    c.kind = Instr::Kind::Cast;
    c.a = f_result;
    c.type = *round_to;
    r.code.push_back(c);
    f_result = int32_t(r.code.size() - 1);
  }
  std::vector<int32_t> remap(g.code.size());
  for (size_t i = 0; i < g.code.size(); ++i) {
    Instr c = g.code[i];
    if (c.kind == Instr::Kind::Param) {
      if (size_t(c.a) == k) {
        remap[i] = f_result;
        continue;
      }
      c.a = int32_t(g_param_index(size_t(c.a)));
    } else if (c.kind == Instr::Kind::Op || c.kind == Instr::Kind::Cast) {
      if (c.a >= 0) c.a = remap[size_t(c.a)];
      if (c.b >= 0) c.b = remap[size_t(c.b)];
      if (c.c >= 0) c.c = remap[size_t(c.c)];
    }
    r.code.push_back(c);
    remap[i] = int32_t(r.code.size() - 1);
  }
  // The result must be the last instruction. When g's body is its parameter k
  // the result is f's (or its rounding cast): repeat that instruction at the
  // end (its operands precede it, so the copy computes the same value).
  int32_t res = remap.back();
  if (res != int32_t(r.code.size() - 1)) r.code.push_back(r.code[size_t(res)]);
  return r;
}

IExpr substitute_vars(const IExpr& e, const std::vector<IExpr>& by) {
  return mutate_inode(e, [&](const IExpr& n) { return n->kind == IExprNode::Kind::Var ? by[size_t(n->value)] : nullptr; });
}

IndexMap compose_maps(const IndexMap& inner, const IndexMap& outer) {
  IndexMap m;
  m.vars = outer.vars;
  for (const IExpr& e : inner.exprs) m.exprs.push_back(substitute_vars(e, outer.exprs));
  return m;
}

}  // namespace stax::sem
