// The CPU backend's transcendental functions: every function on
// every float dtype gives the correctly rounded bits of mathlib at every
// LLVM level, through the vector variants (O2/O3 vectorise the loop and call
// them) and through the scalar entry points alike; the optimised IR shows
// that the vector variants are called. The deliberately wrong case binds the
// host's libm (glibc), which is not correctly rounded: inputs where glibc
// and mathlib differ must show it.
//
// The references are the interpreter's bits (eval_ieee) and, independently,
// mathlib's eval_f32 / eval_f64 with the Ieee domain's conventions: f16/bf16
// compute in f32 and round once to the tag; sigmoid(a) = 1 / (1 + exp(-a))
// in the compute type (ieee_scalar.h).
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/math_forms.h"
#include "backends/cpu/vecmath.h"
#include "mathlib/crmath.h"
#include "mathlib/f32_testing.h"
#include "semantics/dtype.h"
#include "tests/test_util.h"

using namespace stax;
using namespace stax::sem;
namespace cpu = stax::backends::cpu;
using math::Fn;

namespace {

// 203 elements: not a multiple of any vector width, so the scalar remainder
// loop runs too.
constexpr int64_t kN = 203;

/// The ops under test: mathlib's functions, and sigmoid (composite over exp).
struct Op {
  std::string name;
  std::optional<Fn> fn;  ///< nullopt: sigmoid
};
std::vector<Op> ops() {
  std::vector<Op> v;
  for (int i = 0; i < math::kNumFns; ++i) v.push_back({std::string(math::fn_name(Fn(i))), Fn(i)});
  v.push_back({"sigmoid", std::nullopt});
  return v;
}

/// Inputs in f64: special values, then random ones over the range where the
/// function is interesting (positive for the logarithms).
std::vector<double> inputs(const Op& op, uint64_t seed) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, inf, -inf, std::nan(""), 0.5, 2.0, 1e-30, -1e-30, 88.0, -104.0, 1e10};
  // Inputs whose binary32 rounding test fails: the vector variants' slow-path
  // step runs (every f32 function gets them; they are hard for some).
  for (const auto& h : math::testing::kHardInputs) v.push_back(double(std::bit_cast<float>(h.bits)));
  std::mt19937_64 rng(seed);
  bool positive = op.fn && (*op.fn == Fn::Log || *op.fn == Fn::Log2 || *op.fn == Fn::Log10);
  std::uniform_real_distribution<double> u(positive ? 0.0 : -12.0, 12.0);
  while (int64_t(v.size()) < kN) v.push_back(u(rng));
  return v;
}

/// The dtype's value nearest to x (round to nearest even), as the tensor's
/// element bits.
uint64_t to_bits(DType dt, double x) {
  switch (dt) {
    case DType::F64: return std::bit_cast<uint64_t>(x);
    case DType::F32: return std::bit_cast<uint32_t>(float(x));
    case DType::F16: return f32_to_f16_bits(float(x));
    default: return f32_to_bf16_bits(float(x));
  }
}

Tensor make_tensor(DType dt, const std::vector<double>& v) {
  Tensor t(dt, {kN});
  for (int64_t i = 0; i < kN; ++i) {
    uint64_t b = to_bits(dt, v[size_t(i)]);
    std::memcpy(t.data.data() + i * dtype_bytes(dt), &b, size_t(dtype_bytes(dt)));
  }
  return t;
}

/// The correctly rounded result of `op` on element i of the tensors, as bits.
uint64_t reference(const Op& op, DType dt, const Tensor& x, const Tensor& y, int64_t i) {
  if (dt == DType::F64) {
    double a = x.get_double(i), b = y.get_double(i);
    double r = op.fn ? math::eval_f64(*op.fn, a, b) : 1.0 / (1.0 + math::eval_f64(Fn::Exp, -a));
    return std::bit_cast<uint64_t>(r);
  }
  float a = float(x.get_double(i)), b = float(y.get_double(i));
  float r = op.fn ? math::eval_f32(*op.fn, a, b) : 1.0f / (1.0f + math::eval_f32(Fn::Exp, -a));
  return to_bits(dt, r);
}

uint64_t element_bits(const Tensor& t, int64_t i) {
  uint64_t b = 0;
  std::memcpy(&b, t.data.data() + i * dtype_bytes(t.dtype), size_t(dtype_bytes(t.dtype)));
  return b;
}

Program program(const Op& op, DType dt) {
  std::string ty = std::string(dtype_name(dt)) + "[" + std::to_string(kN) + "]";
  bool binary = op.fn && math::is_binary(*op.fn);
  return test::parse_ok("input x : " + ty + "\ninput z : " + ty + "\nlet y : " + ty + " = map(fn(a, b) => " +
                        (binary ? op.name + "(a, b)" : op.name + "(a)") + ", x, z)\noutput y\n");
}

