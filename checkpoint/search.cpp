#include "checkpoint/search.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <pthread.h>
#include <unordered_map>

#include "checkpoint/generators.h"

// The search and why it is exhaustive.
//
// Model (Definition 5.3, as checked by check_schedule): z_0 in slot 0 at the
// start; backward steps l, l-1, ..., 1 in order, step k reading z_{k-1} from
// the current state or a slot; phi_j evaluated at most t times in all.
//
// Macro state: the next backward step n (it needs z_{n-1}), the set S of held
// states (all < n, 0 in S) and the counts c_j of phi_j, j < n. A macro move
// restores a held state a, advances to q (one phi evaluation a step), then
// either runs backward step n (q = n - 1, followed by every backward step
// whose input is held) or stores q, into a free slot or in place of a held
// state h when all s slots are full.
//
// Let D(X) be the fewest phi evaluations of any schedule finishing from X
// (infinite when none does). Every rule below is an exchange that never
// raises the evaluations, so from every finishable X some move allowed by the
// rules leads to a Y with D(Y) <= D(X) - (its evaluations, at least one):
//  R1 backward steps run as soon as their input is held or current (they
//     change no slot and no count), and states >= n are dropped (no later
//     step reads them) -- so the current state never matters between moves
//     except during a run, and a held state is current by a free restore;
//  R2 a run never advances onto (or past) a held state h: restoring h
//     instead reaches the same state with fewer evaluations;
//  R3 a run ends in a store or a backward step: a computed state dropped
//     unstored only wasted the evaluations since the last restore or store;
//  R4 a slot is freed only to store into it, and only when none is free
//     (freeing earlier enables nothing);
//  R5 z_0 is never freed, nor a held z_j with c_j = t, and no run passes a
//     step that would reach c_j = t without storing z_j: such a state can
//     never be recomputed, yet backward step j + 1 needs it (pruning a state
//     that cannot finish is always safe).
// Dominance: X = (n, S, c) is cut when an expanded state Y = (n, S, c') with
// c' <= c pointwise exists (any schedule from X also runs from Y, so
// D(Y) <= D(X)). Soundness: if the search failed although the root can
// finish, take the generated finishable state X with the least D(X). If X
// was expanded, its allowed child with smaller D was generated; if X was cut
// by Y, Y was expanded (or is being expanded: it is an ancestor) and its
// allowed child has D <= D(Y) - 1 < D(X). Either way a contradiction.
//
// Lemma (optional, by induction on s + t; it uses only values beta(s', t')
// with s' + t' < s + t that an earlier exhaustive search established):
//  L1 (interval) let a < e be consecutive in S + {n} (the top interval ends
//     at e = n), f the held z_j, 0 < j <= a, with c_j = t, and
//     B = max_{a<j<e} (t - c_j). Project the rest of the schedule, up to
//     backward step a + 1, onto z_a..z_e (z_j -> z_{min(max(j, a), e) - a}):
//     it reverses the e - a steps from a start where only z_a is held (z_e is
//     the segment's end, never read), each step evaluated at most B more
//     times (the last, phi_e, is never needed), with at most s - f slots: z_0
//     and the f frozen states stay held throughout and all project onto the
//     start, which one slot keeps. So e - a <= beta(s - f, B) whenever
//     (s - f, B) != (s, t); below the top interval B < t always holds, as
//     computing z_e evaluated every step before it.
// A state violating a lemma cannot finish, so cutting it keeps soundness.
//
// Relaxation (SearchOptions::relax_counts): after every move the counts
// strictly inside each interval between consecutive held states (and above
// the top one) drop to the interval's least. Let W be the relaxed states from
// which allowed moves through states passing L1 reach n = 0, and d(Y) the
// fewest such moves. A real schedule in the form R1-R5 (one exists whenever
// the root can finish), replayed move by move in the relaxed system, keeps
// the same (n, S) with counts never above the real ones; R5, L1 and the
// dominance are monotone in the counts (lower counts allow every move and
// pass every check the higher ones do), so the root is in W. The argument
// above with d in place of D then shows the relaxed search finds a path: so
// its "no" means no schedule. Its "yes" may be spurious: run_search keeps it
// only when the schedule found passes check_schedule.

