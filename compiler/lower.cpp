// The graph interpreter (§6.1) and the realization policy (6.6). Each
// node's rule (ops.cpp) builds its expression from its operands'
// expressions: a value that is not in memory is passed as its expression
// (Prop. 6.1: fusion is function composition), a realized one by name.
#include "compiler/lower.h"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/ops.h"
#include "compiler/policy.h"
#include "semantics/count_domain.h"
#include "semantics/expr_util.h"

namespace stax::compiler {

using namespace sem;

std::string Device::str() const {
  if (!gpu) return "cpu";
  return "gpu:sm=" + std::to_string(sm) + ":warp=" + std::to_string(warp) + ":threads=" + std::to_string(threads_per_sm);
}

std::variant<Device, std::string> parse_device(std::string_view spec) {
  Device d;
  std::string s(spec);
  std::string head = s.substr(0, s.find(':'));
  if (head == "cpu") {
    if (head.size() != s.size()) return std::string("device 'cpu' takes no properties");
    return d;
  }
  if (head != "gpu") return "unknown device '" + s + "' (expected cpu or gpu[:sm=N][:warp=W][:threads=T])";
  d.gpu = true;
  size_t pos = head.size();
  while (pos < s.size()) {
    size_t next = s.find(':', pos + 1);
    std::string kv = s.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    size_t eq = kv.find('=');
    std::string key = kv.substr(0, eq);
    int64_t v = 0;
    try {
      size_t used = 0;
      if (eq == std::string::npos) throw std::invalid_argument("no value");
      v = std::stoll(kv.substr(eq + 1), &used);
      if (used != kv.size() - eq - 1) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      return "device property '" + kv + "' must be KEY=INTEGER";
    }
    if (v < 1 || v > (int64_t(1) << 20)) return "device property '" + kv + "' must be between 1 and 2^20";
    if (key == "sm") d.sm = v;
    else if (key == "warp") d.warp = v;
    else if (key == "threads") d.threads_per_sm = v;
    else return "unknown device property '" + key + "' (sm, warp, threads)";
    pos = next == std::string::npos ? s.size() : next;
  }
  return d;
}

RealizeLimits RealizeLimits::of(const Device& d) {
  return d.gpu ? RealizeLimits{30, 4, 8, false} : RealizeLimits{50, 4, 12, true};
}

namespace {

/// What 6.6's thresholds measure on an inlined expression: its op count (the
/// Count domain on each map's lambda, plus one per reduction), the reads and
/// the buffers read, and the expensive ops it contains (by name).
struct Cost {
  int64_t ops = 0, reads = 0;
  std::set<std::string> buffers;
  std::set<std::string> expensive;
};

bool is_expensive(ScalarOp op) {
  switch (op) {
    case ScalarOp::Exp:
    case ScalarOp::Log:
    case ScalarOp::Log10:
    case ScalarOp::Log1p:
    case ScalarOp::Log2:
    case ScalarOp::Sigmoid:
    case ScalarOp::Tanh: return true;
    default: return false;
  }
}

void add_cost(const Expr& e, Cost& c) {
  std::visit(
      [&](const auto& p) {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, NameE>) {
          ++c.reads;
          c.buffers.insert(p.name);
        } else if constexpr (std::is_same_v<T, MapE>) {
          OpCount k = count_ops(p.fn);
          c.ops += k.ops;
          for (ScalarOp op : k.used)
            if (is_expensive(op)) c.expensive.insert(std::string(op_name(op)));
          for (const Expr& a : p.args) add_cost(a, c);
        } else if constexpr (std::is_same_v<T, ViewE>) {
          for (const IExpr& x : p.map.exprs)
            if (iexpr_has_load(x)) ++c.reads;
          add_cost(p.src, c);
        } else if constexpr (std::is_same_v<T, RedE>) {
          ++c.ops;
          add_cost(p.src, c);
        } else if constexpr (std::is_same_v<T, LetE>) {
          add_cost(p.value, c);
          add_cost(p.body, c);
        }
      },
      e->p);
}

bool is_reduction(const Expr& e) {
  if (std::holds_alternative<RedE>(e->p)) return true;
  if (const auto* v = std::get_if<ViewE>(&e->p)) return is_reduction(v->src);
  return false;
}

struct Interp {
  const Graph& g;
  LowerOptions opt;
  RealizeLimits lim;
  std::map<std::string, Expr> val;  // NameE when in memory, else the inlined expression
  std::set<std::string> in_memory;
  std::map<std::string, std::vector<std::string>> users;
  std::set<std::string> outputs;
  Program prog;
  std::vector<Decision> decisions;
  std::map<std::string, size_t> decision_of;

  Interp(const Graph& gr, const LowerOptions& o) : g(gr), opt(o), lim(RealizeLimits::of(o.device)) {
    for (const GraphInput& in : g.inputs) {
      prog.inputs.push_back({in.name, in.type, {}});
      val[in.name] = make_expr(in.type, NameE{in.name});
      in_memory.insert(in.name);
    }
    for (const Node& n : g.nodes) {
      std::set<std::string> seen;
      for (const std::string& r : node_refs(n))
        if (seen.insert(r).second) users[r].push_back(n.name);
    }
    outputs.insert(g.outputs.begin(), g.outputs.end());
    // A graph may list a value twice (a gradient that is also a forward
    // output); a program lists it once.
    for (const std::string& o : g.outputs)
      if (std::find(prog.outputs.begin(), prog.outputs.end(), o) == prog.outputs.end()) prog.outputs.push_back(o);
    prog.file = g.file;
  }

