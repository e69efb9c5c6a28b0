#include "oracle/checker.h"

#include <cmath>
#include <set>

#include "oracle/checker_proof.h"
#include "oracle/error_bound/error_bound.h"
#include "semantics/enclosure_domain.h"
#include "semantics/expr_util.h"
#include "semantics/parser.h"
#include "semantics/printer.h"

namespace stax::oracle {

using namespace sem;
using xform::SemClass;

std::string_view strength_name(const Verdict& v) {
  switch (v.status) {
    case Status::Verified: return v.proved ? "proved" : "tested";
    case Status::Counterexample: return "refuted";
    case Status::NotCheckable: return "not-checkable";
  }
  return "?";
}


std::optional<std::string> interface_mismatch(const Program& src, const Program& tgt) {
  auto sig = [](const Program& p, const std::string& n) { return type_str(*p.type_of(n)); };
  if (src.inputs.size() != tgt.inputs.size())
    return "source has " + std::to_string(src.inputs.size()) + " input(s), target has " + std::to_string(tgt.inputs.size());
  for (size_t i = 0; i < src.inputs.size(); ++i) {
    const Input& a = src.inputs[i];
    const TensorType* b = tgt.type_of(a.name);
    bool is_input = false;
    for (const Input& x : tgt.inputs) is_input |= x.name == a.name;
    if (!b || !is_input) return "input '" + a.name + "' of the source is not an input of the target";
    if (!(a.type == *b)) return "input '" + a.name + "' is " + type_str(a.type) + " in the source but " + type_str(*b) + " in the target";
  }
  if (src.outputs != tgt.outputs) {
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
      return s;
    };
    return "outputs differ: source has [" + list(src.outputs) + "], target has [" + list(tgt.outputs) + "]";
  }
  for (const std::string& o : src.outputs)
    if (sig(src, o) != sig(tgt, o)) return "output '" + o + "' is " + sig(src, o) + " in the source but " + sig(tgt, o) + " in the target";
  return std::nullopt;
}

namespace {

// Values of every binding with the output's shape at the index.
std::vector<std::pair<std::string, std::string>> trace(const Program& p, const Inputs& in, const Shape& shape,
                                                       const std::vector<int64_t>& index) {
  Program all = p;
  all.outputs.clear();
  for (const Binding& b : p.bindings) all.outputs.push_back(b.name);
  IeeeOutcome r = eval_ieee(all, in);
  std::vector<std::pair<std::string, std::string>> out;
  if (r.failure) return out;
  int64_t flat = 0;
  for (size_t k = 0; k < shape.size(); ++k) flat = flat * shape[k] + index[k];
  for (const Binding& b : p.bindings) {
    const auto& t = r.outputs.at(b.name);
    if (t->shape == shape && flat < t->size()) out.push_back({b.name, element_text(*t, flat)});
  }
  return out;
}

}  // namespace

std::optional<Counterexample> compare_on(const Program& src, const Program& tgt, SemClass cls, const Inputs& in,
                                         bool* src_failed) {
  if (cls == SemClass::Real) return compare_real_on(src, tgt, in, src_failed);
  IeeeOutcome a = eval_ieee(src, in);
  if (src_failed) *src_failed = a.failure.has_value();
  if (a.failure && cls != SemClass::Exact) return std::nullopt;  // refines: anything goes where P is ⊥
  IeeeOutcome b = eval_ieee(tgt, in);
  Counterexample c;
  c.inputs = in;
  if (a.failure || b.failure) {
    if (a.failure && b.failure) return std::nullopt;
    c.src_value = a.failure ? "⊥ (" + a.failure->str() + ")" : "a value";
    c.tgt_value = b.failure ? "⊥ (" + b.failure->str() + ")" : "a value";
    return c;
  }
  for (const std::string& o : src.outputs) {
    const Tensor& x = *a.outputs.at(o);
    const Tensor& y = *b.outputs.at(o);
    for (int64_t i = 0; i < x.size(); ++i) {
      if (element_equal(x, y, i)) continue;
      c.output = o;
      c.index = unflatten(x.shape, i);
      c.src_value = element_text(x, i);
      c.tgt_value = element_text(y, i);
      c.src_trace = trace(src, in, x.shape, c.index);
      c.tgt_trace = trace(tgt, in, x.shape, c.index);
      return c;
    }
  }
  return std::nullopt;
}

