// Keyed maximum/minimum folds (backends/cpu/codegen_reduction.cpp): a lanes
// fold keeps each lane's largest and smallest order key, a row fold each
// row's, and either folds a block again, as the program says, where a NaN
// was folded. The interpreter's bits
// on NaNs of both signs and payloads in any place (the first one, quieted,
// is the result), zeros of both signs in either order, infinities, finite
// inits, f32 and f64, and the oracle's input kinds (equal: the same bits or
// both NaN, docs/design.md §3). The wrong case keeps the keys' result in a block
// with a NaN: a number where a lane folded only NaNs beyond the other
// infinity (max: a negative one), the same bits without NaNs.
#include <catch2/catch.hpp>

#include <bit>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "backends/cpu/cpu_backend.h"
#include "oracle/fuzz.h"
#include "semantics/evaluator.h"
#include "semantics/input_gen.h"
#include "tests/test_util.h"

using namespace stax;
using namespace stax::sem;
namespace cpu = stax::backends::cpu;

namespace {

/// y[b, j] = op over i of x[b, i, j]: lanes over j, 32 of them.
Program fold_program(const std::string& op, const std::string& init, const std::string& dtype) {
  const std::string x = dtype + "[6, 64, 32]";
  return test::parse_ok("input x : " + x + "\nlet y : " + dtype + "[6, 32] = red(" + op + ", " + init +
                        ", [64], view(x, [6, 32, 64], (b, j, i) -> (b, i, j)))\noutput y\n");
}

/// y[b] = op over j of x[b, j]: a row fold without lanes (transposed).
Program row_program(const std::string& op, const std::string& init, const std::string& dtype) {
  return test::parse_ok("input x : " + dtype + "[16, 128]\nlet y : " + dtype + "[16] = red(" + op + ", " + init +
                        ", [128], x)\noutput y\n");
}

/// x with every element from `value(k)`, k its flat index.
template <class T, class F>
Inputs filled(const Program& p, F value) {
  Tensor t = Tensor::uninitialized(p.inputs[0].type.dtype, p.inputs[0].type.shape);
  for (int64_t k = 0; k < num_elements(t.shape); ++k) t.as<T>()[k] = value(k);
  return {{"x", t}};
}

template <class T>
T with_bits(uint64_t b) {
  if constexpr (sizeof(T) == 4) return std::bit_cast<float>(uint32_t(b));
  else return std::bit_cast<double>(b);
}

/// The input sets of a test: normal values; zeros of both signs; NaNs of
/// both signs and several payloads in a few lanes and places, among
/// numbers, infinities and zeros.
template <class T>
std::vector<Inputs> inputs_for(const Program& p) {
  constexpr bool f32 = sizeof(T) == 4;
  const uint64_t qnan = f32 ? 0x7FC00000u : 0x7FF8000000000000u, sign = f32 ? 0x80000000u : 0x8000000000000000u;
  std::vector<Inputs> sets;
  sets.push_back(filled<T>(p, [](int64_t k) { return T(std::sin(double(k) * 0.37) * 100.0); }));
  sets.push_back(filled<T>(p, [](int64_t k) { return (k * 7 % 5) < 2 ? T(-0.0) : T(0.0); }));
  sets.push_back(filled<T>(p, [](int64_t k) { return (k * 11 % 3) == 0 ? T(0.0) : T(-0.0); }));
  sets.push_back(filled<T>(p, [&](int64_t k) {
    // Lane j = k % 32 of row block b = k / 2048, at fold step i.
    const int64_t j = k % 32, i = (k / 32) % 64;
    if (j == 3 && i == 10) return with_bits<T>(qnan | 5);           // a positive NaN first...
    if (j == 3 && i == 40) return with_bits<T>(sign | qnan | 9);    // ...then a negative one
    if (j == 7 && i == 0) return with_bits<T>(sign | qnan | 1);     // a negative NaN first
    if (j == 7 && i == 63) return with_bits<T>(qnan | 2);
    if (j == 11 && i == 5) return with_bits<T>(sign | qnan | 3);    // only a negative NaN (max: below every key)
    if (j == 12 && i == 50) return with_bits<T>(qnan | 4);           // only a positive NaN (min: above every key)
    if (j == 30 && i == 20) return with_bits<T>((qnan >> 1 | 1) | (f32 ? 0x7F800000u : 0x7FF0000000000000u));  // a signalling NaN
    if (j % 5 == 0 && i == 2) return std::numeric_limits<T>::infinity();
    if (j % 5 == 1 && i == 2) return -std::numeric_limits<T>::infinity();
    if (j % 4 == 2) return (i % 2) ? T(0.0) : T(-0.0);
    return T(std::cos(double(k)) * 3.0);
  }));
  for (sem::InputKind kind : sem::kBackendInputKinds) sets.push_back(sem::generate_inputs(p, kind, 41));
  return sets;
}

/// The first difference from the interpreter over the input sets, or "".
template <class T>
std::string difference(const Program& p, const cpu::CpuOptions& opt, bool only_nan_sets = false) {
  cpu::CompiledProgram cp(p, opt);
  REQUIRE(cp.kernels().size() == 1);
  CHECK((cp.kernels()[0].lanes || cp.kernels()[0].transposed));
  std::vector<Inputs> sets = inputs_for<T>(p);
  for (size_t s = only_nan_sets ? 3 : 0; s < (only_nan_sets ? 4 : sets.size()); ++s) {
    IeeeOutcome ref = eval_ieee(p, sets[s]), got = cp.run(sets[s]);
    if (auto d = oracle::outcome_difference(p, ref, got)) return "input set " + std::to_string(s) + ": " + *d;
  }
  return "";
}

}  // namespace

TEST_CASE("keyed maximum and minimum folds give the interpreter's bits") {
  for (const char* op : {"max", "min"})
    for (const char* init : {"-inf", "inf", "0.5", "-0.0"}) {
      INFO(op << " from " << init);
      for (int threads : {1, 2}) {
        CHECK(difference<float>(fold_program(op, init, "f32"), {threads, false, 3}) == "");
        CHECK(difference<double>(fold_program(op, init, "f64"), {threads, false, 3}) == "");
      }
      CHECK(difference<float>(fold_program(op, init, "f32"), {1, false, 0}) == "");  // O0
      CHECK(difference<float>(row_program(op, init, "f32"), {1, false, 3}) == "");
      CHECK(difference<double>(row_program(op, init, "f64"), {2, false, 3}) == "");
    }
}

TEST_CASE("wrong case: keyed folds that keep the keys' result where a NaN was folded") {
  cpu::CpuOptions opt{1, false, 3};
  opt.keyed_unchecked = true;
  for (const char* op : {"max", "min"}) {
    INFO(op);
    CHECK(difference<float>(fold_program(op, "0.5", "f32"), opt, true) != "");
    CHECK(difference<double>(fold_program(op, "0.5", "f64"), opt, true) != "");
    CHECK(difference<float>(row_program(op, "0.5", "f32"), opt, true) != "");
    // Without a NaN the keys are the result: the same bits.
    Program p = fold_program(op, "0.5", "f32");
    cpu::CompiledProgram cp(p, opt);
    std::vector<Inputs> sets = inputs_for<float>(p);
    for (size_t s = 0; s < 3; ++s) CHECK(!oracle::outcome_difference(p, eval_ieee(p, sets[s]), cp.run(sets[s])));
  }
}
