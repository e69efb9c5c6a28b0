// `stax mathcheck`: the correctly rounded functions of mathlib/
// against MPFR on random inputs, or for a binary32 unary function on all
// 2^32 inputs (a long campaign over --jobs threads, resumable). Reports the
// mismatches (there must be none), the fallback rate, the speed of the
// vector and scalar entry points, and with --against host how often and by
// how many ulps the host libm rounds differently.
#include <CLI/CLI.hpp>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "cli/subcommands.h"
#include "mathlib/crmath.h"

namespace stax::cli {

namespace {

using math::Fn;

struct MathcheckOptions {
  std::string func, dtype = "f32", against, resume;
  bool exhaustive = false, json = false;
  uint64_t count = 1000000, seed = 1;
  unsigned jobs = 0;
};

int usage(const std::string& msg) {
  std::cerr << "error: " << msg << "\n";
  return 2;
}

float host_f32(Fn f, float x, float y) {
  switch (f) {
    case Fn::Exp: return expf(x);
    case Fn::Expm1: return expm1f(x);
    case Fn::Log: return logf(x);
    case Fn::Log2: return log2f(x);
    case Fn::Log10: return log10f(x);
    case Fn::Log1p: return log1pf(x);
    case Fn::Tanh: return tanhf(x);
    case Fn::Erf: return erff(x);
    case Fn::Sin: return sinf(x);
    case Fn::Cos: return cosf(x);
    case Fn::Pow: return powf(x, y);
  }
  return x;
}

double host_f64(Fn f, double x, double y) {
  switch (f) {
    case Fn::Exp: return exp(x);
    case Fn::Expm1: return expm1(x);
    case Fn::Log: return log(x);
    case Fn::Log2: return log2(x);
    case Fn::Log10: return log10(x);
    case Fn::Log1p: return log1p(x);
    case Fn::Tanh: return tanh(x);
    case Fn::Erf: return erf(x);
    case Fn::Sin: return sin(x);
    case Fn::Cos: return cos(x);
    case Fn::Pow: return pow(x, y);
  }
  return x;
}

/// Per-format plumbing: bits, the entry points, random inputs.
template <class T>
struct Fmt;
template <>
struct Fmt<float> {
  using Bits = uint32_t;
  static constexpr const char* name = "f32";
  static constexpr math::Width width = math::Width::F32;
  static float eval(Fn f, float x, float y) { return math::eval_f32(f, x, y); }
  static void eval_n(Fn f, size_t n, float* o, const float* x, const float* y) { math::eval_f32_n(f, n, o, x, y); }
  static float mpfr(Fn f, float x, float y) { return math::mpfr_f32(f, x, y); }
  static float host(Fn f, float x, float y) { return host_f32(f, x, y); }
  /// pow's y: |y| in [2^-12, 2^8) with a random sign, so that x^y spans the
  /// finite range instead of mostly overflowing.
  static float pow_y(std::mt19937_64& g) {
    return std::bit_cast<float>(uint32_t((g() & 0x807fffffu) | ((115u + g() % 20) << 23)));
  }
};
template <>
struct Fmt<double> {
  using Bits = uint64_t;
  static constexpr const char* name = "f64";
  static constexpr math::Width width = math::Width::F64;
  static double eval(Fn f, double x, double y) { return math::eval_f64(f, x, y); }
  static void eval_n(Fn f, size_t n, double* o, const double* x, const double* y) { math::eval_f64_n(f, n, o, x, y); }
  static double mpfr(Fn f, double x, double y) { return math::mpfr_f64(f, x, y); }
  static double host(Fn f, double x, double y) { return host_f64(f, x, y); }
  static double pow_y(std::mt19937_64& g) {
    return std::bit_cast<double>((g() & 0x800fffffffffffffULL) | ((1011ULL + g() % 20) << 52));
  }
};

template <class T>
typename Fmt<T>::Bits bits(T v) {
  return std::bit_cast<typename Fmt<T>::Bits>(v);
}

template <class T>
bool same(T a, T b) {
  return (std::isnan(a) && std::isnan(b)) || bits(a) == bits(b);
}

/// Distance in ulps: floats mapped to integers in their order (-0 = +0).
template <class T>
double ulp_distance(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INFINITY;
  // In integers: a binary64 key does not fit a double's 53 bits.
  auto ord = [](T v) -> __int128 {
    using S = std::make_signed_t<typename Fmt<T>::Bits>;
    S s = std::bit_cast<S>(v);
    return s < 0 ? __int128(std::numeric_limits<S>::min()) - s : __int128(s);
  };
  __int128 d = ord(a) - ord(b);
  return double(d < 0 ? -d : d);
}

template <class T>
std::string hex(T v) {
  std::ostringstream s;
  s << std::hexfloat << v;
  return s.str();
}

/// What one function's check found.
struct Tally {
  uint64_t checked = 0, mismatches = 0, fallbacks = 0, host_differ = 0;
  double host_max_ulp = 0;
  std::vector<nlohmann::json> first;  // the first few mismatches
  void add(const Tally& o) {
    checked += o.checked;
    mismatches += o.mismatches;
    fallbacks += o.fallbacks;
    host_differ += o.host_differ;
    host_max_ulp = std::max(host_max_ulp, o.host_max_ulp);
    for (const auto& m : o.first)
      if (first.size() < 5) first.push_back(m);
  }
};

/// Checks out[i] (from eval_*_n) against MPFR and, optionally, the host.
template <class T>
void compare_block(Fn f, size_t n, const T* x, const T* y, const T* out, bool host, Tally& t) {
  for (size_t i = 0; i < n; ++i) {
    T yi = y ? y[i] : T(0);
    T ref = Fmt<T>::mpfr(f, x[i], yi);
    if (!same(out[i], ref)) {
      ++t.mismatches;
      if (t.first.size() < 5)
        t.first.push_back({{"x", hex(x[i])}, {"y", hex(yi)}, {"ours", hex(out[i])}, {"mpfr", hex(ref)}});
    }
    if (host) {
      T h = Fmt<T>::host(f, x[i], yi);
      if (!same(h, ref)) {
        ++t.host_differ;
        t.host_max_ulp = std::max(t.host_max_ulp, ulp_distance(h, ref));
      }
    }
  }
  t.checked += n;
}

/// Runs body(i) for i < n over `jobs` threads, each taking the next index.
template <class Body>
void parallel(size_t n, unsigned jobs, Body body) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> ts;
  for (unsigned j = 0; j < jobs; ++j)
    ts.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < n;) body(i);
    });
  for (auto& t : ts) t.join();
}

