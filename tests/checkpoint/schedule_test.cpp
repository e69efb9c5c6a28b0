// Reversal schedules (§5.8): the checker's rejections, each with the
// first offending action; Theorem 5.3's uniform segments for every l in
// 1..1000; Theorem 5.4's construction and revolve's forward-step count
// against the checker for all small l and s.
#include <catch2/catch.hpp>

#include "checkpoint/generators.h"
#include "checkpoint/schedule.h"

using namespace stax::checkpoint;

namespace {

Schedule sched(int64_t l, int s, std::vector<Action> a) { return Schedule{l, s, std::move(a)}; }
constexpr auto A = ActionKind::Advance;
constexpr auto St = ActionKind::Store;
constexpr auto R = ActionKind::Restore;
constexpr auto F = ActionKind::Free;
constexpr auto B = ActionKind::Backward;

Schedule must(std::variant<Schedule, GenError> r) {
  if (auto* e = std::get_if<GenError>(&r)) FAIL(e->message);
  return std::get<Schedule>(std::move(r));
}

}  // namespace

TEST_CASE("a legal schedule is counted") {
  // l = 3, two slots: z_0 in slot 0; advance to z_1, store; advance to z_2.
  Schedule s = sched(3, 2, {{A, 1}, {St, 1}, {A, 1}, {B, 3}, {R, 1}, {B, 2}, {R, 0}, {B, 1}});
  CheckResult r = check_schedule(s);
  REQUIRE(r.ok());
  CHECK(r.counts->forward_steps == 2);
  CHECK(r.counts->per_step == std::vector<int64_t>{1, 1, 0});
  CHECK(r.counts->peak_slots == 2);
  CHECK(r.counts->peak_states == 3);
  CHECK(r.counts->max_reps == 1);
}

