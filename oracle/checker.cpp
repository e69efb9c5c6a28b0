#include "oracle/checker.h"

#include "semantics/parser.h"
#include "semantics/printer.h"

namespace stax::oracle {

using namespace sem;
using xform::SemClass;

std::string_view status_name(Status s) {
  switch (s) {
    case Status::Verified: return "verified";
    case Status::Counterexample: return "counterexample";
    case Status::NotCheckable: return "not checkable yet";
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
  if (cls == SemClass::Real) {
    v.status = Status::NotCheckable;
    v.message = "class real needs the error-bound checker, which is not available yet; nothing was verified";
    return v;
  }
  for (int t = 0; t < opt.trials; ++t) {
    InputKind kind = kInputKinds[size_t(t) % std::size(kInputKinds)];
    uint64_t seed = opt.seed * 1000003ull + uint64_t(t);
    Inputs in = generate_inputs(src, kind, seed);
    bool failed = false;
    auto c = compare_on(src, tgt, cls, in, &failed);
    ++v.trials;
    v.src_failures += failed;
    if (c) {
      c->kind = kind;
      c->input_seed = seed;
      c->trial = t;
      v.status = Status::Counterexample;
      v.message = c->output.empty() ? "definedness mismatch" : "value mismatch";
      v.cex = std::move(c);
      return v;
    }
  }
  v.status = Status::Verified;
  v.message = "no difference on " + std::to_string(v.trials) + " input set(s)";
  return v;
}

Verdict check_transform(const Program& src, const std::vector<xform::Step>& steps, const CheckOptions& opt,
                        int64_t max_rewrites) {
  xform::Context ctx;
  ctx.max_rewrites = max_rewrites;
  xform::Result r = xform::run_pipeline(src, steps, ctx);
  Verdict v = check_programs(src, r.program, r.cls, opt);
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
    return "VERIFIED (" + std::string(xform::class_name(v.cls)) + "): " + what + ": " + v.message +
           (v.src_failures ? " (source ⊥ on " + std::to_string(v.src_failures) + ")" : "") + "\n";
  }
  if (v.status == Status::NotCheckable) return "NOT CHECKABLE (" + std::string(xform::class_name(v.cls)) + "): " + v.message + "\n";
  s += "ERROR: " + v.message + " (class " + std::string(xform::class_name(v.cls)) + ")\n";
  s += "check: " + what + "\n";
  if (v.rewrite) s += "first failing rewrite: " + v.rewrite_text + " (replay with --max-rewrites " + std::to_string(*v.rewrite) + ")\n";
  if (v.cex) {
    const Counterexample& c = *v.cex;
    s += "\ninputs (" + std::string(input_kind_name(c.kind)) + ", trial " + std::to_string(c.trial) + "):\n" + inputs_text(c.inputs, src);
    if (!c.output.empty()) {
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
  j["verdict"] = status_name(v.status);
  j["class"] = xform::class_name(v.cls);
  j["check"] = what;
  j["message"] = v.message;
  j["trials"] = v.trials;
  j["source_failures"] = v.src_failures;
  if (v.rewrite) {
    j["rewrite"] = *v.rewrite;
    j["rewrite_text"] = v.rewrite_text;
  }
  if (v.cex) {
    const Counterexample& c = *v.cex;
    nlohmann::json cj;
    cj["input_kind"] = input_kind_name(c.kind);
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
