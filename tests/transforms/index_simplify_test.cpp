// simplify_index is an exact rewrite: on every index of the box it gives the
// value of the original expression. Checked exhaustively on random
// expressions, plus the specific forms the transforms rely on.
#include <catch2/catch.hpp>

#include <limits>

#include "semantics/ieee_scalar.h"
#include "semantics/printer.h"
#include "semantics/random_inputs.h"
#include "transforms/index_simplify.h"

using namespace stax;
using namespace stax::sem;

namespace {

int64_t eval(const IExpr& e, const std::vector<int64_t>& v) {
  switch (e->kind) {
    case IExprNode::Kind::Const: return e->value;
    case IExprNode::Kind::Var: return v[size_t(e->value)];
    case IExprNode::Kind::Add: return eval(e->args[0], v) + eval(e->args[1], v);
    case IExprNode::Kind::Sub: return eval(e->args[0], v) - eval(e->args[1], v);
    case IExprNode::Kind::Mul: return e->value * eval(e->args[0], v);
    case IExprNode::Kind::FloorDiv: return ieee::floor_div(eval(e->args[0], v), e->value);
    case IExprNode::Kind::Mod: return ieee::py_mod(eval(e->args[0], v), e->value);
    default: return 0;
  }
}

IExpr random_iexpr(Rng& rng, int depth, int vars) {
  if (depth == 0 || rng.uniform() < 0.25)
    return rng.uniform() < 0.7 ? ivar(int(rng.next() % uint64_t(vars))) : iconst(rng.range(-5, 9));
  switch (rng.next() % 5) {
    case 0: return iadd(random_iexpr(rng, depth - 1, vars), random_iexpr(rng, depth - 1, vars));
    case 1: return isub(random_iexpr(rng, depth - 1, vars), random_iexpr(rng, depth - 1, vars));
    case 2: return imul(rng.range(-4, 9), random_iexpr(rng, depth - 1, vars));
    case 3: return ifloordiv(random_iexpr(rng, depth - 1, vars), rng.range(1, 9));
    default: return imod(random_iexpr(rng, depth - 1, vars), rng.range(1, 9));
  }
}

}  // namespace

TEST_CASE("simplify_index preserves values on the whole box") {
  Rng rng(99);
  Shape box = {5, 3, 4};
  int changed = 0;
  for (int t = 0; t < 3000; ++t) {
    IExpr e = random_iexpr(rng, 4, 3);
    IExpr s = xform::simplify_index(e, box);
    changed += print_iexpr(s, {"a", "b", "c"}) != print_iexpr(e, {"a", "b", "c"});
    for (int64_t a = 0; a < box[0]; ++a)
      for (int64_t b = 0; b < box[1]; ++b)
        for (int64_t c = 0; c < box[2]; ++c) {
          std::vector<int64_t> v = {a, b, c};
          if (eval(e, v) != eval(s, v)) {
            FAIL("simplify changed " << print_iexpr(e, {"a", "b", "c"}) << " into " << print_iexpr(s, {"a", "b", "c"})
                                     << " at " << a << "," << b << "," << c);
          }
        }
  }
  CHECK(changed > 1000);  // it does rewrite
}

TEST_CASE("simplify_index: the forms the transforms produce") {
  std::vector<std::string> v = {"i0", "i1", "r"};
  auto s = [&](const IExpr& e, const Shape& box) { return print_iexpr(xform::simplify_index(e, box), v); };
  // Prop. 6.2: composed affine maps fold to A·i + c.
  CHECK(s(iadd(imul(2, iadd(ivar(1), iconst(1))), isub(ivar(0), ivar(0))), {4, 4}) == "2*i1 + 2");
  // (32*m + r) // 64 with r < 32 is m // 2; (32*m + r) // 32 % 2 is m % 2.
  IExpr addr = iadd(imul(32, ivar(0)), ivar(2));
  CHECK(s(ifloordiv(addr, 64), {128, 1, 32}) == "i0 // 2");
  CHECK(s(imod(ifloordiv(addr, 32), 2), {128, 1, 32}) == "i0 % 2");
  // A mod whose operand is already in range disappears; one that is not stays.
  CHECK(s(imod(ivar(0), 8), {8}) == "i0");
  CHECK(s(imod(ivar(0), 8), {9}) == "i0 % 8");
  // The address identity s*b*(e // s) + b*(e % s) = b*e.
  IExpr e = ivar(0);
  CHECK(s(iadd(imul(16384, ifloordiv(e, 2)), imul(8192, imod(e, 2))), {128}) == "8192*i0");
  // Deliberately wrong expectation must not hold: (i0 + 1) // 2 is not i0 // 2.
  CHECK(s(ifloordiv(iadd(ivar(0), iconst(1)), 2), {8}) != "i0 // 2");
}

TEST_CASE("simplify_index: coefficients past int64 keep the expression as it is") {
  // 4295098369 * 2147483647 overflows int64 (found by UBSan on a generated
  // program): no rewrite, never a wrapped coefficient.
  IExpr big = imul(2147483647, imul(4295098369, ivar(0)));
  IExpr s = xform::simplify_index(big, {4});
  CHECK(iexpr_equal(s, big));
  IExpr min_const = isub(iconst(std::numeric_limits<int64_t>::min() + 1), iconst(2));
  CHECK(iexpr_equal(xform::simplify_index(min_const, {}), min_const));
  IExpr div_min = ifloordiv(imul(std::numeric_limits<int64_t>::min(), ivar(0)), -1);
  CHECK(iexpr_equal(xform::simplify_index(div_min, {4}), div_min));
  // The wrong case: the same shape with small coefficients is rewritten.
  IExpr small = imul(3, imul(5, ivar(0)));
  IExpr t = xform::simplify_index(small, {4});
  CHECK_FALSE(iexpr_equal(t, small));
  CHECK(print_iexpr(t, {"i"}) == "15*i");
}
