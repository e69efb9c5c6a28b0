#include "transforms/transform.h"

#include "transforms/passes.h"

namespace stax::xform {

std::string_view class_name(SemClass c) {
  switch (c) {
    case SemClass::Exact: return "exact";
    case SemClass::Refines: return "refines";
    case SemClass::Real: return "real";
  }
  return "?";
}

std::optional<SemClass> class_from_name(std::string_view s) {
  for (SemClass c : {SemClass::Exact, SemClass::Refines, SemClass::Real})
    if (class_name(c) == s) return c;
  return std::nullopt;
}

SemClass weaker(SemClass a, SemClass b) { return static_cast<int>(a) > static_cast<int>(b) ? a : b; }

const std::vector<TransformInfo>& registry() {
  static const std::vector<TransformInfo> r = {
      {"inline", SemClass::Exact, "[name=X]", "inline binding X, or every single-use binding (Theorem 6.1)",
       inline_bindings},
      {"realize", SemClass::Exact, "[binding=B:index=K]",
       "bind subexpression K (pre-order) of B, or every proper subexpression (Theorem 6.1)", realize},
      {"cse", SemClass::Exact, "", "merge structurally equal subexpressions and bindings (Theorem 6.2.1)", cse},
      {"dce", SemClass::Refines, "", "remove bindings no output depends on (Theorem 6.2.2)", dce},
      {"compose-views", SemClass::Exact, "", "fold nested views into one index map (Prop. 6.2)", compose_views},
      {"fuse-maps", SemClass::Exact, "", "fuse a map into its map consumers, through views (Cor. 6.1)", fuse_maps},
      {"merge-loops", SemClass::Exact, "[binding=B:dim=J]", "merge adjacent domain dims J, J+1 (Prop. 6.3)",
       merge_loops},
      {"normalize", SemClass::Exact, "[fuse=0|1]",
       "bring every binding to kernel normal form (fuse=0: realization only, never composition or fusion, so "
       "always exact)",
       normalize},
      {"split-reduction", SemClass::Real, "[k=K:binding=B]",
       "split each reduction into K identity-padded segments (default ceil(sqrt(n))), then combine the partials "
       "(Listing 6.4); exact for max/min",
       split_reduction},
      {"interleave-lanes", SemClass::Real, "[w=W:combine=seq|tree:binding=B]",
       "W interleaved lane accumulators (default 16; element i to lane i mod W), lanes combined sequentially or by "
       "a halving shuffle tree (default); exact for max/min",
       interleave_lanes},
      {"pairwise", SemClass::Real, "[base=B:binding=B]",
       "pairwise tree: recursive halving of the identity-padded range down to blocks of B (default 1) folded "
       "sequentially; exact for max/min",
       pairwise},
      {"reorder-reduction-dims", SemClass::Real, "[perm=a/b/...:binding=B]",
       "fold the reduced dims in another order (default reversed); exact for max/min", reorder_reduction_dims},
      {"numpy-pairwise", SemClass::Real, "[bufsize=N:binding=B]",
       "numpy.sum's f32/f64 order, bit for bit: pairwise_sum (leaves of <= 128 in 8 lanes, halving at multiples "
       "of 8) over buffer blocks of N elements (default 8192, 0: none) added in turn to the init",
       numpy_pairwise},
  };
  return r;
}

const TransformInfo* find_transform(std::string_view name) {
  for (const TransformInfo& t : registry())
    if (t.name == name) return &t;
  return nullptr;
}

std::variant<std::vector<Step>, std::string> parse_pipeline(std::string_view spec) {
  std::vector<Step> steps;
  size_t i = 0;
  while (i <= spec.size()) {
    size_t j = spec.find(',', i);
    if (j == std::string_view::npos) j = spec.size();
    std::string item(spec.substr(i, j - i));
    if (item.empty()) return std::string("empty transform name in '") + std::string(spec) + "'";
    Step s;
    s.text = item;
    size_t c = item.find(':');
    std::string name = item.substr(0, c);
    s.info = find_transform(name);
    if (!s.info) {
      std::string known;
      for (const auto& t : registry()) known += (known.empty() ? "" : ", ") + t.name;
      return "unknown transform '" + name + "' (known: " + known + ")";
    }
    while (c != std::string::npos) {
      size_t d = item.find(':', c + 1);
      std::string kv = item.substr(c + 1, d == std::string::npos ? std::string::npos : d - c - 1);
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) return "transform parameter '" + kv + "' is not key=value";
      s.params[kv.substr(0, eq)] = kv.substr(eq + 1);
      c = d;
    }
    steps.push_back(std::move(s));
    i = j + 1;
  }
  return steps;
}

Result run_pipeline(const sem::Program& p, const std::vector<Step>& steps, Context& ctx) {
  Result r{p, SemClass::Exact};
  for (const Step& s : steps) {
    Result n = s.info->run(r.program, s.params, ctx);
    r.program = std::move(n.program);
    r.cls = weaker(r.cls, n.cls);
  }
  return r;
}

std::optional<std::string> param(const Params& p, const std::string& key) {
  auto it = p.find(key);
  if (it == p.end()) return std::nullopt;
  return it->second;
}

int64_t int_param(const Params& p, const std::string& key, int64_t dflt) {
  auto v = param(p, key);
  if (!v) return dflt;
  try {
    size_t used = 0;
    int64_t x = std::stoll(*v, &used);
    if (used != v->size()) throw std::invalid_argument("trailing");
    return x;
  } catch (const std::exception&) {
    throw TransformError{"parameter " + key + "=" + *v + " is not an integer"};
  }
}

}  // namespace stax::xform