/// Nanoseconds per element of `fn` over the buffer, best of a few runs of
/// at least 50 ms each.
template <class Fn_>
double ns_per_elem(size_t n, Fn_ fn) {
  double best = INFINITY;
  for (int rep = 0; rep < 3; ++rep) {
    size_t done = 0;
    auto t0 = std::chrono::steady_clock::now();
    double el = 0;
    do {
      fn();
      done += n;
      el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (el < 0.05);
    best = std::min(best, el * 1e9 / double(done));
  }
  return best;
}

template <class T>
nlohmann::json timings(Fn f, const std::vector<T>& x, const std::vector<T>& y) {
  size_t n = std::min<size_t>(x.size(), 1 << 14);
  const T* yp = math::is_binary(f) ? y.data() : nullptr;
  std::vector<T> out(n);
  volatile T sink = 0;
  nlohmann::json j;
  j["vector"] = ns_per_elem(n, [&] { Fmt<T>::eval_n(f, n, out.data(), x.data(), yp); });
  j["scalar"] = ns_per_elem(n, [&] {
    for (size_t i = 0; i < n; ++i) out[i] = Fmt<T>::eval(f, x[i], yp ? yp[i] : T(0));
  });
  j["host"] = ns_per_elem(n, [&] {
    for (size_t i = 0; i < n; ++i) out[i] = Fmt<T>::host(f, x[i], yp ? yp[i] : T(0));
  });
  sink = out[0];
  (void)sink;
  return j;
}

template <class T>
nlohmann::json check_random(Fn f, const MathcheckOptions& o, unsigned jobs) {
  std::mt19937_64 g(o.seed * 0x9e3779b97f4a7c15ULL + uint64_t(f));
  std::vector<T> x(o.count), y(math::is_binary(f) ? o.count : 0);
  for (auto& v : x) v = std::bit_cast<T>(typename Fmt<T>::Bits(g()));
  for (auto& v : y) v = Fmt<T>::pow_y(g);
  const uint64_t fb0 = math::fallback_count(f, Fmt<T>::width);
  constexpr size_t kBlock = 4096;
  const size_t blocks = (o.count + kBlock - 1) / kBlock;
  std::vector<Tally> tallies(blocks);
  parallel(blocks, jobs, [&](size_t b) {
    size_t lo = b * kBlock, n = std::min<size_t>(kBlock, o.count - lo);
    std::vector<T> out(n);
    const T* yp = y.empty() ? nullptr : y.data() + lo;
    Fmt<T>::eval_n(f, n, out.data(), x.data() + lo, yp);
    compare_block(f, n, x.data() + lo, yp, out.data(), o.against == "host", tallies[b]);
  });
  Tally t;
  for (const auto& b : tallies) t.add(b);
  t.fallbacks = math::fallback_count(f, Fmt<T>::width) - fb0;
  nlohmann::json j = {{"name", math::fn_name(f)}, {"checked", t.checked}, {"mismatches", t.mismatches},
                      {"first_mismatches", t.first}, {"fallbacks", t.fallbacks},
                      {"fallback_rate", t.checked ? double(t.fallbacks) / double(t.checked) : 0.0}};
  if (o.count) j["ns_per_elem"] = timings(f, x, y);
  if (o.against == "host") j["host"] = {{"differ", t.host_differ}, {"max_ulp", t.host_max_ulp}};
  return j;
}

/// The first malformed line of a --resume state file as FILE:LINE:1, or
/// nothing (a missing file is a fresh start).
std::optional<std::string> resume_error(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::istringstream ls(line);
    std::string name, extra;
    uint64_t chunk = 0, v[4];
    double ulp = 0;
    if (!(ls >> name)) continue;  // a blank line
    bool ok = bool(ls >> chunk) && chunk < 256;
    for (uint64_t& x : v) ok = ok && bool(ls >> x);
    ok = ok && bool(ls >> ulp);
    if (!ok || (ls >> extra))
      return path + ":" + std::to_string(n) + ":1: error: malformed --resume line (expected FUNC CHUNK CHECKED "
             "MISMATCHES FALLBACKS HOST_DIFFER HOST_MAX_ULP, CHUNK < 256)";
  }
  return std::nullopt;
}

