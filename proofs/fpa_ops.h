// The scalar ops of the core language in Z3's theories (internal to proofs/:
// it includes z3++.h). Floats are FPA terms (IEEE 754, round to nearest
// even), integers bit-vectors of their dtype's width (two's complement
// wrap-around, docs/design.md §3), bools Booleans. One meaning per op, shared by the
// scalar-rewrite checker (rewrite.cpp) and the whole-program prover
// (program_equiv.cpp, through the tensor domain of smt_domain.h).
//
// Values are carried in the compute sort of their tag: with `half_in_f32`
// (the .stx semantics, docs/design.md §2) f16/bf16 values compute in f32 and round
// once when a cast or a store rounds them; without it (an Alive-style rule at
// --dtype f16) every op rounds to the half format.
//
// Ops without an FPA counterpart (exp, log, tanh, erf, sin, pow, float mod
// and floordiv, ...) are uninterpreted functions, one per op and sort and
// shared by every use: equal arguments give equal results, which is all an
// exact rewrite of the surrounding arithmetic needs. A model that rests on
// them is fiction until the interpreter confirms it.
#pragma once

#include <z3++.h>

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>

#include "proofs/solver_guard.h"
#include "semantics/ir.h"

namespace stax::proofs {

/// The bits of a stored value (float, integer or bool) in a model; a NaN
/// gives the dtype's canonical quiet NaN.
uint64_t model_bits(const z3::model& m, const z3::expr& e, sem::DType t);

class FpaOps {
 public:
  FpaOps(z3::context& c, bool half_in_f32) : c_(c), half_in_f32_(half_in_f32) {}

  z3::context& ctx() { return c_; }
  /// The sort a tensor of dtype `t` stores (f16 as binary16, i32 as bv32).
  z3::sort storage_sort(sem::DType t);
  /// The sort values of tag `t` compute in.
  z3::sort compute_sort(sem::DType t);
  sem::DType compute(sem::DType t) const;

  /// A stored element (of dtype t) given by its bits.
  z3::expr from_bits(uint64_t bits, sem::DType t);
  /// A constant in the compute sort of `tag`.
  z3::expr constant(const sem::Const& k, sem::DType tag);
  /// A stored element of dtype t as a value of tag t (exact widening).
  z3::expr widen(const z3::expr& stored, sem::DType t);
  /// A value of tag t rounded to its storage format (a map's store).
  z3::expr narrow(const z3::expr& value, sem::DType t);
  /// A value of tag t rounded to t's precision and carried in its compute sort.
  z3::expr round_to_tag(const z3::expr& value, sem::DType t);

  /// One op. `fails`, when given, is or-ed with the condition under which the
  /// op is ⊥ (an integer division by zero); without it such an op throws
  /// Unsupported.
  z3::expr apply(sem::ScalarOp op, sem::DType tag, sem::DType operand_tag, std::span<const z3::expr> args,
                 z3::expr* fails = nullptr);
  z3::expr cast(const z3::expr& v, sem::DType from, sem::DType to);
  /// An int64 (as a 64-bit vector) converted to the compute sort of `tag`
  /// (iota, the integer draws of rand).
  z3::expr from_int64(const z3::expr& v, sem::DType tag);

  z3::expr is_nan(const z3::expr& a);
  /// The oracle's equality of results (docs/design.md §3): same bits, or both NaN.
  z3::expr same(const z3::expr& a, const z3::expr& b);
  z3::expr maximum(const z3::expr& a, const z3::expr& b);
  z3::expr minimum(const z3::expr& a, const z3::expr& b);
  z3::expr num(double v, const z3::sort& s);
  z3::expr rne();

  /// Python floor division and modulo on bit-vectors (b ≠ 0 is the caller's).
  z3::expr bv_floordiv(const z3::expr& a, const z3::expr& b);
  z3::expr bv_mod(const z3::expr& a, const z3::expr& b);

  /// The ops encoded as uninterpreted functions so far.
  const std::set<std::string>& uninterpreted() const { return uf_ops_; }

 private:
  z3::expr uf(sem::ScalarOp op, const z3::sort& s, std::span<const z3::expr> args);
  z3::expr convert(const z3::expr& v, const z3::sort& s);
  z3::expr int_op(sem::ScalarOp op, sem::DType operand_tag, std::span<const z3::expr> args, z3::expr* fails);
  z3::expr float_op(sem::ScalarOp op, std::span<const z3::expr> args);
  z3::expr float_to_int(const z3::expr& v, sem::DType from, sem::DType to);

  z3::context& c_;
  bool half_in_f32_;
  std::map<std::string, z3::func_decl> ufs_;
  std::set<std::string> uf_ops_;
};

}  // namespace stax::proofs
