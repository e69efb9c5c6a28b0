// Exhaustive search over every reversal schedule: the true beta(s, t) equals
// C(s + t, s) (Theorem 5.4 with Griewank's equality) for small s and t, and a
// deliberately wrong beta table entry is caught.
#include <catch2/catch.hpp>

#include "checkpoint/generators.h"
#include "checkpoint/search.h"

using namespace stax::checkpoint;

TEST_CASE("the searched beta(s, t) equals C(s + t, s) for s + t <= 5") {
  for (int s = 1; s <= 5; ++s)
    for (int t = 0; s + t <= 5; ++t) {
      INFO("s = " << s << ", t = " << t);
      SearchStats st;
      auto b = search_beta(s, t, &st);
      REQUIRE(b.has_value());
      CHECK(*b == beta(s, t));
    }
}

TEST_CASE("a wrong beta table entry is caught by the search") {
  std::vector<BetaClaim> right = {{1, 2, 3}, {2, 2, 6}, {3, 1, 4}, {2, 3, 10}};
  CHECK(check_beta_table(right) == "");
  std::vector<BetaClaim> too_big = {{1, 2, 3}, {2, 2, 7}};
  std::string m = check_beta_table(too_big);
  CHECK(m.find("beta(2, 2) = 7 is wrong: no schedule reverses 7 steps") != std::string::npos);
  std::vector<BetaClaim> too_small = {{2, 3, 9}};
  CHECK(check_beta_table(too_small).find("a schedule reverses 10 steps") != std::string::npos);
}

TEST_CASE("the search's verdicts agree with the generators at the boundary") {
  for (int s = 1; s <= 3; ++s)
    for (int t = 1; s + t <= 4; ++t) {
      int64_t b = beta(s, t);
      CHECK(reversible(b, s, t) == std::optional<bool>(true));
      CHECK(reversible(b + 1, s, t) == std::optional<bool>(false));
    }
  SearchStats st;
  CHECK_FALSE(reversible(40, 3, 3, &st, 10).has_value());  // state limit: no verdict
}
