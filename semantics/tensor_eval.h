// The generic tensor-level evaluator, templated on a block domain (docs/design.md §1):
// one walker for Ieee and Real. Maps over maps and views of stored
// tensors are evaluated lazily, a block of elements at a time; reductions,
// let-bound values and the operands of views of computed values are
// materialised (which keeps tensor values strict for ⊥).
#pragma once

#include <map>
#include <memory>

#include "semantics/evaluator.h"
#include "semantics/ieee_scalar.h"
#include "semantics/index_eval.h"
#include "semantics/lambda_eval.h"
#include "semantics/printer.h"
#include "semantics/views.h"

namespace stax::sem {

struct EvalFailure {
  std::string reason;
  std::vector<int64_t> index;
  const ExprNode* where;
};

template <class D>
class TensorEvaluator {
 public:
  using T = typename D::TensorT;
  using TPtr = std::shared_ptr<const T>;
  using Value = typename D::Value;

  TensorEvaluator(D& dom, int64_t max_elements) : dom_(dom), max_elements_(max_elements) {}

  std::map<std::string, std::vector<TPtr>> env;

  TPtr lookup(const std::string& n) const {
    auto it = env.find(n);
    STAX_CHECK(it != env.end() && !it->second.empty()) << "unbound name " << n;
    return it->second.back();
  }

  TPtr materialize(const Expr& e) {
    if (auto* x = std::get_if<NameE>(&e->p)) return lookup(x->name);
    if (auto* x = std::get_if<LetE>(&e->p)) {
      env[x->name].push_back(materialize(x->value));
      TPtr r = materialize(x->body);
      env[x->name].pop_back();
      return r;
    }
    if (auto* x = std::get_if<RedE>(&e->p)) return reduce(e, *x);
    auto p = plan(e);
    auto out = std::make_shared<T>(make(e->type));
    int64_t total = out->size();
    auto scratch = dom_.make_regs(1);
    Value col = D::value_of(scratch[0]);
    for (int64_t s = 0; s < total; s += int64_t(D::kBlock)) {
      size_t n = size_t(std::min<int64_t>(int64_t(D::kBlock), total - s));
      Value v = produce(*p, s, n, col);
      dom_.store(v, *out, s, n);
    }
    return out;
  }

 private:
  struct Plan {
    enum class Kind { Source, View, Map, Iota, Full, Rand } kind;
    const ExprNode* node;
    DType tag;
    Shape shape;
    TPtr tensor;
    // View
    const IndexMap* map = nullptr;
    bool affine_fast = false;
    std::vector<int64_t> strides;  // per result dim, when affine and in bounds
    int64_t base = 0;
    std::vector<int64_t> src_strides;
    std::vector<bool> wrap;  // per source dim: has an indirect load
    std::vector<int64_t> offsets;
    // Map
    std::vector<std::unique_ptr<Plan>> kids;
    std::vector<typename D::Buf> kid_cols, regs;
    std::vector<Value> kid_vals, reg_vals;
    std::vector<uint8_t> const_ready;
    // Iota / Full
    int dim = 0;
    int64_t inner = 1;
    uint64_t key = 0;
    Const value;
  };

  T make(const TensorType& t) {
    int64_t n = num_elements(t.shape);
    if (n > max_elements_)
      throw ResourceError{"tensor " + type_str(t) + " has " + std::to_string(n) + " elements, over the limit of " +
                          std::to_string(max_elements_)};
    return dom_.make_tensor(t.dtype, t.shape);
  }


