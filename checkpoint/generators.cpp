#include "checkpoint/generators.h"

#include <limits>
#include <unordered_map>

namespace stax::checkpoint {

namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;

void push(Schedule& s, ActionKind k, int64_t arg) {
  if (k == ActionKind::Advance && arg == 0) return;
  s.actions.push_back({k, arg});
}

/// Minimal forward steps to reverse n steps from a stored z_a with s slots
/// (the home slot included) and at most t evaluations a step.
class Planner {
 public:
  struct Entry {
    int64_t cost = kInf;
    int64_t split = 0;  ///< 0: replay from the home slot only (one slot)
  };

  const Entry& get(int64_t n, int64_t s, int64_t t) {
    s = std::min(s, n);
    t = std::min(t, n - 1);
    uint64_t key = (static_cast<uint64_t>(n) << 40) ^ (static_cast<uint64_t>(s) << 20) ^ static_cast<uint64_t>(t);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    Entry e;
    if (n == 1) {
      e.cost = 0;
    } else if (t >= 1) {
      if (n - 1 <= t) e.cost = n * (n - 1) / 2;  // one slot: replay from the home state for every step
      if (s >= 2) {
        int64_t lo = std::max<int64_t>(1, n - beta(s - 1, t)), hi = std::min(n - 1, beta(s, t - 1));
        for (int64_t m = lo; m <= hi; ++m) {
          const Entry& right = get(n - m, s - 1, t);
          if (right.cost >= kInf) continue;
          const Entry& left = get(m, s, t - 1);
          if (left.cost >= kInf) continue;
          int64_t c = m + right.cost + left.cost;
          if (c < e.cost) e = {c, m};
        }
      }
    }
    return memo_[key] = e;
  }

 private:
  std::unordered_map<uint64_t, Entry> memo_;
};

struct Emitter {
  Schedule& out;
  Planner& plan;
  int64_t cur = 0;

  void to(int64_t a, int home) {
    if (cur != a) push(out, ActionKind::Restore, home), cur = a;
  }
  /// Reverse steps a+1..a+n; z_a is in slot `home`; `free` lists free slots.
  void reverse(int64_t a, int64_t n, int home, std::vector<int>& free, int64_t t) {
    const Planner::Entry& e = plan.get(n, static_cast<int64_t>(free.size()) + 1, t);
    if (n == 1 || e.split == 0) {
      for (int64_t k = n; k >= 1; --k) {
        to(a, home);
        push(out, ActionKind::Advance, k - 1);
        cur = a + k - 1;
        push(out, ActionKind::Backward, a + k);
      }
      return;
    }
    int64_t m = e.split;
    to(a, home);
    push(out, ActionKind::Advance, m);
    int slot = free.back();
    free.pop_back();
    push(out, ActionKind::Store, slot);
    cur = a + m;
    reverse(a + m, n - m, slot, free, t);
    push(out, ActionKind::Free, slot);
    free.push_back(slot);
    reverse(a, m, home, free, t - 1);
  }
};

std::variant<Schedule, GenError> planned(int64_t l, int64_t s, int64_t t) {
  Schedule out{l, static_cast<int>(s), {}};
  Planner plan;
  if (plan.get(l, s, t).cost >= kInf)
    return GenError{"no schedule reverses " + std::to_string(l) + " steps with " + std::to_string(s) +
                    " slots and at most " + std::to_string(t) + " evaluations a step (beta(s, t) = " +
                    std::to_string(beta(s, t)) + ")"};
  std::vector<int> free;
  for (int i = static_cast<int>(std::min(s, l)) - 1; i >= 1; --i) free.push_back(i);
  Emitter em{out, plan};
  em.reverse(0, l, 0, free, t);
  return out;
}

std::optional<GenError> check_sizes(int64_t l, int64_t s) {
  if (l < 1) return GenError{"--steps must be at least 1 (got " + std::to_string(l) + ")"};
  if (s < 1) return GenError{"--slots must be at least 1: slot 0 holds z_0 (got " + std::to_string(s) + ")"};
  if (l > 100000) return GenError{"--steps at most 100000 (got " + std::to_string(l) + ")"};
  if (s > 100000) return GenError{"--slots at most 100000 (got " + std::to_string(s) + ")"};
  return std::nullopt;
}

}  // namespace