namespace stax::checkpoint {

namespace {

constexpr int kMaxSteps = 255;  // state indices fit in a byte
constexpr int kMaxSlots = 30;   // a memo key: n, |S| and up to 30 indices
constexpr int kMaxReps = 120;  // counts are bytes compared 8 at a time (< 128)
constexpr int64_t kMaxDepth = 2000000;  // moves on one search path (see Search::run)

struct Node {
  int n = 0;  // next backward step; 0: done
  int k = 0;  // |S|
  std::array<uint8_t, kMaxSlots> held{};  // S sorted, held[0] = 0 while n > 0
};

struct Key {
  std::array<uint8_t, kMaxSlots + 2> b{};
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < k.b[1] + 2; ++i) h = (h ^ k.b[static_cast<size_t>(i)]) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

struct Move {
  int start, end, evict;  // evict: the held state replaced, -1 for a free slot
};

constexpr uint64_t kHigh = 0x8080808080808080ull;
// Every byte of a is <= the byte of b (bytes < 128).
bool bytes_le(const uint64_t* a, const uint64_t* b, int words) {
  for (int w = 0; w < words; ++w)
    if ((((b[w] | kHigh) - a[w]) & kHigh) != kHigh) return false;
  return true;
}

void settle(Node& x) {
  while (x.n > 0 && std::binary_search(x.held.begin(), x.held.begin() + x.k, static_cast<uint8_t>(x.n - 1))) --x.n;
  while (x.k > 0 && x.held[static_cast<size_t>(x.k - 1)] >= x.n) --x.k;
}

// Exact: the search described above. Relaxed: with SearchOptions'
// relaxation (see search.h); its "no" is final.
enum class Mode { Exact, Relaxed };

class Search {
 public:
  Search(int64_t l, int s, int t, const SearchOptions& o, Mode mode)
      : l_(static_cast<int>(l)), s_(s), t_(t), max_(o.max_states), lemmas_(o.lemmas), relax_(mode != Mode::Exact) {
    cnt_.assign(static_cast<size_t>(l_) + 1, 0);
    cnt_[0] = static_cast<uint8_t>(t_);  // z_0 can never be recomputed (R5)
    buf_.assign(static_cast<size_t>((l_ + 7) / 8), 0);

    lemma_cache_.assign(static_cast<size_t>((s_ + 1) * (t_ + 1)), -2);
  }

  std::optional<bool> run() {
    // The relaxed search can wander (relaxing lowers counts, so a path may
    // revisit a position with smaller counts): the recursion runs on a thread
    // with a large stack, and a path deeper than kMaxDepth aborts.
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, size_t{1} << 30);
    pthread_t th;
    auto body = [](void* self) -> void* {
      auto* me = static_cast<Search*>(self);
      Node x;
      x.n = me->l_;
      x.k = 1;
      settle(x);
      me->ok_ = me->dfs(x);
      return nullptr;
    };
    if (pthread_create(&th, &attr, body, this) != 0) {
      aborted_ = true;
    } else {
      pthread_join(th, nullptr);
    }
    pthread_attr_destroy(&attr);
    if (aborted_) return std::nullopt;
    return ok_;
  }
  const std::vector<Move>& path() const { return path_; }
  int64_t states() const { return states_; }
  int64_t lemma_pruned() const { return lemma_pruned_; }
  bool aborted() const { return aborted_; }

 private:
  std::optional<int64_t> lemma(int s, int t) {
    int64_t& v = lemma_cache_[static_cast<size_t>(s * (t_ + 1) + t)];
    if (v == -2) {
      auto r = lemmas_(s, t);
      v = r ? *r : -1;
    }
    return v < 0 ? std::nullopt : std::optional<int64_t>(v);
  }

  /// L1 (see the top of the file): true when x cannot finish.
  bool lemma_cut(const Node& x) {
    if (!lemmas_) return false;
    int frozen = 0;  // held z_j, 0 < j <= a, with c_j = t
    for (int i = 0; i < x.k; ++i) {
      int a = x.held[static_cast<size_t>(i)];
      int e = i + 1 < x.k ? x.held[static_cast<size_t>(i + 1)] : x.n;
      if (i > 0) frozen += cnt_[static_cast<size_t>(a)] == t_;
      int b = 0;
      for (int j = a + 1; j < e; ++j) b = std::max(b, t_ - cnt_[static_cast<size_t>(j)]);
      if (e - a <= 1 || s_ - frozen + b >= s_ + t_) continue;
      auto bound = lemma(s_ - frozen, b);
      if (bound && e - a > *bound) return true;
    }
    return false;
  }

