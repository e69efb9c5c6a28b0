#include "backends/gpu/cuda_codegen.h"

#include <cstring>
#include <map>

#include "backends/cpu/jit.h"
#include "backends/gpu/cuda_math.h"
#include "backends/gpu/cuda_prelude.h"
#include "backends/reasons.h"
#include "semantics/index_eval.h"
#include "semantics/lambda_eval.h"
#include "semantics/mutants.h"
#include "semantics/printer.h"
#include "semantics/views.h"

namespace stax::backends::gpu {

using namespace stax::sem;
using cpu::CompileError;

namespace {

// ------------------------------------------------------------ C text

// Values compute in compute_type (f16/bf16 in f32).
const char* ctype(DType t) {
  switch (compute_type(t)) {
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::Bool: return "bool";
    default: break;
  }
  throw CompileError("no CUDA type for " + std::string(dtype_name(t)));
}
// Storage: bool is one byte, f16/bf16 their bits, as in Tensor.
const char* stype(DType t) {
  if (t == DType::Bool) return "unsigned char";
  return is_half(t) ? "unsigned short" : ctype(t);
}
const char* utype(DType t) { return t == DType::I32 ? "u32" : "u64"; }
std::string tmpl(DType t) { return std::string("<") + ctype(t) + ", " + utype(t) + ">"; }

std::string i64_lit(int64_t v) {
  // The most negative value has no literal of its own.
  if (v == INT64_MIN) return "((i64)(-9223372036854775807LL - 1))";
  return "((i64)" + std::to_string(v) + "LL)";
}

std::string const_text(const Const& c, DType tag) {
  switch (compute_type(tag)) {
    case DType::F32: {
      float f = float(c.as_double());
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return "stax_f32(" + std::to_string(b) + "u)";
    }
    case DType::F64: {
      double d = c.as_double();
      uint64_t b;
      std::memcpy(&b, &d, 8);
      return "stax_f64(" + std::to_string(b) + "ull)";
    }
    case DType::I32: return "((i32)" + std::to_string(int32_t(c.as_int())) + ")";
    case DType::I64: return i64_lit(c.as_int());
    case DType::Bool: return c.bits ? "true" : "false";
    default: break;
  }
  throw CompileError("bad constant");
}

// ------------------------------------------------------------ emitter

class Emitter {
 public:
  explicit Emitter(const GpuKernel& k) : k_(k), spec_(k.spec) {
    addr32_ = mutant_active("addr32-overflow");
  }

  std::vector<std::string> reasons;
  std::string body;  ///< statements of the per-element function
  int indent = 1;
  std::string fail_return = "return;";  ///< how an element stops at its ⊥

  std::string tmp(DType t, const std::string& e) {
    std::string n = "t" + std::to_string(next_++);
    line("const " + std::string(ctype(t)) + " " + n + " = " + e + ";");
    return n;
  }
  std::string i64tmp(const std::string& e) {
    std::string n = "t" + std::to_string(next_++);
    line("const i64 " + n + " = " + e + ";");
    return n;
  }
  void line(const std::string& s) { body += std::string(size_t(indent) * 2, ' ') + s + "\n"; }

  /// `if (bad) { record; return; }`: the element stops at its first failure.
  void check(const std::string& bad, const std::string& reason, const std::string& value) {
    int64_t id = int64_t(reasons.size());
    reasons.push_back(reason);
    line("if (" + bad + ") { stax_fail(fail, record, pos, " + std::to_string(id) + ", " + value + "); " + fail_return +
         " }");
  }

