// `stax checkpoint`: the schedule and its counts as prose and JSON, --execute
// bit-identical on the interpreter, and bad arguments exiting 2 with a message.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/test_util.h"

using namespace stax;

TEST_CASE("stax checkpoint prints a checked schedule") {
  auto dir = stax::test::scratch("checkpoint_cli");
  auto r = stax::test::run_stax(dir, "checkpoint --steps 10 --slots 3 --json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["steps"] == 10);
  CHECK(j["slots"] == 3);
  CHECK(j["reps"] == 2);               // beta(3, 2) = 10
  CHECK(j["forward_steps"] == 15);     // 2*10 - beta(4, 1)
  CHECK(j["revolve_forward_steps"] == 15);
  CHECK(j["per_step"].size() == 10);
  CHECK(j["peak_states"].get<int>() <= 4);
  CHECK(j["actions"].size() > 10);
  auto u = stax::test::run_stax(dir, "checkpoint --steps 16 --slots 8 --schedule uniform");
  REQUIRE(u.code == 0);
  CHECK(u.out.find("schedule uniform") != std::string::npos);
  CHECK(u.out.find("backward 1") != std::string::npos);
}

TEST_CASE("stax checkpoint --execute is bit-identical to storing everything") {
  auto dir = stax::test::scratch("checkpoint_cli");
  auto r = stax::test::run_stax(dir, "checkpoint --steps 7 --slots 2 --execute --json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["execute"]["bit_identical"] == true);
  CHECK(j["execute"]["counts_agree"] == true);
  CHECK(j["execute"]["peak_states"].get<int>() < j["execute"]["store_all_peak_states"].get<int>());
  // The CPU backend (LLVM JIT) gives the same bits as its own store-everything run.
  auto cpu = stax::test::run_stax(dir, "checkpoint --steps 5 --slots 2 --execute --backend cpu --threads 1");
  REQUIRE(cpu.code == 0);
  CHECK(cpu.out.find("bit-identical") != std::string::npos);
}

TEST_CASE("stax checkpoint refuses bad arguments with exit 2") {
  auto dir = stax::test::scratch("checkpoint_cli");
  struct Case {
    const char* args;
    const char* needle;
  };
  for (const Case& c : std::vector<Case>{
           {"checkpoint --steps 10 --slots 0", "--slots must be at least 1"},
           {"checkpoint --steps 0 --slots 2", "--steps must be at least 1"},
           {"checkpoint --steps 7 --slots 2 --reps 2", "too long"},
           {"checkpoint --steps 10 --slots 2 --schedule uniform", "need"},
           {"checkpoint --steps 10 --slots 2 --schedule nope", "--schedule expects"},
           {"checkpoint --steps 10 --slots 2 --execute --backend gpu", "--backend expects"},
           {"checkpoint --steps 10 --slots 2 --execute --width 0", "4096"},
           {"checkpoint --steps 10 --slots 5 --schedule uniform --reps 1", "fit --reps"},
       }) {
    INFO(c.args);
    auto r = stax::test::run_stax(dir, c.args);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.needle) != std::string::npos);
  }
}
