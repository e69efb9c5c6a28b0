// §5.2 (Theorem 5.1) and 5.7 (Proposition 5.2) on the example graphs:
// op counts of the lowered programs (the Count domain, autodiff/jacobian.h),
// as `stax grad --cost` and `stax jvp --jacobian` print them.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "autodiff/jacobian.h"
#include "experiments/comparison.h"

namespace stax::experiments {

namespace {

std::vector<std::string> example_graphs(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

std::string fixed(double v, int digits = 4) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  return b;
}

/// Example 5.1 at a size whose full Jacobian is quick (x 4x8, W 8x8).
std::optional<compiler::Graph> small_example_5_1(const std::string& dir) {
  auto g = compiler::read_graph(dir + "/example_5_1_forward.json");
  if (!std::holds_alternative<compiler::Graph>(g)) return std::nullopt;
  compiler::Graph s = std::get<compiler::Graph>(g);
  for (auto& in : s.inputs)
    for (int64_t& d : in.type.shape) d = d == 32 ? 4 : d == 64 ? 8 : d;
  s.file += " (x 4x8, W 8x8)";
  return s;
}

}  // namespace

int theorem_5_1(const Options& o, std::ostream& log) {
  std::vector<ComparisonRow> rows;
  auto files = example_graphs(o.examples_dir);
  if (files.empty()) {
    o.error_stream(log) << "error: no example graphs in " << o.examples_dir << "\n";
    return 2;
  }
  for (const std::string& f : files) {
    auto g = compiler::read_graph(f);
    if (auto* e = std::get_if<compiler::GraphError>(&g)) {
      rows.push_back({stem(f), "ratio", "", "", "not applicable", e->str()});
      continue;
    }
    auto c = autodiff::gradient_cost(std::get<compiler::Graph>(g));
    if (auto* e = std::get_if<compiler::GraphError>(&c)) {
      rows.push_back({stem(f), "(forward + backward) / forward", "<= 1 + max(4, c_Omega + 2)", "", "not applicable",
                      "not differentiable: " + e->message});
      continue;
    }
    const autodiff::CostReport& r = std::get<autodiff::CostReport>(c);
    double bound = o.wrong_expectation ? 1.0 : r.bound;
    std::string note = "W = " + std::to_string(r.forward) + ", forward + backward = " + std::to_string(r.joint) +
                       ", c_Omega = " + std::to_string(r.c_omega) + (r.omega_ops.empty() ? "" : " (" + r.omega_ops + ")");
    if (r.ratio > bound && std::get<compiler::Graph>(g).nodes.size() > 0) {
      for (const auto& n : std::get<compiler::Graph>(g).nodes)
        if (n.op == "index.Tensor") {
          note += "; index.Tensor's adjoint (a scatter-add) is written as a contraction with a one-hot matrix, "
                  "|index| x |x| ops: the graph format has no scatter-add";
          break;
        }
    }
    rows.push_back(compare_row(stem(f), "(forward + backward) / forward", "<= " + fixed(bound), fixed(r.ratio),
                               r.ratio <= bound, note));
  }
  return write_comparison(o, "theorem-5-1", "Theorem 5.1: the cost of the gradient",
                          "`stax grad --cost` on every graph of " + o.examples_dir +
                              ": op counts of the eager lowerings (Count domain), every float input differentiated.",
                          rows, log);
}

int proposition_5_2(const Options& o, std::ostream& log) {
  constexpr int64_t kMaxEvaluations = 300;  // keeps the experiment to seconds (operators.json: 576, ~11 s)
  std::vector<ComparisonRow> rows;
  std::vector<std::pair<std::string, compiler::Graph>> graphs;
  for (const std::string& f : example_graphs(o.examples_dir)) {
    auto g = compiler::read_graph(f);
    if (auto* e = std::get_if<compiler::GraphError>(&g)) {
      rows.push_back({stem(f), "J", "", "", "not applicable", e->str()});
      continue;
    }
    graphs.push_back({stem(f), std::get<compiler::Graph>(g)});
  }
  if (auto s = small_example_5_1(o.examples_dir)) graphs.push_back({"example_5_1_forward (x 4x8, W 8x8)", *s});
  if (graphs.empty()) {
    o.error_stream(log) << "error: no example graphs in " << o.examples_dir << "\n";
    return 2;
  }
  for (const auto& [name, g] : graphs) {
    auto jv = autodiff::build_jvp_graph(g);
    auto jg = autodiff::build_joint_graph(g);
    if (auto* e = std::get_if<compiler::GraphError>(&jv)) {
      rows.push_back({name, "n*W_jvp vs m*W_vjp", "", "", "not applicable", "not differentiable: " + e->message});
      continue;
    }
    if (auto* e = std::get_if<compiler::GraphError>(&jg)) {
      rows.push_back({name, "n*W_jvp vs m*W_vjp", "", "", "not applicable", "not differentiable: " + e->message});
      continue;
    }
    const autodiff::JvpGraph& J = std::get<autodiff::JvpGraph>(jv);
    const autodiff::JointGraph& R = std::get<autodiff::JointGraph>(jg);
    int64_t n = 0, m = 0;
    for (const auto& in : J.graph.inputs)
      if (std::find(J.tangents.begin(), J.tangents.end(), in.name) != J.tangents.end()) n += sem::num_elements(in.type.shape);
    for (const auto& in : R.graph.inputs)
      if (sem::is_float(in.type.dtype) && std::find(R.tangents.begin(), R.tangents.end(), in.name) != R.tangents.end())
        m += sem::num_elements(in.type.shape);
    auto wf = autodiff::graph_ops(g), wj = autodiff::graph_ops(J.graph), wv = autodiff::graph_ops(R.graph);
    if (!std::holds_alternative<int64_t>(wf) || !std::holds_alternative<int64_t>(wj) || !std::holds_alternative<int64_t>(wv)) {
      rows.push_back({name, "n*W_jvp vs m*W_vjp", "", "", "not applicable", "does not lower"});
      continue;
    }
    int64_t W = std::get<int64_t>(wf), Wj = std::get<int64_t>(wj), Wv = std::get<int64_t>(wv);
    std::string counts = "n = " + std::to_string(n) + ", m = " + std::to_string(m) + ", W = " + std::to_string(W) +
                         ", W_jvp = " + std::to_string(Wj) + ", W_vjp = " + std::to_string(Wv);
    // The text: n JVPs cost O(nW), m VJPs O(mW); the mode with fewer
    // evaluations is the cheaper one. Compared when n and m differ by more
    // than the constants can hide (a factor 8 between n and m).
    std::string ours = "n*W_jvp = " + std::to_string(n * Wj) + ", m*W_vjp = " + std::to_string(m * Wv);
    bool fwd_cheaper = n * Wj < m * Wv;
    if (n >= 8 * m || m >= 8 * n) {
      bool text_fwd = n < m;
      if (o.wrong_expectation) text_fwd = !text_fwd;
      rows.push_back(compare_row(name, "cheaper full Jacobian", text_fwd ? "forward (n JVPs)" : "reverse (m VJPs)",
                                 std::string(fwd_cheaper ? "forward" : "reverse") + " (" + ours + ")", text_fwd == fwd_cheaper,
                                 counts));
    } else {
      rows.push_back({name, "cheaper full Jacobian", "O(nW) vs O(mW): n and m within a factor 8, no prediction",
                      std::string(fwd_cheaper ? "forward" : "reverse") + " (" + ours + ")", "not compared", counts});
    }
    if (n + m > kMaxEvaluations) {
      rows.push_back({name, "J by n JVPs = J by m VJPs", "equal", "", "not evaluated",
                      "n + m = " + std::to_string(n + m) + " above the experiment's " + std::to_string(kMaxEvaluations) +
                          " evaluations (stax jvp --jacobian evaluates up to 4096)"});
      continue;
    }
    auto in = autodiff::random_primals(g, o.seed);
    if (auto* e = std::get_if<compiler::GraphError>(&in)) {
      rows.push_back({name, "J by n JVPs = J by m VJPs", "equal", "", "not applicable", e->str()});
      continue;
    }
    autodiff::JacobianOptions jo;
    jo.max_evaluations = kMaxEvaluations;
    auto r = autodiff::jacobians(g, std::get<sem::Inputs>(in), jo);
    if (auto* e = std::get_if<compiler::GraphError>(&r)) {
      rows.push_back(compare_row(name, "J by n JVPs = J by m VJPs", "equal", "error", false, e->str()));
      continue;
    }
    const autodiff::JacobianReport& rep = std::get<autodiff::JacobianReport>(r);
    rows.push_back(compare_row(name, "J by n JVPs = J by m VJPs", "equal",
                               std::string(rep.equal ? "equal" : "different") + " (max |difference| " + fixed(rep.max_diff) +
                                   ", allowed " + fixed(rep.threshold) + ")",
                               rep.equal, std::to_string(rep.m) + " x " + std::to_string(rep.n) + ", Real domain at 256 bits"));
  }
  return write_comparison(o, "proposition-5-2", "Proposition 5.2: full Jacobians by n JVPs and by m VJPs",
                          "`stax jvp --jacobian` on the graphs of " + o.examples_dir +
                              " and Example 5.1 at x 4x8, W 8x8: op counts of the eager lowerings (Count domain); "
                              "J both ways in the Real domain (MPFR, 256 bits) when n + m <= " +
                              std::to_string(kMaxEvaluations) + ".",
                          rows, log);
}

}  // namespace stax::experiments