bool real_equal(const RVal& a, const RVal& b, DType t, long precision) {
  if (!is_float(t)) return a.i == b.i;
  if (mpfr_nan_p(a.f) || mpfr_nan_p(b.f)) return mpfr_nan_p(a.f) && mpfr_nan_p(b.f);
  if (mpfr_equal_p(a.f, b.f)) return true;  // ±0 are equal reals
  if (mpfr_inf_p(a.f) || mpfr_inf_p(b.f)) return false;
  // |a − b| ≤ 2^-(P−56)·max(|a|, |b|): the Real domain's own roundings.
  mpfr_prec_t p = mpfr_prec_t(precision) + 16;
  mpfr_t d, m;
  mpfr_init2(d, p);
  mpfr_init2(m, p);
  mpfr_sub(d, a.f, b.f, MPFR_RNDA);
  mpfr_abs(d, d, MPFR_RNDN);
  if (mpfr_cmpabs(a.f, b.f) >= 0) mpfr_abs(m, a.f, MPFR_RNDN);
  else mpfr_abs(m, b.f, MPFR_RNDN);
  mpfr_mul_2si(m, m, -(precision - 56), MPFR_RNDN);
  bool eq = mpfr_cmp(d, m) <= 0;
  mpfr_clear(d);
  mpfr_clear(m);
  return eq;
}

namespace {

std::string real_text(const RVal& v, DType t) {
  if (!is_float(t)) return std::to_string(v.i);
  char buf[128];
  mpfr_snprintf(buf, sizeof buf, "%.25Rg", v.f);
  return buf;
}

std::string fmt_e(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6e", v);
  return buf;
}

}  // namespace

namespace {

bool has_float_fold(const Expr& e) {
  return sem::any_node(e, [](const Expr& n) {
    const auto* r = std::get_if<RedE>(&n->p);
    return r && is_float(n->type.dtype) && (r->op == RedOp::Sum || r->op == RedOp::Prod);
  });
}

/// The bindings whose value depends on a float sum or product: where a
/// reassociation may legitimately change floats, and so the integers and
/// indices derived from them.
std::set<std::string> fold_dependent(const Program& p) {
  std::set<std::string> out;
  for (const Binding& b : p.bindings) {
    bool dep = has_float_fold(b.expr);
    std::vector<std::string> names;
    collect_free_names(b.expr, names);
    for (const std::string& n : names) dep |= out.count(n) > 0;
    if (dep) out.insert(b.name);
  }
  return out;
}

/// The Real domain at `prec` bits; `exact` tells whether no operation
/// rounded (MPFR's inexact flag), so that the values are the exact reals,
/// signed zeros and infinities included.
RealOutcome eval_real_exact(const Program& p, const Inputs& in, long prec, bool& exact) {
  mpfr_clear_flags();
  RealOutcome r = eval_real(p, in, prec);
  exact = !mpfr_inexflag_p() && !mpfr_overflow_p() && !mpfr_underflow_p();
  return r;
}

void note(int& count, std::string& first, const std::string& why) {
  if (count++ == 0) first = why;
}

}  // namespace

