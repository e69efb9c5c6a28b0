// One row per reduction root of the error-bound analysis (§6.5,
// docs/design.md §4): every element of the root measured against an exact ground
// truth (mpfr_sum for sums, a 512-bit product for products), the worst
// element (largest ratio |ŝ − s| / bound), the summands responsible for it,
// and the textbook case the structure matches (Higham, ch. 4: sequential
// n−1, k segments (n/k − 1) + (k − 1), pairwise ⌈log2 n⌉). Elements outside
// the model (a non-finite summand or result, a subnormal half store, a
// product that may leave the normal range) are counted and skipped.
#include <algorithm>

#include "oracle/error_bound/analyzer.h"

namespace stax::oracle::bound_analysis {

/// The elements of one row measured so far: the worst one, and why the
/// others were skipped.
struct RowRecorder {
  BoundRow& row;
  bool keep_elements;
  std::map<std::string, int64_t> reasons;

  void consider(int64_t q, double shat, double exact, double err, double bound, double sum_abs) {
    double ratio = bound > 0 ? err / bound : (err == 0 ? 0.0 : kInf);
    ++row.checked;
    if (keep_elements) {
      row.elem_measured[size_t(q)] = err;
      row.elem_bound[size_t(q)] = bound;
      row.elem_exact[size_t(q)] = exact;
    }
    if (row.worst < 0 || ratio > row.ratio || (ratio == row.ratio && err > row.measured)) {
      row.worst = q;
      row.computed = shat;
      row.exact = exact;
      row.measured = err;
      row.bound = bound;
      row.ratio = ratio;
      row.sum_abs = sum_abs;
    }
  }
  void skip(const std::string& why) {
    ++row.skipped;
    ++reasons[why];
  }
};

double Analyzer::expansion(int id) {
  if (auto it = expansion_.find(id); it != expansion_.end()) return it->second;
  const Node& nd = nodes_[size_t(id)];
  double c = 1;
  if (nd.kind == Node::Kind::Red) {
    c = double(nd.n) * expansion(nd.child.target) + 1;
  } else if (nd.kind == Node::Kind::Lin) {
    c = 0;
    for (const Term& t : nd.lin->terms) c += t.param < 0 ? 1 : expansion(nd.args[size_t(t.param)].target);
  }
  return expansion_[id] = c;
}

/// The accumulation precision: that of the first red below the root.
int Analyzer::accumulation_class(int id) const {
  int main_cls = cls_of(compute_type(nodes_[size_t(id)].dtype));
  for (int cur = id;;) {
    const Node& nd = nodes_[size_t(cur)];
    if (nd.kind == Node::Kind::Red) {
      main_cls = nd.acc_cls;
      break;
    }
    if (nd.kind != Node::Kind::Lin || nd.args.empty()) break;
    cur = nd.args[0].target;
  }
  return main_cls;
}

BoundRow Analyzer::run_root(const RootSpec& rs, int id) {
  // Every path from the root to a leaf is visited once per element.
  double paths = expansion(id) * double(std::max<int64_t>(num_elements(nodes_[size_t(id)].shape), 1));
  if (paths > kMaxPaths)
    throw AnalysisError{"reduction " + rs.name + " expands to " + std::to_string(paths) +
                        " summand paths, over the analysis limit of " + std::to_string(kMaxPaths)};
  const Node& root = nodes_[size_t(id)];
  BoundRow row;
  row.name = rs.name;
  row.output = rs.top && outputs_.count(rs.owner);
  row.op = root.kind == Node::Kind::Red ? root.op : RedOp::Sum;
  row.dtype = root.dtype;
  row.shape = root.shape;
  row.elements = num_elements(root.shape);
  int main_cls = accumulation_class(id);
  row.acc = kClassDType[main_cls];
  const Tensor& val = *slots_[size_t(root.value_slot)].t;
  if (opt_.keep_elements) {
    row.elem_measured.assign(size_t(row.elements), kNaN);
    row.elem_bound.assign(size_t(row.elements), kNaN);
    row.elem_exact.assign(size_t(row.elements), kNaN);
  }
  RowRecorder rec{row, opt_.keep_elements, {}};
  if (rs.fam == Family::Sum) measure_sums(id, main_cls, val, rec);
  else if (rs.fam == Family::Prod) measure_products(id, main_cls, val, rec);
  else measure_extrema(id, rs.fam, val, rec);
  for (const auto& [why, cnt] : rec.reasons)
    row.skip_reason += (row.skip_reason.empty() ? "" : "; ") + why + " (" + std::to_string(cnt) + ")";
  if (row.worst >= 0) row.worst_index = unflatten(row.shape, row.worst);
  describe(row, id);
  return row;
}

/// |ŝ − s| ≤ Σ_i c_i·|a_i| per element; the largest contributions of the
/// worst element on a violation (or when asked).
void Analyzer::measure_sums(int id, int main_cls, const Tensor& val, RowRecorder& rec) {
  BoundRow& row = rec.row;
  Depth worst_st;
  if (!sum_acc_) sum_acc_ = std::make_unique<SumAcc>();
  SumAcc& a = *sum_acc_;
  a.main_cls = main_cls;
  a.top = nullptr;
  for (int64_t q = 0; q < row.elements; ++q) {
    a.reset();
    visit_sum(id, q, Depth{}, Depth{}, 1.0, a);
    row.summands = std::max(row.summands, a.count);
    row.max_effective_depth = std::max<int64_t>(row.max_effective_depth, a.max_eff);
    for (int k = 0; k < kClasses; ++k) worst_st.n[size_t(k)] = std::max(worst_st.n[size_t(k)], a.max_st.n[size_t(k)]);
    double shat = read(val, q);
    if (a.nonfinite) {
      rec.skip("a summand is inf or NaN");
      continue;
    }
    if (!std::isfinite(shat)) {
      rec.skip("overflow: the result is not finite");
      continue;
    }
    if (a.underflow) {
      rec.skip("a narrowing rounding may have underflowed (subnormal half result)");
      continue;
    }
    double exact, err;
    a.ex.finish(shat, exact, err);
    // The bound was summed in double: inflate it by that summation's
    // error (count·2^-52 relative) and by the subnormal floor.
    double bound = a.bound * (1.0 + double(a.nonzero + 4) * 0x1.0p-52) + double(a.nonzero) * 0x1.0p-1074;
    rec.consider(q, shat, exact, err, bound, a.sum_abs);
  }
  row.max_depth = worst_st.n[size_t(main_cls)];
  for (int k = 0; k < kClasses; ++k)
    if (k != main_cls && worst_st.n[size_t(k)])
      row.extra_roundings += (row.extra_roundings.empty() ? "+" : ", +") + std::to_string(worst_st.n[size_t(k)]) +
                             " " + std::string(dtype_name(kClassDType[k]));
  if (row.worst >= 0 && (row.ratio > 1.0 || opt_.top_always) && opt_.top > 0) {
    std::vector<Cand> top;
    a.top = &top;
    a.top_k = size_t(opt_.top);
    a.reset();
    visit_sum(id, row.worst, Depth{}, Depth{}, 1.0, a);
    a.top = nullptr;
    std::sort_heap(top.begin(), top.end());
    for (const Cand& c : top)
      row.top.push_back({where(c.leaf, c.off), c.value, c.depth.total(), depth_text(c.depth, main_cls), c.term});
  }
}

/// |p̂ − p| ≤ γ(D)·|p| per element, D the multiplications that round;
/// checked only where no partial product can leave the normal range.
void Analyzer::measure_products(int id, int main_cls, const Tensor& val, RowRecorder& rec) const {
  BoundRow& row = rec.row;
  const Node& root = nodes_[size_t(id)];
  ProdAcc a;
  DType range = root.dtype;
  for (int64_t q = 0; q < row.elements; ++q) {
    a.reset();
    visit_prod(id, q, a);
    row.summands = std::max(row.summands, a.count);
    row.max_depth = std::max(row.max_depth, a.D);
    double shat = read(val, q);
    if (a.nonfinite || !std::isfinite(shat)) {
      rec.skip("a factor or the result is inf or NaN");
      continue;
    }
    // Every partial product lies within [2^lo, 2^hi] up to the rounding
    // errors ((1+u)^D <= 2^(1.45·D·u) either way, plus a bit) and log2's
    // own (1e-12 each).
    double slack = 2.0 + 2.0 * (double(a.D) * class_u(main_cls) + double(a.S) * 0x1.0p-8) + 1e-12 * double(a.count);
    if (a.lo < min_exponent(range) + slack || a.hi > max_exponent(range) - slack) {
      rec.skip("a partial product may leave the normal range");
      continue;
    }
    double exact = a.zero ? 0.0 : mpfr_get_d(a.p, MPFR_RNDN);
    double err;
    if (a.zero) {
      err = std::fabs(shat);
    } else {
      mpfr_t d;
      mpfr_init2(d, 64);
      mpfr_d_sub(d, shat, a.p, MPFR_RNDA);
      err = std::fabs(mpfr_get_d(d, MPFR_RNDA));
      mpfr_clear(d);
    }
    Depth dd;
    dd.n[size_t(main_cls)] = int32_t(a.D);
    if (root.store_cls >= 0) dd.n[size_t(root.store_cls)] += int32_t(a.S);
    double bound = coefficient(dd) * std::fabs(exact);
    // The reference product was rounded at 512 bits once per factor.
    bound = bound * (1.0 + 0x1.0p-50) + std::fabs(exact) * double(a.count) * 0x1.0p-500;
    rec.consider(q, shat, exact, err, bound, std::fabs(exact));
  }
  row.max_effective_depth = row.max_depth;
}

/// max/min: IEEE maximum/minimum are exact, the bound is 0.
void Analyzer::measure_extrema(int id, Family fam, const Tensor& val, RowRecorder& rec) const {
  BoundRow& row = rec.row;
  MaxAcc a;
  for (int64_t q = 0; q < row.elements; ++q) {
    a = MaxAcc{};
    a.is_max = fam == Family::Max;
    visit_max(id, q, a);
    row.summands = std::max(row.summands, a.count);
    double shat = read(val, q);
    double err;
    if (std::isnan(shat) && std::isnan(a.m)) err = 0;
    else if (shat == a.m) err = 0;
    else err = std::isnan(shat - a.m) ? kInf : std::fabs(shat - a.m);
    rec.consider(q, shat, a.m, err, 0.0, std::fabs(a.m));
  }
}

std::string Analyzer::where(int leaf, int64_t off) const {
  if (leaf < 0) return "constant (init)";
  const Node& nd = nodes_[size_t(leaf)];
  return nd.label + index_text(unflatten(nd.shape, off));
}

void Analyzer::describe(BoundRow& row, int id) const {
  if (row.op == RedOp::Max || row.op == RedOp::Min) {
    row.higham = "exact: IEEE maximum/minimum are associative and commutative";
    row.higham_match = true;
    return;
  }
  if (row.op == RedOp::Prod) {
    row.higham = "product: relative gamma(D), D = " + std::to_string(row.max_depth) + " rounding multiplications";
    row.higham_match = true;
    return;
  }
  struct Level {
    int64_t n;
    bool init;
  };
  std::vector<Level> lv;
  bool linear_chain = true;
  for (int cur = id;;) {
    const Node& nd = nodes_[size_t(cur)];
    if (nd.kind == Node::Kind::Leaf) break;
    if (nd.kind == Node::Kind::Red) {
      lv.push_back({nd.n, !nd.init_zero});
      cur = nd.child.target;
      continue;
    }
    if (nd.lin->terms.size() == 1 && nd.lin->terms[0].param >= 0) {
      cur = nd.args[size_t(nd.lin->terms[0].param)].target;
      continue;
    }
    linear_chain = false;
    break;
  }
  if (!linear_chain || lv.empty()) {
    row.higham = "general tree (max depth " + std::to_string(row.max_depth) + ")";
    row.higham_match = false;
    return;
  }
  int64_t formula = 0, total = 1;
  bool any_init = false;
  std::vector<Level> eff;  // levels that can round
  for (const Level& l : lv) {
    row.levels.push_back(l.n);
    if (l.n >= 1) formula += l.n - 1 + (l.init ? 1 : 0);
    any_init |= l.init;
    total *= std::max<int64_t>(l.n, 1);
    if (l.n > 1 || l.init) eff.push_back(l);
  }
  std::string f = std::to_string(formula), init_note = any_init ? " (+1 per nonzero init)" : "";
  std::string name;
  if (eff.size() <= 1) {
    name = "sequential: n-1 = " + std::to_string(total) + "-1";
  } else if (eff.size() == 2) {
    int64_t k = eff[0].n, m = eff[1].n;
    name = "k segments (k=" + std::to_string(k) + "): (n/k-1)+(k-1) = " + std::to_string(m - 1) + "+" +
           std::to_string(k - 1);
  } else {
    bool twos = true, upper_twos = true;
    for (size_t i = 0; i < eff.size(); ++i) {
      twos &= eff[i].n == 2;
      if (i + 1 < eff.size()) upper_twos &= eff[i].n == 2;
    }
    if (twos) {
      name = "pairwise: ceil(log2 n) = log2 " + std::to_string(total);
    } else if (upper_twos) {
      int64_t b = eff.back().n;
      name = "blocks of " + std::to_string(b) + " + pairwise tree: (B-1)+log2(n/B) = " + std::to_string(b - 1) +
             "+" + std::to_string(eff.size() - 1);
    } else {
      name = "nested [";
      for (size_t i = 0; i < eff.size(); ++i) name += (i ? ", " : "") + std::to_string(eff[i].n);
      name += "]: sum(n_l - 1)";
    }
  }
  row.higham = name + init_note + " = " + f;
  row.higham_match = row.max_depth == formula;
}

}  // namespace stax::oracle::bound_analysis
