// The description of a kernel, apart from its emission (codegen.cpp): the
// buffers a binding reads, whether it is one strict kernel, its loop shape
// (lanes and their blocks, the parallel range) and its cache key.
#include <set>

#include "backends/cpu/codegen.h"
#include "backends/cpu/jit.h"
#include "backends/cpu/vecmath.h"
#include "semantics/printer.h"
#include "semantics/views.h"

namespace stax::backends::cpu {

using namespace stax::sem;

namespace {

std::optional<std::string> unsupported_below(const Expr& e, bool top) {
  if (std::holds_alternative<LetE>(e->p)) return "a let-in expression (run normalize first)";
  if (const auto* r = std::get_if<RedE>(&e->p)) {
    if (!top) return "a reduction below the top of a binding (run normalize first)";
    return unsupported_below(r->src, false);
  }
  if (const auto* v = std::get_if<ViewE>(&e->p)) {
    // A view evaluates its operand only where it reads it; the interpreter
    // evaluates all of it (strict ⊥). Only an operand that cannot fail may
    // be read in part.
    if (!std::holds_alternative<NameE>(v->src->p) && expr_may_fail(v->src))
      return "a view of a computed value that may fail (run normalize first)";
    return unsupported_below(v->src, false);
  }
  if (const auto* m = std::get_if<MapE>(&e->p)) {
    for (const Expr& a : m->args)
      if (auto why = unsupported_below(a, false)) return why;
  }
  return std::nullopt;
}

}  // namespace

KernelSpec make_spec(const Program& p, const Binding& b) {
  KernelSpec s;
  s.binding = b.name;
  s.expr = b.expr;
  s.names.push_back(b.name);
  s.types.push_back(b.expr->type);
  std::vector<std::string> reads;
  collect_free_names(b.expr, reads);
  std::set<std::string> seen;
  for (const std::string& n : reads) {
    if (!seen.insert(n).second) continue;  // a buffer is one kernel argument however often it is read
    const TensorType* t = p.type_of(n);
    if (!t) throw CompileError("binding " + b.name + " reads an unknown tensor " + n);
    s.names.push_back(n);
    s.types.push_back(*t);
  }
  return s;
}

std::optional<std::string> unsupported(const Expr& e) { return unsupported_below(e, true); }

// Up to 32 lanes (interleave-lanes:w=16 fills one AVX-512 or two AVX2
// registers of f32; w=32, two AVX-512 registers: two independent
// accumulator chains, which a max fold, whose step is a chain of compares and
// selects, needs to run at the read bandwidth: softmax's row max took 2.2 ms
// instead of 3.8); wider innermost outputs keep one accumulator at a time
// (w=64 measured no faster and compiled slower).
constexpr int64_t kMaxLanes = 32;
// Short folds (the combine steps of a lane or tree reduction) gain nothing
// from lanes and only cost compile time.
constexpr int64_t kMinLaneFold = 8;

KernelShape kernel_shape(const KernelSpec& s) {
  KernelShape k;
  const Shape& out = s.types[0].shape;
  if (const auto* r = std::get_if<RedE>(&s.expr->p)) {
    // A longer last dimension of a rank-2 or higher output (a matrix
    // product's columns) is stepped in blocks of 32, 16 or 8 lanes, one block
    // of accumulators at a time; each accumulator still folds its own
    // elements in program order. (A rank-1 output keeps one accumulator at
    // a time: its threads split that one dimension.)
    int64_t last = out.empty() ? 0 : out.back(), block = 0;
    if (last >= 2 && last <= kMaxLanes) block = last;
    for (int64_t b : {kMaxLanes, kMaxLanes / 2, kMaxLanes / 4})
      if (block == 0 && out.size() >= 2 && last > kMaxLanes && last % b == 0) block = b;
    k.lanes = !red_is_arg(r->op) && block > 0 && num_elements(r->extents) >= kMinLaneFold;
    if (k.lanes) {
      k.lane_block = block;
      k.parallel_extent = out.size() >= 2 ? out[0] : 1;
      return k;
    }
  }
  k.parallel_extent = out.empty() ? 1 : out[0];
  return k;
}

std::string kernel_key(const KernelSpec& s) {
  std::string key = s.binding + " = " + print_expr(s.expr) + "\n";
  for (size_t i = 0; i < s.names.size(); ++i) key += s.names[i] + " : " + type_str(s.types[i]) + "\n";
  // The math binding changes the calls emitted (vecmath.h).
  if (math_binding() != MathBinding::Vector) key += "math " + std::string(math_binding_name(math_binding())) + "\n";
  return key;
}

}  // namespace stax::backends::cpu