  void realize(const std::string& name, const std::string& reason) {
    if (in_memory.count(name)) return;
    prog.bindings.push_back({name, val.at(name), {}});
    val[name] = make_expr(val.at(name)->type, NameE{name});
    in_memory.insert(name);
    auto it = decision_of.find(name);
    if (it != decision_of.end()) decisions[it->second] = {name, true, reason};
    else {
      decision_of[name] = decisions.size();
      decisions.push_back({name, true, reason});
    }
  }

  /// Depths of the expressions measured so far: an inlined operand was
  /// measured when its own node was decided, so a chain costs O(1) a node.
  std::map<const sem::ExprNode*, int> depth_memo;

  void decide(const Node& n) {
    const std::string& name = n.name;
    size_t k = users[name].size();
    if (opt.eager) return realize(name, "eager: every node is realized");
    if (outputs.count(name)) return realize(name, "graph output: written to memory");
    Expr e = val.at(name);
    // Beyond the text's rules: a long chain of single-user nodes would inline
    // into one expression nested past what .stx (256 levels) and the
    // recursive passes over it allow.
    if (int d = sem::expr_depth(e, &depth_memo); d > sem::kMaxExprDepth)
      return realize(name, "nesting depth " + std::to_string(d) + " above " + std::to_string(sem::kMaxExprDepth) +
                               ": realized so that the program stays within .stx's 256 levels");
    std::string why;
    if (k == 0) why = "no users: dropped (dead)";
    else if (is_reduction(e)) return realize(name, "a reduction read by another node: its users need it in memory");
    else if (k == 1) why = "one user (" + users[name][0] + "): inlined, Prop. 6.1";
    else {
      Cost c;
      add_cost(e, c);
      std::string figures = " (" + std::to_string(k) + " users, " + std::to_string(c.ops) + " ops, " +
                            std::to_string(c.buffers.size()) + " buffers, " + std::to_string(c.reads) + " reads)";
      if (lim.expensive_ops && !c.expensive.empty())
        return realize(name, "rule 1: CPU and it contains " + *c.expensive.begin() + figures);
      if (lim.expensive_ops && k > 5 && c.ops * 5 >= lim.max_ops * 4)
        return realize(name, "rule 2: CPU, more than 5 users and an op count near the limit " +
                                 std::to_string(lim.max_ops) + figures);
      if (c.ops > lim.max_ops) return realize(name, "rule 3: op count above " + std::to_string(lim.max_ops) + figures);
      if (int64_t(c.buffers.size()) > lim.max_buffers)
        return realize(name, "rule 4: reads more than " + std::to_string(lim.max_buffers) + " buffers" + figures);
      if (c.reads > lim.max_acc_reads)
        return realize(name, "rule 4: more than " + std::to_string(lim.max_acc_reads) + " accumulated reads" + figures);
      why = "below every threshold of 6.6: inlined into each user" + figures;
    }
    decision_of[name] = decisions.size();
    decisions.push_back({name, false, why});
  }

  /// The first shape in `e` (its type or an operand's, e.g. a matmul's
  /// broadcast view) over the limit of .stx; each node is looked at once.
  std::set<const sem::ExprNode*> sized;
  const sem::Shape* oversized(const Expr& e) {
    if (!sized.insert(e.get()).second) return nullptr;
    if (sem::too_many_elements(e->type.shape)) return &e->type.shape;
    for (const Expr& c : sem::children(e))
      if (const sem::Shape* s = oversized(c)) return s;
    return nullptr;
  }

  std::optional<GraphError> run() {
    detail::RuleEnv env;
    env.ref = [this](const std::string& n) { return val.at(n); };
    env.is_realized = [this](const std::string& n) { return in_memory.count(n) > 0; };
    env.max_packed_fold = opt.device.gpu ? 0 : 1024;
    env.in_memory = [this](const std::string& n, const std::string& why) {
      realize(n, "a user needs it in memory: " + why);
      return n;
    };
    for (const Node& n : g.nodes) {
      try {
        val[n.name] = detail::lower_node(n, env);
        if (const sem::Shape* s = oversized(val[n.name]))
          return GraphError{g.file, n.name, "(" + n.op + ") a shape of its lowering, " + sem::shape_text(*s) +
                                                ", has more than 2^48 elements (the limit of .stx)"};
      } catch (const detail::NodeError& e) {
        return GraphError{g.file, n.name, "(" + n.op + ") " + e.message};
      }
      decide(n);
    }
    return std::nullopt;
  }
};

}  // namespace

std::variant<Lowered, GraphError> lower_graph(const Graph& g0, const LowerOptions& opt) {
  auto dg = decompose(g0);
  if (auto* e = std::get_if<GraphError>(&dg)) return *e;
  const Graph& g = std::get<Graph>(dg);
  Interp in(g, opt);
  if (auto e = in.run()) return *e;
  Lowered l;
  l.decisions = std::move(in.decisions);
  l.program = std::move(in.prog);
  if (opt.eager) return l;
  run_policies(l, opt.device);
  return l;
}

}  // namespace stax::compiler
