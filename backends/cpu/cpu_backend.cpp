#include "backends/cpu/cpu_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include "backends/cpu/chains.h"
#include "backends/cpu/jam.h"
#include "backends/cpu/codegen.h"
#include "backends/cpu/stream_stores.h"
#include "backends/cpu/thread_pool.h"
#include "backends/normal_form.h"
#include "semantics/printer.h"
#include "transforms/transform.h"

namespace stax::backends::cpu {

using namespace stax::sem;

namespace {

constexpr int64_t kMaxElements = int64_t(1) << 32;  // as the interpreter

/// KernelSpec::stream for each program output that no kernel reads, of at
/// least `min_bytes` and sem::kLargeTensorBytes (CpuOptions::stream_bytes).
void mark_streamed(std::vector<KernelSpec>& specs, const std::vector<std::string>& outputs, int64_t min_bytes) {
  if (min_bytes < 0) return;
  std::set<std::string> read;
  for (const KernelSpec& s : specs) read.insert(s.names.begin() + 1, s.names.end());
  for (KernelSpec& s : specs) {
    const int64_t bytes = type_bytes(s.types[0]);
    s.stream = bytes >= min_bytes && bytes >= int64_t(kLargeTensorBytes) && !read.count(s.binding) &&
               std::find(outputs.begin(), outputs.end(), s.binding) != outputs.end();
  }
}

}  // namespace

struct CompiledProgram::Impl {
  Program program;
  CpuOptions opt;
  std::vector<KernelSpec> specs;
  std::vector<KernelShape> shapes;
  std::vector<int64_t> work;  ///< per kernel: output elements x reduced elements
  std::vector<CompiledKernel> compiled;
  std::vector<KernelReport> reports;
  std::vector<std::string> keys;
  std::vector<Chain> chains;  ///< in program order
  /// A folded output of a chain: the argument slots (member of the chain,
  /// slot) that hold it, and its bytes a row.
  struct Fold {
    std::vector<std::pair<size_t, size_t>> slots;
    int64_t row_bytes = 0;
  };
  std::vector<std::vector<Fold>> folds;  ///< per chain, its folded outputs that store anything
  std::vector<CompiledKernel> jams;      ///< per chain, its jam (jam.h), or no function
  // Buffers of earlier runs, reused once the caller has let go of them (a
  // caching allocator: fresh pages would make every run pay page faults).
  mutable std::mutex pool_mu;
  mutable std::vector<std::shared_ptr<Tensor>> pool;

  std::shared_ptr<Tensor> buffer(size_t k, const TensorType& t) const {
    std::lock_guard<std::mutex> lock(pool_mu);
    if (pool.size() <= k) pool.resize(k + 1);
    std::shared_ptr<Tensor>& b = pool[k];
    if (!b || b.use_count() != 1) b = std::make_shared<Tensor>(Tensor::uninitialized(t.dtype, t.shape));
    return b;
  }