  /// Dominance memo: false when an expanded state with the same (n, S) and
  /// pointwise no larger counts exists; otherwise records x.
  bool record(const Node& x) {
    Key key;
    key.b[0] = static_cast<uint8_t>(x.n);
    key.b[1] = static_cast<uint8_t>(x.k);
    std::copy(x.held.begin(), x.held.begin() + x.k, key.b.begin() + 2);
    int words = (x.n - 1 + 7) / 8;
    std::fill(buf_.begin(), buf_.begin() + words, 0);
    std::memcpy(buf_.data(), cnt_.data() + 1, static_cast<size_t>(x.n - 1));
    std::vector<uint64_t>& list = seen_[key];
    size_t entries = list.size() / static_cast<size_t>(std::max(words, 1));
    if (words == 0) {
      if (!list.empty()) return false;
      list.push_back(0);
      return true;
    }
    for (size_t e = 0; e < entries; ++e)
      if (bytes_le(list.data() + e * static_cast<size_t>(words), buf_.data(), words)) return false;
    // Drop the entries the new one dominates, then append it.
    size_t kept = 0;
    for (size_t e = 0; e < entries; ++e) {
      const uint64_t* p = list.data() + e * static_cast<size_t>(words);
      if (bytes_le(buf_.data(), p, words)) continue;
      if (kept != e) std::copy(p, p + words, list.data() + kept * static_cast<size_t>(words));
      ++kept;
    }
    list.resize(kept * static_cast<size_t>(words));
    list.insert(list.end(), buf_.begin(), buf_.begin() + words);
    return true;
  }

  bool dfs(const Node& x) {
    if (x.n == 0) return true;
    if (aborted_) return false;
    if (++depth_ > kMaxDepth) aborted_ = true;
    bool r = !aborted_ && expand(x);
    --depth_;
    return r;
  }

  bool expand(const Node& x) {
    if (lemma_cut(x)) {
      ++lemma_pruned_;
      return false;
    }
    if (!record(x)) return false;
    if (++states_ > max_) {
      aborted_ = true;
      return false;
    }
    uint32_t bad = evictions_breaking_l1(x);
    // Starts: the top held state first (the only one that can reach z_{n-1}).
    for (int i = x.k - 1; i >= 0; --i) {
      int a = x.held[static_cast<size_t>(i)];
      int u = i + 1 < x.k ? x.held[static_cast<size_t>(i + 1)] - 1 : x.n - 1;  // R2
      int q = a;
      while (q < u && cnt_[static_cast<size_t>(q + 1)] < t_) {
        ++q;
        if (++cnt_[static_cast<size_t>(q)] == t_) break;  // R5: z_q must be stored
      }
      // Counts of steps a+1..q are raised; try the ends q, q-1, ..., a+1.
      // L1 for the new interval (a, q), cheaply: pre_[q] = max_{a<j<q} (t - c_j).
      int frozen = 0;
      for (int j = 1; j <= i; ++j) frozen += cnt_[x.held[static_cast<size_t>(j)]] == t_;
      // (a stack: the children below use it too)
      size_t base = pre_.size() - static_cast<size_t>(a + 1);
      pre_.push_back(0);
      for (int j = a + 1; j < q; ++j) pre_.push_back(std::max(pre_.back(), t_ - cnt_[static_cast<size_t>(j)]));
      bool found = false;
      for (; q > a && !found; --q) {
        bool lower_ok = true;
        int b = pre_[base + static_cast<size_t>(q)];
        if (lemmas_ && q - a > 1 && s_ - frozen + b < s_ + t_) {
          auto bound = lemma(s_ - frozen, b);
          lower_ok = !bound || q - a <= *bound;
        }
        found = end_run(x, i, q, lower_ok, bad);
        if (!found) --cnt_[static_cast<size_t>(q)];
      }
      if (found) return true;
      pre_.resize(base + static_cast<size_t>(a + 1));
      if (aborted_) return false;
    }
    return false;
  }

  bool go(const Node& y, Move m) {
    size_t mark = undo_.size();
    if (relax_ && m.evict >= 0) relax(y, m.evict);
    path_.push_back(m);
    if (dfs(y)) return true;
    path_.pop_back();
    for (; undo_.size() > mark; undo_.pop_back()) cnt_[undo_.back().first] = undo_.back().second;
    return false;
  }

