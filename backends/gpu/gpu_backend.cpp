#include "backends/gpu/gpu_backend.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

#include "backends/cpu/jit.h"
#include "backends/gpu/block_reduce.h"
#include "backends/gpu/cuda_math.h"
#include "backends/gpu/driver.h"
#include "backends/gpu/emulator.h"
#include "backends/gpu/nvrtc.h"
#include "backends/normal_form.h"
#include "semantics/printer.h"
#include "transforms/transform.h"

namespace stax::backends::gpu {

using namespace stax::sem;
using cpu::CompileError;

namespace {
constexpr int64_t kMaxElements = int64_t(1) << 32;  // as the interpreter
constexpr int64_t kNoFailure = INT64_MAX;

/// One kernel's binding evaluated by the interpreter on the tensors it reads.
IeeeOutcome recompute_binding(const cpu::KernelSpec& k, const std::map<std::string, const Tensor*>& env) {
  Program one;
  Inputs in;
  for (size_t i = 1; i < k.names.size(); ++i) {
    one.inputs.push_back(Input{k.names[i], k.types[i], {}});
    in.emplace(k.names[i], *env.at(k.names[i]));
  }
  one.bindings.push_back(Binding{k.binding, k.expr, {}});
  one.outputs.push_back(k.binding);
  return eval_ieee(one, in);
}
}  // namespace

Program gpu_normal_form(const Program& p) {
  std::string why;
  std::optional<Program> n = exact_normal_form(p, &why);
  if (!n) throw CompileError(why);
  return std::move(*n);
}

struct GpuProgram::Impl {
  Program program;
  GpuOptions opt;
  GpuSource src;
  std::unique_ptr<EmuModule> emu;
  std::vector<EmuLaunch> emu_fns;
  std::unique_ptr<Device> dev;
  std::vector<uintptr_t> dev_fns;
  mutable int64_t slow_lanes = 0, recomputed = 0;  ///< of the last run
  std::map<std::string, BlockShape> blocks;         ///< the block reductions' shapes
  double compile_ms = 0;

  unsigned grid_for(int64_t n, unsigned block, bool per_element_block) const {
    // Enough blocks to fill every SM (2,048 resident threads on sm_70 to
    // sm_90) where registers allow; the emulator runs 3.
    unsigned cap = opt.max_grid ? opt.max_grid
                   : dev        ? unsigned(std::max(1, dev->sm_count() * int(std::max(1u, 2048 / block))))
                                : 3u;
    int64_t need = per_element_block ? n : (n + block - 1) / block;
    return unsigned(std::clamp<int64_t>(need, 1, cap));
  }
};

GpuProgram::GpuProgram(const Program& p, const GpuOptions& opt) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.opt = opt;
  // Refuse before normalising, so the message names what the user wrote.
  if (auto why = gpu_unsupported(p)) throw CompileError("not supported by the GPU backend yet: " + *why);
  // gpu-reduce's orders as one block-reduction kernel each (block_reduce.h).
  BlockPlan plan = plan_block_reductions(p, opt.block_reductions);
  m.program = std::move(plan.program);
  m.src = emit_cuda(m.program, plan.blocks);
  m.blocks = plan.blocks;
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  };
  if (opt.target == Target::Emu) {
    auto t0 = clock::now();
    m.emu = std::make_unique<EmuModule>(m.src.text);
    m.compile_ms = since(t0);
    for (const GpuKernel& k : m.src.kernels) m.emu_fns.push_back(m.emu->launcher(k.name));
    std::memcpy(m.emu->tables(), cuda_math_tables(), cuda_math_tables_size());
    return;
  }
  m.dev = std::make_unique<Device>();  // first: no driver is the clearer message
  auto t0 = clock::now();
  PtxResult ptx = compile_ptx(m.src.text, opt.arch);
  m.compile_ms = since(t0);
  if (!ptx.ok) throw CompileError("NVRTC: " + ptx.log);
  uintptr_t mod = m.dev->load_module(ptx.ptx);
  for (const GpuKernel& k : m.src.kernels) m.dev_fns.push_back(m.dev->function(mod, k.name));
  size_t bytes = 0;
  uint64_t tables = m.dev->global(mod, "stax_T", &bytes);
  if (bytes != cuda_math_tables_size())
    throw CompileError("the device's math tables have " + std::to_string(bytes) + " bytes, the host's " +
                       std::to_string(cuda_math_tables_size()));
  m.dev->upload(tables, cuda_math_tables(), bytes);
}