  /// Runs kernel k over its range (split over the pool where it pays).
  std::vector<std::vector<FailRecord>> run_kernel(size_t k, std::vector<void*>& bufs, ThreadPool* pool, int threads,
                                                  std::vector<double>* run_ms) const;
  /// Runs a chain a chunk of rows at a time (the chunks split over the pool).
  std::vector<std::vector<FailRecord>> run_chain(const Chain& c, std::vector<std::vector<void*>>& args,
                                                 ThreadPool* pool, int threads, std::vector<double>* run_ms) const;
};

CompiledProgram::CompiledProgram(const Program& p, const CpuOptions& opt) : impl_(std::make_unique<Impl>()) {
  impl_->opt = opt;
  std::string why;
  std::optional<Program> n = exact_normal_form(p, &why);
  if (!n) throw CompileError(why);
  impl_->program = std::move(*n);
  Jit& jit = Jit::instance();
  if (opt.keep_ir) jit.set_keep_ir(true);
  for (const Binding& b : impl_->program.bindings) {
    KernelSpec spec = make_spec(impl_->program, b);
    if (auto why = unsupported(spec.expr))
      throw CompileError("normalize left binding " + b.name + " in a form the CPU backend cannot compile (" + *why +
                         "):\n" + print_program(impl_->program));
    impl_->shapes.push_back(kernel_shape(spec));
    impl_->specs.push_back(std::move(spec));
  }
  // Chains and folded storage first: a folded buffer changes the code of
  // every kernel that touches it (KernelSpec::folded).
  impl_->chains = plan_chains(impl_->specs, impl_->shapes, opt.chain_bytes, opt.chain_unchecked);
  if (opt.fold_storage) fold_storage(impl_->chains, impl_->specs, impl_->program.outputs, opt.fold_unchecked);
  for (const Chain& c : impl_->chains) {
    std::vector<Impl::Fold>& folds = impl_->folds.emplace_back();
    for (size_t f : c.folded) {
      Impl::Fold fold{{}, type_bytes(impl_->specs[f].types[0]) / c.rows};
      for (size_t j = c.first; j <= c.last; ++j) {
        KernelSpec& s = impl_->specs[j];
        for (size_t k = 0; k < s.names.size(); ++k)
          if (s.names[k] == impl_->specs[f].binding) {
            s.folded.resize(s.names.size(), false);
            s.folded[k] = true;
            fold.slots.emplace_back(j - c.first, k);
          }
      }
      if (fold.row_bytes > 0) folds.push_back(std::move(fold));  // else nothing stored
    }
  }
  mark_streamed(impl_->specs, impl_->program.outputs, opt.stream_bytes);
  for (KernelSpec& s : impl_->specs) s.keyed_unchecked = opt.keyed_unchecked;
  for (const KernelSpec& s : impl_->specs) impl_->keys.push_back(kernel_key(s));
  // The emitters refer to the specs, which stay where they are from here on.
  std::vector<Jit::Request> reqs;
  for (size_t i = 0; i < impl_->specs.size(); ++i) {
    const KernelSpec* spec = &impl_->specs[i];
    reqs.push_back({impl_->keys[i], [spec](llvm::Module& m, const std::string& fname) {
                      return emit_kernel(m, fname, *spec);
                    }});
  }
  // Jams after the kernels: compiled[specs.size() + q] is the q-th jam.
  std::vector<size_t> jammed;  // chains with a jam, in order
  for (size_t c = 0; c < impl_->chains.size(); ++c) {
    Chain& ch = impl_->chains[c];
    if (opt.jam) ch.jam = plan_jam(ch, impl_->specs, impl_->shapes);
    if (!ch.jam) continue;
    jammed.push_back(c);
    const KernelSpec* early = &impl_->specs[*ch.jam];
    const KernelSpec* late = &impl_->specs[ch.last];
    const int64_t units = ch.chunk;  // plain pointwise kernels: a unit is a row
    reqs.push_back({jam_key(impl_->keys[*ch.jam], impl_->keys[ch.last], units),
                    [early, late, units](llvm::Module& m, const std::string& fname) {
                      return emit_jam(m, fname, *early, *late, units);
                    }});
  }
  if (opt.batch) {
    impl_->compiled = jit.compile_batch(reqs, opt.opt_level);
  } else {
    for (const Jit::Request& r : reqs) impl_->compiled.push_back(jit.compile(r.key, r.emit, opt.opt_level));
  }
  impl_->jams.resize(impl_->chains.size());
  for (size_t q = 0; q < jammed.size(); ++q) impl_->jams[jammed[q]] = impl_->compiled[impl_->specs.size() + q];
  impl_->compiled.resize(impl_->specs.size());
  for (size_t i = 0; i < impl_->specs.size(); ++i) {
    const KernelSpec& spec = impl_->specs[i];
    const CompiledKernel& k = impl_->compiled[i];
    const KernelShape& ks = impl_->shapes[i];
    KernelReport r;
    r.binding = impl_->program.bindings[i].name;
    r.text = print_expr(impl_->program.bindings[i].expr, &impl_->program);
    r.compile_ms = k.compile_ms;
    r.compile_cpu_ms = k.compile_cpu_ms;
    r.engine_ms = k.engine_ms;
    r.emit_ms = k.emit_ms;
    r.verify_ms = k.verify_ms;
    r.optimise_ms = k.optimise_ms;
    r.codegen_ms = k.codegen_ms;
    r.disk_ms = k.disk_ms;
    r.link_ms = k.link_ms;
    r.cached = k.cached;
    r.disk_cached = k.disk_cached;
    r.lanes = ks.lanes;
    r.lane_block = ks.lane_block;
    r.row_block = ks.row_block;
    r.pack = ks.pack();
    r.pack_along_fold = ks.pack_along_fold;
    r.transposed = ks.transposed;
    r.skewed = ks.skewed;
    r.tile = ks.tile;
    r.whole = ks.whole;
    r.parallel_extent = ks.parallel_extent;
    r.streamed = spec.stream;
    r.bytes_written = type_bytes(spec.types[0]);
    for (size_t j = 1; j < spec.types.size(); ++j) r.bytes_read += type_bytes(spec.types[j]);
    impl_->reports.push_back(std::move(r));
    impl_->work.push_back(kernel_work(spec));
  }
  for (size_t c = 0; c < impl_->chains.size(); ++c) {
    for (size_t j = impl_->chains[c].first; j <= impl_->chains[c].last; ++j) {
      impl_->reports[j].chain = int(c);
      impl_->reports[j].chain_rows = impl_->chains[c].chunk;
    }
    for (size_t j : impl_->chains[c].folded) impl_->reports[j].folded = true;
    if (const auto& j = impl_->chains[c].jam) {
      impl_->reports[*j].jammed_with = impl_->specs[impl_->chains[c].last].binding;
      impl_->reports[impl_->chains[c].last].jammed_with = impl_->specs[*j].binding;
      impl_->reports[impl_->chains[c].last].jam_late = true;
    }
  }
}

CompiledProgram::~CompiledProgram() = default;
CompiledProgram::CompiledProgram(CompiledProgram&&) noexcept = default;

const Program& CompiledProgram::program() const { return impl_->program; }
const std::vector<KernelReport>& CompiledProgram::kernels() const { return impl_->reports; }
std::string CompiledProgram::ir(size_t k) const { return Jit::instance().optimised_ir(impl_->keys.at(k)); }

namespace {

/// A kernel's arguments: its output, then the tensors it reads.
std::vector<void*> kernel_args(const KernelSpec& spec, Tensor& result, const std::map<std::string, const Tensor*>& env) {
  std::vector<void*> bufs{result.data.data()};
  for (size_t i = 1; i < spec.names.size(); ++i) bufs.push_back(const_cast<uint8_t*>(env.at(spec.names[i])->data.data()));
  return bufs;
}

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

}  // namespace

IeeeOutcome CompiledProgram::run(const Inputs& in, std::vector<double>* run_ms) const {
  const Program& p = impl_->program;
  int threads = resolve_threads(impl_->opt.threads);
  ThreadPool* pool = threads > 1 ? &ThreadPool::shared(threads) : nullptr;
  // Inputs are borrowed; bindings are allocated here.
  std::map<std::string, const Tensor*> env;
  std::map<std::string, std::shared_ptr<Tensor>> owned;
  for (const Input& i : p.inputs) env[i.name] = &in.at(i.name);
  IeeeOutcome out;
  if (run_ms) run_ms->assign(p.bindings.size(), 0.0);
  size_t next_chain = 0;
  for (size_t k = 0; k < p.bindings.size();) {
    const Chain* chain = next_chain < impl_->chains.size() && impl_->chains[next_chain].first == k
                             ? &impl_->chains[next_chain++]
                             : nullptr;
    const size_t last = chain ? chain->last : k;
    std::vector<std::vector<void*>> args;
    for (size_t j = k; j <= last; ++j) {
      const TensorType& t = impl_->specs[j].types[0];
      if (num_elements(t.shape) > kMaxElements)
        throw ResourceError{"tensor " + type_str(t) + " has " + std::to_string(num_elements(t.shape)) +
                            " elements, over the limit of " + std::to_string(kMaxElements)};
      std::shared_ptr<Tensor> result = impl_->buffer(j, t);
      args.push_back(kernel_args(impl_->specs[j], *result, env));
      if (impl_->specs[j].stream && reinterpret_cast<uintptr_t>(args.back()[0]) % kStreamAlign != 0)
        throw std::logic_error("the streamed output " + impl_->specs[j].binding + " is not aligned to " +
                               std::to_string(kStreamAlign) + " bytes");
      env[impl_->specs[j].binding] = result.get();
      owned[impl_->specs[j].binding] = result;
    }
    // fails[j - k]: the first failure of each task (chains: each chunk), in order.
    std::vector<std::vector<FailRecord>> fails =
        chain ? impl_->run_chain(*chain, args, pool, threads, run_ms) : impl_->run_kernel(k, args[0], pool, threads, run_ms);
    for (size_t j = k; j <= last; ++j) {
      const KernelSpec& spec = impl_->specs[j];
      for (const FailRecord& f : fails[j - k]) {
        if (f.reason < 0) continue;
        std::string reason = impl_->compiled[j].reasons.at(size_t(f.reason));
        if (reason.find("index out of range") != std::string::npos) reason += ": " + std::to_string(f.value);
        out.failure = Failure{spec.binding, unflatten(spec.types[0].shape, f.pos), reason, print_expr(spec.expr, &p)};
        return out;
      }
    }
    k = last + 1;
  }
  for (const std::string& o : p.outputs) {
    if (auto it = owned.find(o); it != owned.end()) out.outputs[o] = it->second;
    else out.outputs[o] = std::make_shared<const Tensor>(*env.at(o));
  }
  return out;
}

std::vector<std::vector<FailRecord>> CompiledProgram::Impl::run_kernel(size_t k, std::vector<void*>& bufs,
                                                                       ThreadPool* pool, int threads,
                                                                       std::vector<double>* run_ms) const {
  const CompiledKernel& ck = compiled[k];
  const KernelShape& ks = shapes[k];
  int64_t extent = ks.parallel_extent;
  // 8 tasks a thread balance uneven ones; with packed operands each task
  // copies its column blocks again, so one a thread.
  int64_t tasks = pool ? std::min<int64_t>(extent, int64_t(threads) * (ks.pack() ? 1 : 8)) : 1;
  if (work[k] < opt.min_parallel_work || ks.whole) tasks = 1;
  std::vector<std::vector<FailRecord>> fails(1, std::vector<FailRecord>(size_t(std::max<int64_t>(tasks, 1))));
  auto t0 = Clock::now();
  if (tasks <= 1) {
    ck.fn(bufs.data(), 0, extent, &fails[0][0]);
  } else {
    pool->parallel_for(tasks, [&](int64_t i) {
      ck.fn(bufs.data(), extent * i / tasks, extent * (i + 1) / tasks, &fails[0][size_t(i)]);
    });
  }
  if (run_ms) (*run_ms)[k] = ms_since(t0);
  return fails;
}

std::vector<std::vector<FailRecord>> CompiledProgram::Impl::run_chain(const Chain& c,
                                                                      std::vector<std::vector<void*>>& args,
                                                                      ThreadPool* pool, int threads,
                                                                      std::vector<double>* run_ms) const {
  const size_t n = c.last - c.first + 1;
  const int64_t chunks = (c.rows + c.chunk - 1) / c.chunk;
  int64_t chain_work = 0;
  for (size_t j = c.first; j <= c.last; ++j) chain_work = std::max(chain_work, work[j]);
  int64_t tasks = pool && chain_work >= opt.min_parallel_work ? std::min<int64_t>(chunks, int64_t(threads) * 8) : 1;
  std::vector<std::vector<FailRecord>> fails(n, std::vector<FailRecord>(size_t(chunks)));
  // With run_ms: each member's time summed over the chunks of every task.
  std::vector<std::vector<double>> cpu(size_t(tasks), std::vector<double>(n, 0.0));
  // Each task's own arguments and folded buffers (a chunk's rows each; the
  // kernels address a folded buffer from the first row of the range they
  // are called for: KernelSpec::folded), allocated here, before the tasks.
  // With a jam, two slots each: chunk ch writes slot ch mod 2 (jam.h).
  const size_t ci = size_t(&c - chains.data());  // c is one of `chains`
  const bool jam = jams[ci].fn != nullptr;
  const int64_t slots = jam && !opt.jam_one_slot ? 2 : 1;
  std::vector<std::vector<std::vector<void*>>> task_args(size_t(tasks), args);
  std::vector<std::unique_ptr<void, decltype(&std::free)>> scratch;
  std::vector<std::vector<char*>> task_slots(static_cast<size_t>(tasks));  // per fold, its first slot
  auto slot_bytes = [&](const Fold& f) { return size_t(f.row_bytes * c.chunk + 63) / 64 * 64; };
  for (size_t t = 0; t < size_t(tasks); ++t)
    for (const Fold& f : folds[ci]) {
      scratch.emplace_back(std::aligned_alloc(64, slot_bytes(f) * size_t(slots)), &std::free);
      if (!scratch.back()) throw std::bad_alloc();
      task_slots[t].push_back(static_cast<char*>(scratch.back().get()));
      for (auto [j, s] : f.slots) task_args[t][j][s] = scratch.back().get();
    }
  // Per member, its folded buffers: (argument, fold).
  std::vector<std::vector<std::pair<size_t, size_t>>> member_folds(n);
  for (size_t q = 0; q < folds[ci].size(); ++q)
    for (auto [m, s] : folds[ci][q].slots) member_folds[m].emplace_back(s, q);
  // Member j's arguments, its folded buffers in the slot of chunk ch.
  auto at_chunk = [&](int64_t t, size_t j, int64_t ch) {
    std::vector<void*>& a = task_args[size_t(t)][j];
    for (auto [s, q] : member_folds[j])
      a[s] = task_slots[size_t(t)][q] + slot_bytes(folds[ci][q]) * size_t(ch % slots);
    return a.data();
  };
  const size_t late = n - 1, early = jam ? *c.jam - c.first : n;
  auto task = [&](int64_t t) {
    auto call = [&](size_t j, int64_t ch) {
      const int64_t r0 = ch * c.chunk, r1 = std::min(c.rows, r0 + c.chunk);
      const int64_t unit = c.rows / shapes[c.first + j].parallel_extent;  // rows per unit of the range
      auto t0 = run_ms ? Clock::now() : Clock::time_point{};
      compiled[c.first + j].fn(at_chunk(t, j, ch), r0 / unit, r1 / unit, &fails[j][size_t(ch)]);
      if (run_ms) cpu[size_t(t)][j] += ms_since(t0);
    };
    const int64_t first = chunks * t / tasks, last = chunks * (t + 1) / tasks;
    for (int64_t ch = first; ch < last; ++ch) {
      for (size_t j = 0; j < n; ++j) {
        if (jam && j == late) continue;  // a chunk behind: at `early` of the next chunk, or after the last
        const bool full = (ch + 1) * c.chunk <= c.rows;
        if (!(jam && j == early && ch > first && full)) {
          if (jam && j == early && ch > first) call(late, ch - 1);
          call(j, ch);
          continue;
        }
        // early over chunk ch with late over chunk ch - 1, both full.
        std::vector<void*> both;
        void** pe = at_chunk(t, early, ch);
        both.insert(both.end(), pe, pe + task_args[size_t(t)][early].size());
        void** pl = at_chunk(t, late, ch - 1);
        both.insert(both.end(), pl, pl + task_args[size_t(t)][late].size());
        FailRecord f[2];
        auto t0 = run_ms ? Clock::now() : Clock::time_point{};
        jams[ci].fn(both.data(), ch * c.chunk, (ch + 1) * c.chunk, f);
        if (run_ms) cpu[size_t(t)][early] += ms_since(t0);
        fails[early][size_t(ch)] = f[0];
        fails[late][size_t(ch - 1)] = f[1];
      }
    }
    if (jam && last > first) call(late, last - 1);
  };
  auto t0 = Clock::now();
  if (tasks <= 1) task(0);
  else pool->parallel_for(tasks, task);
  if (run_ms) {
    // The chain's wall time, shared out as its members took the CPU.
    double wall = ms_since(t0), sum = 0;
    std::vector<double> member(n, 0.0);
    for (const auto& v : cpu)
      for (size_t j = 0; j < n; ++j) member[j] += v[j], sum += v[j];
    for (size_t j = 0; j < n; ++j) (*run_ms)[c.first + j] = sum > 0 ? wall * member[j] / sum : 0;
  }
  return fails;
}

int64_t default_chain_bytes() {
  static const int64_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? int64_t(l2) / 4 * 3 : int64_t(256) << 10;
  }();
  return bytes;
}

int64_t default_stream_bytes() { return int64_t(16) << 20; }

int resolve_threads(int t) {
  if (t > 0) return t;
  unsigned h = std::thread::hardware_concurrency();
  return h ? int(h) : 1;
}

IeeeOutcome run(const Program& p, const Inputs& in, const CpuOptions& opt) {
  return CompiledProgram(p, opt).run(in);
}

}  // namespace stax::backends::cpu