  std::string convert(const std::string& v, DType from_tag, DType to) {
    DType from = compute_type(from_tag);
    if (is_half(to)) {
      bool h = to == DType::F16;
      if (from == DType::F64) return tmp(to, std::string(h ? "stax_round_h" : "stax_round_bf") + "(stax_d2f_odd(" + v + "))");
      if (from == DType::F32) return tmp(to, std::string(h ? "stax_round_h(" : "stax_round_bf(") + v + ")");
      if (from == DType::Bool) return tmp(to, "(" + v + " ? 1.0f : 0.0f)");
      return tmp(to, std::string(h ? "stax_round_h" : "stax_round_bf") + "(stax_i2f_odd((i64)" + v + "))");
    }
    if (from == to) return v;
    switch (to) {
      case DType::F32:
      case DType::F64:
        if (from == DType::Bool) return tmp(to, "(" + v + " ? " + const_text(Const::f64(1.0), to) + " : " +
                                                    const_text(Const::f64(0.0), to) + ")");
        return tmp(to, "(" + std::string(ctype(to)) + ")" + v);
      case DType::I32:
      case DType::I64:
        if (is_float(from)) {
          std::string lim = to == DType::I32 ? "(i32)(-2147483647 - 1), (i32)2147483647"
                                             : i64_lit(INT64_MIN) + ", " + i64_lit(INT64_MAX);
          return tmp(to, "stax_f2i<" + std::string(ctype(to)) + ", " + ctype(from) + ">(" + v + ", " + lim + ")");
        }
        return tmp(to, "(" + std::string(ctype(to)) + ")" + v);
      case DType::Bool:
        return tmp(to, "(" + v + " != " + (is_float(from) ? const_text(Const::f64(0.0), from) : "0") + ")");
      default: break;
    }
    throw CompileError("bad conversion");
  }

  std::string apply(ScalarOp op, DType tag, DType operand_tag, std::span<const std::string> a);
  std::string float_op(ScalarOp op, DType t, std::span<const std::string> a);
  std::string int_op(ScalarOp op, DType t, std::span<const std::string> a);

  size_t buffer(const std::string& n) const {
    for (size_t i = 1; i < spec_.names.size(); ++i)
      if (spec_.names[i] == n) return i;
    throw CompileError("kernel reads an unknown tensor " + n);
  }
  std::string flat(const std::vector<std::string>& idx, const Shape& s) {
    std::vector<int64_t> st = row_major_strides(s);
    std::string f = "0";
    for (size_t k = 0; k < idx.size(); ++k) f += " + " + idx[k] + " * " + i64_lit(st[k]);
    return i64tmp(f);
  }
  std::string load(size_t buf, const std::string& off) {
    DType t = spec_.types[buf].dtype;
    std::string x = "b" + std::to_string(buf) + "[" + off + "]";
    if (t == DType::Bool) return tmp(t, "(" + x + " != 0)");
    if (t == DType::F16) return tmp(t, "stax_h2f(" + x + ")");
    if (t == DType::BF16) return tmp(t, "stax_bf2f(" + x + ")");
    return tmp(t, x);
  }

  struct IndexDomain;
  std::string iexpr(const IExpr& e, const std::vector<std::string>& idx);
  std::string elem(const Expr& e, const std::vector<std::string>& idx);
  /// A map's result rounded to its half tag (the Ieee domain rounds there).
  std::string round_to_tag(const std::string& v, DType tag) {
    if (!is_half(tag)) return v;
    return tmp(tag, std::string(tag == DType::F16 ? "stax_round_h(" : "stax_round_bf(") + v + ")");
  }
  std::string store(const std::string& v) {
    DType t = spec_.types[0].dtype;
    if (t == DType::F16) return "stax_f2h(" + v + ")";
    if (t == DType::BF16) return "stax_f2bf(" + v + ")";
    return "(" + std::string(stype(t)) + ")" + v;
  }
  std::string fold(const RedE& r, const std::string& acc, const std::string& x, DType t, const std::string& rflat);
  void emit_element();
  /// A block reduction's operand: element j of output `pos` into *xv
  /// (false at ⊥).
  void emit_block_element();
  /// The components of the flat index `flat` (0 <= flat < the product of
  /// `s`) over `s`, row-major. The outermost needs no remainder: a 64-bit
  /// division is a subroutine on the GPU.
  std::vector<std::string> unflat(const std::string& flat, const Shape& s, const std::string& stem) {
    std::vector<std::string> o(s.size());
    for (size_t k = s.size(); k-- > 0;) {
      std::string rest = k + 1 < s.size() ? stem + "q" + std::to_string(k + 1) : flat;
      o[k] = stem + std::to_string(k);
      line("const i64 " + o[k] + " = " + rest + (k == 0 ? "" : " % " + i64_lit(s[k])) + ";");
      if (k > 0) line("const i64 " + stem + "q" + std::to_string(k) + " = " + rest + " / " + i64_lit(s[k]) + ";");
    }
    return o;
  }