TEST_CASE("the checker rejects each illegal schedule at its first offending action") {
  struct Case {
    const char* what;
    Schedule s;
    int64_t action;
    const char* needle;
  };
  std::vector<Case> cases = {
      {"restore from a freed slot", sched(2, 2, {{A, 1}, {St, 1}, {F, 1}, {R, 1}, {B, 2}, {R, 0}, {B, 1}}), 3, "empty"},
      {"restore from a never-stored slot", sched(2, 2, {{R, 1}, {A, 1}, {B, 2}, {R, 0}, {B, 1}}), 0, "empty"},
      {"backward without its input state", sched(3, 2, {{A, 1}, {B, 3}}), 1, "z_2 is not"},
      {"backward before its adjoint", sched(2, 1, {{B, 1}, {A, 1}, {B, 2}}), 0, "adjoint zbar_1"},
      {"backward twice", sched(2, 1, {{A, 1}, {B, 2}, {B, 2}}), 2, "already run"},
      {"more slots than allowed", sched(3, 2, {{A, 1}, {St, 1}, {A, 1}, {St, 2}}), 3, "more slots than"},
      {"store into a held slot", sched(3, 2, {{A, 1}, {St, 0}}), 1, "not free"},
      {"missing backward steps", sched(3, 2, {{A, 2}, {B, 3}}), 2, "2..1 missing"},
      {"advance past z_l", sched(2, 1, {{A, 3}}), 0, "past z_2"},
      {"step out of range", sched(2, 1, {{B, 5}}), 0, "no step 5"},
      {"slot index negative", sched(2, 1, {{R, -1}}), 0, "does not exist"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    CheckResult r = check_schedule(c.s);
    REQUIRE_FALSE(r.ok());
    CHECK(r.action == c.action);
    CHECK(r.error.find(c.needle) != std::string::npos);
  }
  // Repetition bound: s = 1, l = 3 evaluates phi_1 twice.
  Schedule s = sched(3, 1, {{A, 2}, {B, 3}, {R, 0}, {A, 1}, {B, 2}, {R, 0}, {B, 1}});
  REQUIRE(check_schedule(s).ok());
  CHECK(check_schedule(s).counts->max_reps == 2);
  CheckOptions o;
  o.max_reps = 1;
  CheckResult r = check_schedule(s, o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.action == 3);  // the second advance evaluates phi_1 again
  // Backward reading a slot: legal under Definition 5.3, not for the executor.
  Schedule slot_read = sched(2, 2, {{A, 1}, {St, 1}, {B, 2}, {B, 1}});
  CHECK(check_schedule(slot_read).ok());
  o = {};
  o.backward_reads_current_only = true;
  CHECK_FALSE(check_schedule(slot_read, o).ok());
  // Bad sizes never crash.
  CHECK_FALSE(check_schedule(sched(0, 1, {})).ok());
  CHECK_FALSE(check_schedule(sched(3, 0, {})).ok());
}

TEST_CASE("Theorem 5.3: uniform segments for every l in 1..1000") {
  for (int64_t l = 1; l <= 1000; ++l) {
    INFO("l = " << l);
    Schedule s = uniform_schedule(l);
    CheckResult r = check_schedule(s);
    REQUIRE(r.ok());
    const Counts& c = *r.counts;
    int64_t k = ceil_sqrt(l);
    REQUIRE(static_cast<int64_t>(c.peak_states) * c.peak_states <= 4 * l);  // peak <= 2 sqrt(l)
    REQUIRE(c.peak_states <= k + (l + k - 1) / k);                           // c + l/c
    REQUIRE(c.forward_steps <= 2 * l);
    REQUIRE(c.max_reps <= 2);
    REQUIRE(c.peak_slots <= s.slots);
  }
  // The bound is not vacuous: a schedule of 2 sqrt(l) + 1 states fails it.
  Schedule wide = uniform_schedule(100, 1);  // one segment: store everything
  REQUIRE(check_schedule(wide).ok());
  CHECK(static_cast<int64_t>(check_schedule(wide).counts->peak_states) * check_schedule(wide).counts->peak_states >
        4 * 100);
}

TEST_CASE("beta and revolve's closed form") {
  CHECK(beta(1, 0) == 1);
  CHECK(beta(1, 3) == 4);
  CHECK(beta(2, 2) == 6);
  CHECK(beta(3, 3) == 20);
  CHECK(beta(10, 10) == 184756);
  CHECK(beta(40, 40) > 0);  // saturates, never overflows
  CHECK(least_reps(1, 1) == 0);
  CHECK(least_reps(6, 2) == 2);
  CHECK(least_reps(7, 2) == 3);
  CHECK(revolve_forward_steps(4, 1) == 6);  // 3 + 2 + 1
}

TEST_CASE("Theorem 5.4: the recursive construction reaches beta(s, t)") {
  for (int64_t s = 1; s <= 5; ++s)
    for (int64_t t = 0; t <= 5; ++t) {
      INFO("s = " << s << ", t = " << t);
      Schedule sc = theorem_5_4_schedule(s, t);
      REQUIRE(sc.steps == beta(s, t));
      CheckOptions o;
      o.max_reps = t;
      CheckResult r = check_schedule(sc, o);
      REQUIRE(r.ok());
      REQUIRE(r.counts->peak_slots <= s);
      if (t >= 1) REQUIRE(r.counts->forward_steps == revolve_forward_steps(sc.steps, s));
    }
}

TEST_CASE("binomial schedules: least t and revolve's count for all small l and s") {
  for (int64_t s = 1; s <= 6; ++s)
    for (int64_t l = 1; l <= 80; ++l) {
      INFO("l = " << l << ", s = " << s);
      int64_t t = least_reps(l, s);
      Schedule sc = must(binomial_schedule(l, s));
      CheckOptions o;
      o.max_reps = t;
      o.backward_reads_current_only = true;
      CheckResult r = check_schedule(sc, o);
      REQUIRE(r.ok());
      REQUIRE(r.counts->peak_slots <= s);
      REQUIRE(r.counts->max_reps == t);
      REQUIRE(r.counts->forward_steps == revolve_forward_steps(l, s));
      // More repetitions allowed: never fewer forward steps (Griewank's optimum).
      Schedule loose = must(binomial_schedule(l, s, t + 1));
      REQUIRE(check_schedule(loose).counts->forward_steps == revolve_forward_steps(l, s));
      Schedule opt = must(optimal_schedule(l, s));
      REQUIRE(check_schedule(opt).counts->forward_steps == revolve_forward_steps(l, s));
    }
  // The comparison has teeth: a wrong closed form, t l - beta(s, t-1),
  // disagrees with the checker (l = 10, s = 3: 16 against 15).
  CheckResult ten = check_schedule(must(binomial_schedule(10, 3)));
  CHECK(ten.counts->forward_steps == 15);
  CHECK(2 * 10 - beta(3, 1) == 16);
}

TEST_CASE("binomial schedules refuse what no schedule can do") {
  auto r = binomial_schedule(7, 2, 2);  // beta(2, 2) = 6
  REQUIRE(std::holds_alternative<GenError>(r));
  CHECK(std::get<GenError>(r).message.find("too long") != std::string::npos);
  CHECK(std::holds_alternative<GenError>(binomial_schedule(0, 2)));
  CHECK(std::holds_alternative<GenError>(binomial_schedule(5, 0)));
  CHECK(std::holds_alternative<GenError>(binomial_schedule(5, 2, -1)));
  CHECK(std::holds_alternative<Schedule>(binomial_schedule(6, 2, 2)));
  // Long chains stay fast: l = 10000 with 10 slots.
  Schedule big = must(binomial_schedule(10000, 10));
  CheckResult r2 = check_schedule(big);
  REQUIRE(r2.ok());
  CHECK(r2.counts->forward_steps == revolve_forward_steps(10000, 10));
}