GpuProgram::~GpuProgram() = default;
const Program& GpuProgram::program() const { return impl_->program; }
int64_t GpuProgram::slow_lanes() const { return impl_->slow_lanes; }
int64_t GpuProgram::recomputed_bindings() const { return impl_->recomputed; }
const GpuSource& GpuProgram::source() const { return impl_->src; }

double GpuProgram::compile_ms() const { return impl_->compile_ms; }

double GpuProgram::copy_ms(int64_t bytes) const {
  const size_t n = size_t(std::max<int64_t>(bytes / 2, 64));
  if (!impl_->dev) {
    std::vector<uint8_t> src(n, 1), dst(n, 0);
    auto t0 = std::chrono::steady_clock::now();
    std::memcpy(dst.data(), src.data(), n);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (dst[n / 2] != 1) throw std::logic_error("gpu-emu: the reference copy lost its bytes");
    return ms;
  }
  Device& d = *impl_->dev;
  uint64_t src = d.alloc(n), dst = 0;
  try {
    dst = d.alloc(n);
    double ms = d.copy_timed(dst, src, n);
    d.free(dst);
    d.free(src);
    return ms;
  } catch (...) {
    if (dst) d.free(dst);
    d.free(src);
    throw;
  }
}

IeeeOutcome GpuProgram::run(const Inputs& in) const { return run(in, nullptr); }

