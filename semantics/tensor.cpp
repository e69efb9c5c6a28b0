#include "semantics/tensor.h"

#include <sys/mman.h>

#include <cmath>
#include <cstdio>

namespace stax::sem {

void* allocate_tensor_bytes(size_t bytes) {
  if (bytes < kLargeTensorBytes) return ::operator new(bytes);
  size_t rounded = (bytes + kLargeTensorAlign - 1) & ~(kLargeTensorAlign - 1);
  void* p = ::operator new(rounded, std::align_val_t(kLargeTensorAlign));
  // Advice only: where huge pages are off or unavailable it costs speed, never correctness.
  (void)::madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

void free_tensor_bytes(void* p, size_t bytes) noexcept {
  if (bytes < kLargeTensorBytes) ::operator delete(p);
  else ::operator delete(p, std::align_val_t(kLargeTensorAlign));
}

uint64_t Tensor::get_bits(int64_t i) const {
  uint64_t v = 0;
  std::memcpy(&v, data.data() + size_t(i) * size_t(dtype_bytes(dtype)), size_t(dtype_bytes(dtype)));
  return v;
}

double Tensor::get_double(int64_t i) const {
  uint64_t b = get_bits(i);
  switch (dtype) {
    case DType::F32: return std::bit_cast<float>(uint32_t(b));
    case DType::F64: return std::bit_cast<double>(b);
    case DType::F16: return f16_bits_to_f32(uint16_t(b));
    case DType::BF16: return bf16_bits_to_f32(uint16_t(b));
    case DType::I32: return double(int32_t(uint32_t(b)));
    case DType::I64: return double(int64_t(b));
    case DType::Bool: return b ? 1.0 : 0.0;
  }
  return 0;
}

int64_t Tensor::get_int(int64_t i) const {
  uint64_t b = get_bits(i);
  switch (dtype) {
    case DType::I32: return int32_t(uint32_t(b));
    case DType::I64: return int64_t(b);
    case DType::Bool: return b ? 1 : 0;
    default: return int64_t(get_double(i));
  }
}

bool element_equal(const Tensor& a, const Tensor& b, int64_t i) {
  if (a.dtype != b.dtype) return false;
  if (a.get_bits(i) == b.get_bits(i)) return true;
  return is_float(a.dtype) && std::isnan(a.get_double(i)) && std::isnan(b.get_double(i));
}

std::string element_text(const Tensor& t, int64_t i) {
  char buf[96];
  uint64_t b = t.get_bits(i);
  switch (t.dtype) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: {
      int w = dtype_bytes(t.dtype) * 2;
      std::snprintf(buf, sizeof buf, "%.9g (0x%0*llx)", t.get_double(i), w, static_cast<unsigned long long>(b));
      return buf;
    }
    case DType::F64:
      std::snprintf(buf, sizeof buf, "%.17g (0x%016llx)", t.get_double(i), static_cast<unsigned long long>(b));
      return buf;
    case DType::Bool: return b ? "true" : "false";
    default: return std::to_string(t.get_int(i));
  }
}

std::vector<int64_t> unflatten(const Shape& s, int64_t flat) {
  std::vector<int64_t> idx(s.size());
  for (size_t k = s.size(); k-- > 0;) {
    if (s[k] == 0) return idx;
    idx[k] = flat % s[k];
    flat /= s[k];
  }
  return idx;
}

std::string index_text(const std::vector<int64_t>& idx) {
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
  return s + "]";
}

}  // namespace stax::sem
