#include "checkpoint/executor.h"

#include <algorithm>
#include <memory>
#include <set>

#include "semantics/parser.h"
#include "semantics/random_inputs.h"

namespace stax::checkpoint {

namespace {

using TensorPtr = std::shared_ptr<const sem::Tensor>;

std::string fill(std::string text, int64_t batch, int64_t width) {
  auto subst = [&](const std::string& key, int64_t v) {
    for (size_t p; (p = text.find(key)) != std::string::npos;) text.replace(p, key.size(), std::to_string(v));
  };
  subst("$B", batch);
  subst("$H", width);
  return text;
}

const char* kLayer =
    "let h : f32[$B, $H] = red(sum, 0.0, [$H],\n"
    "    map(mul, view(z, [$B, $H, $H], (i, j, k) -> (i, k)), view(W, [$B, $H, $H], (i, j, k) -> (k, j))))\n"
    "let y : f32[$B, $H] = map(fn(a, c) => tanh(add(a, c)), h, view(b, [$B, $H], (i, j) -> (j)))\n";

std::optional<sem::Program> parse(const std::string& text, std::string* error) {
  auto p = sem::parse_program(text, "<checkpoint chain>");
  if (auto* d = std::get_if<sem::Diag>(&p)) {
    if (error) *error = d->str();
    return std::nullopt;
  }
  return std::get<sem::Program>(std::move(p));
}

}  // namespace

std::string forward_text(int64_t batch, int64_t width) {
  return fill(std::string("# one layer of the chain: y = tanh(z W + b)\n"
                          "input z : f32[$B, $H]\ninput W : f32[$H, $H]\ninput b : f32[$H]\n") +
                  kLayer + "output y\n",
              batch, width);
}

std::string backward_text(int64_t batch, int64_t width) {
  return fill(std::string("# the layer's VJP: g = gy (1 - y^2); gz = g W^T; gW += z^T g; gb += sum_i g\n"
                          "input z : f32[$B, $H]\ninput W : f32[$H, $H]\ninput b : f32[$H]\ninput gy : f32[$B, $H]\n"
                          "input gW : f32[$H, $H]\ninput gb : f32[$H]\n") +
                  kLayer +
                  "let g : f32[$B, $H] = map(fn(d, v) => mul(d, sub(1.0, mul(v, v))), gy, y)\n"
                  "let gz : f32[$B, $H] = red(sum, 0.0, [$H],\n"
                  "    map(mul, view(g, [$B, $H, $H], (i, j, k) -> (i, k)), view(W, [$B, $H, $H], (i, j, k) -> (j, k))))\n"
                  "let dW : f32[$H, $H] = red(sum, 0.0, [$B],\n"
                  "    map(mul, view(z, [$H, $H, $B], (a, c, i) -> (i, a)), view(g, [$H, $H, $B], (a, c, i) -> (i, c))))\n"
                  "let db : f32[$H] = red(sum, 0.0, [$B], view(g, [$H, $B], (c, i) -> (i, c)))\n"
                  "let gW2 : f32[$H, $H] = map(add, gW, dW)\n"
                  "let gb2 : f32[$H] = map(add, gb, db)\n"
                  "output gz, gW2, gb2\n",
              batch, width);
}

std::optional<Chain> make_chain(const ChainOptions& o, std::string* error) {
  if (o.batch < 1 || o.width < 1 || o.batch > 4096 || o.width > 4096) {
    if (error) *error = "the chain's batch and width must lie in 1..4096";
    return std::nullopt;
  }
  Chain c;
  auto f = parse(forward_text(o.batch, o.width), error);
  auto b = parse(backward_text(o.batch, o.width), error);
  if (!f || !b) return std::nullopt;
  c.forward = std::move(*f);
  c.backward = std::move(*b);
  sem::Rng rng(o.seed);
  sem::RandomOptions ro{0.0};  // normal values, no specials
  c.z0 = sem::random_tensor({sem::DType::F32, {o.batch, o.width}}, rng, ro);
  c.W = sem::random_tensor({sem::DType::F32, {o.width, o.width}}, rng, ro);
  c.b = sem::random_tensor({sem::DType::F32, {o.width}}, rng, ro);
  c.seed = sem::Tensor(sem::DType::F32, {o.batch, o.width});
  auto* p = reinterpret_cast<float*>(c.seed.data.data());
  std::fill(p, p + c.seed.size(), 1.0f);
  c.state_bytes = static_cast<int64_t>(c.z0.data.size());
  return c;
}

Runner interpreter_runner() {
  return [](const sem::Program& p, const sem::Inputs& in) { return sem::eval_ieee(p, in); };
}

Execution execute(const Chain& c, const Schedule& s, const Runner& run, const ExecOptions& o) {
  Execution e;
  if (o.check) {
    CheckOptions co;
    co.backward_reads_current_only = true;
    CheckResult r = check_schedule(s, co);
    if (!r.ok()) {
      e.error = "rejected: " + r.error;
      return e;
    }
  }
  if (s.steps < 1 || s.slots < 1 || s.slots > 1000000) {
    e.error = "bad sizes: l = " + std::to_string(s.steps) + ", s = " + std::to_string(s.slots);
    return e;
  }
  std::vector<TensorPtr> slot(static_cast<size_t>(s.slots));
  std::vector<int64_t> label(static_cast<size_t>(s.slots), -1);
  TensorPtr cur = std::make_shared<const sem::Tensor>(c.z0);
  slot[0] = cur;
  label[0] = 0;
  int64_t cur_label = 0;
  e.per_step.assign(static_cast<size_t>(s.steps), 0);
  TensorPtr gy = std::make_shared<const sem::Tensor>(c.seed);
  TensorPtr gW = std::make_shared<const sem::Tensor>(sem::DType::F32, c.W.shape);
  TensorPtr gb = std::make_shared<const sem::Tensor>(sem::DType::F32, c.b.shape);
  auto measure = [&] {
    std::set<const sem::Tensor*> held;
    for (const auto& t : slot)
      if (t) held.insert(t.get());
    if (cur) held.insert(cur.get());
    e.peak_states = std::max(e.peak_states, static_cast<int>(held.size()));
    e.peak_bytes = std::max(e.peak_bytes, static_cast<int64_t>(held.size()) * c.state_bytes);
  };
  measure();
  auto fail = [&](size_t i, const std::string& why) {
    e.error = "action " + std::to_string(i + 1) + " (" + action_text(s.actions[i]) + "): " + why;
    return e;
  };
  for (size_t i = 0; i < s.actions.size(); ++i) {
    const Action& a = s.actions[i];
    bool slot_ok = a.arg >= 0 && a.arg < s.slots;
    switch (a.kind) {
      case ActionKind::Advance:
        if (a.arg < 1 || a.arg > s.steps) return fail(i, "bad step count");
        for (int64_t n = 0; n < a.arg; ++n) {
          sem::IeeeOutcome out = run(c.forward, {{"z", *cur}, {"W", c.W}, {"b", c.b}});
          if (out.failure) return fail(i, "the forward step failed: " + out.failure->str());
          cur = out.outputs.at("y");
          ++cur_label;
          if (cur_label >= 1 && cur_label <= s.steps) ++e.per_step[static_cast<size_t>(cur_label - 1)];
          ++e.forward_steps;
        }
        break;
      case ActionKind::Store:
        if (!slot_ok || slot[static_cast<size_t>(a.arg)]) return fail(i, "no such free slot");
        slot[static_cast<size_t>(a.arg)] = cur;
        label[static_cast<size_t>(a.arg)] = cur_label;
        break;
      case ActionKind::Restore:
        if (!slot_ok || !slot[static_cast<size_t>(a.arg)]) return fail(i, "restore from an empty slot");
        cur = slot[static_cast<size_t>(a.arg)];
        cur_label = label[static_cast<size_t>(a.arg)];
        break;
      case ActionKind::Free:
        if (!slot_ok || !slot[static_cast<size_t>(a.arg)]) return fail(i, "free of an empty slot");
        slot[static_cast<size_t>(a.arg)].reset();
        break;
      case ActionKind::Backward: {
        sem::IeeeOutcome out =
            run(c.backward, {{"z", *cur}, {"W", c.W}, {"b", c.b}, {"gy", *gy}, {"gW", *gW}, {"gb", *gb}});
        if (out.failure) return fail(i, "the backward step failed: " + out.failure->str());
        gy = out.outputs.at("gz");
        gW = out.outputs.at("gW2");
        gb = out.outputs.at("gb2");
        ++e.backward_steps;
        break;
      }
    }
    measure();
  }
  if (e.backward_steps != s.steps) {
    e.error = "ran " + std::to_string(e.backward_steps) + " backward steps of " + std::to_string(s.steps);
    return e;
  }
  e.zbar0 = *gy;
  e.gW = *gW;
  e.gb = *gb;
  return e;
}

Schedule store_all_schedule(int64_t l) {
  Schedule s{l, static_cast<int>(std::max<int64_t>(l - 1, 1)), {}};
  for (int64_t j = 1; j < l - 1; ++j) s.actions.push_back({ActionKind::Advance, 1}), s.actions.push_back({ActionKind::Store, j});
  if (l >= 2) s.actions.push_back({ActionKind::Advance, 1});  // z_{l-1} stays current
  for (int64_t k = l; k >= 1; --k) {
    if (k < l) s.actions.push_back({ActionKind::Restore, k - 1});
    s.actions.push_back({ActionKind::Backward, k});
  }
  return s;
}

std::string compare_bits(const Execution& a, const Execution& b) {
  auto cmp = [](const char* name, const sem::Tensor& x, const sem::Tensor& y) -> std::string {
    if (x.shape != y.shape || x.data.size() != y.data.size()) return std::string(name) + ": shapes differ";
    for (size_t i = 0; i < x.data.size(); ++i)
      if (x.data[i] != y.data[i])
        return std::string(name) + ": byte " + std::to_string(i) + " differs (element " + std::to_string(i / 4) + ")";
    return "";
  };
  for (auto r : {cmp("zbar0", a.zbar0, b.zbar0), cmp("gW", a.gW, b.gW), cmp("gb", a.gb, b.gb)})
    if (!r.empty()) return r;
  return "";
}

}  // namespace stax::checkpoint