  /// The relaxation (SearchOptions::relax_counts): each count strictly
  /// inside an interval between consecutive held states (or above the top
  /// one) drops to the interval's least. Only the interval where h was freed
  /// needs it: the root's counts are all 0; a run from a to q adds one to
  /// every count strictly inside (a, q), a part of one relaxed interval,
  /// and leaves (q, e) as it was; a backward step only shortens the top
  /// interval or drops it, making a part of a relaxed one the top.
  void relax(const Node& y, int h) {
    int i = static_cast<int>(std::upper_bound(y.held.begin(), y.held.begin() + y.k, static_cast<uint8_t>(h)) -
                             y.held.begin());
    {
      int a = y.held[static_cast<size_t>(i - 1)];
      int e = i < y.k ? y.held[static_cast<size_t>(i)] : y.n;
      uint8_t low = *std::min_element(cnt_.begin() + a + 1, cnt_.begin() + e);
      for (int j = a + 1; j < e; ++j)
        if (cnt_[static_cast<size_t>(j)] != low) {
          undo_.push_back({static_cast<size_t>(j), cnt_[static_cast<size_t>(j)]});
          cnt_[static_cast<size_t>(j)] = low;
        }
    }
  }

  /// Bit i: freeing held[i] merges its two intervals into one that breaks
  /// L1 with x's counts. A child storing q in (a, e), a and e consecutive in
  /// S, and freeing held[i] not in {a, e} has that merged interval with the
  /// same largest budget (the run changed no count in it; relaxing keeps the
  /// largest budget) and no fewer frozen states below: it breaks L1 too.
  uint32_t evictions_breaking_l1(const Node& x) {
    uint32_t bad = 0;
    if (!lemmas_ || x.k < s_) return bad;
    int frozen = 0;  // held z_j, 0 < j <= held[i-1], with c_j = t
    for (int i = 1; i < x.k; ++i) {
      int lo = x.held[static_cast<size_t>(i - 1)], hi = i + 1 < x.k ? x.held[static_cast<size_t>(i + 1)] : x.n;
      if (i > 1) frozen += cnt_[static_cast<size_t>(lo)] == t_;
      int b = 0;
      for (int j = lo + 1; j < hi; ++j) b = std::max(b, t_ - cnt_[static_cast<size_t>(j)]);
      if (s_ - frozen + b >= s_ + t_) continue;
      auto bound = lemma(s_ - frozen, b);
      if (bound && hi - lo > *bound) bad |= uint32_t{1} << i;
    }
    return bad;
  }

  /// The run from held[ia] ends at q. lower_ok false: the interval (a, q)
  /// breaks L1, so the child is cut unless a itself makes room for q (the
  /// interval below q then starts lower); bad: see evictions_breaking_l1.
  bool end_run(const Node& x, int ia, int q, bool lower_ok, uint32_t bad) {
    int a = x.held[static_cast<size_t>(ia)];
    int e = ia + 1 < x.k ? x.held[static_cast<size_t>(ia + 1)] : -1;
    if (q == x.n - 1) {  // R1: backward step n, then every one whose input is held
      Node y = x;
      --y.n;
      settle(y);
      return go(y, {a, q, -1});
    }
    auto with = [&](int drop) {  // S - {held[drop]} + {q} (drop < 0: nothing)
      Node y;
      y.n = x.n;
      for (int i = 0; i < x.k; ++i)
        if (i != drop) y.held[static_cast<size_t>(y.k++)] = x.held[static_cast<size_t>(i)];
      auto at = std::lower_bound(y.held.begin(), y.held.begin() + y.k, static_cast<uint8_t>(q));
      std::copy_backward(at, y.held.begin() + y.k, y.held.begin() + y.k + 1);
      *at = static_cast<uint8_t>(q);
      ++y.k;
      return y;
    };
    if (x.k < s_) {
      if (!lower_ok) return ++lemma_pruned_, false;
      return go(with(-1), {a, q, -1});
    }
    for (int i = x.k - 1; i >= 1; --i) {  // R4, R5: never z_0 nor a frozen state
      int h = x.held[static_cast<size_t>(i)];
      if (cnt_[static_cast<size_t>(h)] == t_) continue;
      if ((!lower_ok && h != a) || ((bad >> i & 1) && h != a && h != e)) {
        ++lemma_pruned_;
        continue;
      }
      if (go(with(i), {a, q, h})) return true;
      if (aborted_) return false;
    }
    return false;
  }

