// Program assembly of the random program generator (docs/design.md §2, §6): the
// inputs, the top-level bindings (normal ones, duplicates for CSE, index
// tensors for gathers, and at most one construct that may make the program
// ⊥), and the output statements. The public entry points of
// oracle/gen/program_gen.h.
#include "oracle/gen/program_gen.h"

#include <variant>

#include "oracle/gen/internal.h"
#include "semantics/parser.h"

namespace stax::oracle {

namespace generator {

Gen::Gen(uint64_t seed, const GenOptions& o) : rng_(seed * 0x2545f4914f6cdd1dull + 0x6a09e667f3bcc909ull), o_(o) {
  o_.max_bindings = std::max(1, o_.max_bindings);
  o_.max_rank = std::clamp(o_.max_rank, 0, 6);
  o_.max_extent = std::clamp<int64_t>(o_.max_extent, 1, kMaxElements);
  o_.max_lambda_depth = std::max(1, o_.max_lambda_depth);
  max_view_rank_ = o_.max_rank + 1;
  seed_ = seed;
}

std::string Gen::run() {
  choose_failure();
  make_inputs();
  int nb = int(uni(std::max(1, (o_.max_bindings + 1) / 2), o_.max_bindings));
  int fail_at = fail_ == Fail::None ? -1 : int(uni(0, nb - 1));
  for (int i = 0; i < nb; ++i) {
    if (i == fail_at) {
      failing_binding();
      continue;
    }
    int k = weighted({binds_.empty() ? 0.0 : 0.12, o_.allow_gather ? 0.12 : 0.0, 1.0});
    if (k == 0) duplicate_binding();
    else if (k == 1) index_binding();
    else normal_binding();
  }
  make_outputs();
  std::string s = "# stax::oracle::generate_program_text seed " + std::to_string(seed_) + "\n";
  for (const std::string& l : lines_) s += l + "\n";
  return s;
}

void Gen::choose_failure() {
  double p = (o_.allow_int || o_.allow_gather) ? 0.22 : 0.0;
  if (!coin(p)) return;
  switch (weighted({o_.allow_int ? 0.5 : 0.0, o_.allow_int ? 0.2 : 0.0, o_.allow_gather ? 0.22 : 0.0,
                    o_.allow_gather ? 0.08 : 0.0})) {
    case 0: fail_ = Fail::FloorDivInput; break;
    case 1: fail_ = Fail::LambdaDiv; break;
    case 2: fail_ = Fail::RiskyGather; break;
    default: fail_ = Fail::OobView; break;
  }
}

void Gen::add_input(const std::string& name, TensorType ty, bool index) {
  Sym x;
  x.name = name;
  x.ty = ty;
  x.index_input = index;
  syms_.push_back(x);
  lines_.push_back("input " + name + " : " + type_text(ty));
}

void Gen::make_inputs() {
  int n = int(uni(1, 3));
  for (int i = 0; i < n; ++i) {
    DType t = (i == 0 && coin(0.7)) ? DType::F32 : pick_dtype();
    add_input("x" + std::to_string(i), {t, rand_shape(rand_rank())}, false);
  }
  if (o_.allow_gather && coin(0.45)) {
    Shape sh = coin(0.8) ? Shape{uni(1, o_.max_extent)} : Shape{uni(1, o_.max_extent), uni(1, 3)};
    add_input("idx0", {coin(0.7) ? DType::I64 : DType::I32, sh}, true);
  }
  if (fail_ == Fail::FloorDivInput)
    add_input("x" + std::to_string(n), {pick_int(), rand_shape(rand_rank(1))}, false);
}

void Gen::bind(const std::string& text, TensorType ty, Sym x) {
  x.name = "v" + std::to_string(n_bind_++);
  x.ty = ty;
  x.local = false;
  std::string decl = coin(0.5) ? " : " + type_text(ty) : "";
  lines_.push_back("let " + x.name + decl + " = " + text);
  binds_.push_back({text, x});
  syms_.push_back(x);
}

/// 1/sum of signed zeros: the sign of an exact zero sum (its init, its
/// padding) becomes ±inf, visible in both semantics.
void Gen::zero_sign_binding() {
  Shape S = rand_shape(int(uni(0, 1)));
  Shape R = rand_shape(1, std::max<int64_t>(1, kMaxElements / std::max<int64_t>(1, sem::num_elements(S))));
  R[0] = std::max<int64_t>(R[0], 2);
  DType t = pick_float();
  TE src = gen_shaped(concat(S, R), t, 1);
  std::string init = coin(0.7) ? "-0.0" : "0.0";
  bind("map(fn(a) => div(1.0, a), red(sum, " + init + ", " + sem::shape_text(R) + ", map(fn(a) => mul(abs(a), -0.0), " +
           src.text + ")))",
       {t, S});
}

void Gen::normal_binding() {
  int depth = int(uni(2, 3));
  if (o_.allow_reduce && coin(0.06)) {
    zero_sign_binding();
    return;
  }
  if (coin(0.2)) {
    TE e = gen_any(depth);
    bind(e.text, e.ty);
    return;
  }
  Shape S = coin(0.5) ? syms_[pick(syms_.size())].ty.shape : rand_shape(rand_rank());
  if (sem::num_elements(S) > kMaxElements || int(S.size()) > o_.max_rank) S = rand_shape(rand_rank());
  TE e = gen_shaped(S, pick_dtype(), depth);
  bind(e.text, e.ty);
}

void Gen::duplicate_binding() {
  Bound b = pick(binds_);
  bind(b.text, b.sym.ty, b.sym);
}

void Gen::index_binding() {
  if (o_.allow_reduce && coin(0.3)) {
    // argmax/argmin: values in [0, |R|)
    Shape S = rand_shape(int(uni(1, std::max(1, o_.max_rank - 1))));
    Shape R = rand_shape(1, std::max<int64_t>(1, kMaxElements / sem::num_elements(S)));
    RedOp op = coin(0.5) ? RedOp::ArgMax : RedOp::ArgMin;
    DType t = pick_float();
    TE src = gen_shaped(concat(S, R), t, 1);
    Sym x;
    x.ranged = true;
    x.lo = 0;
    x.hi = sem::num_elements(R) - 1;
    bind("red(" + std::string(sem::red_name(op)) + ", " + red_init(op, t) + ", " + sem::shape_text(R) + ", " +
             src.text + ")",
         {DType::I64, S}, x);
    return;
  }
  Sym x;
  TE e = iota_index(x);
  bind(e.text, e.ty, x);
}

/// The program's one construct that may be ⊥ (chosen by choose_failure).
void Gen::failing_binding() {
  switch (fail_) {
    case Fail::FloorDivInput: fail_division_by_input(); break;
    case Fail::LambdaDiv: fail_lambda_division(); break;
    case Fail::RiskyGather: fail_risky_gather(); break;
    case Fail::OobView: fail_oob_view(); break;
    case Fail::None: break;
  }
}

/// A division (floordiv/mod/div) by an int input value: ⊥ where it is zero.
void Gen::fail_division_by_input() {
  const Sym* div = nullptr;
  for (const Sym& x : syms_)
    if (!x.local && !x.index_input && sem::is_int(x.ty.dtype) && x.name[0] == 'x') div = &x;
  STAX_CHECK(div) << "no int input for the failing division";
  TE d{div->name, div->ty};
  TE a = gen_shaped(d.ty.shape, d.ty.dtype, 1);
  ScalarOp op = weighted({3, 1, 1}) == 0 ? ScalarOp::FloorDiv : pick(kDivOps);
  std::string f = coin(0.5) ? std::string(sem::op_name(op))
                            : "fn(a, b) => " + std::string(sem::op_name(op)) + "(a, b)";
  bind("map(" + f + ", " + a.text + ", " + d.text + ")", d.ty);
}

/// An int division inside a lambda by an arbitrary value: ⊥ where it is zero.
void Gen::fail_lambda_division() {
  Shape S = rand_shape(rand_rank(1));
  DType t = pick_int();
  std::vector<DType> P;
  std::vector<TE> args;
  int nargs = int(uni(1, 2));
  for (int i = 0; i < nargs; ++i) {
    P.push_back(coin(0.6) ? t : pick_dtype());
    args.push_back(gen_shaped(S, P.back(), 1));
  }
  Lam L;
  L.types = P;
  L.names = {"a", "b"};
  L.names.resize(P.size());
  L.unsafe_div = true;
  ScalarOp op = pick(kDivOps);
  std::string num = sx(L, t, 1);
  std::string den = sx(L, t, 1);
  std::string f = "fn(" + L.names[0] + (P.size() > 1 ? ", " + L.names[1] : "") + ") => " + sop(op, {num, den});
  std::string s = "map(" + f;
  for (const TE& a : args) s += ", " + a.text;
  bind(s + ")", {t, S});
}

/// A gather through an index cast from floats: huge, infinite or simply too large values are ⊥.
void Gen::fail_risky_gather() {
  Shape sh{uni(1, o_.max_extent)};
  DType it = coin(0.7) ? DType::I64 : DType::I32;
  DType ft = pick_float();
  TE src = gen_shaped(sh, ft, 1);
  std::string scale = coin(0.5) ? "a" : std::string("mul(a, ") + (coin(0.5) ? "2.0" : "4.0") + ")";
  Sym x;
  x.risky = true;
  bind("map(fn(a) => cast(" + scale + ", " + dt_text(it) + "), " + src.text + ")", {it, sh}, x);
  Sym I = syms_.back();
  Shape S = rand_shape(rand_rank(1), std::max<int64_t>(1, kMaxElements / sh[0]));
  DType t = pick_dtype();
  TE base = gen_shaped(S, t, 1);
  int64_t d = int64_t(pick(S.size()));
  Shape out = S;
  out.erase(out.begin() + d);
  out.insert(out.begin() + d, I.ty.shape.begin(), I.ty.shape.end());
  bind("gather(" + base.text + ", " + std::to_string(d) + ", " + I.name + ")", {t, out});
}

/// A general view with one component out of bounds.
void Gen::fail_oob_view() {
  TE e = gen_any(1);
  if (sem::num_elements(e.ty.shape) == 0 || e.ty.shape.empty()) {
    Shape S0 = rand_shape(rand_rank(1));
    DType t = pick_dtype();
    e = gen_shaped(S0, t, 1);
  }
  Shape S = rand_shape(rand_rank(1));
  TE v = general_view(e, S, true);
  bind(v.text, v.ty);
}

void Gen::make_outputs() {
  std::vector<std::string> outs;
  for (size_t i = 0; i < binds_.size(); ++i)
    if (coin(0.3) || (i + 1 == binds_.size() && coin(0.8))) outs.push_back(binds_[i].sym.name);
  if (outs.empty()) outs.push_back(pick(binds_).sym.name);
  if (coin(0.02)) outs.push_back(syms_[0].name);  // an input, output as is
  for (size_t i = outs.size(); i > 1; --i)
    if (coin(0.3)) std::swap(outs[i - 1], outs[pick(i)]);
  if (outs.size() > 1 && coin(0.2)) {
    // two output statements
    size_t cut = size_t(uni(1, int64_t(outs.size()) - 1));
    lines_.push_back("output " + join(outs, 0, cut));
    lines_.push_back("output " + join(outs, cut, outs.size()));
  } else {
    lines_.push_back("output " + join(outs, 0, outs.size()));
  }
}

}  // namespace generator

std::string generate_program_text(uint64_t seed, const GenOptions& opt) { return generator::Gen(seed, opt).run(); }

sem::Program generate_program(uint64_t seed, const GenOptions& opt) {
  std::string text = generate_program_text(seed, opt);
  sem::ParseResult r = sem::parse_program(text, "<generated seed " + std::to_string(seed) + ">");
  if (auto* d = std::get_if<sem::Diag>(&r)) {
    STAX_CHECK(false) << "generated program does not parse: " << d->str() << "\n" << text;
  }
  return std::get<sem::Program>(std::move(r));
}

}  // namespace stax::oracle
