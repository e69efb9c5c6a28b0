// The double-backward contract (§5.7): a compiled backward (the backward
// graph of a partition, the one a train step runs) is not itself
// differentiable. Asking for its gradient — reverse mode, forward mode, a
// Hessian-vector product, `stax grad` on the backward of `stax partition
// --json` — is refused right there with why and what to do (exit 2 from the
// CLI); first-order results are bit-identical with and without the attempt;
// the uncompiled path (stax hvp) keeps working.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include "autodiff/hvp.h"
#include "autodiff/jvp.h"
#include "autodiff/vjp.h"
#include "remat/train_step.h"
#include "remat/verify.h"
#include "semantics/random_inputs.h"
#include "tests/remat/remat_test_util.h"
#include "tests/test_util.h"

using namespace stax;
using namespace stax::remat;
using stax::test::read_joint;
using stax::test::min_cut_partition;
using stax::test::joint_inputs;

namespace {

std::string src(const std::string& rel) { return std::string(STAX_SOURCE_DIR) + "/" + rel; }

const Runner interp = [](const sem::Program& p, const sem::Inputs& in) { return sem::eval_ieee(p, in); };

void check_refusal(const compiler::GraphError& e) {
  INFO(e.str());
  CHECK(test::contains(e.message, "second-order gradient"));
  CHECK(test::contains(e.message, "a compiled backward is not itself differentiable"));
  CHECK(test::contains(e.message, "Differentiate the uncompiled function instead"));
  CHECK(test::contains(e.message, "stax hvp"));
  CHECK_FALSE(e.node.empty());  // names the backward's first gradient
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int sh(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace

TEST_CASE("a partition's backward is marked compiled, and the mark survives JSON") {
  auto jg = read_joint("examples/graphs/example_5_1_joint.json");
  Partition p = min_cut_partition(jg);
  CHECK_FALSE(p.backward.compiled.empty());
  CHECK(p.forward.compiled.empty());
  CHECK(jg.graph.compiled.empty());
  auto back = compiler::parse_graph(compiler::graph_to_json(p.backward).dump());
  REQUIRE(std::holds_alternative<compiler::Graph>(back));
  CHECK(std::get<compiler::Graph>(back).compiled == p.backward.compiled);
  // A malformed mark is bad input naming the problem, not a crash.
  auto bad = compiler::parse_graph(R"({"inputs": [], "nodes": [], "outputs": [], "compiled": 3})");
  REQUIRE(std::holds_alternative<compiler::GraphError>(bad));
  CHECK(test::contains(std::get<compiler::GraphError>(bad).message, "\"compiled\""));
}

TEST_CASE("second order through a compiled backward is refused where it is asked for, with why and what to do") {
  for (const char* file : {"examples/graphs/example_5_1_joint.json", "examples/graphs/mlp_joint.json"}) {
    INFO(file);
    auto jg = read_joint(file);
    auto fr = CompiledFunction::create(jg, min_cut_partition(jg), compiler::Device{});
    REQUIRE(std::holds_alternative<CompiledFunction>(fr));
    const compiler::Graph& bw = std::get<CompiledFunction>(fr).partition().backward;
    auto r = autodiff::build_joint_graph(bw);
    REQUIRE(std::holds_alternative<compiler::GraphError>(r));
    check_refusal(std::get<compiler::GraphError>(r));
    CHECK(test::contains(std::get<compiler::GraphError>(r).message, "reverse mode"));
    auto f = autodiff::build_jvp_graph(bw);
    REQUIRE(std::holds_alternative<compiler::GraphError>(f));
    check_refusal(std::get<compiler::GraphError>(f));
    auto h = autodiff::build_hvp_graph(bw, {});
    REQUIRE(std::holds_alternative<compiler::GraphError>(h));
    check_refusal(std::get<compiler::GraphError>(h));
    // The deliberately wrong case: the same backward with its mark stripped
    // is differentiated without complaint — the refusal is the contract's,
    // not a distant failure of the graph (and exactly the silent wrong
    // answer the contract prevents: the saved values are taken as constants).
    compiler::Graph stripped = bw;
    stripped.compiled.clear();
    auto s = autodiff::build_joint_graph(stripped);
    if (std::string(file).find("example_5_1") != std::string::npos)  // mlp's relu mask is not differentiable anyway
      CHECK(std::holds_alternative<autodiff::JointGraph>(s));
    else
      CHECK_FALSE(test::contains(std::get<compiler::GraphError>(s).message, "compiled"));
  }
}

TEST_CASE("first-order results are bit-identical with and without an attempted second-order request") {
  for (const char* file : {"examples/graphs/example_5_1_joint.json", "examples/graphs/mlp_joint.json"}) {
    INFO(file);
    auto jg = read_joint(file);
    Partition p = min_cut_partition(jg);
    sem::Inputs in = joint_inputs(jg, 5);
    auto step = [&](bool attempt_second_order) {
      auto fr = CompiledFunction::create(jg, p, compiler::Device{});
      REQUIRE(std::holds_alternative<CompiledFunction>(fr));
      CompiledFunction& f = std::get<CompiledFunction>(fr);
      auto fo = f.forward(in, interp);
      REQUIRE(std::holds_alternative<Tensors>(fo));
      auto bo = f.backward(in, interp);
      REQUIRE(std::holds_alternative<Tensors>(bo));
      if (attempt_second_order) {
        CHECK(std::holds_alternative<compiler::GraphError>(autodiff::build_joint_graph(f.partition().backward)));
        CHECK(std::holds_alternative<compiler::GraphError>(autodiff::build_hvp_graph(f.partition().backward, {})));
        // The function is still usable afterwards: a second backward gives the same bits.
        auto again = f.backward(in, interp);
        REQUIRE(std::holds_alternative<Tensors>(again));
        for (const auto& [n, t] : std::get<Tensors>(again)) CHECK_FALSE(first_difference(*std::get<Tensors>(bo).at(n), *t));
      }
      Tensors all = std::get<Tensors>(fo);
      for (const auto& [n, t] : std::get<Tensors>(bo)) all["grad_" + n] = t;
      return all;
    };
    Tensors plain = step(false), attempted = step(true);
    REQUIRE(plain.size() == attempted.size());
    for (const auto& [n, t] : plain) {
      INFO(n);
      REQUIRE(attempted.count(n));
      CHECK(t->data == attempted.at(n)->data);  // the bytes
      CHECK(t->dtype == attempted.at(n)->dtype);
    }
  }
  // and the uncompiled path keeps working: H v of Example 5.1's joint graph
  auto hv = autodiff::build_hvp_graph(read_joint("examples/graphs/example_5_1_joint.json").graph, {});
  CHECK(std::holds_alternative<autodiff::HvpGraph>(hv));
}

TEST_CASE("stax grad on the backward of stax partition --json exits 2 with the contract's message; stax hvp works") {
  std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/stax_double_backward_test";
  REQUIRE(sh("mkdir -p " + dir) == 0);
  std::string stax = STAX_BINARY;
  std::string joint = src("examples/graphs/example_5_1_joint.json");
  REQUIRE(sh(stax + " partition " + joint + " --json > " + dir + "/p.json") == 0);
  auto pj = nlohmann::json::parse(slurp(dir + "/p.json"));
  REQUIRE(pj.contains("backward"));
  CHECK(pj["backward"].contains("compiled"));
  { std::ofstream(dir + "/backward.json") << pj["backward"].dump(2); }
  for (const char* cmd : {"grad", "jvp", "hvp"}) {
    INFO(cmd);
    CHECK(sh(stax + " " + cmd + " " + dir + "/backward.json > " + dir + "/out.txt 2> " + dir + "/err.txt") == 2);
    std::string err = slurp(dir + "/err.txt");
    CHECK(test::contains(err, "a compiled backward is not itself differentiable"));
    CHECK(test::contains(err, "Differentiate the uncompiled function instead"));
    CHECK(slurp(dir + "/out.txt").empty());
  }
  // The forward graph of Example 5.1 (uncompiled): first and second order work.
  std::string fwd = src("examples/graphs/example_5_1_forward.json");
  CHECK(sh(stax + " grad " + fwd + " > /dev/null") == 0);
  CHECK(sh(stax + " hvp " + fwd + " > /dev/null") == 0);
  // Stripping the mark (the deliberately wrong input) lets stax grad through.
  pj["backward"].erase("compiled");
  { std::ofstream(dir + "/stripped.json") << pj["backward"].dump(2); }
  CHECK(sh(stax + " grad " + dir + "/stripped.json > /dev/null 2>&1") == 0);
}
