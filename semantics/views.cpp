#include "semantics/views.h"

#include <algorithm>
#include <functional>
#include <limits>

#include "semantics/index_eval.h"

namespace stax::sem {

namespace {

std::vector<std::string> default_vars(size_t n) {
  std::vector<std::string> v;
  for (size_t i = 0; i < n; ++i) v.push_back("i" + std::to_string(i));
  return v;
}


}  // namespace

ViewResult expand_permute(const Shape& src, const std::vector<int64_t>& perm) {
  if (perm.size() != src.size())
    return "permute expects " + std::to_string(src.size()) + " dims, got " + std::to_string(perm.size());
  std::vector<bool> seen(src.size(), false);
  ViewShape v;
  v.map.vars = default_vars(src.size());
  v.map.exprs.resize(src.size());
  for (size_t k = 0; k < perm.size(); ++k) {
    int64_t p = perm[k];
    if (p < 0 || p >= int64_t(src.size()) || seen[size_t(p)])
      return "permute expects a permutation of 0.." + std::to_string(int64_t(src.size()) - 1);
    seen[size_t(p)] = true;
    v.shape.push_back(src[size_t(p)]);
    v.map.exprs[size_t(p)] = ivar(int(k));
  }
  return v;
}

ViewResult expand_slice(const Shape& src, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  int64_t r = int64_t(src.size());
  if (dim < 0) dim += r;
  if (dim < 0 || dim >= r) return "slice dim out of range for a rank-" + std::to_string(r) + " tensor";
  if (step <= 0) return "slice expects a positive step";
  int64_t s = src[size_t(dim)];
  auto norm = [&](int64_t x) { return std::clamp(x < 0 ? x + s : x, int64_t(0), s); };
  start = norm(start);
  stop = norm(stop);
  int64_t n = stop > start ? (stop - start - 1) / step + 1 : 0;  // ceil, without overflow for huge steps
  ViewShape v;
  v.shape = src;
  v.shape[size_t(dim)] = n;
  v.map.vars = default_vars(src.size());
  for (int64_t j = 0; j < r; ++j) {
    IExpr e = ivar(int(j));
    if (j == dim) {
      if (step != 1) e = imul(step, e);
      if (start != 0) e = iadd(e, iconst(start));
    }
    v.map.exprs.push_back(e);
  }
  return v;
}

ViewResult expand_expand(const Shape& src, const Shape& shape) {
  if (shape.size() < src.size())
    return "expand cannot drop dims: " + shape_text(src) + " to " + shape_text(shape);
  size_t off = shape.size() - src.size();
  ViewShape v;
  v.shape = shape;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == -1) {
      if (k < off) return "expand: -1 is not allowed for a new leading dim";
      v.shape[k] = src[k - off];
    }
    if (v.shape[k] < 0) return "expand expects non-negative extents";
  }
  v.map.vars = default_vars(shape.size());
  for (size_t j = 0; j < src.size(); ++j) {
    size_t k = j + off;
    if (src[j] == v.shape[k]) {
      v.map.exprs.push_back(ivar(int(k)));
    } else if (src[j] == 1) {
      v.map.exprs.push_back(iconst(0));
    } else {
      return "expand: dim " + std::to_string(j) + " of extent " + std::to_string(src[j]) +
             " cannot become " + std::to_string(v.shape[k]) + " (only extent-1 dims broadcast)";
    }
  }
  return v;
}

ViewResult expand_reshape(const Shape& src, const Shape& shape_in) {
  Shape shape = shape_in;
  int64_t n = num_elements(src);
  int neg = -1;
  int64_t known = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == -1) {
      if (neg >= 0) return "reshape allows at most one -1";
      neg = int(k);
    } else if (shape[k] < 0) {
      return "reshape expects non-negative extents";
    } else if (__builtin_mul_overflow(known, shape[k], &known)) {
      return "reshape of " + shape_text(src) + " to " + shape_text(shape) + ": too many elements";
    }
  }
  if (neg >= 0) {
    if (known == 0 || n % known != 0) return "reshape: cannot infer the -1 extent";
    shape[size_t(neg)] = n / known;
  }
  if (num_elements(shape) != n)
    return "reshape of " + shape_text(src) + " (" + std::to_string(n) + " elements) to " + shape_text(shape) +
           " (" + std::to_string(num_elements(shape)) + " elements)";
  ViewShape v;
  v.shape = shape;
  v.map.vars = default_vars(shape.size());
  if (n == 0) {  // no element is ever read
    v.map.exprs.assign(src.size(), iconst(0));
    return v;
  }
  // Flat row-major offset of the result index.
  IExpr flat;
  int64_t stride = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] != 1) {
      IExpr t = stride == 1 ? ivar(int(k)) : imul(stride, ivar(int(k)));
      flat = flat ? iadd(t, flat) : t;
    }
    stride *= shape[k];
  }
  if (!flat) flat = iconst(0);
  int64_t sstride = 1;
  std::vector<IExpr> exprs(src.size());
  for (size_t j = src.size(); j-- > 0;) {
    if (src[j] == 1) {
      exprs[j] = iconst(0);
    } else {
      IExpr e = sstride == 1 ? flat : ifloordiv(flat, sstride);
      if (sstride * src[j] != n) e = imod(e, src[j]);
      exprs[j] = e;
    }
    sstride *= src[j];
  }
  v.map.exprs = std::move(exprs);
  return v;
}