  int l_, s_, t_;
  int64_t max_;
  ProvenBeta lemmas_;
  std::vector<int64_t> lemma_cache_;
  std::vector<uint8_t> cnt_;  // cnt_[j]: evaluations of phi_j so far (relaxed when relax_)
  std::vector<uint64_t> buf_;
  std::vector<int> pre_;  // per start: pre_[base + q] = max_{a<j<q} (t - c_j)
  std::unordered_map<Key, std::vector<uint64_t>, KeyHash> seen_;
  std::vector<Move> path_;
  bool relax_;
  std::vector<std::pair<size_t, uint8_t>> undo_;
  int64_t states_ = 0, lemma_pruned_ = 0, depth_ = 0;
  bool aborted_ = false, ok_ = false;
};

/// The actions of a macro-move path, with slots assigned.
Schedule to_schedule(int64_t l, int s, const std::vector<Move>& path) {
  Schedule sc{l, s, {}};
  std::vector<int64_t> slot(static_cast<size_t>(s), -1);
  slot[0] = 0;
  int64_t cur = 0, n = l;
  auto slot_of = [&](int64_t state) {
    for (size_t i = 0; i < slot.size(); ++i)
      if (slot[i] == state) return static_cast<int64_t>(i);
    return int64_t{-1};
  };
  auto settle_actions = [&] {
    while (n > 0 && slot_of(n - 1) >= 0) sc.actions.push_back({ActionKind::Backward, n--});
    for (size_t i = 0; i < slot.size(); ++i)
      if (slot[i] >= n && slot[i] >= 0) {
        sc.actions.push_back({ActionKind::Free, static_cast<int64_t>(i)});
        slot[i] = -1;
      }
  };
  settle_actions();
  for (const Move& m : path) {
    if (cur != m.start) sc.actions.push_back({ActionKind::Restore, slot_of(m.start)});
    sc.actions.push_back({ActionKind::Advance, m.end - m.start});
    cur = m.end;
    if (m.end == n - 1) {
      sc.actions.push_back({ActionKind::Backward, n--});
      settle_actions();
      continue;
    }
    if (m.evict >= 0) sc.actions.push_back({ActionKind::Free, slot_of(m.evict)});
    int64_t i = m.evict >= 0 ? slot_of(m.evict) : slot_of(-1);
    if (m.evict >= 0) slot[static_cast<size_t>(i)] = -1;
    sc.actions.push_back({ActionKind::Store, i});
    slot[static_cast<size_t>(i)] = m.end;
  }
  return sc;
}

/// Runs one search; nullopt result with *aborted set when out of range or
/// over the state limit.
std::optional<bool> run_search(int64_t l, int s, int t, SearchStats* stats, const SearchOptions& o,
                               std::vector<Move>* path) {
  auto note = [&](int64_t states, int64_t cut, bool aborted) {
    if (!stats) return;
    stats->states += states;
    stats->lemma_pruned += cut;
    stats->aborted = stats->aborted || aborted;
  };
  if (l < 1 || s < 1 || t < 0) return false;
  s = static_cast<int>(std::min<int64_t>(s, l));  // more slots than states z_0..z_{l-1} never help
  if (l > kMaxSteps || s > kMaxSlots || t > kMaxReps) {
    note(0, 0, true);
    return std::nullopt;
  }
  CheckOptions co;
  co.max_reps = t;
  if (o.relax_counts) {
    Search relaxed(l, s, t, o, Mode::Relaxed);
    auto r = relaxed.run();
    note(relaxed.states(), relaxed.lemma_pruned(), false);
    if (r && !*r) return false;  // no relaxed schedule: no schedule
    // The relaxed schedule may be a real one: the checker decides.
    if (r && check_schedule(to_schedule(l, s, relaxed.path()), co).ok()) {
      if (path) *path = relaxed.path();
      return true;
    }
  }
  if (o.certificates && l <= beta(s, t)) {
    // Theorem 5.4's construction, checked: a certificate, not an assumption.
    auto b = binomial_schedule(l, s, t);
    if (std::holds_alternative<Schedule>(b) && check_schedule(std::get<Schedule>(b), co).ok()) {
      if (stats) ++stats->certified;
      return true;
    }
  }
  Search search(l, s, t, o, Mode::Exact);
  auto r = search.run();
  note(search.states(), search.lemma_pruned(), search.aborted());
  if (r && *r && path) *path = search.path();
  return r;
}

}  // namespace

