// The registry of transforms and the pipeline syntax `NAME[:key=val...],...`:
// the one place where a step's text becomes the typed options of its pass
// (passes.h).
#include "transforms/transform.h"

#include <algorithm>
#include <cctype>

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

namespace {

/// Reads the `key=val` parameters of one step into typed fields; every key
/// given must be one the pass reads.
class OptionReader {
 public:
  OptionReader(std::string pass, const Params& raw) : pass_(std::move(pass)), raw_(raw) {}

  std::optional<std::string> text(const std::string& key) {
    known_.push_back(key);
    auto it = raw_.find(key);
    if (it == raw_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<int64_t> integer(const std::string& key) {
    auto v = text(key);
    if (!v) return std::nullopt;
    try {
      size_t used = 0;
      int64_t x = std::stoll(*v, &used);
      if (used != v->size()) throw std::invalid_argument("trailing");
      return x;
    } catch (const std::exception&) {
      throw TransformError{pass_ + ": parameter " + key + "=" + *v + " is not an integer"};
    }
  }
  /// A bad value: "PASS: what".
  [[noreturn]] void fail(const std::string& what) const { throw TransformError{pass_ + ": " + what}; }
  /// After the pass read its keys: any other key is an error.
  void finish() const {
    for (const auto& kv : raw_) {
      if (std::find(known_.begin(), known_.end(), kv.first) != known_.end()) continue;
      std::string known;
      for (const std::string& k : known_) known += (known.empty() ? "" : ", ") + k;
      fail("unknown parameter '" + kv.first + "'" + (known.empty() ? " (it takes none)" : " (known: " + known + ")"));
    }
  }

 private:
  std::string pass_;
  const Params& raw_;
  std::vector<std::string> known_;
};

InlineOptions parse_inline(OptionReader& r) { return {r.text("name")}; }

RealizeOptions parse_realize(OptionReader& r) {
  RealizeOptions o;
  o.binding = r.text("binding");
  o.index = r.integer("index").value_or(0);
  return o;
}

MergeLoopsOptions parse_merge_loops(OptionReader& r) {
  MergeLoopsOptions o;
  o.binding = r.text("binding");
  o.dim = r.integer("dim").value_or(-1);
  return o;
}

NormalizeOptions parse_normalize(OptionReader& r) { return {r.integer("fuse").value_or(1) != 0}; }

SplitReductionOptions parse_split_reduction(OptionReader& r) {
  SplitReductionOptions o;
  o.binding = r.text("binding");
  o.k = r.integer("k");
  if (o.k && *o.k < 1) r.fail("k must be at least 1");
  return o;
}

GpuReduceOptions parse_gpu_reduce(OptionReader& r) {
  GpuReduceOptions o;
  o.binding = r.text("binding");
  o.threads = r.integer("threads").value_or(256);
  o.warp = r.integer("warp").value_or(32);
  auto pow2 = [](int64_t v) { return v >= 1 && (v & (v - 1)) == 0; };
  if (!pow2(o.threads) || !pow2(o.warp)) r.fail("threads and warp must be powers of two");
  if (o.warp > o.threads) r.fail("warp=" + std::to_string(o.warp) + " exceeds threads=" + std::to_string(o.threads));
  if (o.threads > 1024) r.fail("threads=" + std::to_string(o.threads) + " exceeds CUDA's 1024 per block");
  return o;
}

InterleaveLanesOptions parse_interleave_lanes(OptionReader& r) {
  InterleaveLanesOptions o;
  o.binding = r.text("binding");
  o.w = r.integer("w").value_or(16);
  std::string combine = r.text("combine").value_or("tree");
  if (o.w < 1) r.fail("w must be at least 1");
  if (combine != "tree" && combine != "seq") r.fail("combine=" + combine + " (expected seq or tree)");
  o.combine = combine == "seq" ? InterleaveLanesOptions::Combine::Seq : InterleaveLanesOptions::Combine::Tree;
  if (o.combine == InterleaveLanesOptions::Combine::Tree && (o.w & (o.w - 1)) != 0)
    r.fail("combine=tree needs a power-of-two w, got " + std::to_string(o.w));
  return o;
}

PairwiseOptions parse_pairwise(OptionReader& r) {
  PairwiseOptions o;
  o.binding = r.text("binding");
  o.base = r.integer("base").value_or(1);
  if (o.base < 1) r.fail("base must be at least 1");
  return o;
}

/// perm=2/0/1 (any non-digit separates, since ',' separates pipeline steps).
ReorderReductionDimsOptions parse_reorder_reduction_dims(OptionReader& r) {
  ReorderReductionDimsOptions o;
  o.binding = r.text("binding");
  std::optional<std::string> text = r.text("perm");
  if (!text) return o;
  std::vector<int64_t> v;
  std::string cur;
  for (char c : *text + "/") {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      cur += c;
      if (cur.size() > 9) r.fail("perm=" + *text + " has an oversized entry");
    } else if (!cur.empty()) {
      v.push_back(std::stoll(cur));
      cur.clear();
    }
  }
  std::vector<int64_t> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != int64_t(i)) r.fail("perm=" + *text + " is not a permutation of 0..q-1");
  if (v.size() < 2) r.fail("perm=" + *text + " needs at least 2 dims");
  o.perm = std::move(v);
  return o;
}

NumpyPairwiseOptions parse_numpy_pairwise(OptionReader& r) {
  NumpyPairwiseOptions o;
  o.binding = r.text("binding");
  o.bufsize = r.integer("bufsize").value_or(8192);
  if (o.bufsize < 0) r.fail("bufsize must be >= 0 (0: no blocking)");
  return o;
}

TorchSumOptions parse_torch_sum(OptionReader& r) {
  TorchSumOptions o;
  o.binding = r.text("binding");
  o.threads = r.integer("threads").value_or(1);
  o.lanes = r.integer("lanes").value_or(0);
  o.min_level_power = r.integer("minlevel").value_or(4);
  if (o.threads < 1 || o.threads > 1024) r.fail("threads must be in [1, 1024]");
  if (o.lanes < 0 || o.lanes > 64) r.fail("lanes must be in [1, 64] (0: PyTorch's, by dtype)");
  if (o.min_level_power < 1 || o.min_level_power > 16) r.fail("minlevel must be in [1, 16]");
  return o;
}

/// The entry of a pass with options: its parameters are parsed and checked
/// (no key left unread) on each run, before the pass.
template <class Options>
TransformInfo entry(std::string name, SemClass cls, std::string params, std::string summary,
                    Options (*parse)(OptionReader&), Result (*pass)(const sem::Program&, const Options&, Context&)) {
  auto run = [name, parse, pass](const sem::Program& p, const Params& raw, Context& ctx) {
    OptionReader r(name, raw);
    Options o = parse(r);
    r.finish();
    return pass(p, o, ctx);
  };
  return {std::move(name), cls, std::move(params), std::move(summary), run};
}

/// The entry of a pass without options: any parameter is an error.
TransformInfo entry(std::string name, SemClass cls, std::string summary, Result (*pass)(const sem::Program&, Context&)) {
  auto run = [name, pass](const sem::Program& p, const Params& raw, Context& ctx) {
    OptionReader(name, raw).finish();
    return pass(p, ctx);
  };
  return {std::move(name), cls, "", std::move(summary), run};
}


}  // namespace

