// Integer and bool scalar semantics shared by the Real domain and its
// enclosure variant (docs/design.md §3): exact, with Ieee's i32/i64 wrap-around,
// Python's floor division and modulo, and ⊥ on division by zero.
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <string>

#include "semantics/dtype.h"
#include "semantics/ieee_scalar.h"
#include "semantics/ir.h"

namespace stax::sem {

/// An integer of an i32 tag wrapped to i32 (two's complement), as in Ieee.
inline int64_t wrap_to_tag(int64_t v, DType t) {
  return compute_type(t) == DType::I32 ? int64_t(int32_t(uint32_t(uint64_t(v)))) : v;
}

/// One integer op; nullopt for a division (div, mod, floordiv) by zero.
/// Comparisons give 0 or 1.
inline std::optional<int64_t> int_apply(ScalarOp op, DType operand_tag, int64_t x, int64_t y, int64_t z) {
  bool i32 = compute_type(operand_tag) == DType::I32;
  bool divides = op == ScalarOp::Div || op == ScalarOp::Mod || op == ScalarOp::FloorDiv;
  if (divides && y == 0) return std::nullopt;
  int64_t r = 0;
  switch (op) {
    case ScalarOp::Add: r = ieee::wrap_add(x, y); break;
    case ScalarOp::Sub: r = ieee::wrap_sub(x, y); break;
    case ScalarOp::Mul: r = ieee::wrap_mul(x, y); break;
    case ScalarOp::Div: r = i32 ? ieee::trunc_div<int32_t>(int32_t(x), int32_t(y)) : ieee::trunc_div(x, y); break;
    case ScalarOp::Mod: r = i32 ? ieee::py_mod<int32_t>(int32_t(x), int32_t(y)) : ieee::py_mod(x, y); break;
    case ScalarOp::FloorDiv: r = i32 ? ieee::floor_div<int32_t>(int32_t(x), int32_t(y)) : ieee::floor_div(x, y); break;
    case ScalarOp::Neg: r = ieee::wrap_neg(x); break;
    case ScalarOp::Abs: r = x < 0 ? ieee::wrap_neg(x) : x; break;
    case ScalarOp::Relu: r = x < 0 ? 0 : x; break;
    case ScalarOp::Maximum: r = x < y ? y : x; break;
    case ScalarOp::Minimum: r = y < x ? y : x; break;
    case ScalarOp::Fma: r = ieee::wrap_add(ieee::wrap_mul(x, y), z); break;
    case ScalarOp::Eq: return x == y;
    case ScalarOp::Ne: return x != y;
    case ScalarOp::Lt: return x < y;
    case ScalarOp::Le: return x <= y;
    case ScalarOp::Gt: return x > y;
    case ScalarOp::Ge: return x >= y;
    default: STAX_CHECK(false) << "int op " << op_name(op);
  }
  return i32 ? int64_t(int32_t(uint32_t(uint64_t(r)))) : r;
}

inline int64_t bool_apply(ScalarOp op, int64_t x, int64_t y) {
  switch (op) {
    case ScalarOp::And: return x & y;
    case ScalarOp::Or: return x | y;
    case ScalarOp::Not: return !x;
    case ScalarOp::Eq: return x == y;
    case ScalarOp::Ne: return x != y;
    default: STAX_CHECK(false) << "bool op " << op_name(op);
  }
  return 0;
}

/// An integer-to-integer (or bool) cast.
inline int64_t int_cast(int64_t v, DType to) {
  if (is_bool(to)) return v != 0;
  return to == DType::I32 ? int64_t(int32_t(uint32_t(uint64_t(v)))) : v;
}

/// One fold step of an integer reduction (sum, prod, max, min); arg
/// reductions are the caller's.
inline int64_t int_fold(RedOp op, int64_t acc, int64_t x, DType tag) {
  switch (op) {
    case RedOp::Sum: return wrap_to_tag(ieee::wrap_add(acc, x), tag);
    case RedOp::Prod: return wrap_to_tag(ieee::wrap_mul(acc, x), tag);
    case RedOp::Max: return acc < x ? x : acc;
    case RedOp::Min: return x < acc ? x : acc;
    default: return acc;
  }
}

/// The integer range of a tag, for a float truncated into it.
inline int64_t int_min(DType to) { return to == DType::I32 ? INT32_MIN : INT64_MIN; }
inline int64_t int_max(DType to) { return to == DType::I32 ? INT32_MAX : INT64_MAX; }

/// The exact part of a scalar op over a block of n values of a
/// multiprecision domain (`.i` holds integers and bools): select, bool and
/// integer ops, a division by zero noted in the domain's fail_pos and
/// fail_reason. Returns false for a float op, which is the caller's.
template <class D, class V>
bool apply_exact(D& dom, ScalarOp op, DType operand_tag, V* o, const V* a, const V* b, const V* c, size_t n) {
  if (op == ScalarOp::Select) {
    for (size_t i = 0; i < n; ++i) o[i] = a[i].i ? b[i] : c[i];
    return true;
  }
  if (is_bool(operand_tag)) {
    for (size_t i = 0; i < n; ++i) o[i].i = bool_apply(op, a[i].i, b ? b[i].i : 0);
    return true;
  }
  if (is_float(operand_tag)) return false;
  for (size_t i = 0; i < n; ++i) {
    std::optional<int64_t> r = int_apply(op, operand_tag, a[i].i, b ? b[i].i : 0, c ? c[i].i : 0);
    if (!r && dom.fail_pos < 0) {
      dom.fail_pos = int64_t(i);
      dom.fail_reason = "integer " + std::string(op_name(op)) + " by zero";
    }
    o[i].i = r.value_or(0);
  }
  return true;
}

}  // namespace stax::sem
