// The runtime composition of §5.6 (remat/train_step.h, `stax
// train-step`): forward then backward through the policy lowering gives the
// joint graph's bits; the backward is compiled only when called; misuse is an
// error, not a crash; a wrong partition is caught by the CLI's check.
#include <catch2/catch.hpp>

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

sem::IeeeOutcome run_joint(const autodiff::JointGraph& jg, const sem::Inputs& in) {
  auto l = compiler::lower_graph(jg.graph, {compiler::Device{}, true});
  REQUIRE(std::holds_alternative<compiler::Lowered>(l));
  return sem::eval_ieee(std::get<compiler::Lowered>(l).program, in);
}

const Runner interp = [](const sem::Program& p, const sem::Inputs& in) { return sem::eval_ieee(p, in); };

}  // namespace

TEST_CASE("a train step through the compiled forward and backward gives the joint graph's bits") {
  for (const char* file : {"examples/graphs/example_5_1_joint.json", "examples/graphs/mlp_joint.json"}) {
    INFO(file);
    auto jg = read_joint(file);
    auto fr = CompiledFunction::create(jg, min_cut_partition(jg), compiler::Device{});
    REQUIRE(std::holds_alternative<CompiledFunction>(fr));
    CompiledFunction& f = std::get<CompiledFunction>(fr);
    sem::Inputs in = joint_inputs(jg, 3);
    sem::IeeeOutcome want = run_joint(jg, in);
    REQUIRE_FALSE(want.failure);
    CHECK_FALSE(f.backward_compiled());
    auto fo = f.forward(in, interp);
    REQUIRE(std::holds_alternative<Tensors>(fo));
    CHECK_FALSE(f.backward_compiled());  // inference pays nothing for the backward
    for (const auto& [name, t] : std::get<Tensors>(fo)) CHECK_FALSE(first_difference(*want.outputs.at(name), *t));
    for (const std::string& s : f.partition().saved) CHECK(f.context().count(s));
    auto bo = f.backward(in, interp);
    REQUIRE(std::holds_alternative<Tensors>(bo));
    CHECK(f.backward_compiled());
    const Tensors& grads = std::get<Tensors>(bo);
    CHECK(grads.size() == jg.grads.size());
    for (const auto& [input, value] : jg.grads) {
      INFO(input);
      REQUIRE(grads.count(input));
      auto d = first_difference(*want.outputs.at(value), *grads.at(input));
      CHECK_FALSE(d);
    }
    // A second backward reuses the compiled program and the context.
    auto again = f.backward(in, interp);
    REQUIRE(std::holds_alternative<Tensors>(again));
    for (const auto& [input, t] : std::get<Tensors>(again)) CHECK_FALSE(first_difference(*grads.at(input), *t));
  }
}

TEST_CASE("misuse of the compiled function is an error, not a crash") {
  auto jg = read_joint("examples/graphs/mlp_joint.json");
  auto fr = CompiledFunction::create(jg, min_cut_partition(jg), compiler::Device{});
  REQUIRE(std::holds_alternative<CompiledFunction>(fr));
  CompiledFunction& f = std::get<CompiledFunction>(fr);
  sem::Inputs in = joint_inputs(jg, 4);
  auto early = f.backward(in, interp);
  REQUIRE(std::holds_alternative<StepError>(early));
  CHECK(test::contains(std::get<StepError>(early).message, "before forward"));
  sem::Inputs no_x = in;
  no_x.erase("x");
  auto fx = f.forward(no_x, interp);
  REQUIRE(std::holds_alternative<StepError>(fx));
  CHECK(test::contains(std::get<StepError>(fx).message, "'x'"));
  REQUIRE(std::holds_alternative<Tensors>(f.forward(in, interp)));
  sem::Inputs no_tangent = in;
  no_tangent.erase("tangents_1");
  auto bt = f.backward(no_tangent, interp);
  REQUIRE(std::holds_alternative<StepError>(bt));
  CHECK(test::contains(std::get<StepError>(bt).message, "tangents_1"));
  // A wrong tangent type is reported, not evaluated.
  sem::Inputs bad = in;
  bad["tangents_1"] = test::f32({2}, {1, 2});
  auto bb = f.backward(bad, interp);
  CHECK(std::holds_alternative<StepError>(bb));
}

