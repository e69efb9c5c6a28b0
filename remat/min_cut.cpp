// Max flow / min cut of Definition 5.2's network with Boost.Graph.
#include "remat/min_cut.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/boykov_kolmogorov_max_flow.hpp>
#include <boost/graph/edmonds_karp_max_flow.hpp>
#include <chrono>
#include <numeric>

namespace stax::remat {

namespace {

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using Edge = Traits::edge_descriptor;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS,
    boost::property<boost::vertex_color_t, boost::default_color_type,
                    boost::property<boost::vertex_distance_t, long, boost::property<boost::vertex_predecessor_t, Edge>>>,
    boost::property<boost::edge_capacity_t, int64_t,
                    boost::property<boost::edge_residual_capacity_t, int64_t, boost::property<boost::edge_reverse_t, Edge>>>>;

constexpr size_t kS = 0, kT = 1;
size_t v_in(size_t local) { return 2 + 2 * local; }
size_t v_out(size_t local) { return 3 + 2 * local; }

/// One network over a subset of the values (local index = position in `members`).
struct Piece {
  std::vector<int> members;
  struct Arc {
    size_t from, to;
    int64_t cap;
  };
  std::vector<Arc> arcs;  // every edge of Definition 5.2 in this piece
};

FlowGraph make_graph(const Piece& p, bool fault = false) {
  FlowGraph g(2 + 2 * p.members.size());
  auto cap = boost::get(boost::edge_capacity, g);
  auto rev = boost::get(boost::edge_reverse, g);
  for (const Piece::Arc& a : p.arcs) {
    Edge e = boost::add_edge(a.from, a.to, g).first;
    Edge r = boost::add_edge(a.to, a.from, g).first;
    cap[e] = a.cap + ((fault && a.from >= 2 && a.to == a.from + 1) ? 1 : 0);
    cap[r] = 0;
    rev[e] = r;
    rev[r] = e;
  }
  return g;
}

/// The capacity of the cut (S = vertices where in_s is true) over the piece's
/// edges, saturating at kInfinite, and the values whose split edge crosses it.
int64_t cut_of(const Network& net, const Piece& p, const std::vector<char>& in_s, std::vector<int>& saved) {
  int64_t total = 0;
  for (const Piece::Arc& a : p.arcs)
    if (in_s[a.from] && !in_s[a.to]) total = (a.cap >= kInfinite - total) ? kInfinite : total + a.cap;
  for (size_t i = 0; i < p.members.size(); ++i)
    if (in_s[v_in(i)] && !in_s[v_out(i)]) saved.push_back(p.members[i]);
  (void)net;
  return total;
}

int64_t sat_add(int64_t a, int64_t b) { return (b >= kInfinite - a) ? kInfinite : a + b; }

}  // namespace

int64_t cut_cost(const Network& net, const std::vector<int>& saved) {
  int64_t c = 0;
  for (int i : saved) c = sat_add(c, net.values[size_t(i)].capacity);
  return c;
}

std::optional<std::string> infeasible_path(const Network& net, const std::vector<int>& saved) {
  size_t n = net.values.size();
  std::vector<char> is_saved(n, 0);
  for (int i : saved) is_saved[size_t(i)] = 1;
  std::vector<int> parent(n, -2);
  std::vector<int> queue;
  for (size_t i = 0; i < n; ++i)
    if (net.values[i].in_u() && !is_saved[i]) {
      parent[i] = -1;
      queue.push_back(int(i));
    }
  for (size_t k = 0; k < queue.size(); ++k) {
    int cur = queue[k];
    if (net.values[size_t(cur)].in_b) {
      std::vector<std::string> path;
      for (int x = cur; x != -1; x = parent[size_t(x)]) path.push_back(net.values[size_t(x)].name);
      std::string s;
      for (size_t j = path.size(); j-- > 0;) s += path[j] + (j ? " -> " : "");
      return s;
    }
    for (int u : net.values[size_t(cur)].fw_users)
      if (!is_saved[size_t(u)] && parent[size_t(u)] == -2) {
        parent[size_t(u)] = cur;
        queue.push_back(u);
      }
  }
  return std::nullopt;
}

std::optional<int64_t> brute_force_min_cost(const Network& net) {
  size_t n = net.values.size();
  if (n > 20) return std::nullopt;
  std::optional<int64_t> best;
  std::vector<int> saved;
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    saved.clear();
    for (size_t i = 0; i < n; ++i)
      if (mask & (1u << i)) saved.push_back(int(i));
    int64_t c = cut_cost(net, saved);
    if (c == kInfinite || (best && c >= *best)) continue;
    if (!infeasible_path(net, saved)) best = c;
  }
  return best;
}

