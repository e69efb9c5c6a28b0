// The executor on a chain of tanh layers: every generated schedule gives
// gradients bit-identical to storing every state, with the checker's counts;
// a schedule that restores the wrong slot is rejected by the checker, and run
// unchecked it gives different bits.
#include <catch2/catch.hpp>

#include "checkpoint/executor.h"
#include "checkpoint/generators.h"

using namespace stax::checkpoint;

namespace {

Chain chain() {
  std::string err;
  auto c = make_chain({3, 5, 7}, &err);
  if (!c) FAIL(err);
  return *c;
}

Schedule must(std::variant<Schedule, GenError> r) {
  if (auto* e = std::get_if<GenError>(&r)) FAIL(e->message);
  return std::get<Schedule>(std::move(r));
}

}  // namespace

TEST_CASE("schedules give gradients bit-identical to storing everything") {
  Chain c = chain();
  Runner run = interpreter_runner();
  for (int64_t l : {1, 2, 5, 12}) {
    Execution ref = execute(c, store_all_schedule(l), run);
    REQUIRE(ref.ok());
    CHECK(ref.forward_steps == l - 1);
    CHECK(ref.peak_states == l);
    std::vector<Schedule> schedules = {uniform_schedule(l), must(binomial_schedule(l, 1)), must(binomial_schedule(l, 2)),
                                       must(binomial_schedule(l, 3)), must(optimal_schedule(l, 2))};
    for (const Schedule& s : schedules) {
      INFO("l = " << l << ", s = " << s.slots);
      Execution e = execute(c, s, run);
      REQUIRE(e.ok());
      CHECK(compare_bits(e, ref) == "");
      CheckResult r = check_schedule(s);
      REQUIRE(r.ok());
      CHECK(e.forward_steps == r.counts->forward_steps);
      CHECK(e.per_step == r.counts->per_step);
      CHECK(e.peak_states == r.counts->peak_states);
      CHECK(e.peak_bytes == e.peak_states * c.state_bytes);
    }
  }
}

TEST_CASE("a schedule restoring the wrong slot is rejected, or gives other bits") {
  Chain c = chain();
  Runner run = interpreter_runner();
  const int64_t l = 6;
  Schedule good = must(binomial_schedule(l, 2));
  Execution ref = execute(c, store_all_schedule(l), run);
  REQUIRE(ref.ok());
  // Find a restore of slot 1 and make it restore slot 0 instead.
  Schedule bad = good;
  bool mutated = false;
  for (Action& a : bad.actions)
    if (a.kind == ActionKind::Restore && a.arg == 1) {
      a.arg = 0;
      mutated = true;
      break;
    }
  REQUIRE(mutated);
  Execution checked = execute(c, bad, run);
  CHECK_FALSE(checked.ok());
  CHECK(checked.error.rfind("rejected:", 0) == 0);
  ExecOptions unchecked;
  unchecked.check = false;
  Execution wrong = execute(c, bad, run, unchecked);
  REQUIRE(wrong.ok());
  CHECK(compare_bits(wrong, ref) != "");
  // Unchecked, an impossible action is an error, never a crash.
  Schedule broken{l, 2, {{ActionKind::Restore, 1}}};
  CHECK_FALSE(execute(c, broken, run, unchecked).ok());
  Schedule short_one{l, 2, {{ActionKind::Advance, 1}, {ActionKind::Backward, 2}}};
  CHECK_FALSE(execute(c, short_one, run, unchecked).ok());
}

TEST_CASE("the chain's sizes are checked") {
  std::string err;
  CHECK_FALSE(make_chain({0, 4, 1}, &err).has_value());
  CHECK_FALSE(err.empty());
}
