// seed 6.5 / DESIGN §4 / issue 4: the error of an f32 sum of n values under
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
#include "oracle/error_bound.h"
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

}  // namespace

int reduction_bounds(const Options& o, std::ostream& log) {
  namespace fs = std::filesystem;
  std::string dir = (fs::path(o.out_dir) / "reduction-bounds").string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    log << "error: cannot create " << dir << ": " << ec.message() << "\n";
    return 2;
  }
  if (o.min_log2n > o.max_log2n || o.step_log2n < 1) {
    log << "error: empty size range\n";
    return 2;
  }
  std::vector<Result> results;
  std::vector<std::string> missing;
  int violations = 0;
  for (int l = o.min_log2n; l <= o.max_log2n; l += o.step_log2n) {
    int64_t n = int64_t(1) << l;
    std::string text = "input x : f32[" + std::to_string(n) + "]\nlet y : f32[] = red(sum, 0.0, [" +
                       std::to_string(n) + "], x)\noutput y\n";
    ParseResult pr = parse_program(text, "<reduction-bounds>");
    Program src = std::get<Program>(pr);
    std::map<std::string, Tensor> data;
    for (const char* d : kData) data[d] = make_data(d, n, o.seed);
    for (const Order& ord : orders_for(n)) {
      Program tgt = src;
      std::string status = "ok";
      auto t0 = std::chrono::steady_clock::now();
      if (!ord.spec.empty()) {
        std::string name = ord.spec.substr(0, ord.spec.find(':'));
        if (!xform::find_transform(name)) {
          status = "transform '" + name + "' not registered";
          if (std::find(missing.begin(), missing.end(), name) == missing.end()) missing.push_back(name);
        } else {
          try {
            xform::Context ctx;
            auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline(ord.spec));
            tgt = xform::run_pipeline(src, steps, ctx).program;
          } catch (const xform::TransformError& e) {
            status = "transform error: " + e.message;
          }
        }
      }
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
        if (status == "ok") {
          Inputs in;
          in["x"] = data.at(d);
          oracle::BoundReport rep;
          try {
            rep = oracle::analyze_bounds(tgt, in);
          } catch (const ResourceError& e) {
            r.status = "resource: " + e.message;
          }
          const oracle::BoundRow* row = rep.row("y");
          if (r.status != "ok") {
          } else if (rep.failure) {
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
        log << "n=2^" << l << " " << ord.label << " " << d << ": "
            << (r.status == "ok" ? "error " + g(r.measured) + ", bound " + g(r.bound) + ", ratio " + g(r.ratio) +
                                       ", depth " + std::to_string(r.max_depth) + " (" + g(r.seconds) + " s)"
                                 : r.status)
            << "\n";
        log.flush();
        results.push_back(std::move(r));
      }
    }
  }

  // ---- CSV
  {
    std::ofstream f(fs::path(dir) / "reduction_bounds.csv");
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

  // ---- Claim: pairwise < split sqrt(n) < sequential, by bound and by measured error
  auto find = [&](int l, const std::string& key, const std::string& d) -> const Result* {
    for (const Result& r : results)
      if (r.log2n == l && r.key == key && r.data == d && r.status == "ok") return &r;
    return nullptr;
  };
  struct Tally {
    int holds = 0, total = 0;
    std::vector<std::string> fails;
  };
  Tally by_bound, by_error;
  for (int l = o.min_log2n; l <= o.max_log2n; l += o.step_log2n)
    for (const char* d : kData) {
      const Result *p = find(l, "pairwise", d), *s = find(l, "split", d), *q = find(l, "sequential", d);
      if (!p || !s || !q) continue;
      auto check = [&](Tally& t, double a, double b, double c) {
        ++t.total;
        if (a < b && b < c) ++t.holds;
        else
          t.fails.push_back("n=2^" + std::to_string(l) + " " + d + ": pairwise " + g(a) + ", split " + g(b) +
                            ", sequential " + g(c));
      };
      check(by_bound, p->bound, s->bound, q->bound);
      check(by_error, p->measured, s->measured, q->measured);
    }

  // Geometric means over n of error/Σ|a| and bound/Σ|a|, per data set and order.
  std::map<std::string, std::map<std::string, std::pair<double, double>>> gmean;  // data -> order -> (err, bound)
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

  // ---- Markdown
  std::ostringstream md;
  md << "# Reduction error bounds (seed 6.5, DESIGN §4)\n\n"
     << "f32 sums `red(sum, 0.0, [n], x)` in five orders, each a core-language transform; measured error "
        "|ŝ − s| against the exact sum s (MPFR `mpfr_sum`) of the same summands, worst-case bound "
        "Σ γ(d_i)|a_i| (u = 2^-24) from the order's reduction tree, and their ratio. Seed "
     << o.seed << ".\n\n";
  std::vector<Order> ords = orders_for(16);
  for (const char* d : kData) {
    md << "## " << d << "\n\n| n |";
    for (const Order& ord : ords) md << " " << ord.label << " error / bound (ratio) |";
    md << "\n|---|";
    for (size_t i = 0; i < ords.size(); ++i) md << "---|";
    md << "\n";
    for (int l = o.min_log2n; l <= o.max_log2n; l += o.step_log2n) {
      md << "| 2^" << l << " |";
      for (const Order& ord : ords) {
        const Result* r = find(l, ord.key, d);
        if (r) md << " " << g(r->measured) << " / " << g(r->bound) << " (" << g(r->ratio) << ") |";
        else md << " n/a |";
      }
      md << "\n";
    }
    md << "\n";
  }
  md << "## Max depth (roundings on the worst summand's path)\n\n| n |";
  for (const Order& ord : ords) md << " " << ord.label << " |";
  md << "\n|---|";
  for (size_t i = 0; i < ords.size(); ++i) md << "---|";
  md << "\n";
  for (int l = o.min_log2n; l <= o.max_log2n; l += o.step_log2n) {
    md << "| 2^" << l << " |";
    for (const Order& ord : ords) {
      const Result* r = find(l, ord.key, "normal");
      md << " " << (r ? std::to_string(r->max_depth) : "n/a") << " |";
    }
    md << "\n";
  }
  md << "\n## Geometric mean over n of error / sum|a_i| (bound / sum|a_i|)\n\n| data |";
  for (const Order& ord : ords) md << " " << ord.label << " |";
  md << "\n|---|";
  for (size_t i = 0; i < ords.size(); ++i) md << "---|";
  md << "\n";
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
     << "- by bound: holds in " << by_bound.holds << " of " << by_bound.total << " (n, data) cases\n"
     << "- by measured error: holds in " << by_error.holds << " of " << by_error.total << " cases\n";
  for (const std::string& f : by_error.fails) md << "  - measured, not ordered: " << f << "\n";
  for (const std::string& f : by_bound.fails) md << "  - bound, not ordered: " << f << "\n";
  if (!missing.empty()) {
    md << "\nTransforms not registered in this build (rows n/a):";
    for (const std::string& m : missing) md << " " << m;
    md << "\n";
  }
  {
    std::ofstream f(fs::path(dir) / "reduction_bounds.md");
    f << md.str();
  }

  // ---- Plot: bound/Σ|a| (lines) and error/Σ|a| (points) against n, one panel per data set
  std::ostringstream dat;
  for (const char* d : kData) {
    for (const Order& ord : ords) {
      dat << "# " << d << " " << ord.key << "\n";
      for (int l = o.min_log2n; l <= o.max_log2n; l += o.step_log2n) {
        const Result* r = find(l, ord.key, d);
        if (!r || r->sum_abs <= 0) continue;
        double e = r->measured / r->sum_abs;
        dat << r->n << " " << r->bound / r->sum_abs << " " << (e > 0 ? e : 1e-12) << "\n";
      }
      dat << "\n\n";
    }
  }
  {
    std::ofstream f(fs::path(dir) / "reduction_bounds.dat");
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
  std::string plot_msg = run_gnuplot(dir, "reduction_bounds", gp.str());

  // ---- Report
  log << "\nwrote " << dir << "/reduction_bounds.csv, reduction_bounds.md"
      << (plot_msg.empty() ? ", reduction_bounds.png" : "") << "\n";
  if (!plot_msg.empty()) log << plot_msg << "\n";
  if (!missing.empty()) {
    log << "transforms not registered (their rows are n/a):";
    for (const std::string& m : missing) log << " " << m;
    log << "\n";
  }
  log << "text's claim pairwise < split sqrt(n) < sequential:\n"
      << "  by bound:          holds in " << by_bound.holds << " of " << by_bound.total << " (n, data) cases\n"
      << "  by measured error: holds in " << by_error.holds << " of " << by_error.total << " cases\n";
  for (const char* d : kData) {
    const auto& m = gmean[d];
    if (m.count("pairwise") && m.count("split") && m.count("sequential")) {
      double p = m.at("pairwise").first, sp = m.at("split").first, q = m.at("sequential").first;
      log << "  geometric mean of error/sum|a| over n, " << d << ": pairwise " << g(p) << ", split " << g(sp)
          << ", sequential " << g(q) << (p < sp && sp < q ? " (ordered as claimed)" : " (NOT ordered as claimed)")
          << "\n";
    }
  }
  for (const std::string& f : by_bound.fails) log << "    bound not ordered: " << f << "\n";
  for (const std::string& f : by_error.fails) log << "    error not ordered: " << f << "\n";
  if (violations) log << "ERROR: " << violations << " run(s) exceeded their bound\n";
  return violations ? 1 : 0;
}

}  // namespace stax::experiments