const std::vector<TransformInfo>& registry() {
  static const std::vector<TransformInfo> r = {
      entry("inline", SemClass::Exact, "[name=X]", "inline binding X, or every single-use binding (Theorem 6.1)",
            parse_inline, inline_bindings),
      entry("realize", SemClass::Exact, "[binding=B:index=K]",
            "bind subexpression K (pre-order) of B, or every proper subexpression (Theorem 6.1)", parse_realize,
            realize),
      entry("cse", SemClass::Exact, "merge structurally equal subexpressions and bindings (Theorem 6.2.1)", cse),
      entry("dce", SemClass::Refines, "remove bindings no output depends on (Theorem 6.2.2)", dce),
      entry("compose-views", SemClass::Exact, "fold nested views into one index map (Prop. 6.2)", compose_views),
      entry("fuse-maps", SemClass::Exact, "fuse a map into its map consumers, through views (Cor. 6.1)", fuse_maps),
      entry("merge-loops", SemClass::Exact, "[binding=B:dim=J]", "merge adjacent domain dims J, J+1 (Prop. 6.3)",
            parse_merge_loops, merge_loops),
      entry("normalize", SemClass::Exact, "[fuse=0|1]",
            "bring every binding to kernel normal form (fuse=0: realization only, never composition or fusion, so "
            "always exact)",
            parse_normalize, normalize),
      entry("split-reduction", SemClass::Real, "[k=K:binding=B]",
            "split each reduction into K identity-padded segments (default ceil(sqrt(n))), then combine the "
            "partials (Listing 6.4); exact for max/min",
            parse_split_reduction, split_reduction),
      entry("interleave-lanes", SemClass::Real, "[w=W:combine=seq|tree:binding=B]",
            "W interleaved lane accumulators (default 16; element i to lane i mod W), lanes combined sequentially "
            "or by a halving shuffle tree (default); exact for max/min",
            parse_interleave_lanes, interleave_lanes),
      entry("gpu-reduce", SemClass::Real, "[threads=M:warp=W:binding=B]",
            "one CUDA thread block's order: M block-stride thread accumulators (default 256), a shuffle tree per "
            "warp of W lanes (default 32), a halving tree over the warp results; exact for max/min",
            parse_gpu_reduce, gpu_reduce),
      entry("pairwise", SemClass::Real, "[base=B:binding=B]",
            "pairwise tree: recursive halving of the identity-padded range down to blocks of B (default 1) folded "
            "sequentially; exact for max/min",
            parse_pairwise, pairwise),
      entry("reorder-reduction-dims", SemClass::Real, "[perm=a/b/...:binding=B]",
            "fold the reduced dims in another order (default reversed); exact for max/min",
            parse_reorder_reduction_dims, reorder_reduction_dims),
      entry("numpy-pairwise", SemClass::Real, "[bufsize=N:binding=B]",
            "numpy.sum's f32/f64 order, bit for bit: pairwise_sum (leaves of <= 128 in 8 lanes, halving at "
            "multiples of 8) over buffer blocks of N elements (default 8192, 0: none) added in turn to the init",
            parse_numpy_pairwise, numpy_pairwise),
      entry("torch-sum", SemClass::Real, "[threads=T:lanes=W:minlevel=P:binding=B]",
            "torch.sum's CPU f32/f64 order, bit for bit: 8 (f64: 4) lanes, 4-way unrolling, a 4-level cascade of "
            "step 2^max(4, ceil(log2 rows)/4), tail, lanes in order; a full reduction of >= 32768 elements split "
            "over T threads (default 1) as ATen does; lanes/minlevel change the model (wrong variants)",
            parse_torch_sum, torch_sum),
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

}  // namespace stax::xform