struct Run {
  std::string first_difference;  ///< "" when every element has the reference bits
  bool interpreter_bits = false;  ///< the whole output equals the interpreter's, bit for bit
  std::string ir;                ///< the kernel's optimised IR
};

/// Compiles op on dt at `opt` under the current math binding, runs it, and
/// compares every element with the reference.
Run check(const Op& op, DType dt, int opt, uint64_t seed = 1) {
  Program p = program(op, dt);
  Inputs in;
  in["x"] = make_tensor(dt, inputs(op, seed));
  in["z"] = make_tensor(dt, inputs(Op{"pow", Fn::Pow}, seed + 1));
  cpu::CompiledProgram cp(p, {1, true, opt});
  IeeeOutcome o = cp.run(in);
  REQUIRE(!o.failure);
  const Tensor& got = *o.outputs.at("y");
  Run r;
  r.ir = cp.ir(cp.kernels().size() - 1);
  IeeeOutcome ref = eval_ieee(p, in);
  r.interpreter_bits = !ref.failure && ref.outputs.at("y")->data == got.data;
  for (int64_t i = 0; i < kN && r.first_difference.empty(); ++i) {
    uint64_t want = reference(op, dt, in.at("x"), in.at("z"), i), have = element_bits(got, i);
    if (want != have)
      r.first_difference = op.name + " on " + std::string(dtype_name(dt)) + " at O" + std::to_string(opt) +
                           ", element " + std::to_string(i) + " (x = " + std::to_string(in.at("x").get_double(i)) +
                           "): bits " + std::to_string(have) + ", correctly rounded " + std::to_string(want);
  }
  return r;
}

/// The name of op's vector variants on dt (f16/bf16 compute in f32).
std::string variant_prefix(const Op& op, DType dt) {
  std::string base = op.fn ? op.name : "exp";
  return "stax_cr_" + base + (dt == DType::F64 ? "" : "f") + "_v";
}

/// True when the IR calls `callee` (declarations alone do not count).
bool calls(const std::string& ir, const std::string& callee) {
  for (size_t at = ir.find("@" + callee); at != std::string::npos; at = ir.find("@" + callee, at + 1)) {
    size_t line = ir.rfind('\n', at) + 1;
    if (ir.compare(line, 7, "declare") != 0 && ir.substr(line, at - line).find("call ") != std::string::npos)
      return true;
  }
  return false;
}

/// True when the IR calls one of op's vector variants (declarations alone
/// do not count: they are in every module of the vector binding).
bool calls_vector_variant(const std::string& ir, const Op& op, DType dt) { return calls(ir, variant_prefix(op, dt)); }

const DType kFloats[] = {DType::F32, DType::F64, DType::F16, DType::BF16};

/// Every op, dtype and LLVM level under one binding: the interpreter's bits;
/// at O2/O3 the f32/f64 loops call a vector variant exactly when the
/// binding offers them (and the host has variants: x86-64) — or, under
/// Vector where the host has the form (math_forms.h: exp, erf and sigmoid's
/// exp on f32; 16 lanes on AVX-512 hosts, else 8), inline it: no call of the variant, a call of its
/// slow path. f16/bf16 loops have a per-element runtime call (the
/// conversions), so they stay scalar.
void check_binding(cpu::MathBinding binding) {
  cpu::ScopedMathBinding scope(binding);
  bool has_variants = !cpu::vector_variants("stax_cr_expf", true).empty();
  for (const Op& op : ops())
    for (DType dt : kFloats)
      for (int opt = 0; opt <= 3; ++opt) {
        Run r = check(op, dt, opt);
        INFO(op.name << " " << dtype_name(dt) << " O" << opt << "\n" << r.ir);
        CHECK(r.first_difference == "");
        CHECK(r.interpreter_bits);
        // The host's form: 16 lanes on AVX-512 hosts, else 8 (math_forms.h).
        std::string form = variant_prefix(op, dt) + (cpu::has_math_form(variant_prefix(op, dt) + "16") ? "16" : "8");
        bool inlined = binding == cpu::MathBinding::Vector && dt == DType::F32 && cpu::has_math_form(form);
        if (binding == cpu::MathBinding::Scalar) {
          CHECK(!calls_vector_variant(r.ir, op, dt));
        } else if (has_variants && opt >= 2 && inlined) {
          // The form inlined: no call of it (an AVX-512 kernel's 8-lane
          // epilogue loop may still call the 8-lane entry point).
          CHECK(!calls(r.ir, form + "("));
          if (form.back() == '8') CHECK(!calls_vector_variant(r.ir, op, dt));
          // The slow path of both forms: stax_f32_resolve_expf_v8 and the like.
          CHECK(calls(r.ir, "stax_f32_resolve_" + variant_prefix(op, dt).substr(std::string("stax_cr_").size()) + "8"));
        } else if (has_variants && opt >= 2 && (dt == DType::F32 || dt == DType::F64)) {
          CHECK(calls_vector_variant(r.ir, op, dt));
        }
      }
}

}  // namespace

