// Alive-style float rewrites (docs/design.md §5, rewrite.h): both sides are typed by
// the .stx front end (each side becomes the body of a one-line map), then
// interpreted in the FPA domain below through the generic lambda evaluator
// (lambda_eval.h, §6.7: one description, many interpretations).
#include "proofs/rewrite.h"

#include <z3++.h>

#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "proofs/deadline.h"
#include "proofs/fpa_ops.h"
#include "proofs/solver_guard.h"
#include "semantics/evaluator.h"
#include "semantics/lambda_eval.h"
#include "semantics/parser.h"
#include "semantics/printer.h"

namespace stax::proofs {

using namespace sem;

namespace {

using Clock = std::chrono::steady_clock;


/// The FPA interpretation of scalar lambdas: the lambda evaluator's domain
/// over the shared scalar encoding (fpa_ops.h).
struct FpaDomain {
  using Value = std::optional<z3::expr>;
  FpaOps& ops;
  DType input_type;
  const std::vector<z3::expr>& inputs;

  Value param(size_t, size_t index, const Value&) {
    const z3::expr& x = inputs.at(index);
    return x.is_bool() ? x : ops.widen(x, input_type);  // exact widening
  }
  Value constant(size_t, const Const& k, DType tag) { return ops.constant(k, tag); }
  Value cast(size_t, const Value& v, DType from, DType to) { return ops.cast(*v, from, to); }
  Value apply(size_t, ScalarOp op, DType tag, DType operand_tag, std::span<const Value> args) {
    std::vector<z3::expr> a;
    for (const Value& v : args) a.push_back(*v);
    return ops.apply(op, tag, operand_tag, a);
  }
};

// ---- parsing the rule ----

bool is_const_word(const std::string& w) { return w == "nan" || w == "inf" || w == "true" || w == "false"; }

/// Free names of a side, in order of appearance: identifiers that are not
/// op names (followed by '('), constant words or dtype names.
void free_names(std::string_view s, std::vector<std::string>& out) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char ch = static_cast<unsigned char>(s[i]);
    if (std::isdigit(ch) || (ch == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      while (i < s.size()) {
        unsigned char d = static_cast<unsigned char>(s[i]);
        bool exp_sign = (d == '+' || d == '-') && i > 0 && std::strchr("eEpP", s[i - 1]) != nullptr;
        if (!(std::isalnum(d) || d == '.' || exp_sign)) break;
        ++i;
      }
      continue;
    }
    if (std::isalpha(ch) || ch == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' || s[j] == '.')) ++j;
      std::string w(s.substr(i, j - i));
      size_t k = j;
      while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
      bool call = k < s.size() && s[k] == '(';
      if (!call && !is_const_word(w) && !dtype_from_name(w) && std::find(out.begin(), out.end(), w) == out.end())
        out.push_back(w);
      i = j;
      continue;
    }
    ++i;
  }
}

std::string trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

struct Side {
  std::string text;
  size_t offset = 0;  ///< 0-based column of the side in the rule
  bool constant = false;
  std::optional<Lambda> fn;
  std::optional<Const> value;
};

struct Parsed {
  Program program;  ///< the inputs, then bindings `lhs` and `rhs` (replayed on the interpreter)
  Side lhs, rhs;
  std::vector<std::string> vars;
  DType result = DType::F32;
};

/// The program text for the sides; each side's text sits on a line of its own
/// (line 2k+n+2 for side k of n inputs), so a diagnostic maps back to the rule.
std::string rule_program(const std::vector<std::string>& params, DType dt, const Side* sides[2], DType const_type) {
  std::string text, names;
  for (size_t k = 0; k < params.size(); ++k) {
    text += "input " + params[k] + " : " + std::string(dtype_name(dt)) + "[]\n";
    names += (k ? ", " : "") + params[k];
  }
  for (int k = 0; k < 2; ++k) {
    std::string name = k == 0 ? "lhs" : "rhs";
    const Side* s = sides[k];
    if (!s) text += "let " + name + " = full(" + std::string(dtype_name(const_type)) + "[],\n0)\n";
    else if (s->constant) text += "let " + name + " = full(" + std::string(dtype_name(const_type)) + "[],\n" + s->text + ")\n";
    else text += "let " + name + " = map(fn(" + names + ") =>\n" + s->text + ", " + names + ")\n";
  }
  return text + "output lhs, rhs\n";
}

std::variant<Parsed, std::string> parse_rule(std::string_view rule, DType dt) {
  size_t arrow = rule.find("=>");
  if (arrow == std::string_view::npos) return std::string("<rule>:1:1: error: expected 'LHS => RHS'");
  if (size_t again = rule.find("=>", arrow + 2); again != std::string_view::npos)
    return "<rule>:1:" + std::to_string(again + 1) + ": error: a rule has one '=>'";
  Parsed p;
  auto side = [&](size_t from, size_t to) {
    Side s;
    std::string_view raw = rule.substr(from, to - from);
    s.text = trim(raw);
    size_t lead = raw.find_first_not_of(" \t\r\n");
    s.offset = from + (lead == std::string_view::npos ? 0 : lead);
    return s;
  };
  p.lhs = side(0, arrow);
  p.rhs = side(arrow + 2, rule.size());
  if (p.lhs.text.empty()) return std::string("<rule>:1:1: error: empty left-hand side");
  if (p.rhs.text.empty()) return "<rule>:1:" + std::to_string(arrow + 3) + ": error: empty right-hand side";
  // Parentheses balance within each side (the sides are parsed inside a
  // generated program, whose text must not show through a diagnostic).
  for (const Side* s : {&p.lhs, &p.rhs}) {
    std::vector<size_t> open;
    for (size_t i = 0; i < s->text.size(); ++i) {
      if (s->text[i] == '(') open.push_back(i);
      else if (s->text[i] == ')' && open.empty())
        return "<rule>:1:" + std::to_string(s->offset + i + 1) + ": error: unmatched ')'";
      else if (s->text[i] == ')') open.pop_back();
    }
    if (!open.empty()) return "<rule>:1:" + std::to_string(s->offset + open.back() + 1) + ": error: '(' is never closed";
  }
  for (Side* s : {&p.lhs, &p.rhs}) {
    std::vector<std::string> own;
    free_names(s->text, own);
    s->constant = own.empty() && s->text.find('(') == std::string::npos;
  }
  free_names(p.lhs.text, p.vars);
  free_names(p.rhs.text, p.vars);
  std::vector<std::string> params = p.vars;
  if (params.empty()) params.push_back("x");  // a map needs an operand
  auto diag = [&](const Diag& d) {
    int rel = d.loc.line - int(params.size()) - 1;  // 0, 1: lhs header/text; 2, 3: rhs
    const Side& s = rel < 2 ? p.lhs : p.rhs;
    size_t col = rel % 2 == 1 ? s.offset + size_t(std::max(d.loc.col, 1)) : s.offset + 1;
    return "<rule>:1:" + std::to_string(col) + ": error: " + d.message;
  };
  // A constant side takes the other side's dtype: type the other side first.
  DType const_type = dt;
  if (p.lhs.constant != p.rhs.constant) {
    const Side* sides[2] = {p.lhs.constant ? nullptr : &p.lhs, p.rhs.constant ? nullptr : &p.rhs};
    ParseResult r = parse_program(rule_program(params, dt, sides, dt), "<rule>");
    if (auto* d = std::get_if<Diag>(&r)) return diag(*d);
    const Program& q = std::get<Program>(r);
    const_type = q.bindings[p.lhs.constant ? 1 : 0].expr->type.dtype;
  }
  const Side* sides[2] = {&p.lhs, &p.rhs};
  ParseResult r = parse_program(rule_program(params, dt, sides, const_type), "<rule>");
  if (auto* d = std::get_if<Diag>(&r)) return diag(*d);
  p.program = std::get<Program>(std::move(r));
  for (size_t k = 0; k < 2; ++k) {
    Side& s = k == 0 ? p.lhs : p.rhs;
    const Expr& e = p.program.bindings[k].expr;
    if (const auto* m = std::get_if<MapE>(&e->p)) s.fn = m->fn;
    else if (const auto* f = std::get_if<FullE>(&e->p)) s.value = f->value;
  }
  DType tl = p.program.bindings[0].expr->type.dtype, tr = p.program.bindings[1].expr->type.dtype;
  if (tl != tr)
    return "<rule>:1:" + std::to_string(p.rhs.offset + 1) + ": error: the sides have different dtypes (" +
           std::string(dtype_name(tl)) + " and " + std::string(dtype_name(tr)) + ")";
  p.result = tl;
  return p;
}

// ---- values ----

std::string hex_bits(uint64_t bits, DType t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llx", dtype_bytes(t) * 2, static_cast<unsigned long long>(bits));
  return buf;
}

std::string value_text(uint64_t bits, DType t) {
  if (t == DType::Bool) return bits ? "true" : "false";
  return const_to_string(Const{t, bits}) + " (" + hex_bits(bits, t) + ")";
}

struct Replay {
  bool differ = false;
  uint64_t lhs = 0, rhs = 0;
};

/// Runs both sides on the reference interpreter (host libm) at the inputs.
std::optional<Replay> replay(const Parsed& p, const std::vector<uint64_t>& bits) {
  Inputs in;
  for (size_t k = 0; k < p.program.inputs.size(); ++k) {
    const Input& x = p.program.inputs[k];
    Tensor t(x.type.dtype, {});
    uint64_t b = k < bits.size() ? bits[k] : 0;
    std::memcpy(t.data.data(), &b, size_t(dtype_bytes(x.type.dtype)));  // little-endian
    in[x.name] = std::move(t);
  }
  try {
    IeeeOutcome o = eval_ieee(p.program, in);
    if (o.failure) return std::nullopt;
    const Tensor& l = *o.outputs.at("lhs");
    const Tensor& r = *o.outputs.at("rhs");
    return Replay{!element_equal(l, r, 0), l.get_bits(0), r.get_bits(0)};
  } catch (const ResourceError&) {
    return std::nullopt;
  }
}

std::string side_text(const Side& s) { return s.text; }

}  // namespace

