#include "checkpoint/search.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace stax::checkpoint {

namespace {

struct Node {
  int64_t next;                 // the next backward step (0: done)
  int64_t cur;                  // the current state
  std::vector<int64_t> slots;   // sorted state indices held
  std::vector<uint8_t> counts;  // counts[j-1]: evaluations of phi_j, j < next
};

class Search {
 public:
  Search(int s, int t, int64_t max_states) : s_(s), t_(t), max_(max_states) {}

  std::optional<bool> run(int64_t l) {
    Node n{l, 0, {0}, std::vector<uint8_t>(static_cast<size_t>(l), 0)};
    bool ok = dfs(n);
    if (aborted_) return std::nullopt;
    return ok;
  }
  int64_t visited() const { return states_; }
  bool aborted() const { return aborted_; }

 private:
  static void settle(Node& n) {
    // Eager backward steps; then drop what no later step can use.
    for (;;) {
      int64_t need = n.next - 1;
      if (n.next > 0 && (n.cur == need || std::binary_search(n.slots.begin(), n.slots.end(), need)))
        --n.next;
      else
        break;
    }
    std::erase_if(n.slots, [&](int64_t x) { return x >= n.next; });
    n.counts.resize(static_cast<size_t>(std::max<int64_t>(n.next - 1, 0)));
    if (n.cur >= n.next) n.cur = -1;  // useless now
    // No state before the first held one is available again: the counts of
    // the steps up to it no longer matter.
    int64_t low = n.slots.empty() ? n.next : n.slots.front();
    if (n.cur >= 0) low = std::min(low, n.cur);
    for (int64_t j = 0; j < low && j < static_cast<int64_t>(n.counts.size()); ++j) n.counts[static_cast<size_t>(j)] = 0;
  }

  std::string key(const Node& n) const {
    std::string k;
    auto put = [&](int64_t v) { k.append(reinterpret_cast<const char*>(&v), sizeof v); };
    put(n.next);
    put(n.cur);
    put(static_cast<int64_t>(n.slots.size()));
    for (int64_t x : n.slots) put(x);
    return k;
  }
  /// Records the node; false when a recorded node with the same position
  /// and pointwise no larger counts exists (it can do whatever this one can).
  bool record(const Node& n) {
    auto& list = seen_[key(n)];
    for (const auto& c : list) {
      bool le = true;
      for (size_t i = 0; i < c.size() && le; ++i) le = c[i] <= n.counts[i];
      if (le) return false;
    }
    list.push_back(n.counts);
    ++states_;
    return true;
  }

  bool dfs(Node n) {
    settle(n);
    if (n.next == 0) return true;
    if (aborted_) return false;
    if (!record(n)) return false;
    if (states_ > max_) {
      aborted_ = true;
      return false;
    }
    bool cur_valid = n.cur >= 0;
    bool cur_held = cur_valid && std::binary_search(n.slots.begin(), n.slots.end(), n.cur);
    // Advance one step (never past z_{next-1}).
    if (cur_valid && n.cur + 1 <= n.next - 1 && n.counts[static_cast<size_t>(n.cur)] < t_ &&
        !std::binary_search(n.slots.begin(), n.slots.end(), n.cur + 1)) {
      Node m = n;
      ++m.counts[static_cast<size_t>(m.cur)];
      ++m.cur;
      if (dfs(std::move(m))) return true;
    }
    // Store the current state: into a free slot, or in place of a held one.
    if (cur_valid && !cur_held) {
      if (static_cast<int>(n.slots.size()) < s_) {
        Node m = n;
        m.slots.insert(std::lower_bound(m.slots.begin(), m.slots.end(), m.cur), m.cur);
        if (dfs(std::move(m))) return true;
      } else {
        for (size_t i = 0; i < n.slots.size(); ++i) {
          Node m = n;
          m.slots.erase(m.slots.begin() + static_cast<long>(i));
          m.slots.insert(std::lower_bound(m.slots.begin(), m.slots.end(), m.cur), m.cur);
          if (dfs(std::move(m))) return true;
        }
      }
    }
    // Restore a held state; dropping a computed, unstored current state would
    // only waste the steps that made it.
    if (cur_valid && !cur_held) return false;
    for (int64_t x : n.slots)
      if (x != n.cur) {
        Node m = n;
        m.cur = x;
        if (dfs(std::move(m))) return true;
      }
    return false;
  }

  int s_, t_;
  int64_t max_;
  bool aborted_ = false;
  std::unordered_map<std::string, std::vector<std::vector<uint8_t>>> seen_;
  int64_t states_ = 0;
};

}  // namespace

std::optional<bool> reversible(int64_t l, int s, int t, SearchStats* stats, int64_t max_states) {
  if (l < 1 || s < 1 || t < 0 || t > 255) return false;
  Search search(s, t, max_states);
  auto r = search.run(l);
  if (stats) {
    stats->states += search.visited();
    stats->aborted = stats->aborted || search.aborted();
  }
  return r;
}

std::optional<int64_t> search_beta(int s, int t, SearchStats* stats, int64_t max_states) {
  for (int64_t l = 1;; ++l) {
    auto r = reversible(l, s, t, stats, max_states);
    if (!r) return std::nullopt;
    if (!*r) return l - 1;
  }
}

std::string check_beta_table(const std::vector<BetaClaim>& claims, int64_t max_states) {
  for (const BetaClaim& c : claims) {
    std::string what = "beta(" + std::to_string(c.s) + ", " + std::to_string(c.t) + ") = " + std::to_string(c.beta);
    auto yes = reversible(c.beta, c.s, c.t, nullptr, max_states);
    auto no = reversible(c.beta + 1, c.s, c.t, nullptr, max_states);
    if (!yes || !no) return what + ": the search hit its state limit";
    if (!*yes) return what + " is wrong: no schedule reverses " + std::to_string(c.beta) + " steps";
    if (*no) return what + " is wrong: a schedule reverses " + std::to_string(c.beta + 1) + " steps";
  }
  return "";
}

}  // namespace stax::checkpoint
