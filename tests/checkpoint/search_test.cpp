// Exhaustive search over every reversal schedule: the true beta(s, t) equals
// C(s + t, s) (Theorem 5.4 with Griewank's equality) for small s and t, and a
// deliberately wrong beta table entry is caught.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <tuple>

#include "checkpoint/generators.h"
#include "checkpoint/search.h"

using namespace stax::checkpoint;

namespace {

// A brute force over raw actions with none of the search's rules: every
// advance by one, store into a free slot, restore, free, backward step, with
// exact states (next backward step, current state or -1, held states, counts)
// and no state visited twice. Only for tiny chains.
bool raw_reversible(int l, int s, int t) {
  struct St {
    int n, cur;
    std::vector<int> held;  // sorted states in slots (a duplicate would only waste a slot)
    std::vector<int> cnt;
    bool operator<(const St& o) const {
      return std::tie(n, cur, held, cnt) < std::tie(o.n, o.cur, o.held, o.cnt);
    }
  };
  std::set<St> seen;
  std::vector<St> todo = {{l, 0, {0}, std::vector<int>(static_cast<size_t>(l) + 1, 0)}};
  auto push = [&](St x) {
    if (seen.insert(x).second) todo.push_back(std::move(x));
  };
  while (!todo.empty()) {
    St x = todo.back();
    todo.pop_back();
    if (x.n == 0) return true;
    bool cur_held = std::binary_search(x.held.begin(), x.held.end(), x.cur);
    if (x.cur == x.n - 1 || std::binary_search(x.held.begin(), x.held.end(), x.n - 1)) {
      St y = x;
      --y.n;
      push(y);
    }
    if (x.cur >= 0 && x.cur < l && x.cnt[static_cast<size_t>(x.cur) + 1] < t) {
      St y = x;
      ++y.cnt[static_cast<size_t>(++y.cur)];
      push(y);
    }
    if (x.cur >= 0 && !cur_held && static_cast<int>(x.held.size()) < s) {
      St y = x;
      y.held.insert(std::lower_bound(y.held.begin(), y.held.end(), y.cur), y.cur);
      push(y);
    }
    for (size_t i = 0; i < x.held.size(); ++i) {
      St r = x, f = x;
      r.cur = x.held[i];
      push(r);
      f.held.erase(f.held.begin() + static_cast<long>(i));
      push(f);
    }
  }
  return false;
}

}  // namespace

TEST_CASE("the search agrees with a brute force over raw actions on tiny chains") {
  BetaProver prover;
  // Both sides of every boundary it can afford: beta(1, t) for t <= 3,
  // beta(2, t) for t <= 2, beta(3, t) for t <= 1 (and l <= 5 for t = 2).
  for (int s = 1; s <= 3; ++s)
    for (int t = 0; t <= (s == 1 ? 3 : 2); ++t)
      for (int64_t l = 1; l <= std::min<int64_t>(beta(s, t) + 1, s == 3 ? 5 : 7); ++l) {
        INFO("l = " << l << ", s = " << s << ", t = " << t);
        bool raw = raw_reversible(static_cast<int>(l), s, t);
        CHECK(raw == (l <= beta(s, t)));
        CHECK(reversible(l, s, t) == std::optional<bool>(raw));
        SearchOptions o;
        o.lemmas = prover.lemmas();
        o.relax_counts = true;
        CHECK(reversible(l, s, t, nullptr, o) == std::optional<bool>(raw));
      }
}

TEST_CASE("the searched beta(s, t) equals C(s + t, s) for s + t <= 7, by induction on s + t") {
  SearchOptions o;
  o.relax_counts = true;  // "no" verdicts from the relaxation, "yes" from schedules the search finds
  std::vector<BetaRow> rows = search_beta_table(7, o);
  REQUIRE(rows.size() == 28);  // every (s, t), s >= 1, s + t <= 7
  for (const BetaRow& r : rows) {
    INFO("s = " << r.s << ", t = " << r.t);
    REQUIRE(r.beta.has_value());
    CHECK(*r.beta == beta(r.s, r.t));
    CHECK_FALSE(r.stats.aborted);
    CHECK(r.stats.certified == 0);
  }
}

