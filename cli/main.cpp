// The `stax` command line (DESIGN §8).
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"stax: verified transformations of the Stax tensor core language"};
  app.require_subcommand(1);

  stax::cli::RunOptions run;
  uint64_t seed = 0;
  auto* r = app.add_subcommand("run", "Run a .stx program under the IEEE or the real (MPFR) semantics");
  r->add_option("file", run.file, "program (.stx)")->required();
  r->add_option("--semantics", run.semantics, "ieee (bit-exact floats) or real (MPFR)");
  r->add_option("--backend", run.backend, "interp (the reference interpreter) or cpu (LLVM JIT)");
  r->add_option("--threads", run.threads, "CPU backend threads (0: all)");
  r->add_option("--input", run.inputs, "NAME=FILE.npy (bf16 as *.bf16.npy)");
  auto* seed_opt = r->add_option("--random-inputs", seed, "draw inputs deterministically from SEED");
  r->add_option("--out", run.out_dir, "write outputs (and drawn inputs) as .npy into DIR");
  r->add_option("--precision", run.precision, "MPFR precision in bits for --semantics real")->check(CLI::Range(8, 1 << 16));
  r->add_option("--show", run.show, "elements printed per output");

  stax::cli::ExamplesOptions ex;
  auto* e = app.add_subcommand("examples", "Run every program of a folder under both semantics, print a table");
  e->add_option("dir", ex.dir, "folder of .stx programs");
  e->add_option("--seed", ex.seed, "input seed");

  stax::cli::TransformOptions tr;
  auto* t = app.add_subcommand("transform", "Print T(P) for a transform pipeline");
  t->add_option("file", tr.file, "program (.stx)")->required();
  t->add_option("--transform", tr.transform, "NAME[:key=val...][,NAME...]")->required();
  t->add_option("--max-rewrites", tr.max_rewrites, "stop after N rewrites (bisection)");
  t->add_flag("--log", tr.log, "print every rewrite to stderr");

  stax::cli::CheckOptions ck;
  auto* c = app.add_subcommand("check", "Check P against T(P) by the transform's class, no tolerance");
  c->add_option("file", ck.file, "program (.stx)")->required();
  c->add_option("--transform", ck.transform, "NAME[:key=val...][,NAME...]")->required();
  c->add_option("--backend", ck.backend, "also compile T(P) (cpu) and compare it bit for bit with the interpreter");
  c->add_option("--threads", ck.threads, "CPU backend threads (0: all)");
  c->add_option("--trials", ck.trials, "input sets");
  c->add_option("--seed", ck.seed, "input seed");
  c->add_option("--max-rewrites", ck.max_rewrites, "apply only the first N rewrites");
  c->add_flag("--json", ck.json, "one JSON document");

  stax::cli::TvOptions tv;
  auto* v = app.add_subcommand("tv", "Translation validation of two programs");
  v->add_option("src", tv.src, "source program")->required();
  v->add_option("tgt", tv.tgt, "target program")->required();
  v->add_option("--class", tv.cls, "exact, refines or real");
  v->add_option("--trials", tv.trials, "input sets");
  v->add_option("--seed", tv.seed, "input seed");
  v->add_flag("--json", tv.json, "one JSON document");

  stax::cli::BoundCommandOptions bd;
  uint64_t bound_seed = 0;
  auto* b = app.add_subcommand("bound", "Error bounds of the reductions of T(P) against their exact sums (MPFR)");
  b->add_option("file", bd.file, "program (.stx)")->required();
  b->add_option("--transform", bd.transform, "NAME[:key=val...][,NAME...] (default: the program as written)");
  b->add_option("--input", bd.inputs, "NAME=FILE.npy (bf16 as *.bf16.npy)");
  auto* bound_seed_opt = b->add_option("--random-inputs", bound_seed, "draw the inputs not given from SEED (default 1)");
  b->add_option("--data", bd.data, "kind of drawn inputs: normal, uniform, cancellation or special");
  b->add_option("--top", bd.top, "summands listed for a violation")->check(CLI::Range(0, 1000));
  b->add_flag("--contributions", bd.show_contributions, "list the largest contributions of every worst element");
  b->add_flag("--json", bd.json, "one JSON document");

  stax::cli::ExperimentCommandOptions xp;
  auto* x = app.add_subcommand("experiment", "Reproduce an experiment of the text (CSV, Markdown, PNG)");
  x->add_option("name", xp.name, "experiment name, or all")->required();
  x->add_option("--out", xp.out_dir, "output folder (each experiment writes OUT/NAME/)");
  x->add_option("--min-log2n", xp.min_log2n, "smallest size, log2")->check(CLI::Range(0, 30));
  x->add_option("--max-log2n", xp.max_log2n, "largest size, log2")->check(CLI::Range(0, 30));
  x->add_option("--step-log2n", xp.step_log2n, "size step, log2 (2: n grows x4)")->check(CLI::Range(1, 30));
  x->add_option("--seed", xp.seed, "input seed");

  stax::cli::ProveOptions pv;
  stax::cli::LowerOptions lw;
  auto* lo = app.add_subcommand("lower", "Lower an operator-level graph (JSON) to the core language (seed 6.1-6.8)");
  lo->add_option("graph", lw.graph, "graph file (docs/graph-format.md)")->required();
  lo->add_option("--device", lw.device, "cpu or gpu[:sm=N][:warp=W][:threads=T]");
  lo->add_flag("--json", lw.json, "one JSON document");
  lo->add_flag("--check", lw.check, "compare with the eager lowering on random inputs (exact, or real for splits)");
  lo->add_flag("--eager", lw.eager, "print the eager lowering (every node realized)");
  lo->add_option("--trials", lw.trials, "input sets for --check")->check(CLI::Range(1, 100000));
  lo->add_option("--seed", lw.seed, "input seed for --check");
  auto* pr = app.add_subcommand("prove", "Discharge every index obligation of a program with Z3 (DESIGN §5)");
  pr->add_option("file", pv.file, "program (.stx)")->required();
  pr->add_option("--transform", pv.transform, "also T(P) and the side conditions the transforms check");
  pr->add_option("--timeout-ms", pv.timeout_ms, "per obligation");
  pr->add_flag("--json", pv.json, "one JSON document");

  stax::cli::RewriteOptions rw;
  auto* rr = app.add_subcommand("rewrite", "Prove or refute a scalar rewrite 'LHS => RHS' in Z3's FPA theory");
  rr->add_option("rule", rw.rule, "'LHS => RHS', e.g. 'mul(x, 2.0) => add(x, x)'")->required();
  rr->add_option("--dtype", rw.dtype, "f16, bf16, f32 or f64");
  rr->add_option("--timeout-ms", rw.timeout_ms, "solver timeout");
  rr->add_flag("--half-in-f32", rw.half_in_f32, "f16/bf16 as .stx lambdas compute them: in f32, rounded once");
  rr->add_flag("--json", rw.json, "one JSON document");

  stax::cli::FuzzCommandOptions fz;
  uint64_t fuzz_count = 0;
  auto* fzc = app.add_subcommand("fuzz", "Differential fuzzing campaign: generated programs, random transform "
                                         "pipelines, every backend against the interpreter (SQLite with --db)");
  fzc->add_option("--seed", fz.seed, "first seed of the campaign's seed range (shards: disjoint ranges)");
  auto* fuzz_count_opt = fzc->add_option("--count", fuzz_count, "programs (seeds) in the range");
  fzc->add_option("--time", fz.time, "stop after SEC seconds");
  fzc->add_option("--jobs", fz.jobs, "worker processes");
  fzc->add_option("--db", fz.db, "SQLite database: parameters, counts, findings; an existing one is resumed");
  fzc->add_option("--mutant", fz.mutant, "activate a seeded bug (see --list-mutants)");
  fzc->add_option("--backends", fz.backends, "backends compared with the interpreter, e.g. interp,cpu");
  fzc->add_option("--trials", fz.trials, "input sets per transform check");
  fzc->add_flag("--no-shrink", fz.no_shrink, "store findings unshrunk");
  fzc->add_option("--shrink-seconds", fz.shrink_seconds, "time budget per finding's shrinking");
  fzc->add_option("--out", fz.out_dir, "write reproducers to DIR/finding-SEED/ (with --db)");
  fzc->add_flag("--list-mutants", fz.list_mutants, "list the seeded bugs");
  fzc->add_flag("--quiet", fz.quiet, "no progress line");
  fzc->add_flag("--json", fz.json, "one JSON document");
  fzc->require_subcommand(0, 1);
  stax::cli::FuzzReportOptions fzr;
  auto* fzrc = fzc->add_subcommand("report", "Summary of a campaign database");
  fzrc->add_option("--db", fzr.db, "campaign database")->required();
  fzrc->add_option("--extract", fzr.extract_dir, "write reproducers to DIR/finding-SEED/");
  fzrc->add_flag("--json", fzr.json, "one JSON document");
  stax::cli::FuzzMergeOptions fzm;
  auto* fzmc = fzc->add_subcommand("merge", "Merge campaign databases (seed-range shards)");
  fzmc->add_option("out", fzm.out, "merged database (created if missing)")->required();
  fzmc->add_option("inputs", fzm.inputs, "shard databases")->required();
  stax::cli::FuzzReplayOptions fzp;
  auto* fzpc = fzc->add_subcommand("replay", "Replay a reproducer; exit 1 when the finding reproduces");
  fzpc->add_option("file", fzp.file, "program (.stx)")->required();
  fzpc->add_option("--transform", fzp.transform, "the pipeline of a transform finding");
  fzpc->add_option("--backend", fzp.backend, "the backend of a backend finding");
  fzpc->add_option("--input", fzp.inputs, "NAME=FILE.npy");
  fzpc->add_option("--mutant", fzp.mutant, "the seeded bug the finding was made with");
  stax::cli::FuzzBenchOptions fzb;
  auto* fzbc = fzc->add_subcommand("bench", "README figures: kill rate of the mutants, throughput");
  fzbc->add_option("what", fzb.what, "kill-rate, throughput or all");
  fzbc->add_option("--seed", fzb.seed, "first start seed");
  fzbc->add_option("--starts", fzb.starts, "campaigns per mutant (median over them)");
  fzbc->add_option("--budget", fzb.budget, "seconds per campaign");
  fzbc->add_option("--count", fzb.count, "programs for the throughput figure");
  fzbc->add_option("--mutant", fzb.mutant, "only this mutant");
  fzbc->add_option("--backends", fzb.backends, "backends compared with the interpreter");
  fzbc->add_flag("--json", fzb.json, "one JSON document");

  stax::cli::BenchOptions bn;
  auto* bench = app.add_subcommand("bench", "Time each compiled kernel against a plain copy of the same bytes");
  bench->add_option("file", bn.file, "program (.stx)")->required();
  bench->add_option("--transform", bn.transform, "pipeline applied first, e.g. interleave-lanes:w=16");
  bench->add_option("--backend", bn.backend, "cpu or interp");
  bench->add_option("--input", bn.inputs, "NAME=FILE.npy (others drawn from --random-inputs)");
  bench->add_option("--random-inputs", bn.seed, "seed of the drawn inputs");
  bench->add_option("--threads", bn.threads, "threads (0: all)");
  bench->add_option("--repeats", bn.repeats, "timed runs (the median is reported)");
  bench->add_option("--opt-level", bn.opt_level, "LLVM pipeline O0..O3")->check(CLI::Range(0, 3));
  bench->add_flag("--dump-ir", bn.dump_ir, "print each kernel's optimised LLVM IR to stderr");
  bench->add_flag("--json", bn.json, "one JSON document");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& ex_help) {
    return app.exit(ex_help);
  } catch (const CLI::CallForAllHelp& ex_help) {
    return app.exit(ex_help);
  } catch (const CLI::ParseError& err) {
    std::cerr << "error: " << err.what() << "\n" << "run 'stax --help' for usage\n";
    return 2;
  }
  if (*r) {
    if (*seed_opt) run.random_seed = seed;
    return stax::cli::run_command(run);
  }
  if (*e) return stax::cli::examples_command(ex);
  if (*t) return stax::cli::transform_command(tr);
  if (*c) return stax::cli::check_command(ck);
  if (*v) return stax::cli::tv_command(tv);
  if (*b) {
    if (*bound_seed_opt) bd.random_seed = bound_seed;
    return stax::cli::bound_command(bd);
  }
  if (*x) return stax::cli::experiment_command(xp);
  if (*bench) return stax::cli::bench_command(bn);
  if (*pr) return stax::cli::prove_command(pv);
  if (*lo) return stax::cli::lower_command(lw);
  if (*rr) return stax::cli::rewrite_command(rw);
  if (*fzc) {
    if (*fzrc) return stax::cli::fuzz_report_command(fzr);
    if (*fzmc) return stax::cli::fuzz_merge_command(fzm);
    if (*fzpc) return stax::cli::fuzz_replay_command(fzp);
    if (*fzbc) return stax::cli::fuzz_bench_command(fzb);
    if (*fuzz_count_opt) fz.count = fuzz_count;
    return stax::cli::fuzz_command(fz);
  }
  return 2;
}