std::optional<Counterexample> compare_real_on(const Program& src, const Program& tgt, const Inputs& in,
                                              bool* src_failed, Verdict* stats, long precision) {
  IeeeOutcome a = eval_ieee(src, in);
  if (src_failed) *src_failed = a.failure.has_value();
  if (a.failure) return std::nullopt;  // where P is ⊥, anything goes
  Verdict scratch;
  Verdict& st = stats ? *stats : scratch;
  Counterexample c;
  c.inputs = in;
  BoundOptions bo;
  bo.keep_elements = true;
  BoundReport rep = analyze_bounds(tgt, in, bo);
  if (rep.error && st.unchecked.empty()) st.unchecked = *rep.error;
  if (rep.failure) {
    if (!fold_dependent(tgt).count(rep.failure->binding)) {
      c.check = "definedness";
      c.src_value = "a value";
      c.tgt_value = "⊥ (" + rep.failure->str() + ")";
      return c;
    }
    note(st.excused, st.excused_reason, rep.failure->str());
  }
  // (a) the Real semantics agree: screened with MPFR at P and 10·P bits,
  // a difference claimed only when the enclosures prove it.
  bool exact_a = false, exact_b = false;
  RealOutcome ra = eval_real_exact(src, in, precision, exact_a);
  if (!ra.failure) {
    RealOutcome rb = eval_real_exact(tgt, in, precision, exact_b);
    const bool exact = exact_a && exact_b;  // the MPFR values are the reals themselves
    const long p2 = precision * 10;
    std::optional<RealOutcome> ra2, rb2;
    std::optional<EnclosureOutcome> ea, eb;
    // Whether the enclosures decide (else the reason is noted).
    auto proven = [&]() -> bool {
      if (!ea) {
        ea = eval_enclosure(src, in, p2);
        eb = eval_enclosure(tgt, in, p2);
      }
      std::string why = ea->indeterminate ? "source: " + *ea->indeterminate
                        : eb->indeterminate ? "target: " + *eb->indeterminate
                        : ea->failure       ? "the source's enclosure is ⊥"
                                            : "";
      if (!why.empty()) note(st.indistinct, st.indistinct_reason, why);
      return why.empty();
    };
    if (rb.failure) {
      if (exact || (proven() && eb->failure)) {
        c.check = "definedness";
        c.src_value = "a value";
        c.tgt_value = "⊥ in the Real domain (" + (exact ? rb.failure : eb->failure)->str() + ")";
        return c;
      }
    } else {
      for (const std::string& o : src.outputs) {
        const RealTensor& x = *ra.outputs.at(o);
        const RealTensor& y = *rb.outputs.at(o);
        bool settled = false;
        for (int64_t i = 0; i < x.size() && !settled; ++i) {
          if (real_equal(x.data[size_t(i)], y.data[size_t(i)], x.dtype, precision)) continue;
          if (!exact) {
            if (!ra2) {
              ra2 = eval_real(src, in, p2);
              rb2 = eval_real(tgt, in, p2);
            }
            if (!ra2->failure && !rb2->failure &&
                real_equal(ra2->outputs.at(o)->data[size_t(i)], rb2->outputs.at(o)->data[size_t(i)], x.dtype, p2))
              continue;
            if (!proven() || eb->failure) {
              settled = true;  // nothing more to learn from this trial's Real domain
              break;
            }
            if (!enclosures_disjoint(ea->outputs.at(o)->data[size_t(i)], eb->outputs.at(o)->data[size_t(i)],
                                     x.dtype)) {
              note(st.indistinct, st.indistinct_reason,
                   "overlapping enclosures at " + o + index_text(unflatten(x.shape, i)));
              settled = true;
              break;
            }
          }
          c.check = "real";
          c.output = o;
          c.index = unflatten(x.shape, i);
          if (exact) {
            c.src_real = real_text(x.data[size_t(i)], x.dtype);
            c.tgt_real = real_text(y.data[size_t(i)], x.dtype);
          } else {
            c.src_real = enclosure_text(ea->outputs.at(o)->data[size_t(i)], x.dtype);
            c.tgt_real = enclosure_text(eb->outputs.at(o)->data[size_t(i)], x.dtype);
          }
          c.src_value = c.src_real + (exact ? " (real, exact: no rounding)" : " (real, enclosed)");
          c.tgt_value = c.tgt_real + (exact ? " (real, exact: no rounding)" : " (real, enclosed)");
          IeeeOutcome b = eval_ieee(tgt, in);
          if (!b.failure) c.tgt_float = element_text(*b.outputs.at(o), i);
          // Against the target's bound where the output is a reduction root:
          // the float result is as far from the source's real value as ...
          if (const BoundRow* row = rep.row(o); row && is_float(x.dtype) && !b.failure) {
            double bound = row->elem_bound[size_t(i)];
            if (!std::isnan(bound)) {
              double sh = b.outputs.at(o)->get_double(i);
              mpfr_t d;
              mpfr_init2(d, 64);
              mpfr_d_sub(d, sh, (ra2 ? *ra2 : ra).outputs.at(o)->data[size_t(i)].f, MPFR_RNDA);
              double err = std::fabs(mpfr_get_d(d, MPFR_RNDA));
              mpfr_clear(d);
              c.bound = bound;
              c.measured = err;
              c.ratio = bound > 0 ? err / bound : (err == 0 ? 0.0 : INFINITY);
              c.bound_case = row->higham;
            }
          }
          return c;
        }
        if (settled) break;
      }
    }
  }
  // (b) every reduction of the target within its bound.
  for (const BoundRow& row : rep.rows) {
    st.bound_checked += row.checked;
    st.bound_skipped += row.skipped;
    st.max_ratio = std::max(st.max_ratio, row.ratio);
    if (row.ratio <= 1.0) continue;
    c.check = "bound";
    c.output = row.name;
    c.index = row.worst_index;
    c.tgt_float = fmt_e(row.computed);
    c.tgt_value = c.tgt_float + " (float)";
    c.src_value = fmt_e(row.exact) + " (exact sum of the target's summands)";
    c.bound = row.bound;
    c.measured = row.measured;
    c.ratio = row.ratio;
    c.bound_case = row.higham;
    for (const Contribution& k : row.top)
      c.contributions.push_back(k.where + " = " + fmt_e(k.value) + " at depth " + k.depth_text + ": " + fmt_e(k.term));
    return c;
  }
  return std::nullopt;
}