ViewResult expand_unsqueeze(const Shape& src, int64_t dim) {
  int64_t r = int64_t(src.size());
  if (dim < 0) dim += r + 1;
  if (dim < 0 || dim > r) return "unsqueeze dim out of range for a rank-" + std::to_string(r) + " tensor";
  ViewShape v;
  v.shape = src;
  v.shape.insert(v.shape.begin() + dim, 1);
  v.map.vars = default_vars(size_t(r + 1));
  for (int64_t j = 0; j < r; ++j) v.map.exprs.push_back(ivar(int(j < dim ? j : j + 1)));
  return v;
}

ViewResult expand_squeeze(const Shape& src, int64_t dim) {
  int64_t r = int64_t(src.size());
  if (dim < 0) dim += r;
  if (dim < 0 || dim >= r) return "squeeze dim out of range for a rank-" + std::to_string(r) + " tensor";
  if (src[size_t(dim)] != 1)
    return "squeeze expects dim " + std::to_string(dim) + " of extent 1, got " + std::to_string(src[size_t(dim)]);
  ViewShape v;
  v.shape = src;
  v.shape.erase(v.shape.begin() + dim);
  v.map.vars = default_vars(size_t(r - 1));
  for (int64_t j = 0; j < r; ++j)
    v.map.exprs.push_back(j == dim ? iconst(0) : ivar(int(j < dim ? j : j - 1)));
  return v;
}

ViewResult expand_gather(const Shape& src, int64_t dim, const std::string& index_name, const Shape& index_shape) {
  int64_t r = int64_t(src.size());
  if (dim < 0) dim += r;
  if (dim < 0 || dim >= r) return "gather dim out of range for a rank-" + std::to_string(r) + " tensor";
  int64_t k = int64_t(index_shape.size());
  ViewShape v;
  v.shape.assign(src.begin(), src.begin() + dim);
  v.shape.insert(v.shape.end(), index_shape.begin(), index_shape.end());
  v.shape.insert(v.shape.end(), src.begin() + dim + 1, src.end());
  v.map.vars = default_vars(v.shape.size());
  for (int64_t j = 0; j < r; ++j) {
    if (j < dim) {
      v.map.exprs.push_back(ivar(int(j)));
    } else if (j == dim) {
      std::vector<IExpr> args;
      for (int64_t q = 0; q < k; ++q) args.push_back(ivar(int(dim + q)));
      v.map.exprs.push_back(iload(index_name, std::move(args)));
    } else {
      v.map.exprs.push_back(ivar(int(j + k - 1)));
    }
  }
  return v;
}

