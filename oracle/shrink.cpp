#include "oracle/shrink.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>

#include "semantics/expr_util.h"
#include "semantics/input_gen.h"
#include "semantics/parser.h"
#include "semantics/printer.h"
#include "transforms/index_simplify.h"

namespace stax::oracle {

using namespace sem;
using Clock = std::chrono::steady_clock;

namespace {

int64_t elements_of(const Program& p) {
  int64_t n = 0;
  for (const Input& i : p.inputs) n += num_elements(i.type.shape);
  for (const Binding& b : p.bindings) n += num_elements(b.expr->type.shape);
  return n;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

/// A literal token of the printed program: [begin, end) and whether it is an integer.
struct Literal {
  size_t begin, end;
  bool integer;
};

std::vector<Literal> literals(const std::string& s) {
  std::vector<Literal> v;
  for (size_t i = 0; i < s.size();) {
    if (!is_digit(s[i]) || (i > 0 && (is_word(s[i - 1]) || s[i - 1] == '.'))) {
      ++i;
      continue;
    }
    size_t j = i;
    bool integer = true;
    if (s.compare(i, 2, "0x") == 0) {  // hex float
      j += 2;
      while (j < s.size() && (is_word(s[j]) || s[j] == '.' || ((s[j] == '-' || s[j] == '+') && s[j - 1] == 'p'))) ++j;
      integer = false;
    } else {
      while (j < s.size() && is_digit(s[j])) ++j;
      if (j < s.size() && (s[j] == '.' || s[j] == 'e')) {
        integer = false;
        ++j;
        while (j < s.size() && (is_digit(s[j]) || s[j] == 'e' || ((s[j] == '-' || s[j] == '+') && s[j - 1] == 'e'))) ++j;
      }
    }
    if (i > 0 && s[i - 1] == '-') --i;  // a sign belongs to the literal
    v.push_back({i, j, integer});
    i = j + (i < j ? 0 : 1);
    if (i < j) i = j;
  }
  return v;
}

/// Sum of the integer literals' magnitudes (capped): smaller is simpler.
int64_t literal_weight(const std::string& s) {
  int64_t w = 0;
  for (const Literal& l : literals(s)) {
    if (!l.integer) continue;
    std::string t = s.substr(l.begin, l.end - l.begin);
    if (t.size() > 12) {
      w += 1000000;
      continue;
    }
    w += std::llabs(std::stoll(t));
  }
  return std::min<int64_t>(w, (int64_t(1) << 30) - 1);
}

int64_t score(const Program& p, const std::string& text) {
  return (int64_t(text.size()) + elements_of(p)) * (int64_t(1) << 30) + literal_weight(text);
}

int64_t nonzero_elements(const Inputs& in) {
  int64_t n = 0;
  for (const auto& [name, t] : in) {
    size_t w = size_t(dtype_bytes(t.dtype));
    for (int64_t i = 0; i < t.size(); ++i) {
      const uint8_t* e = t.data.data() + size_t(i) * w;
      for (size_t b = 0; b < w; ++b)
        if (e[b]) {
          ++n;
          break;
        }
    }
  }
  return n;
}

void all_nodes(const Expr& e, std::vector<Expr>& out) {
  sem::for_each_node(e, [&](const Expr& n) { out.push_back(n); });
}

/// Removes bindings that no output needs (by name, index loads included).
Program prune(const Program& p) {
  std::set<std::string> live(p.outputs.begin(), p.outputs.end());
  std::vector<bool> keep(p.bindings.size());
  for (size_t k = p.bindings.size(); k-- > 0;) {
    if (!live.count(p.bindings[k].name)) continue;
    keep[k] = true;
    std::vector<std::string> names;
    collect_free_names(p.bindings[k].expr, names);
    live.insert(names.begin(), names.end());
  }
  Program r = p;
  r.bindings.clear();
  for (size_t k = 0; k < p.bindings.size(); ++k)
    if (keep[k]) r.bindings.push_back(p.bindings[k]);
  r.inputs.clear();
  for (const Input& i : p.inputs)
    if (live.count(i.name)) r.inputs.push_back(i);
  return r;
}

Const zero_of(DType t) { return is_float(t) ? std::get<Const>(const_from_literal("0.0", t)) : Const::i64(0, t); }
Const one_of(DType t) {
  if (is_bool(t)) return Const::boolean(true);
  return is_float(t) ? std::get<Const>(const_from_literal("1.0", t)) : Const::i64(1, t);
}

/// The lambda with every use of instruction i redirected to instruction j
/// (j < i), or to a new constant, then dead instructions removed.
std::optional<Lambda> lambda_replace(const Lambda& f, size_t i, std::optional<size_t> j, std::optional<Const> c) {
  Lambda g = f;
  int32_t target;
  if (j) {
    target = int32_t(*j);
  } else {
    Instr k;
    k.kind = Instr::Kind::Const;
    k.type = f.code[i].type;
    k.value = *c;
    g.code.insert(g.code.begin(), k);
    for (Instr& x : g.code)
      if (x.kind != Instr::Kind::Const && x.kind != Instr::Kind::Param) {
        for (int32_t* o : {&x.a, &x.b, &x.c})
          if (*o >= 0) ++*o;
      }
    ++i;
    target = 0;
  }
  for (Instr& x : g.code)
    if (x.kind == Instr::Kind::Op || x.kind == Instr::Kind::Cast)
      for (int32_t* o : {&x.a, &x.b, &x.c})
        if (*o == int32_t(i)) *o = target;
  // The result: if it was i, it becomes the target.
  size_t result = g.code.size() - 1;
  if (result == i) result = size_t(target);
  // Keep what the result needs, in order.
  std::vector<bool> need(g.code.size(), false);
  need[result] = true;
  for (size_t k = result + 1; k-- > 0;) {
    if (!need[k]) continue;
    const Instr& x = g.code[k];
    if (x.kind == Instr::Kind::Op || x.kind == Instr::Kind::Cast)
      for (int32_t o : {x.a, x.b, x.c})
        if (o >= 0) need[size_t(o)] = true;
  }
  std::vector<int32_t> remap(g.code.size(), -1);
  Lambda h;
  h.params = g.params;
  h.param_types = g.param_types;
  for (size_t k = 0; k <= result; ++k) {
    if (!need[k]) continue;
    Instr x = g.code[k];
    if (x.kind == Instr::Kind::Op || x.kind == Instr::Kind::Cast)
      for (int32_t* o : {&x.a, &x.b, &x.c})
        if (*o >= 0) *o = remap[size_t(*o)];
    remap[k] = int32_t(h.code.size());
    h.code.push_back(x);
  }
  if (h.code.empty() || h.code == f.code) return std::nullopt;
  return h;
}

class Shrinker {
 public:
  Shrinker(const Program& p, const Inputs& in, const ShrinkTarget& t, const ShrinkOptions& o)
      : cur_(p), in_(in), t_(t), o_(o), start_(Clock::now()) {
    text_ = print_program(cur_);
    score_ = score(cur_, text_);
  }

  ShrinkResult run() {
    for (bool progress = true; progress && !out_of_budget();) {
      progress = false;
      progress |= drop_outputs();
      progress |= drop_bindings();
      progress |= replace_subexpressions();
      progress |= simplify_lambdas();
      progress |= shrink_extents();
      progress |= shrink_literals();
    }
    simplify_inputs();
    return {cur_, in_, tests_, accepted_};
  }

 private:
  bool out_of_budget() const {
    return tests_ >= o_.max_tests || std::chrono::duration<double>(Clock::now() - start_).count() > o_.max_seconds;
  }

  /// Parses the candidate's text; keeps it when smaller and still failing.
  bool try_text(const std::string& text) {
    if (out_of_budget()) return false;
    ParseResult r = parse_program(text, "<shrink>");
    auto* q = std::get_if<Program>(&r);
    if (!q) return false;
    std::string canon = print_program(*q);
    int64_t s = score(*q, canon);
    if (s >= score_) return false;
    std::vector<Inputs> tries;
    if (auto a = sem::adapt_inputs(*q, in_)) tries.push_back(std::move(*a));
    bool fresh = false;
    for (size_t k = 0;; ++k) {
      if (k == tries.size()) {
        if (fresh) break;
        fresh = true;
        for (Inputs& x : t_.fresh_inputs(*q)) tries.push_back(std::move(x));
        if (k == tries.size()) break;
      }
      ++tests_;
      if (!t_.fails(*q, tries[k])) continue;
      cur_ = std::move(*q);
      in_ = std::move(tries[k]);
      text_ = std::move(canon);
      score_ = s;
      ++accepted_;
      return true;
    }
    return false;
  }
  bool try_program(const Program& q) { return try_text(print_program(q)); }

  bool drop_outputs() {
    bool any = false;
    for (size_t i = 0; i < cur_.outputs.size() && cur_.outputs.size() > 1;) {
      Program q = cur_;
      q.outputs.erase(q.outputs.begin() + std::ptrdiff_t(i));
      if (try_program(prune(q)) || try_program(q)) {
        any = true;
        continue;
      }
      ++i;
    }
    return any;
  }

  bool drop_bindings() {
    bool any = false;
    if (try_program(prune(cur_))) any = true;
    {
      // Inputs nothing reads.
      std::vector<std::string> used(cur_.outputs);
      for (const Binding& b : cur_.bindings) collect_free_names(b.expr, used);
      Program q = cur_;
      std::erase_if(q.inputs, [&](const Input& i) { return std::find(used.begin(), used.end(), i.name) == used.end(); });
      if (q.inputs.size() < cur_.inputs.size() && try_program(q)) any = true;
    }
    for (size_t k = 0; k < cur_.bindings.size() && !out_of_budget();) {
      Program q = cur_;
      q.bindings.erase(q.bindings.begin() + std::ptrdiff_t(k));
      if (try_program(q)) {
        any = true;
        continue;
      }
      // Inline it into its users instead (an alias is renamed away).
      const Binding& b = cur_.bindings[k];
      bool output = std::find(cur_.outputs.begin(), cur_.outputs.end(), b.name) != cur_.outputs.end();
      if (!output) {
        const auto* alias = std::get_if<NameE>(&b.expr->p);
        for (Binding& u : q.bindings)
          u.expr = alias ? sem::rename(u.expr, b.name, alias->name) : sem::substitute(u.expr, b.name, b.expr);
        if (try_program(q)) {
          any = true;
          continue;
        }
      }
      ++k;
    }
    return any;
  }

  std::vector<Expr> replacements(const Expr& n) {
    std::vector<Expr> v;
    for (const Expr& k : sem::children(n))
      if (k->type == n->type) v.push_back(k);
    if (const auto* l = std::get_if<LetE>(&n->p)) v.push_back(sem::substitute(l->body, l->name, l->value));
    const auto* name = std::get_if<NameE>(&n->p);
    for (const Input& i : cur_.inputs)
      if (i.type == n->type && (!name || name->name != i.name)) v.push_back(make_expr(n->type, NameE{i.name}));
    if (const auto* view = std::get_if<ViewE>(&n->p)) {
      // Index maps: simplified (noise such as `(0*i + 0) % 1` goes), then one
      // component at a time replaced by 0 (always in range of a non-empty dim).
      IndexMap s = xform::simplify_map(view->map, n->type.shape);
      if (!(s == view->map)) v.push_back(make_expr(n->type, ViewE{view->src, s}));
      for (size_t k = 0; k < view->map.exprs.size(); ++k) {
        if (view->map.exprs[k]->kind == IExprNode::Kind::Const) continue;
        IndexMap z = view->map;
        z.exprs[k] = iconst(0);
        v.push_back(make_expr(n->type, ViewE{view->src, z}));
      }
    }
    if (!std::holds_alternative<FullE>(n->p)) {
      v.push_back(make_expr(n->type, FullE{zero_of(n->type.dtype)}));
      v.push_back(make_expr(n->type, FullE{one_of(n->type.dtype)}));
    }
    return v;
  }

  bool replace_subexpressions() {
    bool any = false;
    for (size_t k = 0; k < cur_.bindings.size() && !out_of_budget(); ++k) {
      for (bool again = true; again && k < cur_.bindings.size() && !out_of_budget();) {
        again = false;
        std::vector<Expr> nodes;
        all_nodes(cur_.bindings[k].expr, nodes);
        for (const Expr& n : nodes) {
          for (const Expr& by : replacements(n)) {
            Program q = cur_;
            q.bindings[k].expr = sem::replace_node(q.bindings[k].expr, n.get(), by);
            if (try_program(prune(q)) || try_program(q)) {
              again = any = true;
              break;
            }
          }
          if (again) break;
        }
      }
    }
    return any;
  }

  bool simplify_lambdas() {
    bool any = false;
    for (size_t k = 0; k < cur_.bindings.size() && !out_of_budget(); ++k) {
      for (bool again = true; again && !out_of_budget();) {
        again = false;
        std::vector<Expr> nodes;
        all_nodes(cur_.bindings[k].expr, nodes);
        for (const Expr& n : nodes) {
          const auto* m = std::get_if<MapE>(&n->p);
          if (!m) continue;
          const Lambda& f = m->fn;
          for (size_t i = 0; i < f.code.size() && !again; ++i) {
            const Instr& x = f.code[i];
            if (x.kind != Instr::Kind::Op && x.kind != Instr::Kind::Cast) continue;
            std::vector<Lambda> cands;
            for (int32_t o : {x.a, x.b, x.c})
              if (o >= 0 && f.code[size_t(o)].type == x.type)
                if (auto g = lambda_replace(f, i, size_t(o), std::nullopt)) cands.push_back(*g);
            if (auto g = lambda_replace(f, i, std::nullopt, zero_of(x.type))) cands.push_back(*g);
            if (auto g = lambda_replace(f, i, std::nullopt, one_of(x.type))) cands.push_back(*g);
            for (const Lambda& g : cands) {
              Program q = cur_;
              q.bindings[k].expr = sem::replace_node(q.bindings[k].expr, n.get(), make_expr(n->type, MapE{g, m->args}));
              if (try_program(q)) {
                again = any = true;
                break;
              }
            }
          }
          if (again) break;
        }
      }
    }
    return any;
  }

  /// Every occurrence of one integer at once (an extent appears in every
  /// type that has it): v -> 1, v / 2, v - 1.
  bool shrink_extents() {
    bool any = false;
    std::set<int64_t> values;
    for (const Literal& l : literals(text_))
      if (l.integer && l.end - l.begin < 10) values.insert(std::stoll(text_.substr(l.begin, l.end - l.begin)));
    for (auto it = values.rbegin(); it != values.rend() && !out_of_budget(); ++it) {
      int64_t v = *it;
      if (v <= 1) continue;
      for (int64_t c : {int64_t(1), v / 2, v - 1}) {
        std::string t;
        size_t at = 0;
        for (const Literal& l : literals(text_)) {
          t += text_.substr(at, l.begin - at);
          std::string tok = text_.substr(l.begin, l.end - l.begin);
          t += (l.integer && tok == std::to_string(v)) ? std::to_string(c) : tok;
          at = l.end;
        }
        t += text_.substr(at);
        if (try_text(t)) {
          any = true;
          break;
        }
      }
    }
    return any;
  }

  bool shrink_literals() {
    bool any = false;
    for (size_t idx = 0; !out_of_budget(); ++idx) {
      std::vector<Literal> ls = literals(text_);
      if (idx >= ls.size()) break;
      const Literal& l = ls[idx];
      std::string tok = text_.substr(l.begin, l.end - l.begin);
      std::vector<std::string> cands;
      if (l.integer) {
        if (tok.size() > 18) {
          cands = {"1", "0"};
        } else {
          int64_t v = std::stoll(tok);
          for (int64_t c : {int64_t(0), int64_t(1), v / 2, v - (v > 0 ? 1 : -1)})
            if (std::llabs(c) < std::llabs(v)) cands.push_back(std::to_string(c));
        }
      } else {
        cands = {"0.0", "1.0"};
      }
      for (const std::string& c : cands) {
        if (c == tok) continue;
        std::string t = text_.substr(0, l.begin) + c + text_.substr(l.end);
        if (try_text(t)) {
          any = true;
          break;
        }
      }
    }
    return any;
  }

  void simplify_inputs() {
    for (const Input& i : cur_.inputs) {
      const int64_t n = in_.at(i.name).size();
      size_t w = size_t(dtype_bytes(i.type.dtype));
      for (int64_t chunk = std::max<int64_t>(1, n); chunk >= 1 && !out_of_budget(); chunk /= 2) {
        for (int64_t s = 0; s < n && !out_of_budget(); s += chunk) {
          Inputs cand = in_;
          Tensor& c = cand.at(i.name);
          int64_t e = std::min(n, s + chunk);
          std::memset(c.data.data() + size_t(s) * w, 0, size_t(e - s) * w);
          if (nonzero_elements(cand) >= nonzero_elements(in_)) continue;
          ++tests_;
          if (t_.fails(cur_, cand)) {
            in_ = std::move(cand);
            ++accepted_;
          }
        }
        if (chunk == 1) break;
      }
    }
  }

  Program cur_;
  Inputs in_;
  const ShrinkTarget& t_;
  ShrinkOptions o_;
  Clock::time_point start_;
  std::string text_;
  int64_t score_ = 0;
  int tests_ = 0, accepted_ = 0;
};

}  // namespace

int64_t program_size(const Program& p) { return int64_t(print_program(p).size()) + elements_of(p); }

ShrinkResult shrink(const Program& p, const Inputs& in, const ShrinkTarget& target, const ShrinkOptions& opt) {
  return Shrinker(p, in, target, opt).run();
}

}  // namespace stax::oracle