  std::unique_ptr<Plan> plan(const Expr& e) {
    auto p = std::make_unique<Plan>();
    p->node = e.get();
    p->tag = e->type.dtype;
    p->shape = e->type.shape;
    std::visit(
        [&](const auto& x) {
          using X = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<X, NameE> || std::is_same_v<X, RedE> || std::is_same_v<X, LetE>) {
            p->kind = Plan::Kind::Source;
            p->tensor = materialize(e);
          } else if constexpr (std::is_same_v<X, ViewE>) {
            p->kind = Plan::Kind::View;
            p->tensor = materialize(x.src);
            p->map = &x.map;
            const Shape& ss = x.src->type.shape;
            p->src_strides = row_major_strides(ss);
            for (const IExpr& ie : x.map.exprs) p->wrap.push_back(iexpr_has_load(ie));
            auto af = as_affine(x.map, int(p->shape.size()));
            if (af && view_statically_in_bounds(ss, p->shape, x.map)) {
              p->affine_fast = true;
              p->strides.assign(p->shape.size(), 0);
              for (size_t j = 0; j < ss.size(); ++j) {
                p->base += af->c[j] * p->src_strides[j];
                for (size_t k = 0; k < p->shape.size(); ++k) p->strides[k] += af->a[j][k] * p->src_strides[j];
              }
            }
            p->offsets.resize(D::kBlock);
          } else if constexpr (std::is_same_v<X, MapE>) {
            p->kind = Plan::Kind::Map;
            for (const Expr& a : x.args) p->kids.push_back(plan(a));
            p->kid_cols = dom_.make_regs(x.args.size());
            p->regs = dom_.make_regs(x.fn.code.size());
            p->const_ready.assign(x.fn.code.size(), 0);
            for (auto& b : p->kid_cols) p->kid_vals.push_back(D::value_of(b));
          } else if constexpr (std::is_same_v<X, IotaE>) {
            p->kind = Plan::Kind::Iota;
            p->dim = x.dim;
            p->inner = row_major_strides(p->shape)[size_t(x.dim)];
            p->offsets.resize(D::kBlock);
          } else if constexpr (std::is_same_v<X, FullE>) {
            p->kind = Plan::Kind::Full;
            p->value = x.value;
          } else if constexpr (std::is_same_v<X, RandE>) {
            p->kind = Plan::Kind::Rand;
            p->key = x.key;
            p->offsets.resize(D::kBlock);
          }
        },
        e->p);
    return p;
  }

  [[noreturn]] void fail(const Plan& p, int64_t flat, std::string reason) {
    throw EvalFailure{std::move(reason), unflatten(p.shape, flat), p.node};
  }

  /// Loads and failures of the concrete index domain (index_eval.h): a load
  /// checks each index before evaluating the next.
  struct IndexEnv {
    TensorEvaluator& ev;
    const Plan& p;
    int64_t flat;
    template <class F>
    int64_t load_index(const IExprNode& e, F&& arg) {
      TPtr t = ev.lookup(e.name);
      int64_t off = 0;
      for (size_t k = 0; k < e.args.size(); ++k) {
        int64_t v = arg(k);
        if (v < 0 || v >= t->shape[k])
          fail_index(e, "load(" + e.name + ") index " + std::to_string(v) + " out of range [0, " +
                            std::to_string(t->shape[k]) + ") in dim " + std::to_string(k));
        off = off * t->shape[k] + v;
      }
      return ev.dom_.read_int(*t, off);
    }
    [[noreturn]] void fail_index(const IExprNode&, std::string reason) { ev.fail(p, flat, std::move(reason)); }
  };

  int64_t eval_index(const IExpr& e, const int64_t* idx, const Plan& p, int64_t flat) {
    IndexEnv env{*this, p, flat};
    ConcreteIndexDomain<IndexEnv> dom{env, idx};
    return eval_iexpr(e, dom);
  }

