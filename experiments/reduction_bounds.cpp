// §6.5 / docs/design.md §4: the error of an f32 sum of n values under
// five summation orders, each written as a core-language transform of
// `red(sum, 0.0, [n], x)`, against the exact (MPFR) sum; the worst-case bound
// Σ γ(d_i)|a_i| of the order's reduction tree; their ratio. The text claims
// pairwise < split sqrt(n) < sequential (bounds ~ log2 n, 2 sqrt(n), n).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "experiments/experiments.h"
#include "oracle/error_bound/error_bound.h"
#include "semantics/parser.h"
#include "semantics/random_inputs.h"
#include "transforms/transform.h"

namespace stax::experiments {

using namespace sem;

namespace {

struct Order {
  std::string label, key;  // key: short name for files and plots
  std::string spec;        // transform pipeline; "" = as written
};

std::vector<Order> orders_for(int64_t n) {
  int64_t k = std::max<int64_t>(1, std::llround(std::sqrt(double(n))));
  return {
      {"sequential", "sequential", ""},
      {"split sqrt(n)", "split", "split-reduction:k=" + std::to_string(k)},
      {"lanes 16", "lanes16", "interleave-lanes:w=16"},
      {"pairwise", "pairwise", "pairwise"},
      {"numpy-pairwise", "numpy", "numpy-pairwise"},
  };
}

const char* kData[] = {"uniform", "normal", "ill-conditioned"};

/// uniform(0,1); standard normal; ill-conditioned: pairs ±a of large values
/// (2^10..2^20), each perturbed by a small normal value (1e-3) and rounded
/// to f32, shuffled: |Σx| is tiny next to Σ|x|.
Tensor make_data(const std::string& kind, int64_t n, uint64_t seed) {
  Rng rng(seed * 0x9e3779b97f4a7c15ull + uint64_t(n) * 31 + (kind == "uniform" ? 1 : kind == "normal" ? 2 : 3));
  Tensor t(DType::F32, {n});
  float* x = t.as<float>();
  if (kind == "uniform") {
    for (int64_t i = 0; i < n; ++i) x[i] = float(rng.uniform());
  } else if (kind == "normal") {
    for (int64_t i = 0; i < n; ++i) x[i] = float(rng.normal());
  } else {
    for (int64_t i = 0; i + 1 < n; i += 2) {
      double a = std::ldexp(1.0 + rng.uniform(), 10 + int(rng.next() % 10));
      if (rng.next() & 1) a = -a;
      x[i] = float(a + rng.normal() * 1e-3);
      x[i + 1] = float(-a + rng.normal() * 1e-3);
    }
    if (n % 2) x[n - 1] = float(rng.normal() * 1e-3);
    for (int64_t i = n - 1; i > 0; --i) std::swap(x[i], x[rng.range(0, i + 1)]);
  }
  return t;
}

struct Result {
  int log2n = 0;
  int64_t n = 0;
  std::string order, key, spec, data, status = "ok";
  int64_t summands = 0, max_depth = 0;
  std::string higham;
  double exact = 0, computed = 0, measured = 0, bound = 0, ratio = 0, sum_abs = 0, seconds = 0;
};

std::string g(double v) {
  char b[48];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string r = "\"";
  for (char c : s) r += c == '"' ? std::string("\"\"") : std::string(1, c);
  return r + "\"";
}

/// Every (n, order, data) result, in that order.
struct Measured {
  std::vector<Result> results;
  std::vector<std::string> missing;  ///< transforms not registered in this build
  int violations = 0;
};

/// `ord` applied to `src`; the status says why not when it cannot be.
Program transformed(const Program& src, const Order& ord, std::string& status, std::vector<std::string>& missing) {
  if (ord.spec.empty()) return src;
  std::string name = ord.spec.substr(0, ord.spec.find(':'));
  if (!xform::find_transform(name)) {
    status = "transform '" + name + "' not registered";
    if (std::find(missing.begin(), missing.end(), name) == missing.end()) missing.push_back(name);
    return src;
  }
  try {
    xform::Context ctx;
    auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline(ord.spec));
    return xform::run_pipeline(src, steps, ctx).program;
  } catch (const xform::TransformError& e) {
    status = "transform error: " + e.message;
    return src;
  }
}

/// The bound report of `tgt` on `x`, copied into `r` (or the reason there is none).
void measure(const Program& tgt, const Tensor& x, double t_transform, Result& r, int& violations) {
  Inputs in;
  in["x"] = x;
  oracle::BoundReport rep;
  try {
    rep = oracle::analyze_bounds(tgt, in);
  } catch (const ResourceError& e) {
    r.status = "resource: " + e.message;
    return;
  }
  const oracle::BoundRow* row = rep.row("y");
  if (rep.failure) {
    r.status = "program failed: " + rep.failure->reason;
  } else if (rep.error) {
    r.status = *rep.error;
  } else if (!row || row->checked == 0) {
    r.status = row ? "outside the model: " + row->skip_reason : "no reduction root named y";
  } else {
    r.summands = row->summands;
    r.max_depth = row->max_depth;
    r.higham = row->higham;
    r.exact = row->exact;
    r.computed = row->computed;
    r.measured = row->measured;
    r.bound = row->bound;
    r.ratio = row->ratio;
    r.sum_abs = row->sum_abs;
    r.seconds = rep.seconds + t_transform / 3;
    if (!rep.within()) ++violations;
  }
}

/// Runs every order on every data set for every n, logging a line per run.
Measured measure_all(const Options& o, std::ostream& log) {
  Measured m;
  for (int l = o.min_log2n; l <= o.max_log2n; l += o.step_log2n) {
    int64_t n = int64_t(1) << l;
    std::string text = "input x : f32[" + std::to_string(n) + "]\nlet y : f32[] = red(sum, 0.0, [" +
                       std::to_string(n) + "], x)\noutput y\n";
    ParseResult pr = parse_program(text, "<reduction-bounds>");
    Program src = std::get<Program>(pr);
    std::map<std::string, Tensor> data;
    for (const char* d : kData) data[d] = make_data(d, n, o.seed);
    for (const Order& ord : orders_for(n)) {
      std::string status = "ok";
      auto t0 = std::chrono::steady_clock::now();
      Program tgt = transformed(src, ord, status, m.missing);
      double t_transform = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (const char* d : kData) {
        Result r;
        r.log2n = l;
        r.n = n;
        r.order = ord.label;
        r.key = ord.key;
        r.spec = ord.spec;
        r.data = d;
        r.status = status;
        if (status == "ok") measure(tgt, data.at(d), t_transform, r, m.violations);
        log << "n=2^" << l << " " << ord.label << " " << d << ": "
            << (r.status == "ok" ? "error " + g(r.measured) + ", bound " + g(r.bound) + ", ratio " + g(r.ratio) +
                                       ", depth " + std::to_string(r.max_depth) + " (" + g(r.seconds) + " s)"
                                 : r.status)
            << "\n";
        log.flush();
        m.results.push_back(std::move(r));
      }
    }
  }
  return m;
}

void write_csv(const std::string& dir, const std::vector<Result>& results) {
  std::ofstream f(std::filesystem::path(dir) / "reduction_bounds.csv");
  f << "log2n,n,order,transform,data,status,summands,max_depth,case,exact,computed,measured_error,bound,ratio,"
       "sum_abs,seconds\n";
  char buf[512];
  for (const Result& r : results) {
    std::snprintf(buf, sizeof buf, "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.4f", r.exact, r.computed, r.measured,
                  r.bound, r.ratio, r.sum_abs, r.seconds);
    f << r.log2n << "," << r.n << "," << csv_escape(r.order) << "," << csv_escape(r.spec) << "," << r.data << ","
      << csv_escape(r.status) << "," << r.summands << "," << r.max_depth << "," << csv_escape(r.higham) << ","
      << buf << "\n";
  }
}

/// The successful result of (n = 2^l, order, data), or null.
const Result* find_result(const std::vector<Result>& results, int l, const std::string& key, const std::string& d) {
  for (const Result& r : results)
    if (r.log2n == l && r.key == key && r.data == d && r.status == "ok") return &r;
  return nullptr;
}

struct Tally {
  int holds = 0, total = 0;
  std::vector<std::string> fails;
};

/// The text's claim, pairwise < split sqrt(n) < sequential, by bound and by measured error.
struct Claim {
  Tally by_bound, by_error;
};

Claim tally_claim(const Options& o, const std::vector<Result>& results) {
  Claim c;
  for (int l = o.min_log2n; l <= o.max_log2n; l += o.step_log2n)
    for (const char* d : kData) {
      const Result *p = find_result(results, l, "pairwise", d), *s = find_result(results, l, "split", d),
                   *q = find_result(results, l, "sequential", d);
      if (!p || !s || !q) continue;
      auto check = [&](Tally& t, double a, double b, double cc) {
        ++t.total;
        if (a < b && b < cc) ++t.holds;
        else
          t.fails.push_back("n=2^" + std::to_string(l) + " " + d + ": pairwise " + g(a) + ", split " + g(b) +
                            ", sequential " + g(cc));
      };
      check(c.by_bound, p->bound, s->bound, q->bound);
      check(c.by_error, p->measured, s->measured, q->measured);
    }
  return c;
}

/// data -> order key -> geometric means over n of (error, bound) / Σ|a|.
using GeoMeans = std::map<std::string, std::map<std::string, std::pair<double, double>>>;

GeoMeans geometric_means(const std::vector<Result>& results) {
  GeoMeans gmean;
  for (const char* d : kData)
    for (const Order& ord : orders_for(16)) {
      double le = 0, lb = 0;
      int cnt = 0;
      for (const Result& r : results)
        if (r.data == d && r.key == ord.key && r.status == "ok" && r.sum_abs > 0) {
          le += std::log10(std::max(r.measured / r.sum_abs, 1e-30));
          lb += std::log10(std::max(r.bound / r.sum_abs, 1e-30));
          ++cnt;
        }
      if (cnt) gmean[d][ord.key] = {std::pow(10.0, le / cnt), std::pow(10.0, lb / cnt)};
    }
  return gmean;
}

/// "| n | a | b |\n|---|---|---|\n" for one column per order.
void table_head(std::ostream& md, const std::string& first, const std::vector<Order>& ords, const char* suffix) {
  md << "| " << first << " |";
  for (const Order& ord : ords) md << " " << ord.label << suffix << " |";
  md << "\n|---|";
  for (size_t i = 0; i < ords.size(); ++i) md << "---|";
  md << "\n";
}

void write_markdown(const std::string& dir, const Options& o, const Measured& m, const Claim& c,
                    GeoMeans& gmean) {
  std::ostringstream md;
  md << "# Reduction error bounds (§6.5, docs/design.md §4)\n\n"
     << "f32 sums `red(sum, 0.0, [n], x)` in five orders, each a core-language transform; measured error "
        "|ŝ − s| against the exact sum s (MPFR `mpfr_sum`) of the same summands, worst-case bound "
        "Σ γ(d_i)|a_i| (u = 2^-24) from the order's reduction tree, and their ratio. Seed "
     << o.seed << ".\n\n";
  std::vector<Order> ords = orders_for(16);
  for (const char* d : kData) {
    md << "## " << d << "\n\n";
    table_head(md, "n", ords, " error / bound (ratio)");
    for (int l = o.min_log2n; l <= o.max_log2n; l += o.step_log2n) {
      md << "| 2^" << l << " |";
      for (const Order& ord : ords) {
        const Result* r = find_result(m.results, l, ord.key, d);
        if (r) md << " " << g(r->measured) << " / " << g(r->bound) << " (" << g(r->ratio) << ") |";
        else md << " n/a |";
      }
      md << "\n";
    }
    md << "\n";
  }
  md << "## Max depth (roundings on the worst summand's path)\n\n";
  table_head(md, "n", ords, "");
  for (int l = o.min_log2n; l <= o.max_log2n; l += o.step_log2n) {
    md << "| 2^" << l << " |";
    for (const Order& ord : ords) {
      const Result* r = find_result(m.results, l, ord.key, "normal");
      md << " " << (r ? std::to_string(r->max_depth) : "n/a") << " |";
    }
    md << "\n";
  }
  md << "\n## Geometric mean over n of error / sum|a_i| (bound / sum|a_i|)\n\n";
  table_head(md, "data", ords, "");
  for (const char* d : kData) {
    md << "| " << d << " |";
    for (const Order& ord : ords) {
      auto it = gmean[d].find(ord.key);
      if (it == gmean[d].end()) md << " n/a |";
      else md << " " << g(it->second.first) << " (" << g(it->second.second) << ") |";
    }
    md << "\n";
  }
  md << "\n## The text's claim: pairwise < split sqrt(n) < sequential\n\n"
     << "- by bound: holds in " << c.by_bound.holds << " of " << c.by_bound.total << " (n, data) cases\n"
     << "- by measured error: holds in " << c.by_error.holds << " of " << c.by_error.total << " cases\n";
  for (const std::string& f : c.by_error.fails) md << "  - measured, not ordered: " << f << "\n";
  for (const std::string& f : c.by_bound.fails) md << "  - bound, not ordered: " << f << "\n";
  if (!m.missing.empty()) {
    md << "\nTransforms not registered in this build (rows n/a):";
    for (const std::string& x : m.missing) md << " " << x;
    md << "\n";
  }
  std::ofstream f(std::filesystem::path(dir) / "reduction_bounds.md");
  f << md.str();
}

/// bound/Σ|a| (lines) and error/Σ|a| (points) against n, one panel per data
/// set; returns run_gnuplot's message ("" when the PNG was written).
std::string write_plot(const std::string& dir, const Options& o, const std::vector<Result>& results) {
  std::vector<Order> ords = orders_for(16);
  std::ostringstream dat;
  for (const char* d : kData) {
    for (const Order& ord : ords) {
      dat << "# " << d << " " << ord.key << "\n";
      for (int l = o.min_log2n; l <= o.max_log2n; l += o.step_log2n) {
        const Result* r = find_result(results, l, ord.key, d);
        if (!r || r->sum_abs <= 0) continue;
        double e = r->measured / r->sum_abs;
        dat << r->n << " " << r->bound / r->sum_abs << " " << (e > 0 ? e : 1e-12) << "\n";
      }
      dat << "\n\n";
    }
  }
  {
    std::ofstream f(std::filesystem::path(dir) / "reduction_bounds.dat");
    f << dat.str();
  }
  std::ostringstream gp;
  gp << "set terminal pngcairo size 1800,560 font ',10'\nset output 'reduction_bounds.png'\n"
     << "set multiplot layout 1,3 title 'f32 sums: bound (lines) and measured error (points), relative to sum |a_i|'\n"
     << "set logscale x 2\nset logscale y 10\nset format x '2^{%L}'\nset format y '10^{%L}'\n"
     << "set xlabel 'n'\nset ylabel 'error / sum |a_i|'\n"
     << "set key top left\nset grid\n";
  const char* colors[] = {"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"};
  int blk = 0;
  for (const char* d : kData) {
    gp << "set title '" << d << "'\nplot ";
    for (size_t i = 0; i < ords.size(); ++i) {
      int b = blk + int(i);
      gp << (i ? ", \\\n  " : "") << "'reduction_bounds.dat' index " << b << " using 1:2 with lines lw 2 lc rgb '"
         << colors[i] << "' title '" << ords[i].label << " bound', '' index " << b
         << " using 1:3 with points pt 7 ps 0.8 lc rgb '" << colors[i] << "' notitle";
    }
    gp << "\n";
    blk += int(ords.size());
  }
  gp << "unset multiplot\n";
  return run_gnuplot(dir, "reduction_bounds", gp.str());
}

void report(std::ostream& log, const std::string& dir, const std::string& plot_msg, const Measured& m,
            const Claim& c, GeoMeans& gmean) {
  log << "\nwrote " << dir << "/reduction_bounds.csv, reduction_bounds.md"
      << (plot_msg.empty() ? ", reduction_bounds.png" : "") << "\n";
  if (!plot_msg.empty()) log << plot_msg << "\n";
  if (!m.missing.empty()) {
    log << "transforms not registered (their rows are n/a):";
    for (const std::string& x : m.missing) log << " " << x;
    log << "\n";
  }
  log << "text's claim pairwise < split sqrt(n) < sequential:\n"
      << "  by bound:          holds in " << c.by_bound.holds << " of " << c.by_bound.total << " (n, data) cases\n"
      << "  by measured error: holds in " << c.by_error.holds << " of " << c.by_error.total << " cases\n";
  for (const char* d : kData) {
    const auto& gm = gmean[d];
    if (gm.count("pairwise") && gm.count("split") && gm.count("sequential")) {
      double p = gm.at("pairwise").first, sp = gm.at("split").first, q = gm.at("sequential").first;
      log << "  geometric mean of error/sum|a| over n, " << d << ": pairwise " << g(p) << ", split " << g(sp)
          << ", sequential " << g(q) << (p < sp && sp < q ? " (ordered as claimed)" : " (NOT ordered as claimed)")
          << "\n";
    }
  }
  for (const std::string& f : c.by_bound.fails) log << "    bound not ordered: " << f << "\n";
  for (const std::string& f : c.by_error.fails) log << "    error not ordered: " << f << "\n";
  if (m.violations) log << "ERROR: " << m.violations << " run(s) exceeded their bound\n";
}

}  // namespace

int reduction_bounds(const Options& o, std::ostream& log) {
  std::string dir = (std::filesystem::path(o.out_dir) / "reduction-bounds").string();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    o.error_stream(log) << "error: cannot create " << dir << ": " << ec.message() << "\n";
    return 2;
  }
  if (o.min_log2n > o.max_log2n || o.step_log2n < 1) {
    o.error_stream(log) << "error: empty size range\n";
    return 2;
  }
  Measured m = measure_all(o, log);
  write_csv(dir, m.results);
  Claim c = tally_claim(o, m.results);
  GeoMeans gmean = geometric_means(m.results);
  write_markdown(dir, o, m, c, gmean);
  std::string plot_msg = write_plot(dir, o, m.results);
  report(log, dir, plot_msg, m, c, gmean);
  return m.violations ? 1 : 0;
}

}  // namespace stax::experiments