int64_t beta(int64_t s, int64_t t) {
  if (s < 0 || t < 0) return 0;
  // C(s+t, s) = prod_{i=1..t} (s+i)/i, exact at each step; saturating.
  __int128 c = 1;
  for (int64_t i = 1; i <= t; ++i) {
    c = c * (s + i) / i;
    if (c > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  }
  return static_cast<int64_t>(c);
}

int64_t least_reps(int64_t l, int64_t s) {
  int64_t t = 0;
  while (beta(s, t) < l) ++t;
  return t;
}

int64_t revolve_forward_steps(int64_t l, int64_t s) {
  int64_t t = least_reps(l, s);
  if (t == 0) return 0;
  return t * l - beta(s + 1, t - 1);
}

int64_t ceil_sqrt(int64_t l) {
  int64_t c = 0;
  while (c * c < l) ++c;
  return c;
}

int64_t uniform_slots(int64_t l, int64_t c) {
  int64_t longest = (l + c - 1) / c;
  return c + std::max<int64_t>(longest - 2, 0);
}

Schedule uniform_schedule(int64_t l, int64_t c) {
  if (c <= 0) c = ceil_sqrt(l);
  c = std::min(c, l);
  std::vector<int64_t> start(static_cast<size_t>(c) + 1, 0);
  for (int64_t i = 0; i < c; ++i) start[static_cast<size_t>(i) + 1] = start[static_cast<size_t>(i)] + l / c + (i < l % c);
  Schedule s{l, static_cast<int>(uniform_slots(l, c)), {}};
  // The first sweep: a checkpoint at each segment start, slot i for segment i.
  int64_t cur = 0;
  for (int64_t i = 1; i < c; ++i) {
    push(s, ActionKind::Advance, start[static_cast<size_t>(i)] - cur);
    cur = start[static_cast<size_t>(i)];
    push(s, ActionKind::Store, i);
  }
  // Segments last to first: replay storing the interior, then reverse it.
  for (int64_t i = c - 1; i >= 0; --i) {
    int64_t a = start[static_cast<size_t>(i)], b = start[static_cast<size_t>(i) + 1];
    if (cur != a) push(s, ActionKind::Restore, i), cur = a;
    std::vector<int> interior;  // interior[j]: the slot holding z_{a+1+j}
    for (int64_t j = a + 1; j < b; ++j) {
      push(s, ActionKind::Advance, 1);
      cur = j;
      if (j < b - 1) {
        int slot = static_cast<int>(c + interior.size());
        push(s, ActionKind::Store, slot);
        interior.push_back(slot);
      }
    }
    for (int64_t k = b; k > a; --k) {
      if (cur != k - 1) {
        push(s, ActionKind::Restore, k - 1 == a ? static_cast<int>(i) : interior[static_cast<size_t>(k - 2 - a)]);
        cur = k - 1;
      }
      push(s, ActionKind::Backward, k);
    }
    for (int slot : interior) push(s, ActionKind::Free, slot);
    if (i > 0) push(s, ActionKind::Free, i);
  }
  return s;
}

std::variant<Schedule, GenError> binomial_schedule(int64_t l, int64_t s, std::optional<int64_t> t) {
  if (auto e = check_sizes(l, s)) return *e;
  if (t && *t < 0) return GenError{"--reps must be at least 0 (got " + std::to_string(*t) + ")"};
  int64_t reps = t ? *t : least_reps(l, s);
  if (beta(s, reps) < l)
    return GenError{"l = " + std::to_string(l) + " is too long for s = " + std::to_string(s) + " slots and t = " +
                    std::to_string(reps) + " repetitions: beta(s, t) = C(s+t, s) = " + std::to_string(beta(s, reps)) +
                    " (t >= " + std::to_string(least_reps(l, s)) + " needed)"};
  return planned(l, s, reps);
}

std::variant<Schedule, GenError> optimal_schedule(int64_t l, int64_t s) {
  if (auto e = check_sizes(l, s)) return *e;
  return planned(l, s, l - 1);
}

Schedule theorem_5_4_schedule(int64_t s, int64_t t) {
  int64_t l = beta(s, t);
  Schedule out{l, static_cast<int>(s), {}};
  int64_t cur = 0;
  // rev(a, s, t, home, next free slot): reverse beta(s, t) steps from z_a.
  auto rev = [&](auto&& self, int64_t a, int64_t sl, int64_t tt, int home, int next_free) -> void {
    int64_t n = beta(sl, tt);
    if (n == 1) {
      if (cur != a) push(out, ActionKind::Restore, home), cur = a;
      push(out, ActionKind::Backward, a + 1);
      return;
    }
    if (sl == 1) {
      for (int64_t k = n; k >= 1; --k) {
        if (cur != a) push(out, ActionKind::Restore, home), cur = a;
        push(out, ActionKind::Advance, k - 1);
        cur = a + k - 1;
        push(out, ActionKind::Backward, a + k);
      }
      return;
    }
    int64_t m = beta(sl, tt - 1);
    if (cur != a) push(out, ActionKind::Restore, home), cur = a;
    push(out, ActionKind::Advance, m);
    push(out, ActionKind::Store, next_free);
    cur = a + m;
    self(self, a + m, sl - 1, tt, next_free, next_free + 1);
    push(out, ActionKind::Free, next_free);
    self(self, a, sl, tt - 1, home, next_free);
  };
  rev(rev, 0, s, t, 0, 1);
  return out;
}

}  // namespace stax::checkpoint