TEST_CASE("a wrong partition gives other gradients than the joint graph") {
  auto jg = read_joint("examples/graphs/mlp_joint.json");
  Partition p = min_cut_partition(jg);
  for (auto& n : p.backward.nodes)
    if (n.name == "e") n.op = "sigmoid.default";  // e = exp(r) recomputed wrongly
  auto fr = CompiledFunction::create(jg, p, compiler::Device{});
  REQUIRE(std::holds_alternative<CompiledFunction>(fr));
  CompiledFunction& f = std::get<CompiledFunction>(fr);
  sem::Inputs in = joint_inputs(jg, 5);
  sem::IeeeOutcome want = run_joint(jg, in);
  REQUIRE(std::holds_alternative<Tensors>(f.forward(in, interp)));
  auto bo = f.backward(in, interp);
  REQUIRE(std::holds_alternative<Tensors>(bo));
  CHECK(first_difference(*want.outputs.at("dW2"), *std::get<Tensors>(bo).at("W2")));
}

TEST_CASE("stax train-step: interp and cpu backends, forward only, outputs, bad input") {
  auto dir = test::scratch("remat_train_step");
  std::string mlp = std::string(STAX_SOURCE_DIR) + "/examples/graphs/mlp_joint.json";
  for (const char* backend : {"interp", "cpu"}) {
    test::Run r = test::run_stax(dir, std::string("train-step ") + mlp + " --random-inputs 7 --backend " + backend +
                                          " --out " + (dir / backend).string());
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK(test::contains(r.out, "saved h1 a2 (640 bytes)"));
    CHECK(test::contains(r.out, "same bits on every output"));
    CHECK(std::filesystem::exists(dir / backend / "grad_W1.npy"));
    CHECK(std::filesystem::exists(dir / backend / "y.npy"));
    CHECK(std::filesystem::exists(dir / backend / "inputs" / "x.npy"));
  }
  // Replaying the written inputs gives the same gradient file.
  test::Run replay = test::run_stax(dir, "train-step " + mlp + " --input x=" + (dir / "interp/inputs/x.npy").string() +
                                             " --input W1=" + (dir / "interp/inputs/W1.npy").string() +
                                             " --input W2=" + (dir / "interp/inputs/W2.npy").string() + " --out " +
                                             (dir / "replay").string());
  CHECK(replay.code == 0);
  CHECK(test::slurp(dir / "replay" / "grad_W1.npy") == test::slurp(dir / "interp" / "grad_W1.npy"));
  test::Run js = test::run_stax(dir, "train-step " + mlp + " --random-inputs 7 --json");
  REQUIRE(js.code == 0);
  nlohmann::json doc = nlohmann::json::parse(js.out);
  CHECK(doc["check"] == "same bits");
  CHECK(doc["backward_compiled"] == true);
  CHECK(doc["partition"]["saved"] == nlohmann::json({"h1", "a2"}));
  CHECK(doc["grads"].contains("W1"));
  test::Run fo = test::run_stax(dir, "train-step " + mlp + " --random-inputs 7 --forward-only");
  CHECK(fo.code == 0);
  CHECK(test::contains(fo.out, "backward not compiled"));
  test::Run missing = test::run_stax(dir, "train-step " + mlp);
  CHECK(missing.code == 2);
  CHECK(test::contains(missing.err, "'x'"));
  test::Run plain = test::run_stax(dir, "train-step " + std::string(STAX_SOURCE_DIR) + "/examples/graphs/example_5_1_forward.json");
  // A forward graph is differentiated first; here its primals are missing.
  CHECK(plain.code == 2);
  CHECK(test::contains(plain.err, "'x'"));
  CHECK(test::run_stax(dir, "train-step " + mlp + " --random-inputs 1 --backend gpu").code == 2);
}
