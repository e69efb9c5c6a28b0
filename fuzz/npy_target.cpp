// Fuzz target: the `.npy` reader. The first byte chooses how the file is
// named (bf16: *.bf16.npy), the rest is the file. A tensor that reads writes
// back to a file that reads as the same dtype, shape and bytes.
#include <cstring>
#include <variant>

#include "fuzz/fuzz_target.h"
#include "semantics/npy.h"

using namespace stax;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  bool bf16 = data[0] & 1;
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  auto r = sem::parse_npy(bytes, bf16);
  if (const auto* e = std::get_if<std::string>(&r)) {
    if (e->empty()) fuzz::fail("an empty error message");
    return 0;
  }
  const sem::Tensor& t = std::get<sem::Tensor>(r);
  std::string written = sem::format_npy(t);
  auto back = sem::parse_npy(written, t.dtype == sem::DType::BF16);
  if (const auto* e = std::get_if<std::string>(&back)) fuzz::fail("a written tensor does not read back: " + *e);
  const sem::Tensor& u = std::get<sem::Tensor>(back);
  if (u.dtype != t.dtype || u.shape != t.shape || u.data.size() != t.data.size() ||
      (t.data.size() && std::memcmp(u.data.data(), t.data.data(), t.data.size()) != 0))
    fuzz::fail("a tensor changes in a write/read round trip");
  return 0;
}
