// The `stax` command (docs/design.md §8): the options and the entry point of every
// subcommand, callable without the command line (cli/subcommands.h parses
// it). Each returns the process exit code: 0 success, 1 the program failed
// (⊥) or a check found a counterexample, 2 bad usage or bad input.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "semantics/evaluator.h"
#include "transforms/transform.h"

#include "oracle/fuzz.h"

namespace stax::cli {

struct RunOptions {
  std::string file;
  std::string semantics = "ieee";
  std::string backend = "interp";
  std::vector<std::string> inputs;  ///< NAME=FILE.npy
  std::optional<uint64_t> random_seed;
  std::string out_dir;
  long precision = 256;
  int show = 8;     ///< elements printed per output
  int threads = 0;  ///< CPU backend threads (0: all)
  std::string arch = "sm_90";  ///< GPU backend: the target architecture
};
int run_command(const RunOptions& o);

struct ExamplesOptions {
  std::string dir = "examples";
  uint64_t seed = 1;
};
/// Runs every program of a folder under both semantics; prints a table.
int examples_command(const ExamplesOptions& o);

struct TransformOptions {
  std::string file, transform;
  int64_t max_rewrites = -1;
  bool log = false;
};
/// Prints T(P) (and, with log, every rewrite to stderr).
int transform_command(const TransformOptions& o);

/// The prover's flags of `stax check` and `stax tv`: by default
/// a proof is tried first when the programs are small enough.
struct ProveFlags {
  bool require = false;  ///< --prove: a verdict that is not proved or refuted exits 3
  bool off = false;      ///< --no-prove: testing only
  unsigned timeout_ms = 10000;
  int64_t max_elements = 4096;
  int64_t max_terms = 200000;
};

struct CheckCommandOptions {
  std::string file, transform;
  ProveFlags prove;
  std::string backend = "interp";  ///< also compile T(P) and compare it with the interpreter on T(P)
  std::string arch = "sm_90";      ///< GPU backend: the target architecture
  int threads = 0;
  int trials = 16;
  uint64_t seed = 1;
  int64_t max_rewrites = -1;
  bool json = false;
};
/// Checks P against T(P) by the class the pipeline declares (class real:
/// equal Real semantics and float results within their error bounds).
int check_command(const CheckCommandOptions& o);

struct TvOptions {
  std::string src, tgt, cls = "exact";
  ProveFlags prove;
  int trials = 16;
  uint64_t seed = 1;
  bool json = false;
};
/// Translation validation of any two programs with the same interface.
int tv_command(const TvOptions& o);

struct LowerCommandOptions {
  std::string graph;
  std::string device = "cpu";
  bool json = false;
  bool check = false;
  bool eager = false;  ///< print the eager lowering (every node realized)
  int trials = 8;
  uint64_t seed = 1;
};
/// `stax lower`: an operator-level graph (JSON) to the core language with the
/// text's policies (§6.1–6.8); --check compares it with the eager lowering.
int lower_command(const LowerCommandOptions& o);

struct PartitionCommandOptions {
  std::string graph;                ///< a joint graph (autodiff/joint_graph.h) or a forward graph
  std::string strategy = "min-cut"; ///< min-cut, save-all, recompute-all
  /// Peak live bytes (beyond the text, remat/budget_plan.h): the node
  /// schedules of store-all, min-cut, the heuristic and the exact solver.
  std::optional<int64_t> memory_budget;
  std::string solver = "auto";  ///< exact, heuristic, auto
  bool json = false;
  bool verify = true;  ///< run the forward and backward graphs against the joint graph
  int trials = 8;
  uint64_t seed = 1;
};
/// `stax partition`: the min-cut partition of a joint graph (§5.4–5.5):
/// the network as Table 5.1, the flow, the cut, the two graphs, and the check
/// that running them in turn gives the joint graph's bits.
int partition_command(const PartitionCommandOptions& o);

struct TrainStepOptions {
  std::string graph;                ///< a joint graph or a forward graph
  std::string strategy = "min-cut";
  std::optional<int64_t> memory_budget;  ///< run the budgeted node schedule instead of the partition
  std::string solver = "auto";
  std::vector<std::string> inputs;  ///< NAME=FILE.npy (primals and tangents)
  std::optional<uint64_t> random_seed;
  std::string backend = "interp";
  int threads = 0;
  std::string out_dir;
  bool forward_only = false;
  bool json = false;
};
/// `stax train-step`: the partition's forward and backward, compiled and run
/// in turn (§5.6), checked against the joint graph bit for bit.
int train_step_command(const TrainStepOptions& o);

struct BoundCommandOptions {
  std::string file, transform;      ///< without a transform: P as written
  std::vector<std::string> inputs;  ///< NAME=FILE.npy
  std::optional<uint64_t> random_seed;
  std::string data = "normal";  ///< the oracle's input kind for drawn inputs
  int top = 8;                  ///< contributions listed for a violation
  bool show_contributions = false;
  bool json = false;
};
/// The error bound of every reduction of T(P) against the exact sum of its
/// summands (docs/design.md §4). Exit 1 when a ratio exceeds 1 or the program is ⊥.
int bound_command(const BoundCommandOptions& o);

struct ExperimentCommandOptions {
  std::string name;  ///< an experiment, or "all"
  std::string out_dir = "out/experiments";
  int min_log2n = 4, max_log2n = 24, step_log2n = 2;
  uint64_t seed = 1;
  std::string examples_dir = "examples/graphs";  ///< the section-5 experiments' graphs
  bool quick = false;  ///< smaller sweeps (experiments that have one)
  std::vector<std::string> expect_override;  ///< all: ROW=VALUE (test hook: a wrong expected value)
  std::vector<std::string> rows;             ///< all: only these rows
};
/// Runs experiments of the text; each writes CSV, Markdown and PNG under
/// OUT/NAME/.
int experiment_command(const ExperimentCommandOptions& o);

struct ProveOptions {
  std::string file, transform;  ///< with a transform: also T(P) and its side conditions
  unsigned timeout_ms = 2000;
  bool json = false;
};
/// Every index obligation (docs/design.md §5) with verdict and time. Exit 0 when all
/// are proved, 1 when one is refuted as a bug (an access out of bounds, an
/// unsound interval), 3 when some are unknown or not proved but handled at
/// run time (an index from memory keeps its check).
int prove_command(const ProveOptions& o);

struct RewriteCommandOptions {
  std::string rule;  ///< 'LHS => RHS' in the .stx lambda syntax
  std::string dtype = "f16";
  unsigned timeout_ms = 10000;
  bool half_in_f32 = false;
  bool json = false;
};
/// Alive-style scalar rewrite in Z3's FPA theory. Exit 0 proved, 1 refuted
/// (counterexample printed), 3 unknown (timeout), 2 malformed rule.
int rewrite_command(const RewriteCommandOptions& o);

/// The backends `stax fuzz` compares with the interpreter, from a spec such
/// as "interp,cpu" (the interpreter is the reference and needs no runner).
/// Throws std::invalid_argument for an unknown name.
std::vector<oracle::BackendRunner> fuzz_backends(const std::string& spec);

struct FuzzCommandOptions {
  uint64_t seed = 1;
  std::optional<uint64_t> count;
  double time = 0;  ///< seconds; 0: none
  std::string shard;  ///< "K/N": shard K of N of the seed range (empty: the whole range)
  int jobs = 1;
  std::string db;
  std::string mutant;
  std::string backends = "interp";
  int trials = 4;
  bool no_shrink = false;
  double shrink_seconds = 10;
  bool prove = false;  ///< exact/refines checks also try the prover; proved programs are stored as "proved"
  unsigned prove_timeout_ms = 2000;
  double iteration_timeout = 600;
  std::string out_dir;  ///< write every finding's reproducer under DIR/finding-SEED/
  std::string target = "programs";  ///< programs (ours), torch-eager, torch-inductor
  std::string torch_python;          ///< torch targets: an interpreter with torch
  int batch = 16;                    ///< torch targets: graphs per PyTorch process
  int torch_threads = 1;             ///< torch targets: PyTorch's intra-op threads
  bool list_mutants = false;
  bool quiet = false;
  bool json = false;
};
/// A differential fuzzing campaign (docs/design.md §8). Exit 1 when it holds findings.
int fuzz_command(const FuzzCommandOptions& o);
/// `--target torch-eager|torch-inductor` (fuzz_torch_command.cpp, peers/torch_campaign.h).
int fuzz_torch_command(const FuzzCommandOptions& o);

struct FuzzReportOptions {
  std::string db, extract_dir;
  bool json = false;
};
int fuzz_report_command(const FuzzReportOptions& o);

struct FuzzMergeOptions {
  std::string out;
  std::vector<std::string> inputs;
};
int fuzz_merge_command(const FuzzMergeOptions& o);

struct FuzzReplayOptions {
  std::string file, transform, backend, mutant;
  std::vector<std::string> inputs;
  /// A crash reproducer: run the iteration of this seed on the program.
  std::optional<uint64_t> seed;
  std::string backends = "interp";
};
/// Replays a reproducer: exit 1 when the finding reproduces, 0 when not.
int fuzz_replay_command(const FuzzReplayOptions& o);

struct FuzzBenchOptions {
  std::string what = "all";  ///< kill-rate, throughput or all
  uint64_t seed = 1;
  int starts = 5;       ///< campaigns per mutant
  double budget = 60;   ///< seconds per campaign
  int64_t count = 500;  ///< programs for the throughput figure
  std::string mutant;   ///< only this one
  std::string backends = "interp";
  bool json = false;
};
/// The README figures: kill rate (median time-to-find per mutant), throughput.
int fuzz_bench_command(const FuzzBenchOptions& o);

struct BenchOptions {
  std::string file, transform;  ///< transform: applied before compiling (e.g. interleave-lanes:w=16)
  std::string backend = "cpu";
  std::vector<std::string> inputs;
  uint64_t seed = 1;
  /// Share of special values (±0, ±inf, NaN, subnormals, huge and tiny) among
  /// drawn float inputs: subnormal operands slow some operations down, so 0
  /// times what ordinary data costs.
  double special_fraction = 0.125;
  int threads = 0;
  int repeats = 10;
  bool json = false;
  bool dump_ir = false;
  int opt_level = 3;
  /// CPU: CpuOptions::chain_bytes (0: no kernel chains; -1: the host's
  /// default, backends::cpu::default_chain_bytes).
  int64_t chain_bytes = -1;
  /// CPU: off, CpuOptions::fold_storage (every output in a full buffer).
  bool no_fold = false;
  bool no_jam = false;
  /// CPU: CpuOptions::stream_bytes (-1: never; -2: the default,
  /// backends::cpu::default_stream_bytes).
  int64_t stream_bytes = -2;
  std::string arch = "sm_90";  ///< GPU backends: NVRTC's target
  std::string mutant;          ///< a seeded bug compiled in (the benches' own wrong case)
  unsigned block = 128;        ///< GPU backends: threads per block of a pointwise kernel
  unsigned max_grid = 0;       ///< GPU backends: blocks at most (0: the backend's default)
  bool compile_each = false;   ///< GPU backends: also compile each kernel alone (its own compile time)
};
/// Per kernel: JIT compile time, median run time, bytes moved, GB/s, and the
/// bandwidth of a plain copy of the same number of bytes in the same run.
int bench_command(const BenchOptions& o);
/// `stax bench --backend gpu|gpu-emu` on a loaded, transformed program and
/// checked inputs (cli/bench_gpu_command.cpp): per kernel the module's
/// compile time, launch configuration, run time (CUDA events, or host wall
/// time on the emulator), bytes, GB/s and the ratio to a device-to-device
/// copy of the same bytes in the same run; the bits against the interpreter.
int bench_gpu_command(const BenchOptions& o, const sem::Program& p, const sem::Inputs& in);

}  // namespace stax::cli
