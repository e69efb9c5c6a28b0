#include "backends/gpu/block_reduce.h"

#include <bit>
#include <cstdint>
#include <functional>
#include <optional>

#include "backends/cpu/jit.h"
#include "backends/normal_form.h"
#include "semantics/expr_util.h"
#include "semantics/printer.h"
#include "transforms/passes.h"
#include "transforms/reassoc.h"

namespace stax::backends::gpu {

using namespace stax::sem;

namespace {

constexpr const char* kOperand = "stax_block_operand";

struct Found {
  Expr x;  ///< the operand of the plain reduction
  RedOp op;
  Const init;
  Shape extents;
  BlockShape shape;
};

bool has_let(const Expr& e) {
  return sem::any_node(e, [](const Expr& n) { return std::holds_alternative<LetE>(n->p); });
}

/// The operand x a lanes reduction reads: its source's view that is not of
/// an iota (the padding mask).
Expr operand_of(const Expr& src) {
  auto of_view = [](const Expr& a) -> Expr {
    const auto* v = std::get_if<ViewE>(&a->p);
    if (!v || std::holds_alternative<IotaE>(v->src->p)) return nullptr;
    return v->src;
  };
  if (Expr x = of_view(src)) return x;
  if (const auto* m = std::get_if<MapE>(&src->p))
    for (size_t i = m->args.size(); i-- > 0;)
      if (Expr x = of_view(m->args[i])) return x;
  return nullptr;
}

/// Whether `e` is gpu-reduce:threads=m:warp=w applied to red(op, init, R, x).
bool rederives(const Expr& e, const Found& f) {
  Program q;
  q.inputs.push_back(Input{kOperand, f.x->type, {}});
  Expr name = make_expr(f.x->type, NameE{kOperand});
  q.bindings.push_back(Binding{"y", make_expr(e->type, RedE{f.op, f.init, f.extents, name}), {}});
  q.outputs.push_back("y");
  xform::GpuReduceOptions o;
  o.threads = f.shape.threads;
  o.warp = f.shape.warp;
  xform::Context ctx;
  try {
    xform::Result r = xform::gpu_reduce(q, o, ctx);
    return print_expr(r.program.bindings[0].expr) == print_expr(sem::replace_node(e, f.x.get(), name));
  } catch (const std::exception&) {
    return false;
  }
}

/// `e` as a reduction in gpu-reduce's order, or nullopt.
std::optional<Found> match(const Expr& e) {
  const DType dt = e->type.dtype;
  if (dt == DType::Bool) return std::nullopt;  // no shuffle of bool
  // f16/bf16: the tree accumulates in f32 and a final cast rounds (reassoc.h).
  Expr tree = e;
  if (is_half(dt)) {
    const auto* m = std::get_if<MapE>(&e->p);
    if (!m || m->args.size() != 1 || m->args[0]->type.dtype != DType::F32) return std::nullopt;
    tree = m->args[0];
  }
  const auto* top = std::get_if<RedE>(&tree->p);
  if (!top || top->extents.size() != 1 || top->extents[0] > 2 || red_is_arg(top->op)) return std::nullopt;
  // The plain reduction's init: the root's, back in a half dtype (exact).
  Const init = top->init;
  if (is_half(dt)) {
    float v = float(top->init.as_double());
    init.dtype = dt;
    init.bits = dt == DType::F16 ? f32_to_f16_bits(v) : f32_to_bf16_bits(v);
    if (std::bit_cast<uint32_t>(float(init.as_double())) != std::bit_cast<uint32_t>(v)) return std::nullopt;
  }
  const Shape& d = e->type.shape;
  const size_t nd = d.size();
  Expr cur = tree;
  for (int step = 0; step < 64; ++step) {
    Expr next;
    if (const auto* r = std::get_if<RedE>(&cur->p)) next = r->src;
    else if (const auto* v = std::get_if<ViewE>(&cur->p)) next = v->src;
    else break;
    // The warps view D ++ [M/W, W] over the lanes D ++ [M].
    const auto* lanes = std::get_if<RedE>(&next->p);
    const Shape& vs = cur->type.shape;
    if (std::holds_alternative<ViewE>(cur->p) && lanes && vs.size() == nd + 2 && lanes->extents.size() == 1 &&
        next->type.shape.size() == nd + 1 && next->type.shape.back() == vs[nd] * vs[nd + 1]) {
      Found f;
      f.x = operand_of(lanes->src);
      f.shape.threads = next->type.shape.back();
      f.shape.warp = vs.back();
      if (f.x && f.shape.warp <= 32 && f.x->type.dtype == dt && f.x->type.shape.size() > nd &&
          std::equal(d.begin(), d.end(), f.x->type.shape.begin())) {
        f.op = top->op;
        f.init = init;
        f.extents.assign(f.x->type.shape.begin() + std::ptrdiff_t(nd), f.x->type.shape.end());
        f.shape.id = xform::reassoc::identity(f.op, compute_type(dt));
        f.shape.fold_init = xform::reassoc::init_foldable(f.op, top->init);
        if (rederives(e, f)) return f;
      }
    }
    cur = next;
  }
  return std::nullopt;
}

/// The marked bindings of the normal form are still their plain reductions.
bool still_plain(const Program& nf, const std::map<std::string, std::pair<Expr, BlockShape>>& marks) {
  for (const auto& [name, want] : marks) {
    const Binding* b = nullptr;
    for (const Binding& c : nf.bindings)
      if (c.name == name) b = &c;
    if (!b) return false;
    const auto* r = std::get_if<RedE>(&b->expr->p);
    const auto* w = std::get_if<RedE>(&want.first->p);
    if (!r || r->op != w->op || !(r->init == w->init) || r->extents != w->extents ||
        !(b->expr->type == want.first->type) || r->src->type.dtype != b->expr->type.dtype)
      return false;
  }
  return true;
}

}  // namespace

BlockPlan plan_block_reductions(const Program& p, bool fuse) {
  auto normal_form = [](const Program& q) {
    std::string why;
    std::optional<Program> n = exact_normal_form(q, &why);
    if (!n) throw cpu::CompileError(why);
    return std::move(*n);
  };
  if (!fuse) return BlockPlan{normal_form(p), {}};
  Program q = p, scratch = p;
  q.bindings.clear();
  std::map<std::string, std::pair<Expr, BlockShape>> marks;
  for (const Binding& b : p.bindings) {
    const bool lets = has_let(b.expr);
    std::function<Expr(const Expr&, bool)> go = [&](const Expr& e, bool root) -> Expr {
      if (root || !lets)
        if (std::optional<Found> f = match(e)) {
          Expr red = make_expr(e->type, RedE{f->op, f->init, f->extents, go(f->x, false)}, e->loc);
          if (root) {
            marks[b.name] = {red, f->shape};
            return red;
          }
          // A nested one is bound on its own (realization, exact).
          std::string n = sem::fresh_name(scratch, "blk");
          scratch.bindings.push_back(Binding{n, red, e->loc});
          q.bindings.push_back(Binding{n, red, e->loc});
          marks[n] = {red, f->shape};
          return make_expr(e->type, NameE{n}, e->loc);
        }
      std::vector<Expr> kids = sem::children(e);
      for (Expr& k : kids) k = go(k, false);
      return sem::with_children(e, kids);
    };
    q.bindings.push_back(Binding{b.name, go(b.expr, true), b.loc});
  }
  if (marks.empty()) return BlockPlan{normal_form(p), {}};
  Program nf = normal_form(q);
  if (!still_plain(nf, marks)) return BlockPlan{normal_form(p), {}};
  BlockPlan plan{std::move(nf), {}};
  for (const auto& [name, m] : marks) plan.blocks[name] = m.second;
  return plan;
}

}  // namespace stax::backends::gpu