std::optional<ViewSugar> recognise_view_sugar(
    const Shape& src, const Shape& out, const IndexMap& map,
    const std::function<const Shape*(const std::string&)>& index_shape) {
  auto matches = [&](const ViewResult& r) {
    const ViewShape* v = std::get_if<ViewShape>(&r);
    return v && v->shape == out && v->map == map;
  };
  auto list = [](const std::vector<int64_t>& xs) { return shape_text(xs); };
  int64_t r = int64_t(src.size());
  int64_t ro = int64_t(out.size());
  // permute
  if (r == ro) {
    std::vector<int64_t> perm(size_t(r), -1);
    bool ok = true;
    for (int64_t j = 0; j < r && ok; ++j) {
      const IExpr& e = map.exprs[size_t(j)];
      if (e->kind != IExprNode::Kind::Var || e->value >= r) ok = false;
      else perm[size_t(e->value)] = j;
    }
    if (ok && std::find(perm.begin(), perm.end(), -1) == perm.end() && matches(expand_permute(src, perm)))
      return ViewSugar{"permute", ", " + list(perm) + ")"};
  }
  // slice
  if (r == ro) {
    for (int64_t d = 0; d < r; ++d) {
      auto af = as_affine(map, int(ro));
      if (!af) break;
      int64_t step = af->a[size_t(d)][size_t(d)];
      int64_t start = af->c[size_t(d)];
      if (step <= 0) continue;
      __int128 stop128 = __int128(start) + __int128(step) * (out[size_t(d)] - 1) + 1;
      if (stop128 > std::numeric_limits<int64_t>::max()) continue;
      int64_t stop = int64_t(stop128);
      if (out[size_t(d)] == 0) stop = start;
      if (matches(expand_slice(src, d, start, stop, step)) && (out != src || step != 1 || start != 0))
        return ViewSugar{"slice", ", " + std::to_string(d) + ", " + std::to_string(start) + ", " +
                                      std::to_string(stop) + ", " + std::to_string(step) + ")"};
    }
  }
  // unsqueeze / squeeze
  if (ro == r + 1)
    for (int64_t d = 0; d <= r; ++d)
      if (matches(expand_unsqueeze(src, d))) return ViewSugar{"unsqueeze", ", " + std::to_string(d) + ")"};
  if (ro + 1 == r)
    for (int64_t d = 0; d < r; ++d)
      if (matches(expand_squeeze(src, d))) return ViewSugar{"squeeze", ", " + std::to_string(d) + ")"};
  // gather
  for (int64_t d = 0; d < r; ++d) {
    const IExpr& e = map.exprs[size_t(d)];
    if (e->kind != IExprNode::Kind::Load) continue;
    const Shape* is = index_shape(e->name);
    if (is && matches(expand_gather(src, d, e->name, *is)))
      return ViewSugar{"gather", ", " + std::to_string(d) + ", " + e->name + ")"};
  }
  if (matches(expand_expand(src, out))) return ViewSugar{"expand", ", " + list(out) + ")"};
  if (matches(expand_reshape(src, out))) return ViewSugar{"reshape", ", " + list(out) + ")"};
  return std::nullopt;
}

namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;

/// Interval domain of index expressions over the box [0, extents): every
/// result saturates at ±kInf, a load is [-kInf, kInf].
struct IntervalIndexDomain {
  using Value = Interval;
  const Shape& ext;

  static Value sat(Interval r) { return {std::clamp<I128>(r.lo, -kInf, kInf), std::clamp<I128>(r.hi, -kInf, kInf)}; }
  static Value top() { return {-kInf, kInf}; }
  Value constant(const IExprNode&, int64_t c) { return {c, c}; }
  Value var(const IExprNode&, int64_t k) {
    int64_t n = (k >= 0 && size_t(k) < ext.size()) ? ext[size_t(k)] : 0;
    return {0, std::max<int64_t>(n - 1, 0)};
  }
  Value add(const IExprNode&, Value a, Value b) { return sat(a + b); }
  Value sub(const IExprNode&, Value a, Value b) { return sat(a - b); }
  Value mul(const IExprNode&, int64_t c, Value a) { return sat(a * Interval{c, c}); }
  Value floordiv(const IExprNode&, Value a, int64_t c) {
    if (c <= 0) return top();
    return {floordiv128(a.lo, c), floordiv128(a.hi, c)};
  }
  Value mod(const IExprNode&, Value a, int64_t c) {
    if (c <= 0) return top();
    if (a.lo >= 0 && a.hi < c) return a;
    I128 qlo = floordiv128(a.lo, c), qhi = floordiv128(a.hi, c);
    if (a.lo > -kInf && a.hi < kInf && qlo == qhi) return {a.lo - qlo * c, a.hi - qhi * c};
    return {0, c - 1};
  }
  template <class F>
  Value load(const IExprNode&, F&&) {
    return top();
  }
};

}  // namespace

Interval iexpr_range(const IExpr& e, const Shape& ext) {
  IntervalIndexDomain dom{ext};
  return eval_iexpr(e, dom);
}

bool view_statically_in_bounds(const Shape& src, const Shape& out, const IndexMap& map) {
  if (num_elements(out) == 0) return true;
  for (size_t j = 0; j < map.exprs.size(); ++j) {
    if (iexpr_has_load(map.exprs[j])) return false;
    Interval r = iexpr_range(map.exprs[j], out);
    if (r.lo < 0 || r.hi >= src[j]) return false;
  }
  return true;
}

}  // namespace stax::sem
