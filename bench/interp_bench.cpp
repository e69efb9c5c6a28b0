// Interpreter throughput (docs/design.md §1: the Ieee domain's speed): a 6-op f32 pointwise
// chain over 2^24 elements against NumPy on the same data in the same run,
// and the Real (MPFR, 256-bit) domain's scalar op rate. Ratios, not seconds,
// are the figures that matter on a noisy machine.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "experiments/median.h"
#include "semantics/evaluator.h"
#include "semantics/npy.h"
#include "semantics/parser.h"
#include "semantics/random_inputs.h"

using namespace stax::sem;
using stax::experiments::median;
namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Program chain_program(int64_t n) {
  std::string src = "input a : f32[" + std::to_string(n) + "]\ninput b : f32[" + std::to_string(n) +
                    "]\nlet out = map(fn(a, b) => mul(sub(maximum(mul(add(a, b), 0.5), 0.0), a), add(b, 1.0)), a, b)\n"
                    "output out\n";
  auto r = parse_program(src, "<bench>");
  if (auto* d = std::get_if<Diag>(&r)) {
    std::fprintf(stderr, "%s\n", d->str().c_str());
    std::exit(2);
  }
  return std::get<Program>(r);
}

}  // namespace

int main(int argc, char** argv) {
  int log2n = argc > 1 ? std::atoi(argv[1]) : 24;
  int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  int64_t n = int64_t(1) << log2n;
  Program p = chain_program(n);
  Inputs in;
  Rng rng(42);
  in["a"] = random_tensor({DType::F32, {n}}, rng, RandomOptions{0.0});
  in["b"] = random_tensor({DType::F32, {n}}, rng, RandomOptions{0.0});

  std::vector<double> ts;
  std::shared_ptr<const Tensor> out;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    IeeeOutcome o = eval_ieee(p, in);
    ts.push_back(seconds_since(t0));
    out = o.outputs.at("out");
  }
  double t_interp = median(ts);

  // NumPy on the same data.
  fs::path dir = fs::temp_directory_path() / ("stax_bench_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_npy((dir / "a.npy").string(), in["a"]);
  write_npy((dir / "b.npy").string(), in["b"]);
  std::string cmd = "/usr/bin/python3 " + std::string(STAX_SOURCE_DIR) + "/bench/numpy_chain.py " + dir.string() +
                    " " + std::to_string(repeats);
  double t_numpy = -1;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    if (std::fscanf(f, "%lf", &t_numpy) != 1) t_numpy = -1;
    pclose(f);
  }
  int64_t mismatches = -1;
  if (t_numpy > 0) {
    auto r = read_npy((dir / "out.npy").string());
    if (auto* t = std::get_if<Tensor>(&r)) {
      mismatches = 0;
      for (int64_t i = 0; i < n; ++i) mismatches += !element_equal(*t, *out, i);
    }
  }
  fs::remove_all(dir);

  // Real domain: the same chain on a smaller input, counted in scalar ops.
  int64_t nr = int64_t(1) << 16;
  Program pr = chain_program(nr);
  Inputs inr;
  Rng rng2(7);
  inr["a"] = random_tensor({DType::F32, {nr}}, rng2, RandomOptions{0.0});
  inr["b"] = random_tensor({DType::F32, {nr}}, rng2, RandomOptions{0.0});
  std::vector<double> tr;
  for (int r = 0; r < 3; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    (void)eval_real(pr, inr, 256);
    tr.push_back(seconds_since(t0));
  }
  double real_ops = 6.0 * double(nr) / median(tr);

  std::printf("6-op f32 pointwise chain, n = 2^%d, median of %d\n", log2n, repeats);
  std::printf("  interpreter (Ieee)      %8.1f ms   %7.1f M elem/s\n", t_interp * 1e3, double(n) / t_interp / 1e6);
  if (t_numpy > 0) {
    std::printf("  NumPy (/usr/bin/python3) %8.1f ms   %7.1f M elem/s\n", t_numpy * 1e3, double(n) / t_numpy / 1e6);
    std::printf("  interpreter / NumPy time ratio: %.2f (target <= 2.0)\n", t_interp / t_numpy);
    std::printf("  elements differing from NumPy's bits: %lld\n", static_cast<long long>(mismatches));
  } else {
    std::printf("  NumPy baseline unavailable (install python3-numpy)\n");
  }
  std::printf("Real domain (MPFR, 256 bits): %.2f M scalar ops/s (target >= 1.0)\n", real_ops / 1e6);
  return 0;
}
