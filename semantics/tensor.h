// Dense row-major tensors as bytes of their dtype: the values the Ieee
// semantics computes, and what `.npy` files hold.
#pragma once

#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "semantics/ir.h"

namespace stax::sem {

/// Storage of tensor bytes. Blocks of 4 MiB and more are 2 MiB-aligned and
/// advised as transparent huge pages (as NumPy does): a fresh 64 MiB tensor
/// then takes 32 page faults instead of 16,384, which were most of the
/// system time of `stax run` on large tensors.
/// Tensor storage of at least this many bytes (NumPy's threshold for huge
/// pages) is aligned to kLargeTensorAlign bytes, with huge pages advised.
inline constexpr size_t kLargeTensorBytes = size_t(4) << 20;
inline constexpr size_t kLargeTensorAlign = size_t(2) << 20;
void* allocate_tensor_bytes(size_t bytes);
void free_tensor_bytes(void* p, size_t bytes) noexcept;

/// An allocator that leaves elements uninitialised on resize, so that the
/// evaluator does not pay for zeroing buffers it overwrites anyway.
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  using std::allocator<T>::allocator;
  T* allocate(size_t n) {
    if (n > size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(allocate_tensor_bytes(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { free_tensor_bytes(p, n * sizeof(T)); }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
using Bytes = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;

struct Tensor {
  DType dtype = DType::F32;
  Shape shape;
  Bytes data;

  Tensor() = default;
  /// A zero-filled tensor.
  Tensor(DType t, Shape s) : Tensor(uninitialized(t, std::move(s))) {
    if (!data.empty()) std::memset(data.data(), 0, data.size());
  }
  /// A tensor whose bytes the caller overwrites.
  static Tensor uninitialized(DType t, Shape s) {
    Tensor x;
    x.dtype = t;
    x.shape = std::move(s);
    x.data.resize(size_t(num_elements(x.shape)) * size_t(dtype_bytes(t)));
    return x;
  }
  int64_t size() const { return num_elements(shape); }
  template <class T>
  T* as() {
    return reinterpret_cast<T*>(data.data());
  }
  template <class T>
  const T* as() const {
    return reinterpret_cast<const T*>(data.data());
  }
  /// Element `i` widened to double (ints exactly up to 2^53; bool 0/1).
  double get_double(int64_t i) const;
  /// Element `i` as an integer (floats truncated).
  int64_t get_int(int64_t i) const;
  /// Raw bits of element `i`, zero-extended.
  uint64_t get_bits(int64_t i) const;
};

/// Same bits, or both NaN (docs/design.md §3: equality of results).
bool element_equal(const Tensor& a, const Tensor& b, int64_t i);
/// Text of element i: the value and, for floats, its bits in hex.
std::string element_text(const Tensor& t, int64_t i);
/// Multi-index of a flat row-major position.
std::vector<int64_t> unflatten(const Shape& s, int64_t flat);
std::string index_text(const std::vector<int64_t>& idx);

}  // namespace stax::sem
