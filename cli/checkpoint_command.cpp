// `stax checkpoint` (docs/design.md §8; §5.8): a reversal schedule for a chain of
// --steps steps with --slots checkpoint slots — uniform segments (Theorem
// 5.3), binomial (Theorem 5.4, revolve) or the fewest forward steps — checked
// by the schedule checker, printed with its counts, and with --execute run on
// a chain of tanh layers and compared bit for bit with storing every state.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "checkpoint/executor.h"
#include "checkpoint/generators.h"
#include "checkpoint/schedule.h"
#include "cli/common.h"
#include "cli/subcommands.h"

namespace stax::cli {

namespace {

namespace ck = stax::checkpoint;

struct CheckpointOptions {
  int64_t steps = 0, slots = 0, segments = 0;
  std::optional<int64_t> reps;
  std::string schedule = "binomial";
  bool json = false, execute = false;
  std::string backend = "interp";
  int threads = 0;
  int64_t batch = 4, width = 8;
  uint64_t seed = 1;
};

int usage(const std::string& msg) {
  std::cerr << "error: " << msg << "\n";
  return 2;
}

int checkpoint_command(const CheckpointOptions& o) {
  if (o.steps < 1) return usage("--steps must be at least 1 (got " + std::to_string(o.steps) + ")");
  if (o.slots < 1) return usage("--slots must be at least 1: slot 0 holds z_0 (got " + std::to_string(o.slots) + ")");
  if (o.steps > 100000 || o.slots > 100000) return usage("--steps and --slots at most 100000");
  if (o.reps && *o.reps < 0) return usage("--reps must be at least 0 (got " + std::to_string(*o.reps) + ")");
  if (o.backend != "interp" && o.backend != "cpu")
    return usage("--backend expects interp or cpu, got '" + o.backend + "'");
  ck::Schedule s;
  if (o.schedule == "uniform") {
    if (o.segments < 0 || o.segments > o.steps)
      return usage("--segments must lie in 1..l (got " + std::to_string(o.segments) + ")");
    int64_t c = o.segments ? o.segments : ck::ceil_sqrt(o.steps);
    int64_t need = ck::uniform_slots(o.steps, c);
    if (o.slots < need)
      return usage("uniform segments (c = " + std::to_string(c) + ") for l = " + std::to_string(o.steps) + " need " +
                   std::to_string(need) + " slots, --slots is " + std::to_string(o.slots));
    s = ck::uniform_schedule(o.steps, c);
    s.slots = static_cast<int>(o.slots);
  } else if (o.schedule == "binomial" || o.schedule == "optimal") {
    if (o.schedule == "optimal" && o.reps) return usage("--reps applies to --schedule binomial or uniform only");
    if (o.steps > 20000) return usage("binomial and optimal schedules: --steps at most 20000");
    auto r = o.schedule == "binomial" ? ck::binomial_schedule(o.steps, o.slots, o.reps)
                                      : ck::optimal_schedule(o.steps, o.slots);
    if (auto* e = std::get_if<ck::GenError>(&r)) return usage(e->message);
    s = std::get<ck::Schedule>(std::move(r));
  } else {
    return usage("--schedule expects uniform, binomial or optimal, got '" + o.schedule + "'");
  }
  ck::CheckOptions co;
  co.max_reps = o.reps;
  ck::CheckResult chk = ck::check_schedule(s, co);
  if (!chk.ok()) {
    if (o.schedule == "uniform" && o.reps) return usage("the uniform schedule does not fit --reps: " + chk.error);
    std::cerr << "error: the generated schedule is illegal: " << chk.error << "\n";
    return 1;
  }
  const ck::Counts& c = *chk.counts;
  int64_t least_t = ck::least_reps(o.steps, o.slots);
  int64_t revolve = ck::revolve_forward_steps(o.steps, o.slots);
  nlohmann::json j;
  j["schedule"] = o.schedule;
  j["steps"] = o.steps;
  j["slots"] = o.slots;
  j["reps"] = c.max_reps;
  if (o.reps) j["reps_bound"] = *o.reps;
  j["least_reps"] = least_t;
  j["beta"] = ck::beta(o.slots, least_t);
  j["forward_steps"] = c.forward_steps;
  j["revolve_forward_steps"] = revolve;
  j["peak_states"] = c.peak_states;
  j["peak_slots"] = c.peak_slots;
  j["per_step"] = c.per_step;
  nlohmann::json actions = nlohmann::json::array();
  for (const ck::Action& a : s.actions) actions.push_back(ck::action_json(a));
  j["actions"] = actions;
  int code = 0;
  std::ostream& os = std::cout;
  if (!o.json) {
    os << "schedule " << o.schedule << ": l = " << o.steps << " steps, s = " << o.slots << " slots";
    if (o.reps) os << ", t <= " << *o.reps;
    os << "\n" << s.actions.size() << " actions:\n" << ck::schedule_text(s);
    os << "forward steps: " << c.forward_steps << " (store everything: " << o.steps - 1
       << "; revolve's minimum t*l - beta(s+1, t-1) with t = " << least_t << ": " << revolve << ")\n";
    os << "repetitions: at most " << c.max_reps << " evaluations of a step (least possible t = " << least_t
       << ", beta(s, t) = C(s+t, s) = " << ck::beta(o.slots, least_t) << ")\n";
    os << "peak: " << c.peak_states << " states held (" << c.peak_slots << " slots)\n";
    os << "per-step evaluations (phi_1..phi_l):";
    for (int64_t n : c.per_step) os << " " << n;
    os << "\n";
  }
  if (o.execute) {
    std::string err;
    auto chain = ck::make_chain({o.batch, o.width, o.seed}, &err);
    if (!chain) return usage(err);
    ck::Runner run = [&](const sem::Program& p, const sem::Inputs& in) {
      return run_on_backend(o.backend, p, in, o.threads);
    };
    int rc = exit_on_backend_error([&] {
      ck::Execution ex = ck::execute(*chain, s, run);
      ck::Execution ref = ck::execute(*chain, ck::store_all_schedule(o.steps), run);
      nlohmann::json x;
      x["backend"] = o.backend;
      x["batch"] = o.batch;
      x["width"] = o.width;
      x["state_bytes"] = chain->state_bytes;
      if (!ex.ok() || !ref.ok()) {
        x["error"] = ex.ok() ? ref.error : ex.error;
        j["execute"] = x;
        if (!o.json) os << "execute: " << x["error"].get<std::string>() << "\n";
        return 1;
      }
      std::string diff = ck::compare_bits(ex, ref);
      x["forward_steps"] = ex.forward_steps;
      x["per_step"] = ex.per_step;
      x["peak_states"] = ex.peak_states;
      x["peak_bytes"] = ex.peak_bytes;
      x["store_all_peak_states"] = ref.peak_states;
      x["store_all_peak_bytes"] = ref.peak_bytes;
      x["store_all_forward_steps"] = ref.forward_steps;
      x["bit_identical"] = diff.empty();
      if (!diff.empty()) x["difference"] = diff;
      bool counts_agree = ex.forward_steps == c.forward_steps && ex.per_step == c.per_step;
      x["counts_agree"] = counts_agree;
      j["execute"] = x;
      if (!o.json) {
        os << "execute (" << o.backend << ", tanh layers f32[" << o.batch << ", " << o.width << "]): "
           << ex.forward_steps << " forward and " << ex.backward_steps << " backward programs run; peak "
           << ex.peak_states << " states, " << ex.peak_bytes << " bytes (store everything: " << ref.peak_states
           << " states, " << ref.peak_bytes << " bytes)\n";
        os << "gradients (zbar_0, gW, gb) against store-everything: "
           << (diff.empty() ? "bit-identical" : "DIFFER: " + diff) << "\n";
        if (!counts_agree) os << "the executor's counts differ from the checker's\n";
      }
      return diff.empty() && counts_agree ? 0 : 1;
    });
    code = rc;
  }
  if (o.json) std::cout << j.dump(2) << "\n";
  return code;
}

}  // namespace

Subcommand register_checkpoint(CLI::App& app) {
  auto o = std::make_shared<CheckpointOptions>();
  auto reps = std::make_shared<int64_t>(0);
  auto* c = app.add_subcommand("checkpoint", "A reversal schedule for a chain under a slot budget (§5.8)");
  c->add_option("--steps", o->steps, "chain length l")->required();
  c->add_option("--slots", o->slots, "checkpoint slots s (slot 0 holds z_0)")->required();
  auto* reps_opt = c->add_option("--reps", *reps, "at most T evaluations of each forward step (default: the least)");
  c->add_option("--schedule", o->schedule, "uniform, binomial (default) or optimal");
  c->add_option("--segments", o->segments, "uniform: the number of segments c (default ceil(sqrt(l)))");
  c->add_flag("--json", o->json, "one JSON document");
  c->add_flag("--execute", o->execute, "run the schedule on a chain of tanh layers; compare with store-everything");
  c->add_option("--backend", o->backend, "--execute on interp (default) or cpu");
  c->add_option("--threads", o->threads, "CPU backend threads (0: all)");
  c->add_option("--batch", o->batch, "--execute: rows of a state (default 4)");
  c->add_option("--width", o->width, "--execute: columns of a state (default 8)");
  c->add_option("--seed", o->seed, "--execute: seed of z_0, W and b");
  return {c, [o, reps, reps_opt] {
            if (*reps_opt) o->reps = *reps;
            return checkpoint_command(*o);
          }};
}

}  // namespace stax::cli