/// All 2^32 binary32 inputs in 256 chunks of 2^24. The state file holds one
/// line per finished chunk: "func chunk checked mismatches fallbacks
/// host_differ host_max_ulp".
nlohmann::json check_exhaustive(Fn f, const MathcheckOptions& o, unsigned jobs) {
  constexpr size_t kChunks = 256, kChunkSize = size_t(1) << 24, kBlock = 4096;
  Tally total;
  std::set<size_t> done;
  if (!o.resume.empty()) {
    std::ifstream in(o.resume);
    std::string name;
    Tally c;
    size_t chunk;
    while (in >> name >> chunk >> c.checked >> c.mismatches >> c.fallbacks >> c.host_differ >> c.host_max_ulp)
      if (name == math::fn_name(f) && done.insert(chunk).second) total.add(c);
  }
  std::mutex mu;
  std::ofstream state;
  if (!o.resume.empty()) state.open(o.resume, std::ios::app);
  std::atomic<size_t> finished{done.size()};
  std::vector<size_t> todo;
  for (size_t c = 0; c < kChunks; ++c)
    if (!done.count(c)) todo.push_back(c);
  parallel(todo.size(), jobs, [&](size_t k) {
    const size_t chunk = todo[k];
    Tally t;
    std::vector<float> x(kBlock), out(kBlock);
    const uint64_t fb0 = math::thread_fallback_count(f, math::Width::F32);
    for (size_t base = 0; base < kChunkSize; base += kBlock) {
      for (size_t i = 0; i < kBlock; ++i) x[i] = std::bit_cast<float>(uint32_t(chunk * kChunkSize + base + i));
      math::eval_f32_n(f, kBlock, out.data(), x.data());
      compare_block<float>(f, kBlock, x.data(), nullptr, out.data(), o.against == "host", t);
    }
    // The chunk runs on this thread alone: its own counter is the chunk's
    // (the shared one also counted the other threads' chunks, which ran
    // meanwhile, until 2026-12-04).
    t.fallbacks = math::thread_fallback_count(f, math::Width::F32) - fb0;
    std::lock_guard<std::mutex> lock(mu);
    total.add(t);
    if (state.is_open())
      state << math::fn_name(f) << ' ' << chunk << ' ' << t.checked << ' ' << t.mismatches << ' ' << t.fallbacks << ' '
            << t.host_differ << ' ' << t.host_max_ulp << std::endl;
    std::cerr << "\r" << math::fn_name(f) << ": " << ++finished << "/" << kChunks << " chunks, " << total.mismatches
              << " mismatches" << std::flush;
  });
  std::cerr << "\n";
  nlohmann::json j = {{"name", math::fn_name(f)}, {"checked", total.checked}, {"mismatches", total.mismatches},
                      {"first_mismatches", total.first}, {"fallbacks", total.fallbacks},
                      {"fallback_rate", total.checked ? double(total.fallbacks) / double(total.checked) : 0.0}};
  if (o.against == "host") j["host"] = {{"differ", total.host_differ}, {"max_ulp", total.host_max_ulp}};
  return j;
}