  Value produce(Plan& p, int64_t start, size_t n, Value out) {
    switch (p.kind) {
      case Plan::Kind::Source: dom_.load_range(out, *p.tensor, start, n); return out;
      case Plan::Kind::Full: dom_.fill(out, p.value, n); return out;
      case Plan::Kind::Rand: {
        // 24 random bits: exact in f32/f64; the store rounds them for f16/bf16.
        for (size_t i = 0; i < n; ++i)
          p.offsets[i] = int64_t(rand_value(p.key, start + int64_t(i)) * 0x1.0p24);
        // In the compute type: a 24-bit integer would overflow f16 before the scaling.
        dom_.from_int64(out, p.offsets.data(), n, compute_type(p.tag));
        dom_.scale_pow2(out, p.tag, -24, n);
        dom_.round_to_tag(out, p.tag, n);
        return out;
      }
      case Plan::Kind::Iota: {
        int64_t ext = p.shape[size_t(p.dim)];
        for (size_t i = 0; i < n; ++i) p.offsets[i] = ((start + int64_t(i)) / p.inner) % ext;
        dom_.from_int64(out, p.offsets.data(), n, p.tag);
        return out;
      }
      case Plan::Kind::View: {
        size_t r = p.shape.size();
        std::vector<int64_t> idx = unflatten(p.shape, start);
        if constexpr (requires { D::kSymbolicLoads; }) {
          // A symbolic domain evaluates the index expressions itself: its
          // indirect indices, and their range checks, are terms.
          if (!p.affine_fast) {
            typename D::Lookup find = [this](const std::string& name) -> const T& { return *lookup(name); };
            for (size_t i = 0; i < n; ++i) {
              dom_.load_view(out, i, *p.tensor, *p.map, p.wrap, idx.data(), find);
              for (size_t k = r; k-- > 0;) {
                if (++idx[k] < p.shape[k]) break;
                idx[k] = 0;
              }
            }
            return out;
          }
        }
        if (p.affine_fast) {
          int64_t off = p.base;
          for (size_t k = 0; k < r; ++k) off += p.strides[k] * idx[k];
          for (size_t i = 0; i < n; ++i) {
            p.offsets[i] = off;
            for (size_t k = r; k-- > 0;) {
              off += p.strides[k];
              if (++idx[k] < p.shape[k]) break;
              off -= p.strides[k] * p.shape[k];
              idx[k] = 0;
            }
          }
        } else {
          const Shape& ss = p.tensor->shape;
          for (size_t i = 0; i < n; ++i) {
            int64_t flat = start + int64_t(i), off = 0;
            for (size_t j = 0; j < ss.size(); ++j) {
              int64_t v = eval_index(p.map->exprs[j], idx.data(), p, flat);
              if (p.wrap[j] && v < 0) v += ss[j];
              if (v < 0 || v >= ss[j])
                fail(p, flat, "index " + std::to_string(v) + " out of range [0, " + std::to_string(ss[j]) +
                                  ") in dim " + std::to_string(j) + " of the viewed tensor" +
                                  (p.wrap[j] ? " (after wrapping negatives)" : ""));
              off += v * p.src_strides[j];
            }
            p.offsets[i] = off;
            for (size_t k = r; k-- > 0;) {
              if (++idx[k] < p.shape[k]) break;
              idx[k] = 0;
            }
          }
        }
        dom_.load(out, *p.tensor, p.offsets.data(), n);
        return out;
      }
      case Plan::Kind::Map: {
        for (size_t k = 0; k < p.kids.size(); ++k) p.kid_vals[k] = produce(*p.kids[k], start, n, D::value_of(p.kid_cols[k]));
        const Lambda& fn = std::get<MapE>(p.node->p).fn;
        dom_.regs = p.regs.data();
        dom_.const_ready = p.const_ready.data();
        dom_.n = n;
        dom_.fail_pos = -1;
        Value v = eval_lambda(fn, dom_, std::span<const Value>(p.kid_vals), p.reg_vals);
        if (dom_.fail_pos >= 0) fail(p, start + dom_.fail_pos, dom_.fail_reason);
        dom_.copy(out, v, p.tag, n);
        dom_.round_to_tag(out, p.tag, n);
        return out;
      }
    }
    return out;
  }

  TPtr reduce(const Expr& e, const RedE& x) {
    auto out = std::make_shared<T>(make(e->type));
    int64_t rsize = num_elements(x.extents);
    int64_t outputs = out->size();
    typename D::RedState st;
    dom_.red_init(st, x.op, x.init, x.src->type.dtype, outputs, rsize);
    auto p = plan(x.src);
    auto scratch = dom_.make_regs(1);
    Value col = D::value_of(scratch[0]);
    int64_t total = num_elements(x.src->type.shape);
    for (int64_t s = 0; s < total; s += int64_t(D::kBlock)) {
      size_t n = size_t(std::min<int64_t>(int64_t(D::kBlock), total - s));
      Value v = produce(*p, s, n, col);
      dom_.red_fold(st, v, n, s);
    }
    dom_.red_finish(st, *out);
    return out;
  }

  D& dom_;
  int64_t max_elements_;
};

/// Runs every binding of a program in order.
template <class D, class Out>
void run_bindings(TensorEvaluator<D>& ev, const Program& p, std::optional<Failure>& failure, Out& outputs) {
  for (const Binding& b : p.bindings) {
    try {
      ev.env[b.name].push_back(ev.materialize(b.expr));
    } catch (const EvalFailure& f) {
      Expr node(std::shared_ptr<const ExprNode>(), f.where);  // non-owning view of the failing node
      failure = Failure{b.name, f.index, f.reason, print_expr(node, &p)};
      return;
    }
  }
  for (const std::string& o : p.outputs) outputs[o] = ev.lookup(o);
}

/// Evaluates a program in a domain whose tensors are converted from the
/// inputs (`dom.from_tensor`): the Real domain and its enclosures. At most
/// `limit` elements per input (ResourceError naming `domain` beyond).
template <class D, class Outcome>
void run_converted(D& dom, const Program& p, const Inputs& in, int64_t limit, const char* domain, Outcome& out) {
  TensorEvaluator<D> ev(dom, limit);
  for (const Input& i : p.inputs) {
    if (in.at(i.name).size() > limit)
      throw ResourceError{"input '" + i.name + "' is too large for the " + domain};
    ev.env[i.name].push_back(std::make_shared<const typename D::TensorT>(dom.from_tensor(in.at(i.name))));
  }
  run_bindings(ev, p, out.failure, out.outputs);
}

}  // namespace stax::sem
