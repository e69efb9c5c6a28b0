// Speed of the CPU backend's transcendental functions (docs/cpu-backend.md, "Correctly rounded functions"):
// ns per element of a one-op kernel `map(fn(a) => f(a), x)` on one thread,
// for every function of mathlib on f32 and f64, under the math bindings
// side by side (backends/cpu/vecmath.h): the vector variants (mathlib's
// block fast path; exp and erf on f32 inlined into the loop where the host
// has AVX2, and called, for comparison), the scalar entry points (mathlib's scalar
// fast path), and the host's libm (glibc: fast, not correctly rounded — the
// baseline). Also the share of elements that took mathlib's slow path, and
// whether the vector and scalar bindings gave the same bits (they must).
// Not a test: its table goes into README.md.
//   stax_bench_math [--n ELEMENTS] [--repeats R] [--width f32|f64] [--clock wall|cpu]
// --clock cpu times the running thread's CPU time instead of the wall clock
// (one thread runs the kernel): steadier on a machine shared with other jobs.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/vecmath.h"
#include "experiments/median.h"
#include "mathlib/crmath.h"
#include "proofs/obligation.h"
#include "semantics/parser.h"

using namespace stax;
namespace cpu = stax::backends::cpu;
using math::Fn;

namespace {

/// Inputs over the range where the function does real work.
sem::Tensor inputs(Fn f, sem::DType dt, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  bool positive = f == Fn::Log || f == Fn::Log2 || f == Fn::Log10 || f == Fn::Pow;
  std::uniform_real_distribution<double> u(positive ? 0.0 : -10.0, 10.0);
  sem::Tensor t(dt, {n});
  for (int64_t i = 0; i < n; ++i) {
    double x = u(rng);
    if (dt == sem::DType::F32) t.as<float>()[i] = float(x);
    else t.as<double>()[i] = x;
  }
  return t;
}

struct Timing {
  double ns_per_element;
  sem::Tensor out;
};

bool g_cpu_clock = false;

/// Nanoseconds now: the wall clock, or this thread's CPU time.
double now_ns() {
  if (g_cpu_clock) {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e9 + double(t.tv_nsec);
  }
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Timing time_kernel(const sem::Program& p, const sem::Inputs& in, int64_t n, int repeats, cpu::MathBinding b) {
  cpu::ScopedMathBinding scope(b);
  cpu::CompiledProgram cp(p, {1, false, 3});
  sem::IeeeOutcome o = cp.run(in);  // warm-up
  std::vector<double> ns;
  for (int r = 0; r < repeats; ++r) {
    double t0 = now_ns();
    o = cp.run(in);
    ns.push_back((now_ns() - t0) / double(n));
  }
  return {experiments::median(ns), *o.outputs.at("y")};
}

}  // namespace

int main(int argc, char** argv) {
  stax::proofs::install_default_discharger();  // the transforms' and the lowering's side conditions
  int64_t n = 1 << 20;
  int repeats = 5;
  std::string width;  // "": both
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--n")) n = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--repeats")) repeats = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--width")) width = argv[i + 1];
    else if (!std::strcmp(argv[i], "--clock")) g_cpu_clock = !std::strcmp(argv[i + 1], "cpu");
  }
  std::printf("%lld elements, 1 thread, median of %d runs; ns per element of a one-op kernel (%s)\n\n",
              (long long)n, repeats, g_cpu_clock ? "the thread's CPU time" : "wall clock");
  std::printf("| function | width | vector fast path | vector, called (not inlined) | scalar fast path | "
              "host libm (glibc) | vector / libm time | slow-path share | vector bits = scalar bits |\n"
              "|---|---|---|---|---|---|---|---|---|\n");
  for (int k = 0; k < math::kNumFns; ++k) {
    Fn f = Fn(k);
    for (sem::DType dt : {sem::DType::F32, sem::DType::F64}) {
      if (!width.empty() && width != sem::dtype_name(dt)) continue;
      std::string name(math::fn_name(f)), ty = std::string(sem::dtype_name(dt)) + "[" + std::to_string(n) + "]";
      std::string call = math::is_binary(f) ? name + "(a, b)" : name + "(a)";
      std::string text = "input x : " + ty + "\ninput z : " + ty + "\nlet y : " + ty + " = map(fn(a, b) => " + call +
                         ", x, z)\noutput y\n";
      sem::ParseResult pr = sem::parse_program(text);
      if (!std::holds_alternative<sem::Program>(pr)) return std::fprintf(stderr, "parse error: %s\n", text.c_str()), 2;
      const sem::Program& p = std::get<sem::Program>(pr);
      sem::Inputs in;
      in["x"] = inputs(f, dt, n, 1);
      in["z"] = inputs(Fn::Exp, dt, n, 2);  // pow's exponent in [-10, 10]
      math::Width w = dt == sem::DType::F32 ? math::Width::F32 : math::Width::F64;
      math::reset_fallback_counts();
      Timing vec = time_kernel(p, in, n, repeats, cpu::MathBinding::Vector);
      double slow = double(math::fallback_count(f, w)) / double(n * (repeats + 1));
      Timing vcall = time_kernel(p, in, n, repeats, cpu::MathBinding::VectorCall);
      Timing sca = time_kernel(p, in, n, repeats, cpu::MathBinding::Scalar);
      Timing lib = time_kernel(p, in, n, repeats, cpu::MathBinding::HostLibm);
      bool same = vec.out.data == sca.out.data && vcall.out.data == sca.out.data;
      std::printf("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2fx | %.4f%% | %s |\n", name.c_str(),
                  std::string(sem::dtype_name(dt)).c_str(), vec.ns_per_element, vcall.ns_per_element,
                  sca.ns_per_element, lib.ns_per_element, vec.ns_per_element / lib.ns_per_element, 100 * slow, same ? "yes" : "NO");
      std::fflush(stdout);
    }
  }
}