std::optional<std::string> malformed(const Program& p) {
  auto r = parse_program(print_program(p), "<target>");
  if (auto* d = std::get_if<Diag>(&r)) return d->str();
  return std::nullopt;
}

Verdict check_programs(const Program& src, const Program& tgt, SemClass cls, const CheckOptions& opt) {
  Verdict v;
  v.cls = cls;
  // A transform builds IR directly; a target that does not type-check (a
  // dangling name, a shape mismatch) is a bug found before any evaluation.
  if (auto m = malformed(tgt)) {
    v.status = Status::Counterexample;
    v.message = "target program is malformed: " + *m;
    return v;
  }
  if (auto m = interface_mismatch(src, tgt)) {
    v.status = Status::Counterexample;
    v.message = "interface mismatch: " + *m;
    return v;
  }
  for (int t = 0; t < opt.trials; ++t) {
    sem::InputKind kind = sem::kInputKinds[size_t(t) % std::size(sem::kInputKinds)];
    uint64_t seed = opt.seed * 1000003ull + uint64_t(t);
    Inputs in = sem::generate_inputs(src, kind, seed);
    bool failed = false;
    auto c = cls == SemClass::Real ? compare_real_on(src, tgt, in, &failed, &v, opt.precision)
                                   : compare_on(src, tgt, cls, in, &failed);
    ++v.trials;
    v.src_failures += failed;
    if (c) {
      c->kind = kind;
      c->input_seed = seed;
      c->trial = t;
      v.status = Status::Counterexample;
      if (c->check == "real") v.message = "the real semantics differ";
      else if (c->check == "bound") v.message = "a float result exceeds its error bound";
      else v.message = c->output.empty() ? "definedness mismatch" : "value mismatch";
      v.cex = std::move(c);
      return v;
    }
  }
  // Testing refutes a wrong transform in milliseconds; the prover then
  // decides what testing cannot (a proof, or inputs testing never drew).
  if (try_proof(src, tgt, cls, opt, v)) return v;
  v.status = Status::Verified;
  if (cls == SemClass::Real && !v.unchecked.empty()) {
    v.status = Status::NotCheckable;
    v.message = "equal real semantics on " + std::to_string(v.trials) + " input set(s), but the error bounds were " +
                "not checked: " + v.unchecked;
    return v;
  }
  if (cls == SemClass::Real) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3e", v.max_ratio);
    v.message = "equal real semantics on " + std::to_string(v.trials) + " input set(s); float results within their " +
                "error bounds on " + std::to_string(v.bound_checked) + " reduction element(s), max ratio " + buf;
    if (v.bound_skipped)
      v.message += " (" + std::to_string(v.bound_skipped) + " element(s) outside the model: inf/NaN/overflow)";
    if (v.indistinct)
      v.message += "; on " + std::to_string(v.indistinct) + " input set(s) the real values were not distinguishable " +
                   "(the enclosures decide nothing: " + v.indistinct_reason + ")";
    if (v.excused)
      v.message += "; on " + std::to_string(v.excused) + " input set(s) the target was ⊥ downstream of a " +
                   "reassociable reduction, bounds not measured (" + v.excused_reason.substr(0, v.excused_reason.find('\n')) + ")";
  } else {
    v.message = "no difference on " + std::to_string(v.trials) + " input set(s)";
    if (v.proof_tried) v.message += "; not proved: " + v.proof_note;
    if (!v.shrunk_note.empty()) v.message += "; " + v.shrunk_note;
  }
  if (opt.prove == ProveMode::Require) {
    v.status = Status::NotCheckable;
    v.message = "a proof was required: " + (v.proof_note.empty() ? std::string("no proof") : v.proof_note) +
                " (testing found no difference on " + std::to_string(v.trials) + " input set(s))";
  }
  return v;
}

