#include "oracle/fuzz.h"

#include <algorithm>
#include <chrono>
#include <span>

#include "oracle/checker.h"
#include "oracle/shrink.h"
#include "semantics/input_gen.h"
#include "semantics/npy.h"
#include "semantics/printer.h"
#include "semantics/random_inputs.h"

namespace stax::oracle {

using namespace sem;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// Parameters a transform is tried with (one is drawn per step; "" = defaults).
std::vector<std::string> param_choices(const std::string& name) {
  if (name == "split-reduction") return {"", "k=2", "k=3", "k=4"};
  if (name == "interleave-lanes") return {"", "w=2", "w=4:combine=seq", "w=8", "w=3:combine=seq"};
  if (name == "pairwise") return {"", "base=2", "base=3"};
  if (name == "numpy-pairwise") return {"bufsize=8", "bufsize=16", "bufsize=0"};
  // Generated reductions are short: small lanes and steps reach the cascade.
  if (name == "torch-sum") return {"", "lanes=2:minlevel=1", "lanes=1:minlevel=1"};
  // Small blocks: a generated reduction is short, and gpu-reduce also
  // rewrites the reductions of an earlier reassociation's trees, so its
  // default 256-thread block applied twice nests past the parser's depth.
  if (name == "gpu-reduce") return {"threads=4:warp=2", "threads=8:warp=4", "threads=8:warp=2", "threads=2:warp=2"};
  if (name == "merge-loops") return {"", "dim=0", "dim=1"};
  return {""};
}

double transform_weight(const std::string& name) {
  if (name == "normalize" || name == "compose-views" || name == "fuse-maps" || name == "split-reduction") return 1.5;
  if (name == "realize" || name == "numpy-pairwise" || name == "torch-sum") return 0.6;
  return 1.0;
}

/// The oracle on one input set: malformed target, interface, then values by class.
std::optional<std::string> judge(const Program& src, const Program& tgt, xform::SemClass cls, const Inputs& in) {
  if (auto m = malformed(tgt)) return "target program is malformed: " + *m;
  if (auto m = interface_mismatch(src, tgt)) return "interface mismatch: " + *m;
  auto c = compare_on(src, tgt, cls, in);
  if (!c) return std::nullopt;
  if (c->check == "real") return "the real semantics differ at " + c->output + index_text(c->index);
  if (c->check == "bound") return "a float result exceeds its error bound at " + c->output + index_text(c->index);
  if (c->output.empty()) return "definedness mismatch: source " + c->src_value + ", target " + c->tgt_value;
  return "value mismatch at " + c->output + index_text(c->index) + ": source " + c->src_value + ", target " +
         c->tgt_value;
}

std::optional<xform::Result> apply_steps(const Program& p, const std::vector<xform::Step>& steps) {
  try {
    xform::Context ctx;
    return xform::run_pipeline(p, steps, ctx);
  } catch (const xform::TransformError&) {
    return std::nullopt;
  }
}

std::vector<Inputs> trial_inputs(const Program& p, uint64_t seed, int trials, std::span<const sem::InputKind> kinds) {
  std::vector<Inputs> v;
  for (int t = 0; t < trials; ++t)
    v.push_back(sem::generate_inputs(p, kinds[size_t(t) % kinds.size()], seed * 1000003ull + uint64_t(t)));
  return v;
}

}  // namespace

std::string join_steps(const std::vector<xform::Step>& steps) {
  std::string s;
  for (const xform::Step& st : steps) s += (s.empty() ? "" : ",") + st.text;
  return s;
}

std::string_view finding_kind_name(FindingKind k) {
  switch (k) {
    case FindingKind::Transform: return "transform";
    case FindingKind::Backend: return "backend";
    case FindingKind::Crash: return "crash";
  }
  return "?";
}

std::vector<xform::Step> random_pipeline(uint64_t seed, const FuzzOptions& opt) {
  Rng rng(seed * 0x9e3779b97f4a7c15ull + 0x243f6a8885a308d3ull);
  std::vector<const xform::TransformInfo*> pool;
  std::vector<double> w;
  for (const xform::TransformInfo& t : xform::registry()) {
    if (!opt.transforms.empty() && std::find(opt.transforms.begin(), opt.transforms.end(), t.name) == opt.transforms.end())
      continue;
    pool.push_back(&t);
    w.push_back(transform_weight(t.name));
  }
  std::vector<xform::Step> steps;
  if (pool.empty()) return steps;
  auto make = [&](const xform::TransformInfo* t) {
    std::vector<std::string> ps = param_choices(t->name);
    const std::string& prm = ps[rng.next() % ps.size()];
    std::string text = t->name + (prm.empty() ? "" : ":" + prm);
    auto parsed = xform::parse_pipeline(text);
    steps.push_back(std::get<std::vector<xform::Step>>(parsed)[0]);
  };
  int n = 1 + int(rng.next() % uint64_t(std::max(1, opt.max_steps)));
  const xform::TransformInfo* norm = xform::find_transform("normalize");
  bool norm_ok = std::find(pool.begin(), pool.end(), norm) != pool.end();
  if (norm_ok && n > 1 && rng.uniform() < 0.35) {
    make(norm);
    --n;
  }
  double sum = 0;
  for (double x : w) sum += x;
  for (int i = 0; i < n; ++i) {
    double r = rng.uniform() * sum;
    size_t k = 0;
    while (k + 1 < pool.size() && r >= w[k]) r -= w[k++];
    make(pool[k]);
  }
  return steps;
}