TEST_CASE("the relaxation's verdicts agree with the exact search's") {
  BetaProver prover;
  for (int s = 1; s <= 5; ++s)
    for (int t = 1; s + t <= 6; ++t) {
      SearchOptions exact, relaxed;
      exact.lemmas = relaxed.lemmas = prover.lemmas();
      relaxed.relax_counts = true;
      for (int64_t l : {beta(s, t), beta(s, t) + 1}) {
        INFO("l = " << l << ", s = " << s << ", t = " << t);
        auto e = reversible(l, s, t, nullptr, exact);
        REQUIRE(e.has_value());
        CHECK(reversible(l, s, t, nullptr, relaxed) == e);
      }
    }
}

TEST_CASE("a certificate is Theorem 5.4's construction, checked, and only below C(s+t, s) + 1") {
  SearchOptions o;
  o.certificates = true;
  SearchStats st;
  CHECK(reversible(20, 3, 3, &st, o) == std::optional<bool>(true));
  CHECK(st.certified == 1);
  CHECK(st.states == 0);
  SearchStats no;
  CHECK(reversible(21, 3, 3, &no, o) == std::optional<bool>(false));
  CHECK(no.certified == 0);
  CHECK(no.states > 0);
}

TEST_CASE("without lemmas the search alone settles s + t <= 6") {
  for (int s = 1; s <= 6; ++s)
    for (int t = 0; s + t <= 6; ++t) {
      INFO("s = " << s << ", t = " << t);
      SearchStats st;
      auto b = search_beta(s, t, &st);  // no hint: doubling and bisection from l = 1
      REQUIRE(b.has_value());
      CHECK(*b == beta(s, t));
      CHECK(st.lemma_pruned == 0);
    }
}

TEST_CASE("a schedule the search finds passes the checker") {
  for (int s = 1; s <= 4; ++s)
    for (int t = 0; s + t <= 6; ++t) {
      int64_t l = beta(s, t);
      INFO("l = " << l << ", s = " << s << ", t = " << t);
      auto sc = search_schedule(l, s, t);
      REQUIRE(sc.has_value());
      CheckOptions co;
      co.max_reps = t;
      CheckResult r = check_schedule(*sc, co);
      INFO(r.error);
      REQUIRE(r.ok());
      CHECK(r.counts->max_reps <= t);
      CHECK(r.counts->peak_slots <= s);
      SearchStats st;
      CHECK_FALSE(search_schedule(l + 1, s, t, &st).has_value());
      CHECK_FALSE(st.aborted);
    }
}

TEST_CASE("a wrong beta table entry is caught by the search") {
  std::vector<BetaClaim> right = {{1, 2, 3}, {2, 2, 6}, {3, 1, 4}, {2, 3, 10}, {3, 3, 20}, {4, 3, 35}};
  CHECK(check_beta_table(right) == "");
  std::vector<BetaClaim> too_big = {{1, 2, 3}, {2, 2, 7}};
  std::string m = check_beta_table(too_big);
  CHECK(m.find("beta(2, 2) = 7 is wrong: no schedule reverses 7 steps") != std::string::npos);
  std::vector<BetaClaim> too_small = {{2, 3, 9}};
  CHECK(check_beta_table(too_small).find("a schedule reverses 10 steps") != std::string::npos);
  // One off at s + t = 7, both ways.
  CHECK(check_beta_table({{4, 3, 36}}).find("no schedule reverses 36 steps") != std::string::npos);
  CHECK(check_beta_table({{3, 4, 34}}).find("a schedule reverses 35 steps") != std::string::npos);
}

TEST_CASE("the search's verdicts agree with the generators at the boundary") {
  for (int s = 1; s <= 3; ++s)
    for (int t = 1; s + t <= 4; ++t) {
      int64_t b = beta(s, t);
      CHECK(reversible(b, s, t) == std::optional<bool>(true));
      CHECK(reversible(b + 1, s, t) == std::optional<bool>(false));
    }
  SearchStats st;
  SearchOptions tiny;
  tiny.max_states = 10;
  CHECK_FALSE(reversible(40, 3, 3, &st, tiny).has_value());  // state limit: no verdict
  CHECK(st.aborted);
  CHECK_FALSE(search_beta(3, 3, nullptr, tiny).has_value());
  CHECK(check_beta_table({{3, 3, 20}}, 10).find("state limit") != std::string::npos);
}
