#include "semantics/mutants.h"

#include <array>
#include <stdexcept>

namespace stax::sem {
namespace {

constexpr std::array kCatalog{
    MutantInfo{"fma-contract", "cpu codegen",
               "a*b+c emitted as one fused multiply-add (PyTorch #122260: FMA contraction changes bits)"},
    MutantInfo{"max-drops-nan", "cpu codegen",
               "maximum/minimum (and relu) as compare-and-select, which drops NaN (Triton tl.max)"},
    MutantInfo{"addr32-overflow", "cpu codegen",
               "index arithmetic in 32 bits without the int32 obligation (torchtitan #2430)"},
    MutantInfo{"neg-index-unwrapped", "cpu codegen",
               "indirect loads do not wrap negative indices (PyTorch #102064)"},
    MutantInfo{"shuffle-wrong-offset", "gpu codegen",
               "a block reduction's warp shuffle reads one lane too far (__shfl_down_sync delta off by one)"},
    MutantInfo{"missing-barrier", "gpu codegen",
               "a block reduction reads the warp results from shared memory without the __syncthreads() after "
               "their writes"},
    MutantInfo{"log-exp", "cpu codegen", "peephole log(exp(x)) -> x, wrong for overflow and NaN (XLA #42732)"},
    MutantInfo{"floormod-negative", "compose-views",
               "index simplifier folds floor/mod as if operands were non-negative (TVM #8616)"},
    MutantInfo{"sum-reassoc-exact", "split-reduction, pairwise, interleave-lanes",
               "float sum reassociation declared class exact instead of real"},
    MutantInfo{"cse-merge-rand", "cse", "CSE merges two rand nodes with equal arguments"},
    MutantInfo{"fusion-drops-bf16-round", "fuse-maps",
               "map fusion drops the rounding of an f16/bf16 intermediate"},
    MutantInfo{"view-offset-off-by-one", "compose-views", "view composition adds the inner offset one too many"},
    MutantInfo{"merge-ignores-stride", "merge-loops",
               "loop merge without the stride condition a_j = s_{j+1} * a_{j+1} (Prop. 6.3)"},
    MutantInfo{"dce-failing-exact", "dce", "DCE removes a binding that may fail (⊥) and declares class exact"},
    MutantInfo{"split-pos-zero-pad", "split-reduction",
               "split reduction pads with +0.0 instead of the identity -0.0 (sum of -0.0s becomes +0.0)"},
    MutantInfo{"argmax-tie-last", "cpu codegen",
               "argmax/argmin break ties toward the larger index (PyTorch #93630: Inductor argmax returns the last "
               "of equal maxima)"},
    MutantInfo{"bf16-truncate", "cpu codegen",
               "f32 -> bf16 rounding as truncation of the low 16 bits instead of round-to-nearest-even "
               "(tenstorrent/tt-metal #19882)"},
    MutantInfo{"broadcast-stride", "cpu codegen",
               "reads of a tensor with an extent-1 dim: broadcast stride 0 carried into the outer strides "
               "(PyTorch #71665: wrong strides of an expanded tensor; nvFuser expand indexing csarofeen/pytorch #1514)"},
    MutantInfo{"reshape-index-i32", "cpu codegen",
               "a reshape's floor/mod index narrowed to int32 (JAX #15896: bcoo_reshape's flat indices in int32)"},
};

std::string g_active;  // set before threads start; read-only afterwards

}  // namespace

std::span<const MutantInfo> mutant_catalog() { return kCatalog; }

bool set_active_mutant(std::string_view name) {
  if (name.empty()) {
    g_active.clear();
    return true;
  }
  for (const MutantInfo& m : kCatalog)
    if (m.name == name) {
      g_active = std::string(name);
      return true;
    }
  return false;
}

std::string_view active_mutant() { return g_active; }

bool mutant_active(std::string_view name) { return !g_active.empty() && g_active == name; }

ScopedMutant::ScopedMutant(std::string_view name) : previous_(g_active) {
  if (!set_active_mutant(name)) throw std::invalid_argument("unknown mutant " + std::string(name));
}
ScopedMutant::~ScopedMutant() { g_active = previous_; }

}  // namespace stax::sem