std::optional<std::string> outcome_difference(const Program& p, const IeeeOutcome& ref, const IeeeOutcome& got) {
  if (ref.failure && got.failure) return std::nullopt;
  if (ref.failure) return "the interpreter fails (" + ref.failure->str() + ") but the backend has a value";
  if (got.failure) return "the backend fails (" + got.failure->str() + ") but the interpreter has a value";
  for (const std::string& o : p.outputs) {
    auto a = ref.outputs.find(o);
    auto b = got.outputs.find(o);
    if (a == ref.outputs.end()) continue;
    if (b == got.outputs.end() || !b->second) return "output " + o + " is missing from the backend's result";
    const Tensor& x = *a->second;
    const Tensor& y = *b->second;
    if (x.dtype != y.dtype || x.shape != y.shape)
      return "output " + o + " has type " + type_str({y.dtype, y.shape}) + ", expected " + type_str({x.dtype, x.shape});
    for (int64_t i = 0; i < x.size(); ++i)
      if (!element_equal(x, y, i))
        return "output " + o + index_text(unflatten(x.shape, i)) + ": interpreter " + element_text(x, i) +
               ", backend " + element_text(y, i);
  }
  return std::nullopt;
}

std::optional<std::string> culprit(const Program& p, const std::vector<xform::Step>& steps, const Inputs& in) {
  for (size_t i = 0; i < steps.size(); ++i) {
    std::vector<xform::Step> prefix(steps.begin(), steps.begin() + std::ptrdiff_t(i + 1));
    auto r = apply_steps(p, prefix);
    if (!r) return std::nullopt;
    if (judge(p, r->program, r->cls, in)) return steps[i].info->name;
  }
  return std::nullopt;
}

std::optional<std::string> reproduces(const Finding& f, const Program& q, const Inputs& in,
                                      const std::vector<BackendRunner>& runners) {
  try {
    if (f.kind == FindingKind::Backend) {
      const BackendRunner* r = nullptr;
      for (const BackendRunner& b : runners)
        if (b.name == f.component) r = &b;
      if (!r) return std::nullopt;
      IeeeOutcome ref = eval_ieee(q, in);
      IeeeOutcome got = r->run(q, in);
      return outcome_difference(q, ref, got);
    }
    auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline(f.pipeline));
    auto r = apply_steps(q, steps);
    if (!r) return std::nullopt;
    auto msg = judge(q, r->program, r->cls, in);
    if (!msg) return std::nullopt;
    auto who = culprit(q, steps, in);
    if (!who || *who != f.component) return std::nullopt;
    return msg;
  } catch (const ResourceError&) {
    return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;  // a backend that rejects the candidate
  }
}

IterationResult fuzz_one(uint64_t seed, const FuzzOptions& opt, const std::vector<BackendRunner>& runners) {
  auto t0 = Clock::now();
  Program p = generate_program(seed, opt.gen);
  double generate = since(t0);
  IterationResult res = fuzz_program(seed, p, opt, runners);
  res.times.generate = generate;
  return res;
}

