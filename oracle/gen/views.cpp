// Views of the random program generator (docs/design.md §2, §6): the sugar forms
// (permute, slice, expand, reshape, (un)squeeze, gather) and general index
// maps (affine, floor/mod, wide intermediates, indirect loads), in bounds
// unless the program is meant to fail; and the coercions that bring a tensor
// to a shape or a dtype.
#include "oracle/gen/internal.h"
#include "semantics/views.h"

namespace stax::oracle::generator {

std::vector<std::string> Gen::var_names(size_t n) {
  static const char* letters[] = {"i", "j", "k", "l", "m", "n"};
  int style = int(pick(3));
  std::vector<std::string> v;
  for (size_t i = 0; i < n; ++i) {
    if (style == 0 && n <= 6) v.push_back(letters[i]);
    else v.push_back((style == 2 ? "d" : "i") + std::to_string(i));
  }
  return v;
}

/// Whether an index tensor may be gathered into an extent s without ⊥.
bool Gen::index_ok(const Sym& x, int64_t s) const {
  if (!sem::is_int(x.ty.dtype) || s <= 0) return false;
  if (x.index_input) return true;
  if (x.ranged) return x.lo >= -s && x.hi <= s - 1;
  return x.risky && fail_ == Fail::RiskyGather;
}

std::vector<const Sym*> Gen::index_syms(int64_t s, size_t max_rank) const {
  std::vector<const Sym*> v;
  for (const Sym& x : syms_)
    if (x.ty.shape.size() >= 1 && x.ty.shape.size() <= max_rank && sem::num_elements(x.ty.shape) > 0 && index_ok(x, s))
      v.push_back(&x);
  return v;
}

/// One component of an index map into an extent s, over result dims S; in
/// range unless `oob`.
std::string Gen::component(int64_t s, const Shape& S, const std::vector<std::string>& v, bool oob) {
  size_t q = S.size();
  if (s <= 0) return "0";  // only for an empty view: never evaluated
  if (oob && q > 0) {
    size_t m = pick(q);
    int64_t off = S[m] <= s ? s - S[m] + 1 : 0;
    return off ? v[m] + " + " + std::to_string(off) : v[m];
  }
  for (int attempt = 0; attempt < 8; ++attempt) {
    int k = weighted({0.6, q ? 3.0 : 0.0, q ? 1.0 : 0.0, q ? 0.8 : 0.0, q > 1 ? 0.8 : 0.0, q ? 1.5 : 0.0,
                      q ? 1.0 : 0.0, q > 1 ? 0.7 : 0.0, o_.allow_gather ? 0.8 : 0.0,
                      q && o_.allow_wide_index ? 0.5 : 0.0});
    size_t m = q ? pick(q) : 0, n = q ? pick(q) : 0;
    switch (k) {
      case 0: return std::to_string(uni(0, s - 1));
      case 1:
        if (S[m] <= s) {
          int64_t off = coin(0.6) ? 0 : uni(0, s - S[m]);
          return off ? v[m] + " + " + std::to_string(off) : v[m];
        }
        break;
      case 2: {
        int64_t a = uni(2, 3);
        if (a * (S[m] - 1) <= s - 1) {
          int64_t off = uni(0, s - 1 - a * (S[m] - 1));
          std::string t = coin(0.5) ? std::to_string(a) + "*" + v[m] : v[m] + "*" + std::to_string(a);
          return off ? t + " + " + std::to_string(off) : t;
        }
        break;
      }
      case 3:
        if (S[m] <= s) return std::to_string(uni(S[m] - 1, s - 1)) + " - " + v[m];
        break;
      case 4:
        if (m != n && (S[m] - 1) + (S[n] - 1) <= s - 1) return v[m] + " + " + v[n];
        break;
      case 5:
        switch (pick(3)) {
          case 0: return v[m] + " % " + std::to_string(s);
          case 1: return "(" + v[m] + " - " + v[n] + ") % " + std::to_string(s);
          default: {
            int64_t a = uni(1, 3), b = uni(1, 3), c = uni(0, 5);
            return "(" + std::to_string(a) + "*" + v[m] + " + " + std::to_string(b) + "*" + v[n] + " + " +
                   std::to_string(c) + ") % " + std::to_string(s);
          }
        }
      case 6: {
        int64_t dv = uni(2, 4), off = uni(0, 2);
        if ((S[m] - 1 + off) / dv <= s - 1)
          return off ? "(" + v[m] + " + " + std::to_string(off) + ") // " + std::to_string(dv)
                     : v[m] + " // " + std::to_string(dv);
        break;
      }
      case 7:
        if (m != n)
          return "(" + std::to_string(S[n]) + "*" + v[m] + " + " + v[n] + ") // " + std::to_string(uni(2, 3)) +
                 " % " + std::to_string(s);
        break;
      case 9: {
        // Intermediates beyond 2^31 (a 32-bit address computation wraps):
        // (i*65537*65537 + c) % s, or a coefficient of 2^31 - 1.
        int64_t c = uni(0, 3);
        std::string t = coin(0.5) ? v[m] + "*65537*65537" : "2147483647*" + v[m];
        if (m != n && coin(0.5)) t += " + " + v[n];
        return "(" + t + (c ? " + " + std::to_string(c) : "") + ") % " + std::to_string(s);
      }
      default: {
        auto ix = index_syms(s, 2);
        if (ix.empty()) break;
        const Sym& I = *pick(ix);
        std::string t = "load(" + I.name;
        for (int64_t nk : I.ty.shape) {
          size_t mm = q ? pick(q) : 0;
          if (q && S[mm] <= nk && coin(0.7)) t += ", " + v[mm];
          else if (q && coin(0.7)) t += ", " + v[mm] + " % " + std::to_string(nk);
          else t += ", " + std::to_string(uni(0, nk - 1));
        }
        return t + ")";
      }
    }
  }
  return q ? v[pick(q)] + " % " + std::to_string(s) : "0";
}

/// view(e, S, (vars) -> (...)): an affine or floor/mod map, in bounds unless `oob`.
TE Gen::general_view(const TE& e, const Shape& S, bool oob) {
  auto v = var_names(S.size());
  const Shape& src = e.ty.shape;
  size_t bad = oob ? pick(src.size()) : src.size();
  std::string t = "view(" + e.text + ", " + sem::shape_text(S) + ", (";
  for (size_t i = 0; i < v.size(); ++i) t += (i ? ", " : "") + v[i];
  t += ") -> (";
  for (size_t j = 0; j < src.size(); ++j) t += (j ? ", " : "") + component(src[j], S, v, j == bad);
  return {t + "))", {e.ty.dtype, S}};
}

/// A random view of e (one sugar form or a general map); e itself if none applies.
TE Gen::apply_view(const TE& e) {
  const Shape& s = e.ty.shape;
  int r = int(s.size());
  int64_t n = sem::num_elements(s);
  bool has1 = std::find(s.begin(), s.end(), 1) != s.end();
  bool room = r < max_view_rank_;
  for (int attempt = 0; attempt < 6; ++attempt) {
    int k = weighted({r >= 2 ? 2.0 : 0.0, r >= 1 ? 2.0 : 0.0, 1.5, n > 0 ? 1.5 : 0.0, room ? 1.0 : 0.0,
                      has1 ? 1.5 : 0.0, o_.allow_gather && r >= 1 ? 1.5 : 0.0, n > 0 ? 1.5 : 0.0});
    std::string out;
    sem::ViewResult vr = std::string("none");
    switch (k) {
      case 0: {
        auto p = permutation(s.size());
        out = "permute(" + e.text + ", " + sem::shape_text(p) + ")";
        vr = sem::expand_permute(s, p);
        break;
      }
      case 1: {
        int64_t d = int64_t(pick(s.size()));
        int64_t ext = s[size_t(d)];
        int64_t step = weighted({5, 3, 2}) + 1;
        int64_t start = ext > 0 ? uni(0, ext - 1) : 0;
        int64_t len = std::max<int64_t>(1, uni(1, (ext - start + step - 1) / step));
        int64_t stop = start + (len - 1) * step + 1;
        if (coin(0.2)) stop = ext + uni(0, 3);  // clamped
        if (coin(0.02)) stop = start;          // empty
        int64_t pd = coin(0.15) ? d - r : d;
        int64_t pstart = coin(0.15) && start < ext ? start - ext : start;
        int64_t pstop = coin(0.15) && stop < ext && stop > 0 ? stop - ext : stop;
        out = "slice(" + e.text + ", " + std::to_string(pd) + ", " + std::to_string(pstart) + ", " +
              std::to_string(pstop) + ", " + std::to_string(step) + ")";
        vr = sem::expand_slice(s, pd, pstart, pstop, step);
        break;
      }
      case 2: {
        Shape tgt;
        std::vector<std::string> txt;
        if (room && (coin(0.4) || !has1)) {
          tgt.push_back(uni(2, o_.max_extent));
          txt.push_back(std::to_string(tgt.back()));
        }
        for (int64_t x : s) {
          int64_t y = (x == 1 && coin(0.7)) ? uni(1, o_.max_extent) : x;
          tgt.push_back(y);
          txt.push_back(y == x && coin(0.3) ? "-1" : std::to_string(y));
        }
        if (sem::num_elements(tgt) > kMaxElements || tgt == s) break;
        std::string l = "[";
        for (size_t i = 0; i < txt.size(); ++i) l += (i ? ", " : "") + txt[i];
        out = "expand(" + e.text + ", " + l + "])";
        vr = sem::expand_expand(s, tgt);
        break;
      }
      case 3: {
        auto [tgt, txt] = reshape_target(n);
        out = "reshape(" + e.text + ", " + txt + ")";
        vr = sem::expand_reshape(s, tgt);
        break;
      }
      case 4: {
        int64_t d = uni(0, r);
        int64_t pd = coin(0.2) ? d - (r + 1) : d;
        out = "unsqueeze(" + e.text + ", " + std::to_string(pd) + ")";
        vr = sem::expand_unsqueeze(s, pd);
        break;
      }
      case 5: {
        std::vector<int64_t> ones;
        for (int i = 0; i < r; ++i)
          if (s[size_t(i)] == 1) ones.push_back(i);
        int64_t d = pick(ones);
        int64_t pd = coin(0.2) ? d - r : d;
        out = "squeeze(" + e.text + ", " + std::to_string(pd) + ")";
        vr = sem::expand_squeeze(s, pd);
        break;
      }
      case 6: {
        int64_t d = int64_t(pick(s.size()));
        auto ix = index_syms(s[size_t(d)], 2);
        if (ix.empty()) break;
        const Sym& I = *pick(ix);
        int64_t pd = coin(0.2) ? d - r : d;
        out = "gather(" + e.text + ", " + std::to_string(pd) + ", " + I.name + ")";
        vr = sem::expand_gather(s, pd, I.name, I.ty.shape);
        break;
      }
      default: return general_view(e, rand_shape(rand_rank()));
    }
    if (auto* vs = std::get_if<sem::ViewShape>(&vr))
      if (!out.empty() && sem::num_elements(vs->shape) <= kMaxElements && int(vs->shape.size()) <= max_view_rank_)
        return {out, {e.ty.dtype, vs->shape}};
  }
  return e;
}

/// A random factorisation of n elements (one extent maybe written -1).
std::pair<Shape, std::string> Gen::reshape_target(int64_t n) {
  int rank = int(uni(n == 1 ? 0 : 1, max_view_rank_));
  Shape t;
  int64_t rem = n;
  for (int i = 0; i + 1 < rank; ++i) {
    std::vector<int64_t> divs;
    for (int64_t d = 1; d <= rem; ++d)
      if (rem % d == 0) divs.push_back(d);
    int64_t d = pick(divs);
    t.push_back(d);
    rem /= d;
  }
  if (rank > 0) t.push_back(rem);
  std::string txt = "[";
  size_t neg = (n > 0 && rank > 0 && coin(0.3)) ? pick(t.size()) : t.size();
  for (size_t i = 0; i < t.size(); ++i) txt += (i ? ", " : "") + (i == neg ? std::string("-1") : std::to_string(t[i]));
  return {t, txt + "]"};
}

/// Brings e to shape S with views (or a reduction of trailing dims).
TE Gen::coerce_shape(const TE& e, const Shape& S) {
  const Shape& s = e.ty.shape;
  if (s == S) return e;
  int64_t n = sem::num_elements(s), N = sem::num_elements(S);
  bool same_n = n == N && n > 0;
  // expand: right-aligned, extent-1 dims broadcast
  bool bcast = s.size() <= S.size();
  for (size_t j = 0; bcast && j < s.size(); ++j) {
    int64_t x = s[j], y = S[S.size() - s.size() + j];
    if (x != y && x != 1) bcast = false;
  }
  bool slicable = s.size() == S.size();
  for (size_t j = 0; slicable && j < s.size(); ++j)
    if (S[j] > s[j] || S[j] == 0) slicable = false;
  bool red = o_.allow_reduce && e.ty.dtype != DType::Bool && s.size() > S.size() &&
             std::equal(S.begin(), S.end(), s.begin());
  bool general = n > 0 || N == 0;
  int k = weighted({same_n ? 3.0 : 0.0, bcast ? 3.0 : 0.0, slicable ? 3.0 : 0.0, red ? 1.0 : 0.0,
                    general ? 2.0 : 0.0, 0.3});
  switch (k) {
    case 0: {
      std::string txt = "[";
      size_t neg = coin(0.3) && !S.empty() ? pick(S.size()) : S.size();
      for (size_t i = 0; i < S.size(); ++i) txt += (i ? ", " : "") + (i == neg ? std::string("-1") : std::to_string(S[i]));
      return {"reshape(" + e.text + ", " + txt + "])", {e.ty.dtype, S}};
    }
    case 1: {
      std::string txt = "[";
      size_t off = S.size() - s.size();
      for (size_t i = 0; i < S.size(); ++i)
        txt += (i ? ", " : "") + (i >= off && s[i - off] == S[i] && coin(0.3) ? std::string("-1") : std::to_string(S[i]));
      return {"expand(" + e.text + ", " + txt + "])", {e.ty.dtype, S}};
    }
    case 2: {
      TE cur = e;
      for (size_t d = 0; d < S.size(); ++d) {
        if (S[d] == s[d]) continue;
        int64_t step = 1;
        for (int64_t st = 3; st > 1; --st)
          if ((S[d] - 1) * st <= s[d] - 1 && coin(0.4)) {
            step = st;
            break;
          }
        int64_t start = uni(0, s[d] - 1 - (S[d] - 1) * step);
        int64_t stop = start + (S[d] - 1) * step + 1;
        cur.text = "slice(" + cur.text + ", " + std::to_string(d) + ", " + std::to_string(start) + ", " +
                   std::to_string(stop) + ", " + std::to_string(step) + ")";
      }
      cur.ty.shape = S;
      return cur;
    }
    case 3: {
      Shape R(s.begin() + std::ptrdiff_t(S.size()), s.end());
      RedOp op = RedOp(pick(4));
      return {"red(" + std::string(sem::red_name(op)) + ", " + red_init(op, e.ty.dtype) + ", " +
                  sem::shape_text(R) + ", " + e.text + ")",
              {e.ty.dtype, S}};
    }
    case 4: return general_view(e, S);
    default: {
      // A fresh tensor of the right shape instead.
      return full_or_iota(S, e.ty.dtype);
    }
  }
}

/// Brings e to dtype dt with a map (a cast, or a random lambda).
TE Gen::coerce_dtype(const TE& e, DType dt) {
  if (e.ty.dtype == dt) return e;
  std::string f = coin(0.6) ? "fn(a) => cast(a, " + dt_text(dt) + ")" : lambda({e.ty.dtype}, dt);
  return {"map(" + f + ", " + e.text + ")", {dt, e.ty.shape}};
}

}  // namespace stax::oracle::generator
