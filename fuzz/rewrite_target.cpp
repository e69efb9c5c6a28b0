// Fuzz target: the `stax rewrite` rule syntax `LHS => RHS` (parsed and typed
// for each float dtype, not solved). The first byte picks the dtype.
#include <variant>

#include "fuzz/fuzz_target.h"
#include "proofs/rewrite.h"

using namespace stax;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static constexpr sem::DType kTypes[] = {sem::DType::F16, sem::DType::BF16, sem::DType::F32, sem::DType::F64};
  sem::DType dt = kTypes[data[0] % 4];
  auto r = proofs::parse_rewrite(fuzz::as_text(data + 1, size - 1), dt);
  if (const auto* e = std::get_if<std::string>(&r)) {
    if (e->rfind("<rule>:1:", 0) != 0) fuzz::fail("a rule error without a column", *e);
    return 0;
  }
  const auto& [lhs, rhs] = std::get<std::pair<std::string, std::string>>(r);
  if (lhs.empty() || rhs.empty()) fuzz::fail("a side prints empty");
  return 0;
}