TEST_CASE("every transcendental op gives the correctly rounded bits on every dtype, vector binding") {
  check_binding(cpu::MathBinding::Vector);
}

TEST_CASE("every transcendental op gives the correctly rounded bits on every dtype, vector-call binding") {
  check_binding(cpu::MathBinding::VectorCall);
}

TEST_CASE("every transcendental op gives the correctly rounded bits on every dtype, scalar binding") {
  check_binding(cpu::MathBinding::Scalar);
}

// Inputs where glibc 2.36 is not correctly rounded (found by comparing
// mpfr_f32 with the host's expf / tanhf over random inputs).
TEST_CASE("a kernel bound to the host's libm is caught (the deliberately wrong case)") {
  struct Case {
    Fn fn;
    float x;
    float (*host)(float);
  };
  const Case cases[] = {{Fn::Exp, 0x1.4864bp+0f, &::expf}, {Fn::Tanh, 0x1.0498cp-2f, &::tanhf}};
  for (const Case& c : cases) {
    // The premise: glibc really differs from the correctly rounded result here.
    REQUIRE(c.host(c.x) != math::eval_f32(c.fn, c.x));
    Op op{std::string(math::fn_name(c.fn)), c.fn};
    Program p = program(op, DType::F32);
    Inputs in;
    in["x"] = make_tensor(DType::F32, std::vector<double>(size_t(kN), double(c.x)));
    in["z"] = make_tensor(DType::F32, std::vector<double>(size_t(kN), 1.0));
    auto first = [&](cpu::MathBinding b) {
      cpu::ScopedMathBinding scope(b);
      IeeeOutcome o = cpu::CompiledProgram(p, {1, false, 3}).run(in);
      REQUIRE(!o.failure);
      return std::bit_cast<float>(uint32_t(element_bits(*o.outputs.at("y"), 0)));
    };
    CHECK(first(cpu::MathBinding::Vector) == math::eval_f32(c.fn, c.x));
    CHECK(first(cpu::MathBinding::VectorCall) == math::eval_f32(c.fn, c.x));
    CHECK(first(cpu::MathBinding::Scalar) == math::eval_f32(c.fn, c.x));
    CHECK(first(cpu::MathBinding::HostLibm) != math::eval_f32(c.fn, c.x));  // caught
    CHECK(first(cpu::MathBinding::HostLibm) == c.host(c.x));
  }
}

// The inlined forms are the library's fast path, read at run time: with the
// test hook's perturbation (2^-30 relative, far beyond the proven bound) the
// rounding test accepts wrong roundings, and a kernel compiled and run under
// it shows them against MPFR, as the library's own entry points do
// (cr32_test); without it, every element is correctly rounded.
TEST_CASE("the inlined math forms read the library's fast path: a perturbed one is caught against MPFR") {
  cpu::ScopedMathBinding scope(cpu::MathBinding::Vector);
  for (Fn fn : {Fn::Exp, Fn::Erf}) {
    // Where the host has no form (AVX-512, no AVX2, a clang build) the
    // kernel calls an entry point, which reads the same fast path.
    std::string form = "stax_cr_" + std::string(math::fn_name(fn)) + "f_v";
    form += cpu::has_math_form(form + "16") ? "16" : "8";
    const bool inlined = cpu::has_math_form(form);
    INFO(form << (inlined ? " inlined" : " called"));
    constexpr int64_t n = 4096;
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-4.0, 4.0);
    Tensor x(DType::F32, {n});
    std::vector<float> xs(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      xs[size_t(i)] = float(u(rng));
      std::memcpy(x.data.data() + 4 * i, &xs[size_t(i)], 4);
    }
    std::string f = std::string(math::fn_name(fn));
    Program p = test::parse_ok("input x : f32[4096]\nlet y : f32[4096] = map(fn(a) => " + f + "(a), x)\noutput y\n");
    Inputs in;
    in["x"] = x;
    auto wrong = [&](double pert) {
      math::testing::set_f32_perturbation(fn, pert);
      cpu::CompiledProgram cp(p, {1, true, 2});
      IeeeOutcome o = cp.run(in);
      math::testing::set_f32_perturbation(fn, 0.0);
      REQUIRE(!o.failure);
      if (inlined) CHECK(!calls(cp.ir(cp.kernels().size() - 1), form));
      int bad = 0;
      for (int64_t i = 0; i < n; ++i)
        bad += element_bits(*o.outputs.at("y"), i) != std::bit_cast<uint32_t>(math::mpfr_f32(fn, xs[size_t(i)]));
      return bad;
    };
    CHECK(wrong(0.0) == 0);
    CHECK(wrong(0x1p-30) > 0);  // caught
  }
}