std::variant<std::pair<std::string, std::string>, std::string> parse_rewrite(std::string_view rule, DType dtype) {
  if (!is_float(dtype)) return std::string("--dtype expects f16, bf16, f32 or f64");
  auto parsed = parse_rule(rule, dtype);
  if (auto* e = std::get_if<std::string>(&parsed)) return *e;
  const Parsed& p = std::get<Parsed>(parsed);
  auto side = [](const Side& s) { return s.fn ? print_lambda(*s.fn) : const_to_string(*s.value); };
  return std::pair{side(p.lhs), side(p.rhs)};
}

std::variant<RewriteResult, std::string> check_rewrite(std::string_view rule, const RewriteOptions& opt) {
  if (!is_float(opt.dtype)) return std::string("--dtype expects f16, bf16, f32 or f64");
  auto parsed = parse_rule(rule, opt.dtype);
  if (auto* e = std::get_if<std::string>(&parsed)) return *e;
  const Parsed& p = std::get<Parsed>(parsed);
  RewriteResult res;
  res.vars = p.vars;
  res.lhs = side_text(p.lhs);
  res.rhs = side_text(p.rhs);
  auto t0 = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
  ProofVerdict& v = res.verdict;
  unknown_on_failure(v, [&] {
    z3::context c;
    std::vector<z3::expr> inputs;
    FpaOps ops(c, opt.half_in_f32);
    FpaDomain dom{ops, opt.dtype, inputs};
    for (const Input& x : p.program.inputs) inputs.push_back(c.constant(x.name.c_str(), ops.storage_sort(x.type.dtype)));
    auto eval_side = [&](const Side& s) -> z3::expr {
      if (s.value) return ops.from_bits(s.value->bits, s.value->dtype);
      std::vector<FpaDomain::Value> params(inputs.begin(), inputs.end());
      std::vector<FpaDomain::Value> regs;
      FpaDomain::Value r = eval_lambda(*s.fn, dom, std::span<const FpaDomain::Value>(params), regs);
      DType tag = s.fn->result_type();
      return ops.narrow(*r, tag);  // the map's store rounds
    };
    z3::expr l = eval_side(p.lhs), r = eval_side(p.rhs);
    // Identical bits, NaN payloads aside. SMT-LIB has a single NaN and `=` is
    // identity on floats (so -0 ≠ +0); fp.isNaN states the NaN case explicitly.
    z3::expr same = ops.same(l, r);
    res.uninterpreted.assign(ops.uninterpreted().begin(), ops.uninterpreted().end());
    // QF_FP's solver is faster than the default on pure float goals; with
    // uninterpreted functions the default one combines the theories.
    z3::solver s = ops.uninterpreted().empty() ? z3::solver(c, "QF_FP") : z3::solver(c);
    s.add(!same);
    int unconfirmed = 0;
    for (;;) {
      z3::check_result cr;
      bool expired;
      {
        double left = double(opt.timeout_ms) - elapsed();
        Deadline deadline(left > 1 ? unsigned(left) : 1u, [&c] { c.interrupt(); });
        cr = s.check();
        expired = deadline.expired();
      }
      if (cr == z3::unsat) {
        if (unconfirmed == 0) {
          v.kind = ProofVerdict::Proved;
        } else {
          v.kind = ProofVerdict::Unknown;
          v.reason = std::to_string(unconfirmed) + " counterexample(s) under uninterpreted functions, none confirmed by the interpreter";
        }
        break;
      }
      if (cr == z3::unknown) {
        v.kind = ProofVerdict::Unknown;
        std::string why = s.reason_unknown();
        v.reason = (expired || why == "canceled" || why == "timeout") ? "timeout after " + std::to_string(int64_t(elapsed())) + " ms" : why;
        if (unconfirmed) v.reason += " (after " + std::to_string(unconfirmed) + " unconfirmed counterexample(s))";
        break;
      }
      z3::model m = s.get_model();
      std::vector<uint64_t> bits;
      res.inputs.clear();
      for (size_t k = 0; k < inputs.size(); ++k) {
        DType t = p.program.inputs[k].type.dtype;
        bits.push_back(model_bits(m, inputs[k], t));
        std::string dec = const_to_string(Const{t, bits.back()});
        res.inputs.push_back({p.program.inputs[k].name, dec, hex_bits(bits.back(), t)});
      }
      std::optional<Replay> rp = replay(p, bits);
      res.confirmed = rp && rp->differ;
      if (res.uninterpreted.empty() || res.confirmed) {
        v.kind = ProofVerdict::Refuted;
        if (!res.uninterpreted.empty()) {
          // The solver's values for exp, log, ... are fiction: show the interpreter's.
          res.lhs_value = value_text(rp->lhs, p.result);
          res.rhs_value = value_text(rp->rhs, p.result);
          v.reason = "confirmed by the interpreter (host libm); the solver treated " +
                     std::to_string(res.uninterpreted.size()) + " op(s) as uninterpreted";
        } else {
          res.lhs_value = value_text(model_bits(m, l, p.result), p.result);
          res.rhs_value = value_text(model_bits(m, r, p.result), p.result);
          if (rp && !rp->differ)
            v.reason = "the interpreter (which computes f16/bf16 in f32) gives equal results here";
        }
        std::string cx;
        for (const RewriteInput& x : res.inputs) cx += x.name + " = " + x.decimal + " (" + x.hex + "), ";
        v.counterexample = cx + "lhs = " + res.lhs_value + ", rhs = " + res.rhs_value;
        break;
      }
      // A counterexample that rests on an uninterpreted function and that the
      // interpreter does not reproduce: block these inputs, ask again.
      if (++unconfirmed >= 16) {
        v.kind = ProofVerdict::Unknown;
        v.reason = "16 counterexamples under uninterpreted functions, none confirmed by the interpreter";
        break;
      }
      z3::expr block = c.bool_val(true);
      for (size_t k = 0; k < inputs.size(); ++k)
        block = block && inputs[k] == ops.from_bits(bits[k], p.program.inputs[k].type.dtype);
      s.add(!block);
    }
  });
  v.ms = elapsed();
  return res;
}

}  // namespace stax::proofs