  const GpuKernel& k_;
  const cpu::KernelSpec& spec_;
  int next_ = 0;
  bool addr32_ = false;  ///< the addr32-overflow mutant: index arithmetic in 32 bits
  std::map<std::string, std::string> muls_;  ///< a product's operands (the fma-contract mutant)
};

// The Cuda domain of the generic evaluator (lambda_eval.h): values are C
// temporaries.
struct CudaDomain {
  using Value = std::string;
  Emitter& e;
  Value param(size_t, size_t, const Value& a) { return a; }
  Value constant(size_t, const Const& c, DType tag) { return e.tmp(tag, const_text(c, tag)); }
  Value apply(size_t, ScalarOp op, DType tag, DType operand_tag, std::span<const Value> args) {
    return e.apply(op, tag, operand_tag, args);
  }
  Value cast(size_t, const Value& v, DType from, DType to) { return e.convert(v, from, to); }
};

std::string Emitter::apply(ScalarOp op, DType tag, DType operand_tag, std::span<const std::string> a) {
  switch (op) {
    case ScalarOp::Eq: return tmp(DType::Bool, a[0] + " == " + a[1]);
    case ScalarOp::Ne: return tmp(DType::Bool, a[0] + " != " + a[1]);
    case ScalarOp::Lt: return tmp(DType::Bool, a[0] + " < " + a[1]);
    case ScalarOp::Le: return tmp(DType::Bool, a[0] + " <= " + a[1]);
    case ScalarOp::Gt: return tmp(DType::Bool, a[0] + " > " + a[1]);
    case ScalarOp::Ge: return tmp(DType::Bool, a[0] + " >= " + a[1]);
    case ScalarOp::Select: return tmp(tag, a[0] + " ? " + a[1] + " : " + a[2]);
    case ScalarOp::And: return tmp(tag, a[0] + " && " + a[1]);
    case ScalarOp::Or: return tmp(tag, a[0] + " || " + a[1]);
    case ScalarOp::Not: return tmp(tag, "!" + a[0]);
    default: break;
  }
  DType t = compute_type(operand_tag);
  if (is_float(t)) return float_op(op, t, a);
  return int_op(op, t, a);
}

std::string Emitter::float_op(ScalarOp op, DType t, std::span<const std::string> a) {
  bool f32 = t == DType::F32;
  std::string T = ctype(t);
  std::string one = const_text(Const::f64(1.0), t);
  switch (op) {
    case ScalarOp::Add:
      if (mutant_active("fma-contract") && muls_.count(a[0]))  // PyTorch #122260: a*b + c contracted
        return tmp(t, std::string(f32 ? "fmaf(" : "fma(") + muls_[a[0]] + ", " + a[1] + ")");
      return tmp(t, a[0] + " + " + a[1]);
    case ScalarOp::Sub: return tmp(t, a[0] + " - " + a[1]);
    case ScalarOp::Mul: {
      std::string v = tmp(t, a[0] + " * " + a[1]);
      muls_[v] = a[0] + ", " + a[1];
      return v;
    }
    case ScalarOp::Div: return tmp(t, a[0] + " / " + a[1]);
    case ScalarOp::Mod: return tmp(t, "stax_fmodpy<" + T + ">(" + a[0] + ", " + a[1] + ")");
    case ScalarOp::FloorDiv: return tmp(t, "stax_ffloordiv<" + T + ">(" + a[0] + ", " + a[1] + ")");
    case ScalarOp::Neg: return tmp(t, "-" + a[0]);
    case ScalarOp::Abs: return tmp(t, std::string(f32 ? "fabsf(" : "fabs(") + a[0] + ")");
    case ScalarOp::Relu: return float_op(ScalarOp::Maximum, t, std::vector<std::string>{a[0], tmp(t, const_text(Const::f64(0.0), t))});
    case ScalarOp::Maximum:
      if (mutant_active("max-drops-nan"))  // fmaxf: NaN operands dropped
        return tmp(t, std::string(f32 ? "fmaxf(" : "fmax(") + a[0] + ", " + a[1] + ")");
      return tmp(t, "stax_maximum<" + T + ">(" + a[0] + ", " + a[1] + ")");
    case ScalarOp::Minimum: return tmp(t, "stax_minimum<" + T + ">(" + a[0] + ", " + a[1] + ")");
    case ScalarOp::Sqrt: return tmp(t, std::string(f32 ? "sqrtf(" : "sqrt(") + a[0] + ")");
    case ScalarOp::Rsqrt: return tmp(t, one + " / " + (f32 ? "sqrtf(" : "sqrt(") + a[0] + ")");
    case ScalarOp::Floor: return tmp(t, std::string(f32 ? "floorf(" : "floor(") + a[0] + ")");
    case ScalarOp::Fma: return tmp(t, std::string(f32 ? "fmaf(" : "fma(") + a[0] + ", " + a[1] + ", " + a[2] + ")");
    case ScalarOp::Sigmoid:  // 1 / (1 + exp(-x)) over the correctly rounded exp, as the interpreter
      return tmp(t, one + " / (" + one + " + stax_cr_exp(-" + a[0] + ", fail))");
    default:  // the wrappers are overloaded on float and double
      if (auto fn = cuda_math_function(op))
        return tmp(t, *fn + "(" + a[0] + (a.size() > 1 ? ", " + a[1] : std::string()) + ", fail)");
      break;
  }
  throw CompileError("float op " + std::string(op_name(op)) + " has no code");
}

std::string Emitter::int_op(ScalarOp op, DType t, std::span<const std::string> a) {
  std::string tp = tmpl(t);
  auto division = [&](const char* fn) {
    check(a[1] + " == 0", "integer " + std::string(op_name(op)) + " by zero", "0");
    return tmp(t, std::string(fn) + "(" + a[0] + ", " + a[1] + ")");
  };
  switch (op) {
    case ScalarOp::Add: return tmp(t, "stax_wadd" + tp + "(" + a[0] + ", " + a[1] + ")");
    case ScalarOp::Sub: return tmp(t, "stax_wsub" + tp + "(" + a[0] + ", " + a[1] + ")");
    case ScalarOp::Mul: return tmp(t, "stax_wmul" + tp + "(" + a[0] + ", " + a[1] + ")");
    case ScalarOp::Div: return division(("stax_tdiv" + tp).c_str());
    case ScalarOp::FloorDiv: return division(("stax_floordiv" + tp).c_str());
    case ScalarOp::Mod: return division(("stax_pymod<" + std::string(ctype(t)) + ">").c_str());
    case ScalarOp::Neg: return tmp(t, "stax_wneg" + tp + "(" + a[0] + ")");
    case ScalarOp::Abs: return tmp(t, a[0] + " < 0 ? stax_wneg" + tp + "(" + a[0] + ") : " + a[0]);
    case ScalarOp::Relu: return tmp(t, a[0] + " < 0 ? 0 : " + a[0]);
    case ScalarOp::Maximum: return tmp(t, a[0] + " < " + a[1] + " ? " + a[1] + " : " + a[0]);
    case ScalarOp::Minimum: return tmp(t, a[1] + " < " + a[0] + " ? " + a[1] + " : " + a[0]);
    case ScalarOp::Fma:
      return tmp(t, "stax_wadd" + tp + "(stax_wmul" + tp + "(" + a[0] + ", " + a[1] + "), " + a[2] + ")");
    default: break;
  }
  throw CompileError("integer op " + std::string(op_name(op)) + " has no code");
}

/// The CUDA C domain of the index evaluator (index_eval.h): 64-bit wrapping
/// arithmetic as the interpreter's, loads checked against their extents.
struct Emitter::IndexDomain {
  using Value = std::string;
  Emitter& em;
  const std::vector<std::string>& idx;