Verdict check_transform(const Program& src, const std::vector<xform::Step>& steps, const CheckOptions& opt,
                        int64_t max_rewrites) {
  xform::Context ctx;
  ctx.max_rewrites = max_rewrites;
  xform::Result r = xform::run_pipeline(src, steps, ctx);
  CheckOptions o = opt;
  if (!o.retarget) o.retarget = retarget_by(steps);
  Verdict v = check_programs(src, r.program, r.cls, o);
  if (v.status != Status::Counterexample || !v.cex) return v;
  // Bisect: the smallest number of rewrites after which the same inputs fail.
  int64_t lo = 0, hi = ctx.count;
  while (lo < hi) {
    int64_t mid = (lo + hi) / 2;
    xform::Context c2;
    c2.max_rewrites = mid;
    xform::Result rm = xform::run_pipeline(src, steps, c2);
    if (compare_on(src, rm.program, r.cls, v.cex->inputs)) hi = mid;
    else lo = mid + 1;
  }
  if (lo >= 1) {
    v.rewrite = lo;
    std::string tag = "#" + std::to_string(lo) + " ";
    for (const std::string& line : ctx.log)
      if (line.rfind(tag, 0) == 0) v.rewrite_text = line;
  }
  return v;
}

namespace {

std::string inputs_text(const Inputs& in, const Program& p) {
  std::string s;
  for (const Input& i : p.inputs) {
    const Tensor& t = in.at(i.name);
    s += "  " + i.name + " : " + type_str(i.type) + " = [";
    int64_t n = std::min<int64_t>(t.size(), 16);
    for (int64_t k = 0; k < n; ++k) s += (k ? ", " : "") + element_text(t, k);
    if (t.size() > n) s += ", ... (" + std::to_string(t.size()) + " elements)";
    s += "]\n";
  }
  return s;
}

std::string indent(const std::string& text) {
  std::string s = "  ";
  for (char c : text) {
    s += c;
    if (c == '\n') s += "  ";
  }
  while (!s.empty() && (s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::string format_verdict(const Verdict& v, const Program& src, const Program& tgt, const std::string& what) {
  std::string s;
  if (v.status == Status::Verified) {
    return std::string(v.proved ? "PROVED" : "TESTED") + " (" + std::string(xform::class_name(v.cls)) + "): " + what + ": " + v.message +
           (v.src_failures ? " (source ⊥ on " + std::to_string(v.src_failures) + ")" : "") + "\n";
  }
  if (v.status == Status::NotCheckable) return "NOT CHECKABLE (" + std::string(xform::class_name(v.cls)) + "): " + v.message + "\n";
  s += "REFUTED: " + v.message + " (class " + std::string(xform::class_name(v.cls)) + ")\n";
  s += "check: " + what + "\n";
  if (v.rewrite) s += "first failing rewrite: " + v.rewrite_text + " (replay with --max-rewrites " + std::to_string(*v.rewrite) + ")\n";
  if (v.cex) {
    const Counterexample& c = *v.cex;
    s += "\ninputs (" + std::string(sem::input_kind_name(c.kind)) + ", trial " + std::to_string(c.trial) + "):\n" + inputs_text(c.inputs, src);
    if (c.check == "real" || c.check == "bound") {
      s += "\n" + std::string(c.check == "real" ? "output " : "reduction ") + c.output + " at index " +
           index_text(c.index) + ":\n";
      s += "  source: " + c.src_value + "\n  target: " + c.tgt_value + "\n";
      if (!c.tgt_float.empty() && c.check == "real") s += "  target (float): " + c.tgt_float + "\n";
      if (c.bound) {
        s += "  target's error bound: " + fmt_e(*c.bound) + (c.bound_case.empty() ? "" : " (" + c.bound_case + ")") +
             "\n";
        s += std::string(c.check == "real" ? "  |target float - source real| = " : "  |float - exact| = ") +
             fmt_e(*c.measured) + ", ratio " + fmt_e(*c.ratio) + (*c.ratio > 1 ? " > 1" : "") + "\n";
      }
      if (!c.contributions.empty()) {
        s += "  largest contributions to the bound:\n";
        for (const std::string& k : c.contributions) s += "    " + k + "\n";
      }
    } else if (!c.output.empty()) {
      s += "\noutput " + c.output + " at index " + index_text(c.index) + ":\n";
      s += "  source: " + c.src_value + "\n  target: " + c.tgt_value + "\n";
      if (!c.src_trace.empty()) {
        s += "\nsource values at that index:\n";
        for (const auto& [n, val] : c.src_trace) s += "  " + n + " = " + val + "\n";
      }
      if (!c.tgt_trace.empty()) {
        s += "target values at that index:\n";
        for (const auto& [n, val] : c.tgt_trace) s += "  " + n + " = " + val + "\n";
      }
    } else {
      s += "\nsource: " + c.src_value + "\ntarget: " + c.tgt_value + "\n";
    }
  }
  s += "\nsource program:\n" + indent(print_program(src)) + "target program:\n" + indent(print_program(tgt));
  return s;
}

nlohmann::json verdict_json(const Verdict& v, const Program& src, const Program& tgt, const std::string& what) {
  nlohmann::json j;
  j["verdict"] = strength_name(v);
  if (v.proof_tried) {
    j["proof"] = {{"proved", v.proved}, {"ms", v.proof_ms}, {"terms", v.proof_terms}, {"note", v.proof_note}};
    if (!v.shrunk.empty() || !v.shrunk_note.empty()) {
      nlohmann::json fam = nlohmann::json::array();
      for (const ShrunkCheck& c : v.shrunk)
        fam.push_back({{"max_extent", c.bound}, {"shapes", c.shapes}, {"verdict", c.verdict}, {"note", c.note}, {"ms", c.ms}});
      j["proof"]["shrunk"] = {{"family", fam}, {"note", v.shrunk_note}};
    }
  }
  j["class"] = xform::class_name(v.cls);
  j["check"] = what;
  j["message"] = v.message;
  j["trials"] = v.trials;
  j["source_failures"] = v.src_failures;
  if (v.cls == SemClass::Real) {
    j["bound_elements_checked"] = v.bound_checked;
    j["bound_elements_outside_model"] = v.bound_skipped;
    j["max_ratio"] = std::isfinite(v.max_ratio) ? nlohmann::json(v.max_ratio) : nlohmann::json("inf");
  }
  if (v.rewrite) {
    j["rewrite"] = *v.rewrite;
    j["rewrite_text"] = v.rewrite_text;
  }
  if (v.cex) {
    const Counterexample& c = *v.cex;
    nlohmann::json cj;
    cj["input_kind"] = sem::input_kind_name(c.kind);
    cj["input_seed"] = c.input_seed;
    cj["trial"] = c.trial;
    nlohmann::json ins = nlohmann::json::object();
    for (const auto& [name, t] : c.inputs) {
      nlohmann::json vals = nlohmann::json::array();
      for (int64_t k = 0; k < std::min<int64_t>(t.size(), 64); ++k) vals.push_back(element_text(t, k));
      ins[name] = {{"type", type_str({t.dtype, t.shape})}, {"values", vals}};
    }
    cj["inputs"] = ins;
    if (!c.output.empty()) {
      cj["output"] = c.output;
      cj["index"] = c.index;
    }
    cj["source_value"] = c.src_value;
    cj["target_value"] = c.tgt_value;
    if (!c.check.empty()) cj["check"] = c.check;
    if (!c.src_real.empty()) cj["source_real"] = c.src_real;
    if (!c.tgt_real.empty()) cj["target_real"] = c.tgt_real;
    if (!c.tgt_float.empty()) cj["target_float"] = c.tgt_float;
    auto num = [](double x) -> nlohmann::json {
      if (std::isnan(x)) return "nan";
      if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
      return x;
    };
    if (c.bound) cj["bound"] = num(*c.bound);
    if (c.measured) cj["measured"] = num(*c.measured);
    if (c.ratio) cj["ratio"] = num(*c.ratio);
    if (!c.bound_case.empty()) cj["bound_case"] = c.bound_case;
    if (!c.contributions.empty()) cj["contributions"] = c.contributions;
    auto tr = [](const auto& t) {
      nlohmann::json a = nlohmann::json::object();
      for (const auto& [n, val] : t) a[n] = val;
      return a;
    };
    cj["source_trace"] = tr(c.src_trace);
    cj["target_trace"] = tr(c.tgt_trace);
    j["counterexample"] = cj;
  }
  j["source"] = print_program(src);
  j["target"] = print_program(tgt);
  return j;
}

}  // namespace stax::oracle