void print_text(const nlohmann::json& r) {
  for (const auto& f : r["functions"]) {
    std::printf("%-6s %s: %llu checked, %llu mismatches, %llu fallbacks (rate %.3g)", f["name"].get<std::string>().c_str(),
                r["dtype"].get<std::string>().c_str(), (unsigned long long)f["checked"].get<uint64_t>(),
                (unsigned long long)f["mismatches"].get<uint64_t>(), (unsigned long long)f["fallbacks"].get<uint64_t>(),
                f["fallback_rate"].get<double>());
    if (f.contains("ns_per_elem"))
      std::printf(", ns/elem vector %.2f scalar %.2f host %.2f", f["ns_per_elem"]["vector"].get<double>(),
                  f["ns_per_elem"]["scalar"].get<double>(), f["ns_per_elem"]["host"].get<double>());
    if (f.contains("host"))
      std::printf(", host differs on %llu (max %.0f ulp)", (unsigned long long)f["host"]["differ"].get<uint64_t>(),
                  f["host"]["max_ulp"].get<double>());
    std::printf("\n");
    for (const auto& m : f["first_mismatches"])
      std::printf("  MISMATCH x=%s y=%s ours=%s mpfr=%s\n", m["x"].get<std::string>().c_str(),
                  m["y"].get<std::string>().c_str(), m["ours"].get<std::string>().c_str(),
                  m["mpfr"].get<std::string>().c_str());
  }
}

int mathcheck_command(const MathcheckOptions& o) {
  std::vector<Fn> fns;
  if (o.func == "all") {
    for (int i = 0; i < math::kNumFns; ++i) fns.push_back(Fn(i));
  } else if (auto f = math::fn_from_name(o.func)) {
    fns.push_back(*f);
  } else {
    std::string names;
    for (int i = 0; i < math::kNumFns; ++i) names += std::string(math::fn_name(Fn(i))) + ", ";
    return usage("unknown function '" + o.func + "' (expected one of " + names + "or all)");
  }
  if (o.dtype != "f32" && o.dtype != "f64") return usage("--dtype expects f32 or f64, got '" + o.dtype + "'");
  if (!o.against.empty() && o.against != "host") return usage("--against expects host, got '" + o.against + "'");
  if (o.exhaustive) {
    if (o.dtype != "f32") return usage("--exhaustive applies to f32 only (2^64 inputs are out of reach): use --count");
    for (Fn f : fns)
      if (math::is_binary(f))
        return usage("--exhaustive is not applicable to pow (binary: 2^64 input pairs); use --count, or name a unary function");
  } else if (!o.resume.empty()) {
    return usage("--resume applies to --exhaustive only");
  }
  if (!o.resume.empty())
    if (auto e = resume_error(o.resume)) {
      std::cerr << *e << "\n";
      return 2;
    }
  const unsigned jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  nlohmann::json r = {{"dtype", o.dtype}, {"mode", o.exhaustive ? "exhaustive" : "random"}, {"seed", o.seed},
                      {"jobs", jobs}};
  if (!o.exhaustive) r["count"] = o.count;
  bool ok = true;
  for (Fn f : fns) {
    nlohmann::json j = o.exhaustive        ? check_exhaustive(f, o, jobs)
                       : o.dtype == "f32" ? check_random<float>(f, o, jobs)
                                          : check_random<double>(f, o, jobs);
    ok = ok && j["mismatches"].get<uint64_t>() == 0;
    r["functions"].push_back(j);
  }
  r["ok"] = ok;
  if (o.json) std::cout << r.dump(2) << "\n";
  else print_text(r);
  return ok ? 0 : 1;
}

}  // namespace

Subcommand register_mathcheck(CLI::App& app) {
  auto o = std::make_shared<MathcheckOptions>();
  auto* c = app.add_subcommand("mathcheck", "Correctly rounded functions (mathlib) against MPFR and the host libm");
  c->add_option("func", o->func, "exp, expm1, log, log2, log10, log1p, tanh, erf, sin, cos, pow, or all")->required();
  c->add_option("--dtype", o->dtype, "f32 (default) or f64");
  auto* ex = c->add_flag("--exhaustive", o->exhaustive, "f32 unary: all 2^32 inputs");
  c->add_option("--count", o->count, "random inputs (default 10^6)")->excludes(ex);
  c->add_option("--seed", o->seed, "seed of the random inputs");
  c->add_option("--against", o->against, "host: also count where the host libm rounds differently");
  c->add_option("--jobs", o->jobs, "threads (default: all cores)");
  c->add_flag("--json", o->json, "one JSON document");
  c->add_option("--resume", o->resume, "--exhaustive: state file of finished chunks (read, then appended)");
  return {c, [o] { return mathcheck_command(*o); }};
}

}  // namespace stax::cli