  // Under addr32-overflow every value is cut to 32 bits and sign-extended:
  // the wrap of 32-bit arithmetic (torchtitan #2430 when unproved).
  Value cut(const std::string& e) { return em.i64tmp(em.addr32_ ? "(i64)(i32)(" + e + ")" : e); }
  std::string lit(int64_t c) { return i64_lit(em.addr32_ ? int64_t(int32_t(c)) : c); }

  Value constant(const IExprNode&, int64_t c) { return lit(c); }
  Value var(const IExprNode&, int64_t k) { return em.addr32_ ? cut(idx[size_t(k)]) : idx[size_t(k)]; }
  Value add(const IExprNode&, Value a, Value b) { return cut("stax_wadd<i64, u64>(" + a + ", " + b + ")"); }
  Value sub(const IExprNode&, Value a, Value b) { return cut("stax_wsub<i64, u64>(" + a + ", " + b + ")"); }
  Value mul(const IExprNode&, int64_t c, Value a) { return cut("stax_wmul<i64, u64>(" + lit(c) + ", " + a + ")"); }
  Value floordiv(const IExprNode&, Value a, int64_t c) {
    if (c == 0) throw CompileError("index map divides by zero");
    return cut("stax_floordiv<i64, u64>(" + a + ", " + lit(c) + ")");
  }
  Value mod(const IExprNode&, Value a, int64_t c) {
    if (c == 0) throw CompileError("index map divides by zero");
    return cut("stax_pymod<i64>(" + a + ", " + lit(c) + ")");
  }
  template <class F>
  Value load(const IExprNode& e, F&& arg) {
    size_t buf = em.buffer(e.name);
    const Shape& s = em.spec_.types[buf].shape;
    std::vector<std::string> at;
    for (size_t k = 0; k < e.args.size(); ++k) {
      std::string v = em.i64tmp("(i64)" + arg(k));
      em.check("(u64)" + v + " >= (u64)" + i64_lit(s[k]),
               "load(" + e.name + ") index out of range [0, " + std::to_string(s[k]) + ") in dim " + std::to_string(k),
               v);
      at.push_back(v);
    }
    return cut("(i64)" + em.load(buf, em.flat(at, s)));
  }
};

std::string Emitter::iexpr(const IExpr& e, const std::vector<std::string>& idx) {
  IndexDomain dom{*this, idx};
  return eval_iexpr(e, dom);
}

std::string Emitter::elem(const Expr& e, const std::vector<std::string>& idx) {
  DType tag = e->type.dtype;
  if (const auto* x = std::get_if<NameE>(&e->p)) return load(buffer(x->name), flat(idx, e->type.shape));
  if (const auto* x = std::get_if<ViewE>(&e->p)) {
    const Shape& ss = x->src->type.shape;
    bool in_bounds = view_statically_in_bounds(ss, e->type.shape, x->map);
    std::vector<std::string> at;
    for (size_t j = 0; j < ss.size(); ++j) {
      std::string v = iexpr(x->map.exprs[j], idx);
      bool wrap = iexpr_has_load(x->map.exprs[j]);
      if (wrap && !mutant_active("neg-index-unwrapped"))  // PyTorch #102064 when missing
        v = i64tmp(v + " < 0 ? " + v + " + " + i64_lit(ss[j]) + " : " + v);
      if (!in_bounds)
        check("(u64)" + v + " >= (u64)" + i64_lit(ss[j]), view_index_reason(ss[j], j, wrap), v);
      at.push_back(v);
    }
    return elem(x->src, at);
  }
  if (const auto* x = std::get_if<MapE>(&e->p)) {
    std::vector<std::string> args;
    for (const Expr& a : x->args) args.push_back(elem(a, idx));
    CudaDomain dom{*this};
    std::vector<std::string> regs;
    return round_to_tag(eval_lambda(x->fn, dom, std::span<const std::string>(args), regs), tag);
  }
  if (const auto* x = std::get_if<IotaE>(&e->p)) return convert(idx[size_t(x->dim)], DType::I64, tag);
  if (const auto* x = std::get_if<FullE>(&e->p)) return tmp(tag, const_text(x->value, tag));
  if (const auto* x = std::get_if<RandE>(&e->p)) {  // the interpreter's hash (semantics/rand_bits.h)
    std::string args = "(" + std::to_string(x->key) + "ull, " + flat(idx, e->type.shape) + ")";
    if (compute_type(tag) == DType::F64) return tmp(tag, "stax_rand_f64" + args);
    if (compute_type(tag) != DType::F32) throw CompileError("rand of a non-float dtype");
    return round_to_tag(tmp(tag, "stax_rand_f32" + args), tag);
  }
  throw CompileError("expression not in GPU kernel form: " + print_expr(e));
}

std::string Emitter::fold(const RedE& r, const std::string& acc, const std::string& x, DType t,
                          const std::string& rflat) {
  t = compute_type(t);
  bool f = is_float(t);
  std::string T = ctype(t), tp = is_float(t) ? "" : tmpl(t);
  switch (r.op) {
    case RedOp::Sum: return f ? acc + " + " + x : "stax_wadd" + tp + "(" + acc + ", " + x + ")";
    case RedOp::Prod: return f ? acc + " * " + x : "stax_wmul" + tp + "(" + acc + ", " + x + ")";
    case RedOp::Max:
      if (f && mutant_active("max-drops-nan")) return std::string(t == DType::F32 ? "fmaxf(" : "fmax(") + acc + ", " + x + ")";
      return f ? "stax_maximum<" + T + ">(" + acc + ", " + x + ")" : acc + " < " + x + " ? " + x + " : " + acc;
    case RedOp::Min:
      return f ? "stax_minimum<" + T + ">(" + acc + ", " + x + ")" : x + " < " + acc + " ? " + x + " : " + acc;
    case RedOp::ArgMax:
    case RedOp::ArgMin: {
      bool mx = r.op == RedOp::ArgMax;
      std::string take = mx ? x + " > " + acc : x + " < " + acc;
      // NaN is the greatest value: argmax takes the first NaN; argmin keeps
      // a NaN accumulator against any number.
      if (f) take = "(" + take + ") || " + (mx ? "(" + x + " != " + x + " && " + acc + " == " + acc + ")"
                                               : "(" + x + " == " + x + " && " + acc + " != " + acc + ")");
      line("if (" + take + ") arg = " + rflat + ";");
      return "(" + take + ") ? " + x + " : " + acc;
    }
  }
  return acc;
}

void Emitter::emit_element() {
  const Shape& out = spec_.types[0].shape;
  if (num_elements(out) == 0) return;  // never called, and no division by a zero extent
  // The output index from the flat position (non-negative: C division is floor).
  std::vector<std::string> o(out.size());
  for (size_t k = out.size(); k-- > 0;) {
    std::string rest = k + 1 < out.size() ? "q" + std::to_string(k + 1) : "pos";
    o[k] = "o" + std::to_string(k);
    line("const i64 " + o[k] + " = " + rest + " % " + i64_lit(out[k]) + ";");
    if (k > 0) line("const i64 q" + std::to_string(k) + " = " + rest + " / " + i64_lit(out[k]) + ";");
  }
  const auto* r = std::get_if<RedE>(&spec_.expr->p);
  if (!r) {
    std::string v = elem(spec_.expr, o);
    line("b0[pos] = " + store(v) + ";");
    return;
  }
  DType t = r->src->type.dtype;
  line(std::string(ctype(t)) + " acc = " + const_text(r->init, t) + ";");
  if (red_is_arg(r->op)) line("i64 arg = 0;");
  std::vector<int64_t> rstr = row_major_strides(r->extents);
  std::vector<std::string> all = o;
  std::string rflat = "0";
  for (size_t k = 0; k < r->extents.size(); ++k) {
    std::string v = "r" + std::to_string(k);
    line("for (i64 " + v + " = 0; " + v + " < " + i64_lit(r->extents[k]) + "; ++" + v + ") {");
    ++indent;
    all.push_back(v);
    rflat += " + " + v + " * " + i64_lit(rstr[k]);
  }
  std::string x = elem(r->src, all);
  line("acc = " + fold(*r, "acc", x, t, "(" + rflat + ")") + ";");
  for (size_t k = 0; k < r->extents.size(); ++k) {
    --indent;
    line("}");
  }
  std::string res = red_is_arg(r->op) ? "arg" : "acc";
  line("b0[pos] = " + store(res) + ";");
}

void Emitter::emit_block_element() {
  const auto& r = std::get<RedE>(spec_.expr->p);
  std::vector<std::string> all = unflat("pos", spec_.types[0].shape, "o");
  for (std::string& v : unflat("j", r.extents, "r")) all.push_back(v);
  line("*xv = " + elem(r.src, all) + ";");
  line("return true;");
}

std::string params(const cpu::KernelSpec& s) {
  std::string p;
  for (size_t i = 0; i < s.names.size(); ++i)
    p += std::string(i ? "const " : "") + stype(s.types[i].dtype) + "* __restrict__ b" + std::to_string(i) + ", ";
  return p;
}
std::string args(const cpu::KernelSpec& s) {
  std::string a;
  for (size_t i = 0; i < s.names.size(); ++i) a += "b" + std::to_string(i) + ", ";
  return a;
}

/// A block reduction (block_reduce.h): gpu-reduce's order as one kernel. One
/// block of M threads per output element (a grid-stride loop over them, the
/// same trip count for every thread of a block): thread tid folds the
/// operand's elements tid, tid + M, ... from the identity; a
/// __shfl_down_sync tree per warp of W lanes, lane l taking (ID ⊕ v[l]) ⊕
/// v[l + h]; the warp results through __shared__ memory after
/// __syncthreads(), then the same halving tree over them, the root taking
/// init — the transformed program's left folds and operand order exactly.
/// Under record (one element's ⊥), thread 0 walks the operand in order.
std::string block_kernel(const GpuKernel& k, Emitter& e, const RedE& r, const BlockShape& b) {
  const std::string& n = k.name;
  const DType t = r.src->type.dtype;
  const std::string T = ctype(t), id = const_text(b.id, t), init = const_text(r.init, t);
  const int64_t m = b.threads, w = b.warp, groups = m / w, cnt = num_elements(r.extents), steps = (cnt + m - 1) / m;
  auto op = [&](const std::string& x, const std::string& y) { return "(" + e.fold(r, x, y, t, "0") + ")"; };
  const std::string mask = m >= 32 ? "0xffffffffu" : std::to_string((1u << m) - 1u) + "u";
  const std::string a = args(k.spec), W = std::to_string(w);
  std::string s = "static __device__ bool " + n + "_x(" + params(k.spec) + "i64 pos, i64 j, " + T +
                  "* xv, StaxFail* fail, int record) {\n" + e.body + "}\n";
  s += "extern \"C\" __global__ void " + n + "(" + params(k.spec) + "i64 begin, i64 end, StaxFail* fail, int record) {\n";
  s += "  STAX_SHARED(" + T + ", stax_sm, " + std::to_string(groups) + ");\n";
  s += "  const i64 tid = (i64)threadIdx.x;\n";
  s += "  if (record) {\n    if (tid == 0 && blockIdx.x == 0)\n      for (i64 j = 0; j < " + i64_lit(cnt) +
       "; ++j) {\n        " + T + " x;\n        if (!" + n + "_x(" + a + "begin, j, &x, fail, 1)) return;\n      }\n" +
       "    return;\n  }\n";
  s += "  for (i64 pos = begin + (i64)blockIdx.x; pos < end; pos += (i64)gridDim.x) {\n";
  s += "    " + T + " v = " + id + ";\n";
  s += "    for (i64 k = 0; k < " + i64_lit(steps) + "; ++k) {\n";
  s += "      const i64 j = " + i64_lit(m) + " * k + tid;\n";
  s += "      " + T + " x = " + id + ";\n";
  s += std::string("      ") + (steps * m != cnt ? "if (j < " + i64_lit(cnt) + ") " : "") + n + "_x(" + a +
       "pos, j, &x, fail, 0);\n";
  s += "      v = " + op("v", "x") + ";\n    }\n";
  const bool wrong_offset = mutant_active("shuffle-wrong-offset");  // one lane too far
  for (int64_t h = w / 2; h >= 1; h /= 2)
    s += "    { const " + T + " o = __shfl_down_sync(" + mask + ", v, " + std::to_string(wrong_offset ? h + 1 : h) +
         ", " + W + "); v = " + op(op(id, "v"), "o") + "; }\n";
  if (w == 1) s += "    v = " + op(id, "v") + ";\n";
  s += "    if (tid % " + W + " == 0) stax_sm[tid / " + W + "] = v;\n";
  if (!mutant_active("missing-barrier")) s += "    __syncthreads();\n";
  for (int64_t h = groups / 2; h >= 1; h /= 2) {
    std::string ini = h == 1 && b.fold_init ? init : id;
    s += "    if (tid < " + std::to_string(h) + ") { const " + T + " a = stax_sm[tid]; const " + T +
         " c = stax_sm[tid + " + std::to_string(h) + "]; stax_sm[tid] = " + op(op(ini, "a"), "c") + "; }\n";
    s += "    __syncthreads();\n";
  }
  std::string root = groups == 1 || !b.fold_init ? op(init, "root") : "root";
  s += "    if (tid == 0) { const " + T + " root = stax_sm[0]; b0[pos] = " + e.store(root) + "; }\n";
  s += "    __syncthreads();\n  }\n}\n";
  return s;
}

}  // namespace

// Every op of the core language has device code now (binary64
// transcendental ops and rand included, cuda_math.h).
std::optional<std::string> gpu_unsupported(const Program&) { return std::nullopt; }

GpuSource emit_cuda(const Program& p, const std::map<std::string, BlockShape>& blocks) {
  if (auto why = gpu_unsupported(p)) throw CompileError("not supported by the GPU backend yet: " + *why);
  GpuSource src;
  src.text = std::string(cuda_prelude()) + cuda_math_source();
  std::string launchers;
  for (const Binding& b : p.bindings) {
    GpuKernel k;
    k.name = "stax_k" + std::to_string(src.kernels.size());
    k.spec = cpu::make_spec(p, b);
    if (auto why = cpu::unsupported(k.spec.expr))
      throw CompileError("binding " + b.name + " is not one kernel: " + *why);
    Emitter e(k);
    const std::string& n = k.name;
    std::string cast_args;
    for (size_t i = 0; i < k.spec.names.size(); ++i)
      cast_args += std::string("(") + (i ? "const " : "") + stype(k.spec.types[i].dtype) + "*)bufs[" +
                   std::to_string(i) + "], ";
    auto blk = blocks.find(b.name);
    const auto* red = std::get_if<RedE>(&k.spec.expr->p);
    if (blk != blocks.end() && red && !red_is_arg(red->op)) {
      k.threads = unsigned(blk->second.threads);
      e.fail_return = "return false;";
      e.emit_block_element();
      k.reasons = e.reasons;
      src.text += "\n// " + b.name + " = " + print_expr(b.expr, &p) + "\n// as a block reduction: threads=" +
                  std::to_string(blk->second.threads) + " warp=" + std::to_string(blk->second.warp) + "\n";
      src.text += block_kernel(k, e, *red, blk->second);
      // Barriers and shuffles: the block's threads as fibers (emu_shim.h).
      launchers += "extern \"C\" void " + n + "_emu(void** bufs, i64 begin, i64 end, StaxFail* fail, int record, "
                   "unsigned grid, unsigned block) {\n"
                   "  stax_emu_launch(grid, block, [&]() { " + n + "(" + cast_args + "begin, end, fail, record); });\n}\n";
      src.kernels.push_back(std::move(k));
      continue;
    }
    e.emit_element();
    k.reasons = e.reasons;
    src.text += "\n// " + b.name + " = " + print_expr(b.expr, &p) + "\n";
    src.text += "static __device__ void " + n + "_elem(" + params(k.spec) + "i64 pos, StaxFail* fail, int record) {\n" +
                e.body + "}\n";
    src.text += "extern \"C\" __global__ void " + n + "(" + params(k.spec) +
                "i64 begin, i64 end, StaxFail* fail, int record) {\n"
                "  const i64 stride = (i64)blockDim.x * (i64)gridDim.x;\n"
                "  for (i64 pos = begin + (i64)blockIdx.x * (i64)blockDim.x + (i64)threadIdx.x; pos < end; pos += stride)\n"
                "    " + n + "_elem(" + args(k.spec) + "pos, fail, record);\n}\n";
    // The emulator's launcher: the grid's blocks and threads in turn (no
    // barriers in these kernels, so any order gives the same result).
    launchers += "extern \"C\" void " + n + "_emu(void** bufs, i64 begin, i64 end, StaxFail* fail, int record, "
                 "unsigned grid, unsigned block) {\n"
                 "  gridDim.x = grid; blockDim.x = block;\n"
                 "  for (unsigned b = 0; b < grid; ++b)\n"
                 "    for (unsigned t = 0; t < block; ++t) {\n"
                 "      blockIdx.x = b; threadIdx.x = t;\n"
                 "      " + n + "(" + cast_args + "begin, end, fail, record);\n    }\n}\n";
    src.kernels.push_back(std::move(k));
  }
  src.text += "\n#ifdef STAX_EMU\n" + launchers + "#endif\n";
  return src;
}

}  // namespace stax::backends::gpu