std::optional<bool> reversible(int64_t l, int s, int t, SearchStats* stats, const SearchOptions& o) {
  return run_search(l, s, t, stats, o, nullptr);
}

std::optional<Schedule> search_schedule(int64_t l, int s, int t, SearchStats* stats, const SearchOptions& o) {
  std::vector<Move> path;
  auto r = run_search(l, s, t, stats, o, &path);
  if (!r || !*r) return std::nullopt;
  return to_schedule(l, static_cast<int>(std::min<int64_t>(s, l)), path);
}

std::optional<int64_t> search_beta(int s, int t, SearchStats* stats, const SearchOptions& o,
                                   std::optional<int64_t> hint) {
  // lo: largest l known reversible (l = 1 always is); hi: least known not.
  int64_t lo = 1;
  std::optional<int64_t> hi;
  auto probe = [&](int64_t l) -> std::optional<bool> {
    auto r = reversible(l, s, t, stats, o);
    if (r && *r) lo = std::max(lo, l);
    if (r && !*r) hi = std::min(hi.value_or(l), l);
    return r;
  };
  if (s < 1 || t < 0) return std::nullopt;
  if (hint && *hint >= 1) {
    if (!probe(*hint) || !probe(*hint + 1)) return std::nullopt;
    if (hi && *hi == lo + 1) return lo;
  }
  while (!hi) {
    if (!probe(std::max(2 * lo, lo + 1))) return std::nullopt;
  }
  while (*hi - lo > 1)
    if (!probe(lo + (*hi - lo) / 2)) return std::nullopt;
  return lo;
}

std::vector<BetaRow> search_beta_table(int max_sum, const SearchOptions& o, double deadline_s,
                                       const std::function<void(const BetaRow&)>& on_row) {
  std::vector<BetaRow> rows;
  std::map<std::pair<int, int>, int64_t> proven;
  SearchOptions with = o;
  with.lemmas = [&proven](int s, int t) -> std::optional<int64_t> {
    auto it = proven.find({s, t});
    return it == proven.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  auto t0 = std::chrono::steady_clock::now();
  for (int sum = 1; sum <= max_sum; ++sum) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > deadline_s) break;
    bool all = true;
    std::vector<std::pair<std::pair<int, int>, int64_t>> found;
    for (int s = 1; s <= sum; ++s) {
      BetaRow row{s, sum - s, std::nullopt, {}, 0};
      auto a = std::chrono::steady_clock::now();
      row.beta = search_beta(s, row.t, &row.stats, with, beta(s, row.t));
      row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
      if (row.beta) found.push_back({{s, row.t}, *row.beta});
      all = all && row.beta.has_value();
      rows.push_back(row);
      if (on_row) on_row(row);
      if (!row.beta) break;  // no verdict: the larger sums would lack this lemma
    }
    // Values of one sum become lemmas only for the next sums.
    for (const auto& [k, v] : found) proven[k] = v;
    if (!all) break;
  }
  return rows;
}

std::optional<int64_t> BetaProver::beta(int s, int t) {
  if (s < 1 || t < 0) return std::nullopt;
  auto it = cache_.find({s, t});
  if (it != cache_.end()) return it->second;
  SearchOptions o;
  o.max_states = max_states_;
  o.lemmas = lemmas();
  o.relax_counts = true;
  auto r = search_beta(s, t, nullptr, o, checkpoint::beta(s, t));
  cache_[{s, t}] = r;
  return r;
}

ProvenBeta BetaProver::lemmas() {
  return [this](int s, int t) { return beta(s, t); };
}

std::string check_beta_table(const std::vector<BetaClaim>& claims, int64_t max_states) {
  BetaProver prover(max_states);
  SearchOptions o;
  o.max_states = max_states;
  o.lemmas = prover.lemmas();
  o.relax_counts = true;
  for (const BetaClaim& c : claims) {
    std::string what = "beta(" + std::to_string(c.s) + ", " + std::to_string(c.t) + ") = " + std::to_string(c.beta);
    auto yes = reversible(c.beta, c.s, c.t, nullptr, o);
    auto no = reversible(c.beta + 1, c.s, c.t, nullptr, o);
    if (!yes || !no) return what + ": the search hit its state limit";
    if (!*yes) return what + " is wrong: no schedule reverses " + std::to_string(c.beta) + " steps";
    if (*no) return what + " is wrong: a schedule reverses " + std::to_string(c.beta + 1) + " steps";
  }
  return "";
}

}  // namespace stax::checkpoint
