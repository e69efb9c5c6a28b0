#include "backends/cpu/chains.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>

#include "semantics/expr_util.h"
#include "semantics/index_eval.h"

namespace stax::backends::cpu {

using namespace stax::sem;

namespace {

/// Whether an index expression loads `name` (a domain of eval_iexpr).
struct LoadsDomain {
  using Value = bool;
  const std::string& name;
  Value constant(const IExprNode&, int64_t) { return false; }
  Value var(const IExprNode&, int64_t) { return false; }
  Value add(const IExprNode&, Value a, Value b) { return a || b; }
  Value sub(const IExprNode&, Value a, Value b) { return a || b; }
  Value mul(const IExprNode&, int64_t, Value a) { return a; }
  Value floordiv(const IExprNode&, Value a, int64_t) { return a; }
  Value mod(const IExprNode&, Value a, int64_t) { return a; }
  template <class F>
  Value load(const IExprNode& n, F&& arg) {
    bool r = n.name == name;
    for (size_t k = 0; k < n.args.size(); ++k) r = arg(k) || r;
    return r;
  }
};

/// `e` read at the indices `m` of the loop's `rank` indices (its views
/// composed by sem::compose_maps).
bool own_rows(const Expr& e, const IndexMap& m, int rank, const std::string& producer) {
  LoadsDomain loads{producer};
  for (const IExpr& x : m.exprs)
    if (eval_iexpr(x, loads)) return false;
  if (const auto* n = std::get_if<NameE>(&e->p)) {
    if (n->name != producer) return true;
    if (m.exprs.empty()) return false;
    std::optional<Affine> row = as_affine(IndexMap{m.vars, {m.exprs[0]}}, rank);
    if (!row) return false;
    for (size_t j = 0; j < row->a[0].size(); ++j)
      if (row->a[0][j] != (j == 0 ? 1 : 0)) return false;
    return row->c[0] == 0;
  }
  if (const auto* v = std::get_if<ViewE>(&e->p)) return own_rows(v->src, sem::compose_maps(v->map, m), rank, producer);
  if (const auto* mp = std::get_if<MapE>(&e->p)) {
    for (const Expr& a : mp->args)
      if (!own_rows(a, m, rank, producer)) return false;
    return true;
  }
  if (const auto* r = std::get_if<RedE>(&e->p)) return own_rows(r->src, m, rank, producer);  // below the top: not compiled
  return !std::holds_alternative<LetE>(e->p);
}

IndexMap identity(size_t n) {
  IndexMap id;
  for (size_t i = 0; i < n; ++i) {
    id.vars.push_back("i" + std::to_string(i));
    id.exprs.push_back(ivar(int(i)));
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
  if (const auto* r = std::get_if<RedE>(&e->p)) {
    size_t loop = rank + r->extents.size();
    return own_rows(r->src, identity(loop), int(loop), producer);
  }
  return own_rows(e, identity(rank), int(rank), producer);
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
    if (last > k && linked) chains.push_back({k, last, rows, chunk_rows(specs, shapes, k, last, cache_bytes), {}, {}});
    k = last + 1;
  }
  return chains;
}

void fold_storage(std::vector<Chain>& chains, const std::vector<KernelSpec>& specs,
                  const std::vector<std::string>& outputs, bool unchecked) {
  for (Chain& c : chains) {
    c.folded.clear();
    for (size_t j = c.first; j <= c.last; ++j) {
      const std::string& name = specs[j].binding;
      bool fold = std::find(outputs.begin(), outputs.end(), name) == outputs.end();
      for (size_t k = 0; k < specs.size() && fold && !unchecked; ++k) {
        if (k == j || !reads(specs[k], name)) continue;
        fold = k > j && k <= c.last && reads_own_rows(specs[k], name);
      }
      if (fold) c.folded.push_back(j);
    }
  }
}

}  // namespace stax::backends::cpu