IterationResult fuzz_program(uint64_t seed, const Program& p, const FuzzOptions& opt,
                             const std::vector<BackendRunner>& runners) {
  IterationResult res;
  res.seed = seed;
  std::vector<xform::Step> steps = random_pipeline(seed, opt);
  res.pipeline = join_steps(steps);
  res.backends.push_back("interp");  // the reference: T(P) always runs on it
  for (const BackendRunner& b : runners) res.backends.push_back(b.name);

  auto t1 = Clock::now();
  xform::Result r;
  try {
    xform::Context ctx;
    r = xform::run_pipeline(p, steps, ctx);
  } catch (const xform::TransformError& e) {
    res.status = "refused";
    res.note = e.message;
    res.times.transform = since(t1);
    return res;
  }
  res.cls = std::string(xform::class_name(r.cls));
  res.times.transform = since(t1);

  auto t2 = Clock::now();
  try {
    CheckOptions co;
    co.trials = opt.trials;
    co.seed = seed;
    if (opt.prove) co.prove = ProveMode::Try;
    co.prove_timeout_ms = opt.prove_timeout_ms;
    co.retarget = retarget_by(steps);
    Verdict v = check_programs(p, r.program, r.cls, co);
    res.times.check = since(t2);
    if (v.proof_tried) res.times.prove = v.proof_ms / 1000;
    if (v.proved) res.status = "proved";
    else if (v.proof_tried) res.note = "not proved: " + v.proof_note;
    if (v.status == Status::NotCheckable) {
      res.status = "not-checkable";
      res.note = v.message;
    } else if (v.status == Status::Counterexample) {
      Finding f;
      f.kind = FindingKind::Transform;
      f.pipeline = res.pipeline;
      f.cls = res.cls;
      f.program = p;
      f.inputs = v.cex ? v.cex->inputs : sem::generate_inputs(p, sem::InputKind::Normal, seed);
      f.message = judge(p, r.program, r.cls, f.inputs).value_or(v.message);
      f.component = culprit(p, steps, f.inputs).value_or(steps.back().info->name);
      res.status = "finding";
      res.finding = std::move(f);
      return res;
    }
  } catch (const ResourceError& e) {
    res.status = "resource";
    res.note = e.message;
    res.times.check = since(t2);
    return res;
  }

  auto t3 = Clock::now();
  if (!runners.empty()) {
    std::vector<Inputs> ins = trial_inputs(r.program, seed ^ 0x5bd1e995ull, opt.backend_trials, sem::kBackendInputKinds);
    for (const Inputs& in : ins) {
      IeeeOutcome ref;
      try {
        ref = eval_ieee(r.program, in);
      } catch (const ResourceError&) {
        continue;
      }
      for (const BackendRunner& b : runners) {
        std::optional<std::string> diff;
        try {
          IeeeOutcome got = b.run(r.program, in);
          diff = outcome_difference(r.program, ref, got);
        } catch (const std::exception&) {
          ++res.backend_skipped;
          continue;
        }
        if (!diff) continue;
        Finding f;
        f.kind = FindingKind::Backend;
        f.component = b.name;
        f.pipeline = res.pipeline;
        f.cls = res.cls;
        f.message = *diff;
        f.program = r.program;
        f.inputs = in;
        res.status = "finding";
        res.finding = std::move(f);
        res.times.backends = since(t3);
        return res;
      }
    }
  }
  res.times.backends = since(t3);
  return res;
}

std::string replay_command(const Finding& f, const Program& p, std::string_view mutant, const std::string& stx_file) {
  std::string cmd = "stax fuzz replay " + stx_file;
  if (f.kind == FindingKind::Transform) cmd += " --transform " + f.pipeline;
  else cmd += " --backend " + f.component;
  for (const Input& i : p.inputs) cmd += " --input " + i.name + "=" + i.name + npy_suffix(i.type.dtype);
  if (!mutant.empty()) cmd += " --mutant " + std::string(mutant);
  return cmd;
}

namespace {

/// The pipeline cut after its culprit, without the earlier steps the finding
/// does not need.
std::string shrink_pipeline(const Finding& f) {
  auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline(f.pipeline));
  size_t last = 0;
  while (last < steps.size() && steps[last].info->name != f.component) ++last;
  if (last == steps.size()) return f.pipeline;
  steps.resize(last + 1);
  Finding g = f;
  for (size_t k = 0; k + 1 < steps.size();) {
    std::vector<xform::Step> fewer = steps;
    fewer.erase(fewer.begin() + std::ptrdiff_t(k));
    g.pipeline = join_steps(fewer);
    if (reproduces(g, f.program, f.inputs, {})) {
      steps = std::move(fewer);
      continue;
    }
    ++k;
  }
  g.pipeline = join_steps(steps);
  return reproduces(g, f.program, f.inputs, {}) ? g.pipeline : f.pipeline;
}

}  // namespace

Reproducer shrink_finding(const Finding& original, const std::vector<BackendRunner>& runners, double seconds,
                          std::string_view mutant) {
  Finding f = original;
  if (f.kind == FindingKind::Transform) f.pipeline = shrink_pipeline(f);
  Reproducer rep;
  rep.pipeline = f.pipeline;
  rep.size_before = print_program(f.program).size();
  ShrinkTarget target;
  target.fails = [&](const Program& q, const Inputs& in) { return reproduces(f, q, in, runners).has_value(); };
  uint64_t salt = 0;
  target.fresh_inputs = [&](const Program& q) {
    std::vector<Inputs> v;
    if (auto a = sem::adapt_inputs(q, f.inputs)) v.push_back(*a);
    auto more = trial_inputs(q, 0x51ed27ull + salt++, 4, sem::kInputKinds);
    v.insert(v.end(), more.begin(), more.end());
    return v;
  };
  ShrinkOptions so;
  so.max_seconds = seconds;
  ShrinkResult s = shrink(f.program, f.inputs, target, so);
  rep.stx = print_program(s.program);
  rep.size_after = rep.stx.size();
  rep.tests = s.tests;
  for (const Input& i : s.program.inputs)
    rep.npy_files.push_back({i.name + npy_suffix(i.type.dtype), format_npy(s.inputs.at(i.name))});
  rep.command = replay_command(f, s.program, mutant);
  return rep;
}

}  // namespace stax::oracle
