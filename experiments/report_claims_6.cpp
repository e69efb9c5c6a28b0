// The claims of section 6 (lowering, the loop-level IR, its semantics and
// the transforms' correctness) for `stax experiment all`.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/lower.h"
#include "experiments/report.h"
#include "oracle/checker.h"
#include "oracle/error_bound/error_bound.h"
#include "semantics/input_gen.h"
#include "proofs/obligation.h"
#include "semantics/input_gen.h"
#include "semantics/parser.h"
#include "semantics/printer.h"
#include "semantics/program_obligations.h"
#include "transforms/transform.h"

namespace stax::experiments {

namespace {

using json = nlohmann::json;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

compiler::Device device(const std::string& spec) {
  auto d = compiler::parse_device(spec);
  if (auto* e = std::get_if<std::string>(&d)) throw std::runtime_error(*e);
  return std::get<compiler::Device>(d);
}

compiler::Graph graph_file(const ReportContext& ctx, const std::string& file) {
  auto g = compiler::read_graph(ctx.opt.examples_dir + "/" + file);
  if (auto* e = std::get_if<compiler::GraphError>(&g)) throw std::runtime_error(e->str());
  return std::get<compiler::Graph>(g);
}

compiler::Graph graph_json(const json& j) {
  auto g = compiler::parse_graph(j.dump(), "<report>");
  if (auto* e = std::get_if<compiler::GraphError>(&g)) throw std::runtime_error(e->str());
  return std::get<compiler::Graph>(g);
}

compiler::Lowered lower(const compiler::Graph& g, const std::string& dev, bool eager = false) {
  auto l = compiler::lower_graph(g, {device(dev), eager});
  if (auto* e = std::get_if<compiler::GraphError>(&l)) throw std::runtime_error(e->str());
  return std::get<compiler::Lowered>(l);
}

sem::Program parse(const std::string& text) {
  auto r = sem::parse_program(text, "<report>");
  if (auto* d = std::get_if<sem::Diag>(&r)) throw std::runtime_error("report program does not parse: " + d->message);
  return std::get<sem::Program>(r);
}

sem::Program parse_file(const std::string& path) {
  auto r = sem::parse_file(path);
  if (auto* d = std::get_if<sem::Diag>(&r)) throw std::runtime_error(path + ": " + d->message);
  return std::get<sem::Program>(r);
}

std::string status_word(const oracle::Verdict& v) {
  switch (v.status) {
    case oracle::Status::Verified: return "verified";
    case oracle::Status::Counterexample: return "counterexample";
    default: return "not checkable";
  }
}

/// `stax check`'s verdict of a pipeline: "<class> verified" etc.
std::string check_pipeline(const sem::Program& p, const std::string& spec, int trials = 8) {
  auto steps = xform::parse_pipeline(spec);
  if (auto* e = std::get_if<std::string>(&steps)) throw std::runtime_error(*e);
  oracle::Verdict v = oracle::check_transform(p, std::get<std::vector<xform::Step>>(steps), oracle::CheckOptions{trials, 1});
  return std::string(xform::class_name(v.cls)) + " " + status_word(v);
}

std::string checked(const compiler::Lowered& eager, const compiler::Lowered& l, int trials = 4) {
  return status_word(oracle::check_programs(eager.program, l.program, l.cls, oracle::CheckOptions{trials, 7}));
}

ClaimOutcome not_checkable(const std::string& why) { return {"", why, ""}; }

std::string first_let(const std::string& text) {
  std::string let = text.substr(std::min(text.size(), text.find("let ")));
  return let.substr(0, let.find('\n'));
}

ClaimOutcome listing_6_1(ReportContext&) {
  json g = {{"inputs", {{{"name", "a"}, {"dtype", "f32"}, {"shape", {64, 1}}}, {{"name", "b"}, {"dtype", "f32"}, {"shape", {128}}}}},
            {"nodes", {{{"name", "s"}, {"op", "add.Tensor"}, {"args", {"a", "b"}}},
                       {{"name", "m"}, {"op", "mul.Scalar"}, {"args", {"s", 2}}}}},
            {"outputs", {"m"}}};
  compiler::Lowered l = lower(graph_json(g), "cpu");
  std::string text = sem::print_program(l.program);
  const sem::TensorType* t = l.program.type_of("m");
  std::string ours = "output " + (t ? sem::type_str(*t) : "?") + ", " + std::to_string(l.program.bindings.size()) +
                     " binding(s), scalar 2 a constant: " + (has(text, "2.0") ? "yes" : "no");
  std::string let = text.substr(text.find("let "));
  return {ours, "", "a f32[64, 1] + b f32[128], then * 2, lowered on cpu: " + let.substr(0, let.find('\n'))};
}

ClaimOutcome promotion_6_2(ReportContext&) {
  auto out_type = [](const std::string& op, const std::vector<std::string>& dtypes, json extra = json()) {
    json inputs = json::array(), args = json::array();
    for (size_t i = 0; i < dtypes.size(); ++i) {
      std::string n = std::string(1, char('a' + i));
      inputs.push_back({{"name", n}, {"dtype", dtypes[i]}, {"shape", {8}}});
      args.push_back(n);
    }
    if (!extra.is_null()) args.push_back(extra);
    json g = {{"inputs", inputs}, {"nodes", {{{"name", "r"}, {"op", op}, {"args", args}}}}, {"outputs", {"r"}}};
    compiler::Lowered l = lower(graph_json(g), "cpu", true);
    const sem::TensorType* t = l.program.type_of("r");
    return std::make_pair(t ? std::string(sem::dtype_name(t->dtype)) : std::string("?"), sem::print_program(l.program));
  };
  std::vector<std::string> parts;
  parts.push_back("i32+f32 -> " + out_type("add.Tensor", {"i32", "f32"}).first);
  parts.push_back("i32/i32 -> " + out_type("div.Tensor", {"i32", "i32"}).first);
  parts.push_back("sqrt(i64) -> " + out_type("sqrt.default", {"i64"}).first);
  parts.push_back("f32<f32 -> " + out_type("lt.Tensor", {"f32", "f32"}).first);
  auto half = out_type("add.Tensor", {"f16", "f16"});
  parts.push_back("f16+f16 -> " + half.first);
  return {join(parts, "; "), "",
          "eager lowering of one-node graphs; f16 arithmetic computes in f32 and rounds once on the store (the .stx "
          "convention for half tags): " + first_let(half.second)};
}

ClaimOutcome listing_6_2(ReportContext& ctx) {
  compiler::Lowered l = lower(graph_file(ctx, "example_1_1.json"), "cpu");
  std::string text = sem::print_program(l.program);
  bool one = l.program.bindings.size() == 1;
  std::string b = one ? text.substr(text.find("let ")) : text;
  if (auto nl = b.find('\n'); nl != std::string::npos) b = b.substr(0, nl);
  compiler::Lowered eager = lower(graph_file(ctx, "example_1_1.json"), "cpu", true);
  return {std::to_string(l.program.bindings.size()) + " buffer besides the inputs: a sum over [128] of relu(a + b) * 2",
          "", b + "; eager vs policy: " + checked(eager, l)};
}

ClaimOutcome figure_6_1(ReportContext& ctx) {
  compiler::Lowered l = lower(graph_file(ctx, "example_1_1.json"), "cpu");
  std::vector<std::string> inl, real;
  for (const compiler::Decision& d : l.decisions) (d.realized ? real : inl).push_back(d.node);
  return {"inlined: " + join(inl, ", ") + "; realized: " + join(real, ", "), "", "compiler::lower_graph's decisions"};
}

ClaimOutcome corollary_6_1(ReportContext&) {
  sem::Program p = parse(
      "input x : f32[64, 32]\n"
      "let u : f32[64, 32] = map(fn(a) => mul(add(a, 1.0), 3.0), x)\n"
      "let v : f32[32, 64] = map(fn(a) => sub(a, 0.5), permute(u, [1, 0]))\n"
      "output v\n");
  return {check_pipeline(p, "fuse-maps"), "", "`stax check` of map(g, view(map(f, x))) under fuse-maps (an inline program)"};
}

ClaimOutcome proposition_6_2(ReportContext& ctx) {
  sem::Program p = parse_file(ctx.opt.examples_dir + "/../example_6_1.stx");
  return {"example_6_1.stx: " + check_pipeline(p, "compose-views"), "",
          "`stax check examples/example_6_1.stx --transform compose-views`: the transpose's strides (1, 256)"};
}

ClaimOutcome example_6_1(ReportContext& ctx) {
  compiler::Lowered l = lower(graph_file(ctx, "example_6_1.json"), "gpu");
  std::string text = compiler::lowered_text(l, device("gpu"));
  bool idx = has(text, "load primals_1[i0 + 256*i1]; load primals_2[512*i0 + i1]");
  compiler::Lowered eager = lower(graph_file(ctx, "example_6_1.json"), "gpu", true);
  return {idx ? "x read at i0 + 256*i1, y at 512*i0 + i1" : "other indices", "",
          "`stax lower examples/graphs/example_6_1.json --device gpu`; eager vs policy: " + checked(eager, l)};
}

ClaimOutcome listing_6_3(ReportContext& ctx) {
  compiler::Lowered l = lower(graph_file(ctx, "example_6_1.json"), "gpu");
  std::string text = compiler::lowered_text(l, device("gpu"));
  bool layout = has(text, "layout add: output, fixed layout size [256, 512] stride [512, 1]");
  return {std::to_string(l.program.bindings.size()) + " buffer, " +
              (layout ? "size [256, 512] stride [512, 1]" : "another layout"),
          "", "`stax lower examples/graphs/example_6_1.json --device gpu`"};
}

ClaimOutcome definition_6_3(ReportContext&) {
  sem::Program p = parse("input x : f32[1000]\nlet m : f32[] = red(max, -inf, [1000], x)\noutput m\n");
  sem::Program q = parse("input x : f32[1000]\nlet m : f32[] = red(min, inf, [1000], x)\noutput m\n");
  return {"max: " + check_pipeline(p, "pairwise") + "; min: " + check_pipeline(q, "split-reduction:k=7"), "",
          "max/min are IEEE maximum/minimum (docs/design.md §3), associative and commutative in floats with identities -inf, "
          "+inf: reassociating them is exact"};
}

ClaimOutcome bound(ReportContext& ctx, const std::string& spec, const std::string& formula) {
  const int64_t n = ctx.opt.quick ? 1024 : 16384;
  sem::Program p =
      parse("input x : f32[" + std::to_string(n) + "]\nlet s : f32[] = red(sum, 0.0, [" + std::to_string(n) + "], x)\noutput s\n");
  if (!spec.empty()) {
    auto steps = xform::parse_pipeline(spec);
    if (auto* e = std::get_if<std::string>(&steps)) throw std::runtime_error(*e);
    xform::Context xc;
    p = xform::run_pipeline(p, std::get<std::vector<xform::Step>>(steps), xc).program;
  }
  sem::Inputs in = sem::generate_inputs(p, sem::InputKind::Uniform, 1);
  oracle::BoundReport r = oracle::analyze_bounds(p, in);
  if (r.error) return {"", *r.error, ""};
  const oracle::BoundRow* row = nullptr;
  for (const auto& x : r.rows)
    if (x.output) row = &x;
  if (!row) return {"no output reduction", "", ""};
  int64_t k = int64_t(std::llround(std::sqrt(double(n))));
  int64_t want = formula == "seq" ? n - 1 : formula == "split" ? (n / k - 1) + (k - 1) : int64_t(std::ceil(std::log2(double(n))));
  std::ostringstream note;
  note.precision(3);
  note << "n = " << n << (formula == "split" ? ", k = " + std::to_string(k) : "") << ": coefficient " << row->max_depth
       << ", formula " << want << "; measured/bound " << row->ratio << " on uniform(0,1) input; " << row->higham;
  bool ok = row->max_depth == want && row->ratio <= 1.0;
  return {ok ? "coefficient = formula, error within the bound" : "coefficient " + std::to_string(row->max_depth) + " vs " +
                                                                     std::to_string(want) + ", ratio " + std::to_string(row->ratio),
          "", note.str()};
}

ClaimOutcome ordering_6_5(ReportContext& ctx) {
  int rc = ctx.run_experiment("reduction-bounds");
  std::error_code ec;
  std::filesystem::copy_file(ctx.opt.out_dir + "/reduction-bounds/reduction_bounds.png",
                             ctx.figures_dir + "/reduction_error_vs_n.png",
                             std::filesystem::copy_options::overwrite_existing, ec);
  std::ifstream log(ctx.opt.out_dir + "/reduction-bounds/log.txt");
  std::string line, by_bound;
  while (std::getline(log, line))
    if (has(line, "by bound:")) by_bound = line.substr(line.find("holds"));
  return {rc == 0 ? "every measured error within its bound" : "a bound was exceeded (exit " + std::to_string(rc) + ")", "",
          "experiment reduction-bounds (five orders, three data sets, n = 2^4.." + std::to_string(ctx.opt.max_log2n) +
              "; plot reduction-bounds/reduction_bounds.png): pairwise < split sqrt(n) < sequential by bound " + by_bound};
}

ClaimOutcome algorithm_6_1(ReportContext&) {
  compiler::Device d = device("gpu:sm=132");
  std::string why;
  int64_t k = compiler::split_segments(16384, 64, d, &why);
  return {"k = " + std::to_string(k), "", why};
}

ClaimOutcome algorithm_6_1_threshold(ReportContext&) {
  // The prose: no split only when n >= 2*32*S = 8448; the algorithm: n >= 2S = 264.
  compiler::Device d = device("gpu:sm=132");
  std::string why;
  int64_t k = compiler::split_segments(16384, 300, d, &why);
  return {k > 1 ? "n = 300: split" : "n = 300: no split", "", "compiler::split_segments(16384, 300, S = 132): " + why};
}

ClaimOutcome example_6_2(ReportContext& ctx) {
  compiler::Lowered l = lower(graph_file(ctx, "example_6_2.json"), "gpu:sm=132");
  std::string text = compiler::lowered_text(l, device("gpu:sm=132"));
  std::vector<std::string> parts;
  parts.push_back(has(text, "k = ceil(16384 / (32 * 256)) = 2") ? "k = ceil(16384 / (32 * 256)) = 2" : "k != 2");
  parts.push_back(has(text, "red(sum, -0.0, [8192]") && has(text, "f32[64, 2]") ? "partials f32[64, 2] over [8192]"
                                                                                : "other partials");
  parts.push_back(has(text, "load primals_1[16384*i0 + 8192*i1 + r]") ? "index 16384*i0 + 8192*i1 + r" : "other index");
  compiler::Lowered eager = lower(graph_file(ctx, "example_6_2.json"), "gpu:sm=132", true);
  return {join(parts, "; "), "", "`stax lower examples/graphs/example_6_2.json --device gpu:sm=132`; eager vs policy (class " +
                                     std::string(xform::class_name(l.cls)) + "): " + checked(eager, l, 2)};
}

ClaimOutcome proposition_6_3(ReportContext& ctx) {
  compiler::Lowered l = lower(graph_file(ctx, "example_6_2.json"), "gpu:sm=132");
  std::string text = compiler::lowered_text(l, device("gpu:sm=132"));
  bool merged = has(text, "canonical loops x0:[128], r:R[8192]: load primals_1[8192*x0 + r]");
  oracle::Verdict v = oracle::check_programs(l.program, l.canonical, xform::SemClass::Exact, oracle::CheckOptions{2, 7});
  return {std::string(merged ? "16384*i0 + 8192*i1 merged to 8192*x0, x0 in [0, 128)" : "not merged") + "; merge-loops exact " +
              status_word(v),
          "", "`stax lower examples/graphs/example_6_2.json --device gpu:sm=132` (canonical loops)"};
}

ClaimOutcome example_6_3(ReportContext& ctx) {
  std::string t1 = compiler::lowered_text(lower(graph_file(ctx, "example_6_3_g1.json"), "cpu"), device("cpu"));
  std::string t2 = compiler::lowered_text(lower(graph_file(ctx, "example_6_3_g2.json"), "cpu"), device("cpu"));
  std::string ours = std::string("g1: ") + (has(t1, "wrap and bounds check kept") ? "wrap and check kept" : "dropped") +
                     "; g2: " + (has(t2, "(3*i0) % 128") ? "(3*i0) % 128, " : "other index, ") +
                     (has(t2, "no wrap, no check") ? "no wrap, no check" : "kept");
  return {ours, "", "`stax lower examples/graphs/example_6_3_g{1,2}.json`"};
}

ClaimOutcome int32_6_8(ReportContext& ctx) {
  std::vector<std::string> parts;
  for (const auto& [file, dev] : std::vector<std::pair<std::string, std::string>>{
           {"example_6_1.json", "gpu"}, {"example_6_2.json", "gpu:sm=132"}, {"example_6_3_g2.json", "cpu"}}) {
    std::string text = compiler::lowered_text(lower(graph_file(ctx, file), dev), device(dev));
    parts.push_back(file.substr(0, file.find('.')) + ": " + (has(text, ": 32-bit indexing") ? "32-bit" : "64-bit"));
  }
  return {join(parts, "; "), "", "the lowering's int32 obligations (every index expression and address < 2^31, Z3)"};
}

ClaimOutcome proposition_6_4(ReportContext& ctx) {
  // The interval claims (iexpr_range) of the lowered Examples 6.1-6.3 and of
  // examples/example_6_3_g2.stx, each checked by Z3 against the exact range.
  int proved = 0, other = 0, with_facts = 0;
  std::vector<sem::Program> progs;
  progs.push_back(lower(graph_file(ctx, "example_6_3_g2.json"), "cpu").program);
  progs.push_back(lower(graph_file(ctx, "example_6_1.json"), "gpu").program);
  progs.push_back(lower(graph_file(ctx, "example_6_2.json"), "gpu:sm=132").program);
  progs.push_back(parse_file(ctx.opt.examples_dir + "/../example_6_3_g2.stx"));
  for (const sem::Program& p : progs)
    for (const sem::Obligation& ob : sem::program_obligations(p)) {
      bool interval_fact = false;
      for (const std::string& f : ob.facts) interval_fact = interval_fact || has(f, "Interval analysis");
      if (ob.kind != sem::ObligationKind::Interval && !interval_fact) continue;
      proofs::ProofOptions po;
      po.tightness = false;
      bool ok = proofs::discharge(ob, po).kind == sem::ProofVerdict::Proved;
      (ok ? proved : other)++;
      if (interval_fact) ++with_facts;
    }
  std::string ours = proved == 0 ? "no interval claim found"
                     : other     ? std::to_string(other) + " interval claim(s) not proved"
                                 : "every interval claim proved by Z3";
  return {ours, "", std::to_string(proved) + " proved (" + std::to_string(with_facts) +
                        " of them in-bounds goals resting on the interval of idx, [0, 127]); the lowered Examples 6.1-6.3 "
                        "and examples/example_6_3_g2.stx (`stax prove examples/example_6_3_g2.stx`)"};
}

ClaimOutcome realization_rules(ReportContext& ctx) {
  auto chain = [](int len, int users, const std::string& exp_op) {
    json nodes = json::array();
    std::string prev = "x";
    if (!exp_op.empty()) nodes.push_back({{"name", "e"}, {"op", exp_op}, {"args", {prev}}}), prev = "e";
    for (int i = 0; i < len; ++i) {
      std::string n = "c" + std::to_string(i);
      nodes.push_back({{"name", n}, {"op", "add.Scalar"}, {"args", {prev, 1.0 + i}}});
      prev = n;
    }
    json outs = json::array();
    for (int u = 0; u < users; ++u) {
      std::string n = "u" + std::to_string(u);
      nodes.push_back({{"name", n}, {"op", "mul.Scalar"}, {"args", {prev, 2.0 + u}}});
      outs.push_back(n);
    }
    return json{{"inputs", {{{"name", "x"}, {"dtype", "f32"}, {"shape", {16, 16}}}}}, {"nodes", nodes}, {"outputs", outs}};
  };
  auto decision = [](const compiler::Lowered& l, const std::string& node) {
    for (const compiler::Decision& d : l.decisions)
      if (d.node == node) return d.realized ? d.reason.substr(0, d.reason.find(':')) : std::string("inlined");
    return std::string("?");
  };
  std::vector<std::string> parts;
  compiler::Graph flex = graph_file(ctx, "layout_flexible.json");
  parts.push_back("exp, 2 users: cpu " + decision(lower(flex, "cpu"), "u") + ", gpu " + decision(lower(flex, "gpu"), "u"));
  compiler::Graph r2 = graph_json(chain(42, 6, ""));
  parts.push_back("42 ops, 6 users: cpu " + decision(lower(r2, "cpu"), "c41"));
  compiler::Graph r3 = graph_json(chain(31, 2, ""));
  parts.push_back("31 ops, 2 users: gpu " + decision(lower(r3, "gpu"), "c30") + ", cpu " + decision(lower(r3, "cpu"), "c30"));
  json g4 = {{"inputs", json::array()}, {"nodes", json::array()}, {"outputs", {"m1", "m2"}}};
  for (int i = 0; i < 5; ++i) g4["inputs"].push_back({{"name", "x" + std::to_string(i)}, {"dtype", "f32"}, {"shape", {16}}});
  g4["nodes"].push_back({{"name", "s1"}, {"op", "add.Tensor"}, {"args", {"x0", "x1"}}});
  g4["nodes"].push_back({{"name", "s2"}, {"op", "add.Tensor"}, {"args", {"s1", "x2"}}});
  g4["nodes"].push_back({{"name", "s3"}, {"op", "add.Tensor"}, {"args", {"s2", "x3"}}});
  g4["nodes"].push_back({{"name", "s4"}, {"op", "add.Tensor"}, {"args", {"s3", "x4"}}});
  g4["nodes"].push_back({{"name", "m1"}, {"op", "mul.Scalar"}, {"args", {"s4", 2.0}}});
  g4["nodes"].push_back({{"name", "m2"}, {"op", "mul.Scalar"}, {"args", {"s4", 3.0}}});
  parts.push_back("5 buffers, 2 users: gpu " + decision(lower(graph_json(g4), "gpu"), "s4"));
  compiler::Graph k1 = graph_json(chain(0, 1, "exp.default"));
  parts.push_back("exp, 1 user: cpu " + decision(lower(k1, "cpu"), "e"));
  return {join(parts, "; "), "", "compiler::lower_graph's realization decisions on small graphs (report_claims_6.cpp)"};
}

ClaimOutcome cost_model_6_6(ReportContext&) {
  return not_checkable("the display equations of the inline / realize cost model are lost from the text; docs/design.md §7 "
                       "reconstructs T_inline - T_realize = (k-1)N(c/P + q/B) - (k+1)Nb/B, negative at k = 1, but "
                       "that is our reconstruction, not the text's formula");
}

ClaimOutcome theorem_6_1(ReportContext& ctx) {
  sem::Program p = parse_file(ctx.opt.examples_dir + "/../example_5_1_forward.stx");
  return {"inline: " + check_pipeline(p, "inline") + "; realize: " + check_pipeline(p, "realize"), "",
          "`stax check examples/example_5_1_forward.stx --transform inline` (and realize)"};
}

ClaimOutcome lemma_6_1(ReportContext& ctx) {
  sem::Program p = parse_file(ctx.opt.examples_dir + "/../example_5_1_forward.stx");
  return {"inline g into y: " + check_pipeline(p, "inline:name=g"), "", "substituting one binding: b[e/y] against let y = e; b"};
}

ClaimOutcome theorem_6_2(ReportContext&) {
  sem::Program cse = parse(
      "input x : f32[16]\nlet a : f32[16] = map(fn(v) => exp(v), x)\nlet b : f32[16] = map(fn(v) => exp(v), x)\n"
      "let c : f32[16] = map(add, a, b)\noutput c\n");
  sem::Program dce = parse(
      "input x : f32[16]\ninput n : i32[16]\nlet d : i32[16] = map(fn(v) => div(v, 0), n)\n"
      "let c : f32[16] = map(fn(v) => mul(v, 2.0), x)\noutput c\n");
  return {"(1) cse: " + check_pipeline(cse, "cse") + "; (2) dce of a binding that may fail: " + check_pipeline(dce, "dce"),
          "", "(2) with an integer division by zero removed: equivalence relaxed to refinement, as the text says"};
}

ClaimOutcome theorem_6_3(ReportContext&) {
  sem::Program p = parse("input x : f32[4096]\nlet s : f32[] = red(sum, 0.0, [4096], x)\noutput s\n");
  return {"split-reduction: " + check_pipeline(p, "split-reduction:k=64", 4) + "; pairwise: " + check_pipeline(p, "pairwise", 4) +
              "; interleave-lanes: " + check_pipeline(p, "interleave-lanes:w=16", 4),
          "", "class real: equal in the Real domain, float result within the 6.5 bound"};
}

ClaimOutcome definition_6_6(ReportContext&) {
  sem::Program a = parse("input x : f32[4]\nlet s : f32[] = red(sum, 0.0, [4], x)\noutput s\n");
  sem::Program b = parse("input x : f32[4]\nlet s : f32[] = red(sum, -0.0, [4], x)\noutput s\n");
  oracle::CheckOptions co{16, 1};
  co.prove = oracle::ProveMode::Try;
  oracle::Verdict v = oracle::check_programs(a, b, xform::SemClass::Exact, co);
  return {"init 0.0 vs -0.0: " + status_word(v), "",
          "equivalence is bit equality: the two differ only on x = [-0.0, -0.0, -0.0, -0.0]"};
}

}  // namespace

const std::vector<ReportClaim>& claims_section6() {
  static const std::vector<ReportClaim> c = {
      {"listing-6.1", "Listing 6.1", "6.2",
       "pointwise: output range by broadcasting, a loader per input, scalars become constants; no memory, no loop",
       "output f32[64, 128], 1 binding(s), scalar 2 a constant: yes", "compiler::lower_graph (pointwise)", listing_6_1},
      {"promotion-6.2", "6.2 promotion rules", "6.2",
       "default: common type; division and sqrt: integers to float; comparisons: bool; half precision computed in f32",
       "i32+f32 -> f32; i32/i32 -> f32; sqrt(i64) -> f32; f32<f32 -> bool; f16+f16 -> f16", "`stax lower G --eager`",
       promotion_6_2},
      {"table-6.1", "Table 6.1", "6.2", "the classes of lowering rules", "", "",
       [](ReportContext&) { return not_checkable("the table's rows are lost from the text (only its caption remains)"); }},
      {"listing-6.2", "Listing 6.2, Definition 6.1, Property 6.1", "6.3",
       "Example 1.1 lowers to a single Reduction buffer: sum over [128] of relu(a + b) * 2",
       "1 buffer besides the inputs: a sum over [128] of relu(a + b) * 2", "`stax lower examples/graphs/example_1_1.json`",
       listing_6_2},
      {"figure-6.1", "Figure 6.1", "6.3", "the three pointwise ops compose; only the output is realized",
       "inlined: add, relu, mul; realized: sum_0", "`stax lower examples/graphs/example_1_1.json`", figure_6_1},
      {"corollary-6.1", "Corollary 6.1", "6.9", "map_g(view_pi(map_f(x))) = map_{g o f}(view_pi(x))", "exact verified",
       "`stax check P --transform fuse-maps`", corollary_6_1},
      {"proposition-6.2", "Definition 6.2, Proposition 6.2", "6.4",
       "views are affine index maps; their composition is one set of strides and offset",
       "example_6_1.stx: exact verified", "`stax check examples/example_6_1.stx --transform compose-views`",
       proposition_6_2},
      {"example-6.1", "Example 6.1", "6.4", "x.t() + y: x read at i0 + 256*i1, y at 512*i0 + i1",
       "x read at i0 + 256*i1, y at 512*i0 + i1", "`stax lower examples/graphs/example_6_1.json --device gpu`", example_6_1},
      {"listing-6.3", "Listing 6.3", "6.4", "one buffer, FixedLayout size (256, 512) stride [512, 1]",
       "1 buffer, size [256, 512] stride [512, 1]", "`stax lower examples/graphs/example_6_1.json --device gpu`", listing_6_3},
      {"definition-6.3", "Definition 6.3", "6.5", "max and min are commutative monoids (identities -inf, +inf)",
       "max: exact verified; min: exact verified", "`stax check P --transform pairwise`", definition_6_3},
      {"bound-6.5-1", "6.5 bound (1)", "6.5", "sequential sum: |s^ - s| <= (n-1) u sum|a_i|",
       "coefficient = formula, error within the bound", "`stax bound P --random-inputs 1`",
       [](ReportContext& c) { return bound(c, "", "seq"); }},
      {"bound-6.5-2", "6.5 bound (2)", "6.5", "k segments: coefficient (n/k - 1) + (k - 1)",
       "coefficient = formula, error within the bound", "`stax bound P --transform split-reduction:k=K`",
       [](ReportContext& c) { return bound(c, c.opt.quick ? "split-reduction:k=32" : "split-reduction:k=128", "split"); }},
      {"bound-6.5-3", "6.5 bound (3)", "6.5", "pairwise tree: coefficient ceil(log2 n)",
       "coefficient = formula, error within the bound", "`stax bound P --transform pairwise`",
       [](ReportContext& c) { return bound(c, "pairwise:base=1", "pairwise"); }},
      {"ordering-6.5", "6.5 (k = sqrt(n), 16 lanes)", "6.5",
       "k ~ sqrt(n) gives ~2 sqrt(n), much less than n - 1; 16 lanes no worse than sequential; errors within bounds",
       "every measured error within its bound", "`stax experiment reduction-bounds`", ordering_6_5},
      {"algorithm-6.1", "Algorithm 6.1", "6.5", "Example 6.2's inputs (n_r 16384, n 64, S 132): k = 2", "k = 2",
       "compiler::split_segments", algorithm_6_1},
      {"algorithm-6.1-threshold", "6.5 prose vs Algorithm 6.1", "6.5",
       "prose: no split only when n >= 2*32*S (8448 at S = 132), so n = 300 outputs of 16384 would split",
       "n = 300: split", "compiler::split_segments", algorithm_6_1_threshold},
      {"example-6.2", "Example 6.2, Listing 6.4", "6.5",
       "k = 2 segments; first level [64, 2] over [8192] at 16384*i0 + 8192*i1 + r0",
       "k = ceil(16384 / (32 * 256)) = 2; partials f32[64, 2] over [8192]; index 16384*i0 + 8192*i1 + r",
       "`stax lower examples/graphs/example_6_2.json --device gpu:sm=132`", example_6_2},
      {"proposition-6.3", "Proposition 6.3", "6.8", "a_j = s_{j+1} a_{j+1}: merge the loops; 16384*i0 + 8192*i1 -> 8192*x0",
       "16384*i0 + 8192*i1 merged to 8192*x0, x0 in [0, 128); merge-loops exact verified",
       "`stax lower examples/graphs/example_6_2.json --device gpu:sm=132`", proposition_6_3},
      {"example-6.3", "Example 6.3, Listings 6.5, 6.6", "6.8",
       "g1 keeps the negative-index wrap and bounds check; g2's index (3i) mod 128 is in [0, 127]: both dropped",
       "g1: wrap and check kept; g2: (3*i0) % 128, no wrap, no check", "`stax lower examples/graphs/example_6_3_g2.json`",
       example_6_3},
      {"int32-6.8", "6.8 (index width)", "6.8",
       "when every index expression's upper bound is below 2^31, addresses are computed in 32-bit integers",
       "example_6_1: 32-bit; example_6_2: 32-bit; example_6_3_g2: 32-bit", "`stax lower G` (its int32 note)", int32_6_8},
      {"proposition-6.4", "Definition 6.4, Proposition 6.4", "6.8",
       "the interval analysis is sound: each variable's interval contains all its runtime values",
       "every interval claim proved by Z3", "`stax prove examples/example_6_3_g2.stx`", proposition_6_4},
      {"realization-6.6", "6.6 realization rules 1-4", "6.6",
       "multi-user values: rule 1 CPU exp/log/...; rule 2 CPU > 5 users near the op limit; rule 3 ops > 30 (GPU) / 50 "
       "(CPU); rule 4 > 4 buffers read; one user: inlined",
       "exp, 2 users: cpu rule 1, gpu inlined; 42 ops, 6 users: cpu rule 2; 31 ops, 2 users: gpu rule 3, cpu inlined; 5 "
       "buffers, 2 users: gpu rule 4; exp, 1 user: cpu inlined",
       "`stax lower G --device cpu|gpu`", realization_rules},
      {"cost-model-6.6", "6.6 cost model", "6.6", "T_inline - T_realize < 0 when k = 1", "", "", cost_model_6_6},
      {"definition-6.6", "Definitions 6.5, 6.6", "6.9",
       "equivalence is bitwise equality of the denotations (reductions fold left from init)",
       "init 0.0 vs -0.0: counterexample", "`stax tv A.stx B.stx --class exact`", definition_6_6},
      {"lemma-6.1", "Lemma 6.1", "6.9", "substitution: [[b]](rho[y -> [[e]]rho]) = [[b[e/y]]]rho", "inline g into y: exact verified",
       "`stax check examples/example_5_1_forward.stx --transform inline:name=g`", lemma_6_1},
      {"theorem-6.1", "Theorem 6.1", "6.9", "let y = e; b == b[e/y]: inlining and realization keep the bits",
       "inline: exact verified; realize: exact verified", "`stax check examples/example_5_1_forward.stx --transform inline`",
       theorem_6_1},
      {"theorem-6.2", "Theorem 6.2", "6.9",
       "(1) CSE and (2) DCE keep the semantics; DCE of a failing binding only refines",
       "(1) cse: exact verified; (2) dce of a binding that may fail: refines verified", "`stax check P --transform cse`",
       theorem_6_2},
      {"theorem-6.3", "Theorem 6.3", "6.9",
       "reordering a reduction keeps the real semantics (and stays within the 6.5 bound)",
       "split-reduction: real verified; pairwise: real verified; interleave-lanes: real verified",
       "`stax check P --transform split-reduction:k=64`", theorem_6_3},
  };
  return c;
}

}  // namespace stax::experiments