IeeeOutcome GpuProgram::run(const Inputs& in, std::vector<KernelRun>* timing) const {
  const Impl& m = *impl_;
  const Program& p = m.program;
  std::map<std::string, std::shared_ptr<Tensor>> owned;
  std::map<std::string, const Tensor*> env;
  for (const Input& i : p.inputs) env[i.name] = &in.at(i.name);
  // On the device every tensor lives in device memory for the whole run.
  std::map<std::string, uint64_t> dmem;
  struct Freer {
    Device* d;
    std::map<std::string, uint64_t>& mem;
    ~Freer() {
      if (d)
        for (auto& [n, ptr] : mem) d->free(ptr);
    }
  } freer{m.dev.get(), dmem};
  if (m.dev)
    for (const Input& i : p.inputs) {
      const Tensor& t = in.at(i.name);
      dmem[i.name] = m.dev->alloc(t.data.size());
      m.dev->upload(dmem[i.name], t.data.data(), t.data.size());
    }
  IeeeOutcome out;
  m.slow_lanes = m.recomputed = 0;
  for (size_t k = 0; k < m.src.kernels.size(); ++k) {
    const GpuKernel& gk = m.src.kernels[k];
    const TensorType& t = gk.spec.types[0];
    int64_t n = num_elements(t.shape);
    if (n > kMaxElements)
      throw ResourceError{"tensor " + type_str(t) + " has " + std::to_string(n) + " elements, over the limit of " +
                          std::to_string(kMaxElements)};
    auto result = std::make_shared<Tensor>(Tensor::uninitialized(t.dtype, t.shape));
    StaxFail fail{-1, kNoFailure, 0, 0};
    // A block reduction runs exactly its M threads per block, a block per
    // output element.
    const unsigned block = gk.threads ? gk.threads : m.opt.block;
    unsigned grid = m.grid_for(n, block, gk.threads != 0);
    KernelRun kr{grid, block, 0, 0};
    if (m.emu) {
      std::vector<void*> bufs{result->data.data()};
      for (size_t i = 1; i < gk.spec.names.size(); ++i)
        bufs.push_back(const_cast<uint8_t*>(env.at(gk.spec.names[i])->data.data()));
      auto t0 = std::chrono::steady_clock::now();
      m.emu_fns[k](bufs.data(), 0, n, &fail, 0, grid, block);
      kr.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (auto b = m.blocks.find(gk.spec.binding); b != m.blocks.end() && gk.threads && b->second.warp > 0)
        kr.shared_bytes = b->second.threads / b->second.warp * dtype_bytes(t.dtype);
      if (fail.pos != kNoFailure) m.emu_fns[k](bufs.data(), fail.pos, fail.pos + 1, &fail, 1, 1, 1);
      // A race on __shared__ memory, a deadlock, a shuffle with a missing
      // lane: the kernel is wrong whatever values it left.
      if (std::string err = m.emu->error(); !err.empty()) {
        m.emu->clear_error();
        throw EmuError("gpu-emu: kernel " + gk.name + " (binding " + gk.spec.binding + "): " + err);
      }
    } else {
      dmem[gk.spec.binding] = m.dev->alloc(result->data.size());
      uint64_t dfail = m.dev->alloc(sizeof(StaxFail));
      dmem["#fail"] = dfail;  // freed with the rest
      std::vector<uint64_t> ptrs;
      for (const std::string& name : gk.spec.names) ptrs.push_back(dmem.at(name));
      auto launch = [&](int64_t begin, int64_t end, int record, unsigned g, unsigned b) {
        m.dev->upload(dfail, &fail, sizeof fail);
        std::vector<void*> args;
        for (uint64_t& ptr : ptrs) args.push_back(&ptr);
        args.push_back(&begin);
        args.push_back(&end);
        args.push_back(&dfail);
        args.push_back(&record);
        if (timing && !record) kr.ms = m.dev->launch_timed(m.dev_fns[k], g, b, args);
        else m.dev->launch(m.dev_fns[k], g, b, args);
        m.dev->download(&fail, dfail, sizeof fail);
      };
      if (timing) kr.shared_bytes = m.dev->shared_bytes(m.dev_fns[k]);
      launch(0, n, 0, grid, block);
      if (fail.pos != kNoFailure) launch(fail.pos, fail.pos + 1, 1, 1, 1);
      else m.dev->download(result->data.data(), dmem[gk.spec.binding], result->data.size());
      m.dev->free(dfail);
      dmem.erase("#fail");
    }
    if (timing) timing->push_back(kr);
    m.slow_lanes += fail.slow;
    if (fail.slow > 0 && m.opt.recompute_slow) {
      ++m.recomputed;
      // A math fast path failed its rounding test somewhere in this kernel:
      // its candidate may be one ulp off, and a ⊥ found after it may not be
      // the reference's. The interpreter recomputes the binding (its slow
      // path is MPFR), and that result, or its ⊥, is the kernel's.
      IeeeOutcome ref = recompute_binding(gk.spec, env);
      if (ref.failure) {
        out.failure = ref.failure;
        return out;
      }
      *result = *ref.outputs.at(gk.spec.binding);
      if (m.dev) m.dev->upload(dmem.at(gk.spec.binding), result->data.data(), result->data.size());
      fail.pos = kNoFailure;
    }
    if (fail.pos != kNoFailure) {
      std::string reason = gk.reasons.at(size_t(fail.reason));
      if (reason.find("index out of range") != std::string::npos) reason += ": " + std::to_string(fail.value);
      out.failure = Failure{gk.spec.binding, unflatten(t.shape, fail.pos), reason, print_expr(gk.spec.expr, &p)};
      return out;
    }
    env[gk.spec.binding] = result.get();
    owned[gk.spec.binding] = result;
  }
  for (const std::string& o : p.outputs) {
    if (auto it = owned.find(o); it != owned.end()) out.outputs[o] = it->second;
    else out.outputs[o] = std::make_shared<const Tensor>(*env.at(o));
  }
  return out;
}

IeeeOutcome run(const Program& p, const Inputs& in, const GpuOptions& opt) { return GpuProgram(p, opt).run(in); }

std::optional<std::string> nvrtc_arch(const std::string& user) {
  for (const char* prefix : {"sm_", "compute_"}) {
    std::string pre = prefix;
    if (user.rfind(pre, 0) != 0) continue;
    std::string num = user.substr(pre.size());
    if (num.empty() || num.size() > 4 || num.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    if (std::stoi(num) < 50) return std::nullopt;
    return "compute_" + num;
  }
  return std::nullopt;
}

}  // namespace stax::backends::gpu
