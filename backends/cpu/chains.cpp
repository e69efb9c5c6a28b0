#include "backends/cpu/chains.h"

#include <numeric>
#include <optional>
#include <set>

namespace stax::backends::cpu {

using namespace stax::sem;

namespace {

/// v ∘ m: m maps the loop indices to a view's result indices, v that
/// view's result indices to its source's; nullopt on int64 overflow.
std::optional<Affine> compose(const Affine& v, const Affine& m) {
  Affine r;
  size_t cols = m.a.empty() ? 0 : m.a[0].size();
  for (size_t s = 0; s < v.a.size(); ++s) {
    std::vector<int64_t> row(cols, 0);
    int64_t c = v.c[s];
    for (size_t t = 0; t < v.a[s].size() && t < m.a.size(); ++t) {
      int64_t p = 0;
      if (__builtin_mul_overflow(v.a[s][t], m.c[t], &p) || __builtin_add_overflow(c, p, &c)) return std::nullopt;
      for (size_t j = 0; j < cols; ++j)
        if (__builtin_mul_overflow(v.a[s][t], m.a[t][j], &p) || __builtin_add_overflow(row[j], p, &row[j]))
          return std::nullopt;
    }
    r.a.push_back(std::move(row));
    r.c.push_back(c);
  }
  return r;
}

bool loads_name(const IExpr& e, const std::string& name) {
  if (e->kind == IExprNode::Kind::Load && e->name == name) return true;
  for (const IExpr& a : e->args)
    if (loads_name(a, name)) return true;
  return false;
}

/// `e` read at the indices `m` of the loop (nullopt: not affine).
bool own_rows(const Expr& e, const std::optional<Affine>& m, const std::string& producer) {
  if (const auto* n = std::get_if<NameE>(&e->p)) {
    if (n->name != producer) return true;
    if (!m || m->a.empty()) return false;
    const std::vector<int64_t>& first = m->a[0];
    for (size_t j = 0; j < first.size(); ++j)
      if (first[j] != (j == 0 ? 1 : 0)) return false;
    return m->c[0] == 0;
  }
  if (const auto* v = std::get_if<ViewE>(&e->p)) {
    for (const IExpr& x : v->map.exprs)
      if (loads_name(x, producer)) return false;
    std::optional<Affine> va = as_affine(v->map, int(e->type.shape.size()));
    std::optional<Affine> next = m && va ? compose(*va, *m) : std::nullopt;
    return own_rows(v->src, next, producer);
  }
  if (const auto* mp = std::get_if<MapE>(&e->p)) {
    for (const Expr& a : mp->args)
      if (!own_rows(a, m, producer)) return false;
    return true;
  }
  if (const auto* r = std::get_if<RedE>(&e->p)) return own_rows(r->src, m, producer);  // below the top: not compiled
  return !std::holds_alternative<LetE>(e->p);
}

Affine identity(size_t n) {
  Affine id;
  for (size_t i = 0; i < n; ++i) {
    id.a.emplace_back(n, 0);
    id.a.back()[i] = 1;
    id.c.push_back(0);
  }
  return id;
}

/// Rows of the first output dimension per unit of the kernel's range, or 0
/// when the kernel cannot be a member of a chain.
int64_t rows_per_unit(const KernelSpec& s, const KernelShape& k) {
  const Shape& out = s.types[0].shape;
  if (out.empty() || k.whole || k.pack() || k.parallel_extent < 2 || out[0] % k.parallel_extent != 0) return 0;
  return out[0] / k.parallel_extent;
}

bool reads(const KernelSpec& s, const std::string& name) {
  for (size_t i = 1; i < s.names.size(); ++i)
    if (s.names[i] == name) return true;
  return false;
}

/// The chunk of a chain [first, last]: rows whose data fill about
/// cache_bytes, a multiple of every member's rows per unit.
int64_t chunk_rows(const std::vector<KernelSpec>& specs, const std::vector<KernelShape>& shapes, size_t first,
                   size_t last, int64_t cache_bytes) {
  int64_t rows = specs[first].types[0].shape[0], unit = 1, row_bytes = 0;
  std::set<std::string> counted;
  for (size_t k = first; k <= last; ++k) {
    unit = std::lcm(unit, rows_per_unit(specs[k], shapes[k]));
    for (size_t i = 0; i < specs[k].names.size(); ++i) {
      const TensorType& t = specs[k].types[i];
      if (t.shape.empty() || t.shape[0] != rows || !counted.insert(specs[k].names[i]).second) continue;
      row_bytes += type_bytes(t) / rows;
    }
  }
  int64_t chunk = std::max<int64_t>(1, cache_bytes / std::max<int64_t>(row_bytes, 1)) / unit * unit;
  return std::min(std::max(chunk, unit), rows);
}

}  // namespace

bool reads_own_rows(const KernelSpec& consumer, const std::string& producer) {
  const Expr& e = consumer.expr;
  size_t rank = e->type.shape.size();
  if (rank == 0) return false;
  if (const auto* r = std::get_if<RedE>(&e->p)) return own_rows(r->src, identity(rank + r->extents.size()), producer);
  return own_rows(e, identity(rank), producer);
}

std::vector<Chain> plan_chains(const std::vector<KernelSpec>& specs, const std::vector<KernelShape>& shapes,
                               int64_t cache_bytes, bool unchecked) {
  std::vector<Chain> chains;
  if (cache_bytes <= 0) return chains;
  size_t k = 0;
  while (k < specs.size()) {
    if (rows_per_unit(specs[k], shapes[k]) == 0) {
      ++k;
      continue;
    }
    int64_t rows = specs[k].types[0].shape[0];
    size_t last = k;
    bool linked = false;  // some member reads an earlier one
    for (size_t j = k + 1; j < specs.size(); ++j) {
      if (rows_per_unit(specs[j], shapes[j]) == 0 || specs[j].types[0].shape[0] != rows) break;
      bool local = true, reads_member = false;
      for (size_t i = k; i < j && local; ++i) {
        if (!reads(specs[j], specs[i].binding)) continue;
        reads_member = true;
        local = unchecked || reads_own_rows(specs[j], specs[i].binding);
      }
      if (!local) break;
      linked = linked || reads_member;
      last = j;
    }
    if (last > k && linked) chains.push_back({k, last, rows, chunk_rows(specs, shapes, k, last, cache_bytes)});
    k = last + 1;
  }
  return chains;
}

}  // namespace stax::backends::cpu