MinCut min_cut(const Network& net, const CutOptions& opt) {
  MinCut r;
  size_t n = net.values.size();
  r.vertices = int(2 * n + 2);
  // The infinite capacity: above every finite cut.
  int64_t total = 0;
  for (const Value& v : net.values)
    if (v.capacity != kInfinite) total = sat_add(total, v.capacity);
  if (total >= (int64_t(1) << 61)) {
    r.error = "the capacities add up beyond 2^61: the network is too large for 64-bit flows";
    return r;
  }
  const int64_t inf = total + 1;

  // No finite cut: t is reachable from s over infinite edges alone.
  {
    std::vector<char> reach(n, 0);  // v_in reachable over infinite edges
    std::vector<int> q;
    for (size_t i = 0; i < n; ++i)
      if (net.values[i].in_u()) reach[i] = 1, q.push_back(int(i));
    for (size_t k = 0; k < q.size(); ++k) {
      const Value& v = net.values[size_t(q[k])];
      if (v.capacity != kInfinite) continue;  // v_out not reached this way
      if (v.in_b) {
        r.finite = false;
        return r;
      }
      for (int u : v.fw_users)
        if (!reach[size_t(u)]) reach[size_t(u)] = 1, q.push_back(u);
    }
  }

  // Pieces: components after dropping the edges that never cross a finite cut.
  std::vector<int> comp(n);
  std::iota(comp.begin(), comp.end(), 0);
  auto find = [&](int x) {
    while (comp[size_t(x)] != x) x = comp[size_t(x)] = comp[size_t(comp[size_t(x)])];
    return x;
  };
  size_t edge_count = 0;
  for (size_t i = 0; i < n; ++i) {
    const Value& v = net.values[i];
    edge_count += 1 + (v.in_u() ? 1 : 0) + (v.in_b ? 1 : 0) + v.fw_users.size();
    if (opt.monolithic) {
      comp[size_t(find(int(i)))] = find(0);
      continue;
    }
    for (int u : v.fw_users)
      if (!v.in_b && !net.values[size_t(u)].in_u()) comp[size_t(find(int(i)))] = find(u);
  }
  r.edges = int(edge_count);
  std::vector<int> piece_of(n, -1), local(n, 0);
  std::vector<Piece> pieces;
  for (size_t i = 0; i < n; ++i) {
    int root = find(int(i));
    if (piece_of[size_t(root)] < 0) {
      piece_of[size_t(root)] = int(pieces.size());
      pieces.emplace_back();
    }
    Piece& p = pieces[size_t(piece_of[size_t(root)])];
    local[i] = int(p.members.size());
    p.members.push_back(int(i));
  }
  for (size_t i = 0; i < n; ++i) {
    const Value& v = net.values[i];
    Piece& p = pieces[size_t(piece_of[size_t(find(int(i)))])];
    size_t li = size_t(local[i]);
    int64_t c = v.capacity == kInfinite ? inf : v.capacity;
    p.arcs.push_back({v_in(li), v_out(li), c});
    if (v.in_u()) p.arcs.push_back({kS, v_in(li), inf});
    if (v.in_b) p.arcs.push_back({v_out(li), kT, inf});
    for (int u : v.fw_users) {
      if (!opt.monolithic && (v.in_b || net.values[size_t(u)].in_u())) continue;
      p.arcs.push_back({v_out(li), v_in(size_t(local[size_t(u)])), inf});
    }
  }
  r.components = int(pieces.size());

  using Clock = std::chrono::steady_clock;
  for (const Piece& p : pieces) {
    // A piece without a path from s to t carries no flow and saves nothing.
    bool has_s = false, has_t = false;
    for (const Piece::Arc& a : p.arcs) has_s |= a.from == kS, has_t |= a.to == kT;
    if (!has_s || !has_t) continue;
    size_t nv = 2 + 2 * p.members.size();
    {
      auto t0 = Clock::now();
      FlowGraph g = make_graph(p);
      int64_t f = boost::edmonds_karp_max_flow(g, kS, kT, boost::get(boost::edge_capacity, g),
                                               boost::get(boost::edge_residual_capacity, g),
                                               boost::get(boost::edge_reverse, g), boost::get(boost::vertex_color, g),
                                               boost::get(boost::vertex_predecessor, g));
      r.seconds_ek += std::chrono::duration<double>(Clock::now() - t0).count();
      auto color = boost::get(boost::vertex_color, g);
      std::vector<char> in_s(nv);
      for (size_t v = 0; v < nv; ++v) in_s[v] = color[v] != boost::white_color;
      r.flow_ek = sat_add(r.flow_ek, f);
      r.cut_ek = sat_add(r.cut_ek, cut_of(net, p, in_s, r.saved));
    }
    {
      auto t0 = Clock::now();
      FlowGraph g = make_graph(p, opt.fault == CutOptions::Fault::BkCapacity);
      int64_t f = boost::boykov_kolmogorov_max_flow(
          g, boost::get(boost::edge_capacity, g), boost::get(boost::edge_residual_capacity, g),
          boost::get(boost::edge_reverse, g), boost::get(boost::vertex_predecessor, g),
          boost::get(boost::vertex_color, g), boost::get(boost::vertex_distance, g), boost::get(boost::vertex_index, g),
          kS, kT);
      r.seconds_bk += std::chrono::duration<double>(Clock::now() - t0).count();
      auto color = boost::get(boost::vertex_color, g);
      std::vector<char> in_s(nv);
      for (size_t v = 0; v < nv; ++v) in_s[v] = color[v] == boost::black_color;
      r.flow_bk = sat_add(r.flow_bk, f);
      r.cut_bk = sat_add(r.cut_bk, cut_of(net, p, in_s, r.saved_bk));
    }
  }
  std::sort(r.saved.begin(), r.saved.end());
  std::sort(r.saved_bk.begin(), r.saved_bk.end());
  if (opt.fault == CutOptions::Fault::EkCutDropsOne)
    for (size_t k = 0; k < r.saved.size(); ++k)
      if (net.values[size_t(r.saved[k])].capacity > 0) {
        r.saved.erase(r.saved.begin() + long(k));
        break;
      }

  auto fail = [&](std::string m) {
    if (r.error.empty()) r.error = std::move(m);
  };
  if (r.flow_ek != r.flow_bk)
    fail("Edmonds-Karp's max flow " + std::to_string(r.flow_ek) + " differs from Boykov-Kolmogorov's " +
         std::to_string(r.flow_bk));
  if (r.cut_ek != r.flow_ek)
    fail("Edmonds-Karp's cut has capacity " + std::to_string(r.cut_ek) + ", its flow is " + std::to_string(r.flow_ek));
  if (r.cut_bk != r.flow_bk)
    fail("Boykov-Kolmogorov's cut has capacity " + std::to_string(r.cut_bk) + ", its flow is " +
         std::to_string(r.flow_bk));
  for (const auto* s : {&r.saved, &r.saved_bk}) {
    const char* who = s == &r.saved ? "Edmonds-Karp" : "Boykov-Kolmogorov";
    if (auto path = infeasible_path(net, *s))
      fail(std::string("Proposition 5.1: ") + who + "'s saved set is not feasible: the path " + *path + " misses it");
    int64_t c = cut_cost(net, *s);
    if (c != (s == &r.saved ? r.cut_ek : r.cut_bk))
      fail(std::string("Proposition 5.1: ") + who + "'s cut capacity differs from the sum of c(v) over its saved set (" +
           std::to_string(c) + ")");
  }
  return r;
}

}  // namespace stax::remat
