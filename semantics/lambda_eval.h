// The generic evaluator of scalar lambdas (§6.7: one description, many
// interpretations). A lambda is a flat instruction list; a domain gives each
// instruction its meaning. Domains whose values are blocks of elements (Ieee,
// Real) evaluate a block per walk, so the walk is paid once per block, not
// once per element.
//
// A Domain provides:
//   using Value = ...;
//   Value param(size_t reg, size_t index, const Value& arg);
//   Value constant(size_t reg, const Const& c, DType tag);
//   Value apply(size_t reg, ScalarOp op, DType tag, DType operand_tag, std::span<const Value> args);
//   Value cast(size_t reg, const Value& v, DType from, DType to);
// `reg` is the instruction's index, so block domains can reuse its buffer.
#pragma once

#include <array>
#include <span>
#include <vector>

#include "semantics/ir.h"

namespace stax::sem {

template <class D>
typename D::Value eval_lambda(const Lambda& f, D& dom, std::span<const typename D::Value> params,
                              std::vector<typename D::Value>& regs) {
  regs.resize(f.code.size());
  for (size_t i = 0; i < f.code.size(); ++i) {
    const Instr& in = f.code[i];
    switch (in.kind) {
      case Instr::Kind::Param: regs[i] = dom.param(i, size_t(in.a), params[size_t(in.a)]); break;
      case Instr::Kind::Const: regs[i] = dom.constant(i, in.value, in.type); break;
      case Instr::Kind::Op: {
        std::array<typename D::Value, 3> args;
        int n = op_arity(in.op);
        const int32_t idx[3] = {in.a, in.b, in.c};
        for (int k = 0; k < n; ++k) args[size_t(k)] = regs[size_t(idx[k])];
        // The operand tag: for select the value operands, else the first.
        DType operand_tag = f.code[size_t(in.op == ScalarOp::Select ? in.b : in.a)].type;
        regs[i] = dom.apply(i, in.op, in.type, operand_tag, std::span(args.data(), size_t(n)));
        break;
      }
      case Instr::Kind::Cast: regs[i] = dom.cast(i, regs[size_t(in.a)], f.code[size_t(in.a)].type, in.type); break;
    }
  }
  return regs.back();
}

/// The Print domain: the text of a lambda body in the `.stx` syntax.
struct PrintDomain {
  using Value = std::string;
  const std::vector<std::string>* names = nullptr;
  Value param(size_t, size_t index, const Value&) { return (*names)[index]; }
  Value constant(size_t, const Const& c, DType) { return const_to_string(c); }
  Value apply(size_t, ScalarOp op, DType, DType, std::span<const Value> args) {
    std::string s(op_name(op));
    s += "(";
    for (size_t k = 0; k < args.size(); ++k) s += (k ? ", " : "") + args[k];
    return s + ")";
  }
  Value cast(size_t, const Value& v, DType, DType to) { return "cast(" + v + ", " + std::string(dtype_name(to)) + ")"; }
};

}  // namespace stax::sem
