// The summand graph of the error-bound analysis (§6.5, docs/design.md §4): a
// node per reduction and per linear map of a sum DAG, a leaf per tensor whose
// elements enter it as summands, and edges that map a consumer's index to the
// flat index of the target's output through the views in between (identity,
// affine with constant strides, or general: index expressions evaluated by
// sem::eval_iexpr, loads included).
#include <functional>

#include "oracle/error_bound/analyzer.h"
#include "semantics/index_eval.h"
#include "semantics/printer.h"
#include "semantics/views.h"

namespace stax::oracle::bound_analysis {

namespace {

/// The environment of sem::ConcreteIndexDomain for a view's index
/// expressions: loads read the slots' tensors; a load out of range stops
/// the analysis.
struct SlotIndexEnv {
  const std::vector<Slot>& slots;
  const ViewStep& st;

  template <class F>
  int64_t load_index(const IExprNode& e, F&& arg) {
    const Tensor& t = *slots[size_t(st.loads.at(e.name))].t;
    int64_t off = 0;
    for (size_t k = 0; k < e.args.size(); ++k) {
      int64_t v = arg(k);
      if (v < 0 || v >= t.shape[k]) fail_index(e, "load out of range");
      off = off * t.shape[k] + v;
    }
    return t.get_int(off);
  }
  [[noreturn]] void fail_index(const IExprNode&, std::string reason) { throw AnalysisError{std::move(reason)}; }
};

}  // namespace

// ---- Slots and nodes ----

int Analyzer::slot_by_name(const std::string& n) {
  if (auto it = slot_name_.find(n); it != slot_name_.end()) return it->second;
  Slot s;
  s.name = n;
  s.input = inputs_.count(n) > 0;
  slots_.push_back(std::move(s));
  return slot_name_[n] = int(slots_.size()) - 1;
}

int Analyzer::slot_hoist(const Expr& e, const Scope& sc) {
  if (!sc)
    if (auto it = top_expr_.find(e.get()); it != top_expr_.end()) return slot_by_name(it->second);
  auto key = std::make_pair(e.get(), scope_id(sc));
  if (auto it = slot_expr_.find(key); it != slot_expr_.end()) return it->second;
  Slot s;
  s.name = "%bound." + std::to_string(slots_.size());
  s.hoist = e;
  s.scope = sc;
  slots_.push_back(std::move(s));
  return slot_expr_[key] = int(slots_.size()) - 1;
}

int Analyzer::leaf_node(int slot, const std::string& label, const Shape& shape, DType dt) {
  if (auto it = leaf_memo_.find(slot); it != leaf_memo_.end()) return it->second;
  Node nd;
  nd.kind = Node::Kind::Leaf;
  nd.slot = slot;
  nd.label = label;
  nd.shape = shape;
  nd.dtype = dt;
  nodes_.push_back(std::move(nd));
  return leaf_memo_[slot] = int(nodes_.size()) - 1;
}

int Analyzer::node_for(const Expr& e, const Scope& sc, Family fam, const std::string& name) {
  auto key = std::make_tuple(e.get(), scope_id(sc), int(fam));
  if (auto it = node_memo_.find(key); it != node_memo_.end()) return it->second;
  int id = int(nodes_.size());
  nodes_.emplace_back();
  node_memo_[key] = id;
  Node nd;
  nd.fam = fam;
  nd.dtype = e->type.dtype;
  nd.shape = e->type.shape;
  auto value_slot = [&] { return name.empty() ? slot_hoist(e, sc) : slot_by_name(name); };
  if (auto* r = std::get_if<RedE>(&e->p)) {
    nd.kind = Node::Kind::Red;
    nd.op = r->op;
    nd.init = r->init.as_double();
    nd.init_zero = nd.init == 0.0;
    nd.init_unit = std::fabs(nd.init) == 1.0;
    nd.n = num_elements(r->extents);
    nd.acc_cls = cls_of(compute_type(nd.dtype));
    if (is_half(nd.dtype)) {
      nd.store_cls = cls_of(nd.dtype);
      nd.narrow_check = true;
      nd.value_slot = value_slot();
    }
    nd.child = strip(r->src, sc, fam, r->src->type.shape);
  } else {
    const auto& m = std::get<MapE>(e->p);
    nd.kind = Node::Kind::Lin;
    nd.fn = &m.fn;
    nd.lin = linear(m.fn);
    STAX_CHECK(nd.lin) << "linear map expected";
    const Instr& res = m.fn.code.back();
    // A half result computed in f32 (an add, a sub, a neg of either, a
    // constant) is rounded once more by the store; a parameter is already
    // half, and a final cast to the half type counts as its own rounding.
    bool res_computed = res.kind == Instr::Kind::Op || res.kind == Instr::Kind::Const;
    if (is_half(nd.dtype) && res_computed) nd.store_cls = cls_of(nd.dtype);
    // A narrowing cast anywhere in the lambda (cast(cast(x, bf16), f32) too):
    // its result, seen at the output through exact widening casts, must not
    // be subnormal in that format.
    bool res_narrow = false;
    for (size_t k = 0; k < m.fn.code.size(); ++k)
      if (m.fn.code[k].kind == Instr::Kind::Cast && nd.lin->round_cls[k] >= 0) {
        res_narrow = true;
        nd.narrow_min_normal =
            std::max(nd.narrow_min_normal, min_normal(kClassDType[size_t(nd.lin->round_cls[k])]));
      }
    if (nd.store_cls >= 0 || res_narrow) {
      nd.narrow_check = true;
      nd.value_slot = value_slot();
    }
    for (const Expr& a : m.args) nd.args.push_back(strip(a, sc, fam, e->type.shape));
    size_t nc = m.fn.code.size(), na = m.args.size();
    nd.z.assign(nc, 0);
    nd.rnd.assign(nc, 0);
    nd.argz.assign(na, 0);
    nd.argv.assign(na, 0.0);
    nd.argi.assign(na, 0);
  }
  nodes_[size_t(id)] = std::move(nd);
  return id;
}

// ---- Edges ----

ViewStep Analyzer::view_step(const ViewE& v, const Shape& out, const Scope& sc) {
  ViewStep st;
  st.map = &v.map;
  st.src = v.src->type.shape;
  st.out = out;
  for (const IExpr& ie : v.map.exprs) st.wrap.push_back(iexpr_has_load(ie));
  std::function<void(const IExpr&)> loads = [&](const IExpr& ie) {
    if (ie->kind == IExprNode::Kind::Load && !st.loads.count(ie->name)) {
      Resolved r = resolve(ie->name, sc);
      if (r.k == Resolved::Let) st.loads[ie->name] = slot_hoist(r.e, r.sc);
      else st.loads[ie->name] = slot_by_name(ie->name);
    }
    for (const IExpr& a : ie->args) loads(a);
  };
  for (const IExpr& ie : v.map.exprs) loads(ie);
  return st;
}

Edge Analyzer::strip(Expr e, Scope sc, Family fam, const Shape& consumer) {
  Edge ed;
  ed.consumer = consumer;
  // The views on the way, and a name whose value is the expression reached
  // (no view since).
  struct Hooks : ChainHooks {
    Analyzer& a;
    Edge& ed;
    std::string name;
    Resolved::K name_kind = Resolved::None;
    Hooks(Analyzer& a, Edge& ed) : a(a), ed(ed) {}
    void on_name(const std::string& n, Resolved::K k) {
      name = n;
      name_kind = k;
    }
    void on_view(const ViewE& x, const Shape& out, const Scope& sc) {
      ed.views.push_back(a.view_step(x, out, sc));
      name.clear();
      name_kind = Resolved::None;
    }
  } h(*this, ed);
  ChainEnd end = follow_chain(std::move(e), std::move(sc), h);
  const Expr& at = end.e;
  switch (end.k) {
    case ChainEnd::TooLong: throw AnalysisError{"view chain too long"};
    case ChainEnd::Unbound: throw AnalysisError{"unbound name " + std::get<NameE>(at->p).name};
    case ChainEnd::Input: {
      const std::string& n = std::get<NameE>(at->p).name;
      ed.target = leaf_node(slot_by_name(n), n, at->type.shape, at->type.dtype);
      break;
    }
    case ChainEnd::Value: {
      if (is_candidate(at, end.sc, fam)) {
        ed.target = node_for(at, end.sc, fam, h.name_kind == Resolved::Binding ? h.name : "");
        break;
      }
      int slot = h.name_kind == Resolved::Binding ? slot_by_name(h.name) : slot_hoist(at, end.sc);
      std::string label = h.name;
      if (label.empty()) {
        label = print_expr(at, &p_);
        if (label.size() > 48) label = label.substr(0, 45) + "...";
        label = "(" + label + ")";
      }
      ed.target = leaf_node(slot, label, at->type.shape, at->type.dtype);
      break;
    }
  }
  ed.target_shape = at->type.shape;
  finalize(ed);
  return ed;
}

void Analyzer::finalize(Edge& ed) {
  ed.idx.assign(ed.consumer.size(), 0);
  if (ed.views.empty()) {
    STAX_CHECK(ed.consumer == ed.target_shape) << "edge without views changes the shape";
    ed.kind = Edge::Kind::Identity;
    return;
  }
  std::vector<Affine> afs;
  for (const ViewStep& st : ed.views) {
    if (!st.loads.empty()) {
      ed.kind = Edge::Kind::General;
      return;
    }
    auto af = as_affine(*st.map, int(st.out.size()));
    if (!af || !view_statically_in_bounds(st.src, st.out, *st.map)) {
      ed.kind = Edge::Kind::General;
      return;
    }
    afs.push_back(std::move(*af));
  }
  auto apply = [&](std::vector<int64_t> idx) {
    for (const Affine& af : afs) {
      std::vector<int64_t> out(af.c.size());
      for (size_t j = 0; j < af.c.size(); ++j) {
        int64_t v = af.c[j];
        for (size_t k = 0; k < idx.size(); ++k) v += af.a[j][k] * idx[k];
        out[j] = v;
      }
      idx = std::move(out);
    }
    int64_t flat = 0;
    for (size_t j = 0; j < idx.size(); ++j) flat = flat * ed.target_shape[j] + idx[j];
    return flat;
  };
  std::vector<int64_t> zero(ed.consumer.size(), 0);
  ed.base = apply(zero);
  ed.stride.assign(ed.consumer.size(), 0);
  for (size_t k = 0; k < ed.consumer.size(); ++k) {
    std::vector<int64_t> e1 = zero;
    e1[k] = 1;
    ed.stride[k] = apply(e1) - ed.base;
  }
  ed.kind = Edge::Kind::Affine;
}

// ---- Index mapping ----

int64_t Analyzer::map_general(const Edge& ed, int64_t flat) const {
  std::vector<int64_t>& a = s1_;
  std::vector<int64_t>& b = s2_;
  a.assign(ed.consumer.size(), 0);
  for (size_t k = ed.consumer.size(); k-- > 0;) {
    a[k] = flat % ed.consumer[k];
    flat /= ed.consumer[k];
  }
  for (const ViewStep& st : ed.views) {
    b.assign(st.src.size(), 0);
    SlotIndexEnv env{slots_, st};
    sem::ConcreteIndexDomain<SlotIndexEnv> dom{env, a.data()};
    for (size_t j = 0; j < st.src.size(); ++j) {
      int64_t v = sem::eval_iexpr(st.map->exprs[j], dom);
      if (st.wrap[j] && v < 0) v += st.src[j];
      if (v < 0 || v >= st.src[j]) throw AnalysisError{"view index out of range"};
      b[j] = v;
    }
    std::swap(a, b);
  }
  int64_t off = 0;
  for (size_t j = 0; j < a.size(); ++j) off = off * ed.target_shape[j] + a[j];
  return off;
}

int64_t Analyzer::map_one(const Edge& ed, int64_t flat) const {
  switch (ed.kind) {
    case Edge::Kind::Identity: return flat;
    case Edge::Kind::Affine: {
      int64_t off = ed.base;
      for (size_t k = ed.consumer.size(); k-- > 0;) {
        off += ed.stride[k] * (flat % ed.consumer[k]);
        flat /= ed.consumer[k];
      }
      return off;
    }
    case Edge::Kind::General: return map_general(ed, flat);
  }
  return flat;
}

void Analyzer::cursor_start(const Edge& ed, int64_t flat) const {
  ed.flat = flat;
  if (ed.kind == Edge::Kind::Affine) {
    int64_t off = ed.base, f = flat;
    for (size_t k = ed.consumer.size(); k-- > 0;) {
      ed.idx[k] = f % ed.consumer[k];
      off += ed.stride[k] * ed.idx[k];
      f /= ed.consumer[k];
    }
    ed.off = off;
  } else {
    ed.off = map_one(ed, flat);
  }
}

void Analyzer::cursor_next(const Edge& ed) const {
  ++ed.flat;
  switch (ed.kind) {
    case Edge::Kind::Identity: ++ed.off; return;
    case Edge::Kind::Affine:
      for (size_t k = ed.consumer.size(); k-- > 0;) {
        ed.off += ed.stride[k];
        if (++ed.idx[k] < ed.consumer[k]) return;
        ed.off -= ed.stride[k] * ed.consumer[k];
        ed.idx[k] = 0;
      }
      return;
    case Edge::Kind::General:
      if (ed.flat < num_elements(ed.consumer)) ed.off = map_general(ed, ed.flat);
      return;
  }
}

}  // namespace stax::oracle::bound_analysis
