// Shapes, leaves and tensor expressions of the random program generator
// (docs/design.md §2, §6): names in scope (maybe viewed), full/iota/rand leaves,
// maps, reductions and let-in expressions, each of a requested shape and
// dtype, every tensor within kMaxElements.
#include "oracle/gen/internal.h"

namespace stax::oracle::generator {

int Gen::rand_rank(int lo) {
  int r = weighted({0.08, 0.3, 0.37, 0.25, 0.08});
  return std::clamp(std::max(r, lo), 0, std::max(lo, o_.max_rank));
}

void Gen::shrink(Shape& s, int64_t cap) {
  while (sem::num_elements(s) > cap) {
    auto it = std::max_element(s.begin(), s.end());
    *it = std::max<int64_t>(1, *it / 2);
  }
}

Shape Gen::rand_shape(int rank, int64_t cap) {
  Shape s;
  for (int i = 0; i < rank; ++i) s.push_back(uni(1, o_.max_extent));
  shrink(s, cap);
  return s;
}

TE Gen::full_or_iota(const Shape& S, DType dt) {
  // rand: a counter-based stream per key; two keys, so that programs hold
  // rand nodes equal but for their key (CSE must never merge them).
  if (o_.allow_rand && sem::is_float(dt) && coin(0.3))
    return {"rand(" + dt_text(dt) + ", " + sem::shape_text(S) + ", " + std::to_string(uni(1, 2)) + ")", {dt, S}};
  if (!S.empty() && dt != DType::Bool && coin(0.5))
    return {"iota(" + dt_text(dt) + ", " + sem::shape_text(S) + ", " + std::to_string(pick(S.size())) + ")", {dt, S}};
  return {"full(" + type_text({dt, S}) + ", " + const_for(dt) + ")", {dt, S}};
}

/// A name in scope, maybe viewed, brought to shape S and dtype dt.
TE Gen::pool_leaf(const Shape& S, DType dt) {
  std::vector<double> w;
  double sum = 0;
  for (const Sym& x : syms_) {
    double v = 1.0;
    if (x.local) v *= 6;
    if (x.ty.dtype == dt) v *= 3;
    if (x.ty.shape == S) v *= 2;
    if (x.index_input || x.ranged || x.risky) v *= 0.3;
    w.push_back(v);
    sum += v;
  }
  double r = rng_.uniform() * sum;
  size_t i = 0;
  while (i + 1 < w.size() && r >= w[i]) r -= w[i++];
  TE e{syms_[i].name, syms_[i].ty};
  if (coin(0.35)) {
    e = apply_view(e);
    if (coin(0.4)) e = apply_view(e);
  }
  return coerce_dtype(coerce_shape(e, S), dt);
}

/// An expression of any shape and dtype, often a chain of views.
TE Gen::gen_any(int depth) {
  TE e;
  if (depth <= 0 || coin(0.5)) {
    const Sym& x = syms_[pick(syms_.size())];
    e = {x.name, x.ty};
  } else {
    Shape S = rand_shape(rand_rank());
    DType t = pick_dtype();
    e = gen_shaped(S, t, depth - 1);
  }
  int nv = weighted({0.2, 0.4, 0.3, 0.1});
  for (int i = 0; i < nv; ++i) e = apply_view(e);
  return e;
}

/// An expression of shape S and dtype dt.
TE Gen::gen_shaped(const Shape& S, DType dt, int depth) {
  bool can_red = o_.allow_reduce && dt != DType::Bool && int(S.size()) < max_view_rank_;
  bool can_iota = !S.empty() && dt != DType::Bool;
  if (depth <= 0) {
    int k = weighted({0.8, can_iota ? 0.1 : 0.0, 0.1});
    if (k == 0) return pool_leaf(S, dt);
    return full_or_iota(S, dt);
  }
  int k = weighted({0.3, can_iota ? 0.05 : 0.0, 0.04, 0.32, can_red ? 0.13 : 0.0, 0.12,
                    o_.allow_let_in ? 0.07 : 0.0});
  switch (k) {
    case 0: return pool_leaf(S, dt);
    case 1:
    case 2: return full_or_iota(S, dt);
    case 3: return gen_map(S, dt, depth);
    case 4: return gen_red(S, dt, depth);
    case 5: return coerce_dtype(coerce_shape(gen_any(depth - 1), S), dt);
    default: return gen_let(S, dt, depth);
  }
}

TE Gen::gen_map(const Shape& S, DType dt, int depth) {
  int nargs = weighted({0.45, 0.4, 0.15}) + 1;
  std::vector<DType> P;
  std::vector<TE> args;
  for (int i = 0; i < nargs; ++i) {
    DType t = (dt != DType::Bool && coin(0.7)) ? dt : pick_dtype();
    if (i > 0 && P[0] == t && args[0].text.rfind("rand(", 0) == 0 && coin(0.5)) {
      // rand nodes equal but for their key: CSE must keep both
      std::string other = args[0].text.find(", 1)") != std::string::npos ? "2" : "1";
      args.push_back({args[0].text.substr(0, args[0].text.rfind(", ") + 2) + other + ")", args[0].ty});
    } else if (i > 0 && coin(0.15) && P[0] == t) {
      args.push_back(args[0]);  // the same subexpression twice (CSE)
    } else {
      args.push_back(gen_shaped(S, t, depth - 1));
    }
    P.push_back(t);
  }
  std::string s = "map(" + lambda(P, dt);
  for (const TE& a : args) s += ", " + a.text;
  return {s + ")", {dt, S}};
}

TE Gen::gen_red(const Shape& S, DType dt, int depth) {
  bool arg = dt == DType::I64 && coin(0.5);
  RedOp op = arg ? (coin(0.5) ? RedOp::ArgMax : RedOp::ArgMin) : RedOp(pick(4));
  DType src_dt = dt;
  if (arg) src_dt = o_.allow_int && coin(0.2) ? pick_int() : pick_float();
  int64_t room = kMaxElements / std::max<int64_t>(1, sem::num_elements(S));
  int nr = coin(0.03) ? 0 : int(uni(1, std::min(2, max_view_rank_ - int(S.size()))));
  Shape R = rand_shape(nr, std::max<int64_t>(1, room));
  Shape full = concat(S, R);
  TE src;
  if (full.size() >= 2 && coin(0.3)) {
    // permute first, so that other dims are reduced
    auto p = permutation(full.size());
    Shape inner(full.size());
    for (size_t k = 0; k < p.size(); ++k) inner[size_t(p[k])] = full[k];
    TE in = gen_shaped(inner, src_dt, depth - 1);
    src = {"permute(" + in.text + ", " + sem::shape_text(p) + ")", {src_dt, full}};
  } else {
    src = gen_shaped(full, src_dt, depth - 1);
  }
  return {"red(" + std::string(sem::red_name(op)) + ", " + red_init(op, src_dt) + ", " + sem::shape_text(R) + ", " +
              src.text + ")",
          {arg ? DType::I64 : dt, S}};
}

TE Gen::gen_let(const Shape& S, DType dt, int depth) {
  std::string name = "t" + std::to_string(n_locals_++);
  Sym x;
  TE v;
  if (o_.allow_gather && coin(0.25)) {
    v = iota_index(x);
  } else {
    v = gen_any(depth - 1);
  }
  x.name = name;
  x.ty = v.ty;
  x.local = true;
  syms_.push_back(x);
  TE body = gen_shaped(S, dt, depth - 1);
  syms_.pop_back();
  return {"let " + name + " = " + v.text + " in " + body.text, body.ty};
}

/// An int tensor computed from iota, with its value range recorded in x.
TE Gen::iota_index(Sym& x) {
  DType it = coin(0.7) ? DType::I64 : DType::I32;
  Shape sh = coin(0.8) ? Shape{uni(1, o_.max_extent)} : Shape{uni(1, o_.max_extent), uni(1, o_.max_extent)};
  int64_t K = uni(1, o_.max_extent);
  int64_t a = uni(1, 3), c = uni(0, 4);
  std::string iota = "iota(" + dt_text(it) + ", " + sem::shape_text(sh) + ", " + std::to_string(pick(sh.size())) + ")";
  std::string body;
  x.ranged = true;
  switch (pick(3)) {
    case 0:  // [0, K)
      body = "mod(add(mul(i, " + std::to_string(a) + "), " + std::to_string(c) + "), " + std::to_string(K) + ")";
      x.lo = 0;
      x.hi = K - 1;
      break;
    case 1:  // [-K, 0): wraps Python-style
      body = "sub(mod(mul(i, " + std::to_string(a) + "), " + std::to_string(K) + "), " + std::to_string(K) + ")";
      x.lo = -K;
      x.hi = -1;
      break;
    default:  // [-c, extent - c)
      body = "sub(i, " + std::to_string(c) + ")";
      x.lo = -c;
      x.hi = *std::max_element(sh.begin(), sh.end()) - 1 - c;
      break;
  }
  return {"map(fn(i) => " + body + ", " + iota + ")", {it, sh}};
}

}  // namespace stax::oracle::generator
