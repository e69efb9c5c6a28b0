// PyTorch's CPU summation order for float32/float64 (ATen's cascade_sum in
// aten/src/ATen/native/cpu/SumKernel.cpp and the two-pass reduction of
// TensorIteratorReduce.cpp), written once over an abstract value type so that
// one description serves as the plain C++ reference (V = float/double) and as
// the builder of small core-language trees (V = Expr, transforms/torch_sum.cpp).
//
// The order of one contiguous segment of n elements, W = 32 bytes / element
// size lanes (8 for f32, 4 for f64: Vectorized<T> of the AVX2 kernel, which
// PyTorch also runs on AVX512 machines):
//   n >= W:  m = n div W vectors; each lane l sums its m elements
//            x[W·i + l] with row_sum; then f = 0, the n mod W tail elements
//            are added to f in order, then lanes 0..W-1 in order.
//   n <  W:  row_sum of the n scalars.
//   row_sum(items, m): 4 columns (the unrolling factor): column k sums items
//            4i + k, i < s = m div 4, with the cascade; the m mod 4 leftover
//            items are added to column 0, then columns 1, 2, 3 to column 0.
//   cascade(s rows): step L = 2^max(4, ceil_log2(s) div 4) (ceil_log2(s) = 1
//            for s <= 2); four accumulators a0..a3 from 0; each full block of
//            L rows is added to a0 in order, then a1 += a0, a0 = 0; when the
//            row count is a multiple of L^2, a2 += a1, a1 = 0; of L^3,
//            a3 += a2, a2 = 0. Leftover rows go to a0; the result is
//            ((a0 + a1) + a2) + a3.
// The output starts at 0 and receives += of the segment's sum. A full
// reduction (one output element) of n >= 32,768 elements with T > 1 threads
// is split: u = min(T, ceil(n / 32768)) chunks of ceil(n / u) elements (the
// last one shorter), each summed as a segment into a buffer of T zeros, and
// the buffer of T partials is summed by the same kernel. Sums with several
// output elements (rows) are split across threads by whole rows, so their
// bits do not depend on T.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace stax::xform::torch_order {

inline constexpr int64_t kIlp = 4;          ///< unrolling factor over vectors/scalars
inline constexpr int64_t kLevels = 4;       ///< cascade accumulators
inline constexpr int64_t kGrain = 32768;    ///< at::internal::GRAIN_SIZE
inline constexpr int64_t kVectorBytes = 32; ///< Vectorized<T> of the AVX2 kernel

inline int64_t lanes_for(int64_t element_bytes) { return kVectorBytes / element_bytes; }

/// ceil(log2(x)), taken as 1 for x <= 2 (ATen's utils::CeilLog2).
inline int64_t ceil_log2(int64_t x) {
  if (x <= 2) return 1;
  return int64_t(std::bit_width(uint64_t(x - 1)));
}

/// The cascade's level power for s rows: its step is 2^power.
inline int64_t level_power(int64_t rows, int64_t min_power = 4) {
  return std::max(min_power, ceil_log2(rows) / kLevels);
}

/// The chunks [begin, end) of a full reduction split over `threads`.
struct Chunk {
  int64_t begin, end;
};
inline std::vector<Chunk> thread_chunks(int64_t n, int64_t threads) {
  if (threads <= 1 || n < kGrain) return {{0, n}};
  int64_t used = std::min(threads, (n + kGrain - 1) / kGrain);
  int64_t c = (n + used - 1) / used;
  std::vector<Chunk> v;
  for (int64_t t = 0; t < used && t * c < n; ++t) v.push_back({t * c, std::min(n, (t + 1) * c)});
  return v;
}

/// Ops: V zero(); V add(V, V). Item(i) -> V for i < count.
template <class V, class Ops, class Item>
V cascade(int64_t s, const Item& item, Ops& ops, int64_t min_power) {
  const int64_t p = level_power(s, min_power), step = int64_t(1) << p, mask = step - 1;
  V acc[kLevels] = {ops.zero(), ops.zero(), ops.zero(), ops.zero()};
  int64_t i = 0;
  for (; i + step <= s;) {
    for (int64_t j = 0; j < step; ++j, ++i) acc[0] = ops.add(acc[0], item(i));
    for (int64_t j = 1; j < kLevels; ++j) {
      acc[j] = ops.add(acc[j], acc[j - 1]);
      acc[j - 1] = ops.zero();
      if ((i & (mask << (j * p))) != 0) break;
    }
  }
  for (; i < s; ++i) acc[0] = ops.add(acc[0], item(i));
  for (int64_t j = 1; j < kLevels; ++j) acc[0] = ops.add(acc[0], acc[j]);
  return acc[0];
}

template <class V, class Ops, class Item>
V row_sum(int64_t m, const Item& item, Ops& ops, int64_t min_power) {
  const int64_t s = m / kIlp;
  V col[kIlp];
  for (int64_t k = 0; k < kIlp; ++k)
    col[k] = cascade<V>(s, [&](int64_t i) { return item(kIlp * i + k); }, ops, min_power);
  for (int64_t i = s * kIlp; i < m; ++i) col[0] = ops.add(col[0], item(i));
  for (int64_t k = 1; k < kIlp; ++k) col[0] = ops.add(col[0], col[k]);
  return col[0];
}

/// The sum of one contiguous segment x(0..n-1), before the output's `+=`.
template <class V, class Ops, class X>
V segment_sum(int64_t n, int64_t lanes, const X& x, Ops& ops, int64_t min_power = 4) {
  if (n < lanes) return row_sum<V>(n, x, ops, min_power);
  const int64_t m = n / lanes;
  V f = ops.zero();
  std::vector<V> lane(static_cast<size_t>(lanes));
  for (int64_t l = 0; l < lanes; ++l)
    lane[size_t(l)] = row_sum<V>(m, [&](int64_t i) { return x(lanes * i + l); }, ops, min_power);
  for (int64_t i = m * lanes; i < n; ++i) f = ops.add(f, x(i));
  for (int64_t l = 0; l < lanes; ++l) f = ops.add(f, lane[size_t(l)]);
  return f;
}

/// torch.sum of x(0..n-1) as one output element with `threads` threads,
/// before the output's `+=`: one segment, or the buffer of per-thread partials
/// summed again.
template <class V, class Ops, class X>
V full_sum(int64_t n, int64_t lanes, int64_t threads, const X& x, Ops& ops, int64_t min_power = 4) {
  // Below the grain (or on one thread) TensorIterator reduces serially.
  if (threads <= 1 || n < kGrain) return segment_sum<V>(n, lanes, x, ops, min_power);
  std::vector<Chunk> chunks = thread_chunks(n, threads);
  std::vector<V> buffer(static_cast<size_t>(threads), ops.zero());
  for (size_t t = 0; t < chunks.size(); ++t) {
    const Chunk c = chunks[t];
    // Each buffer slot starts at 0 and receives += of its chunk's sum.
    buffer[t] = ops.add(ops.zero(),
                        segment_sum<V>(c.end - c.begin, lanes, [&](int64_t i) { return x(c.begin + i); }, ops, min_power));
  }
  return segment_sum<V>(threads, lanes, [&](int64_t i) { return buffer[size_t(i)]; }, ops, min_power);
}

/// Plain arithmetic in T (float or double): the reference.
template <class T>
struct ArithOps {
  T zero() const { return T(0); }
  T add(T a, T b) const { return a + b; }
};

/// torch.sum(x[0..n)) into an output that starts at 0, in plain arithmetic.
template <class T>
T reference_sum(const T* x, int64_t n, int64_t threads = 1, int64_t min_power = 4) {
  ArithOps<T> ops;
  T s = full_sum<T>(n, lanes_for(int64_t(sizeof(T))), threads, [&](int64_t i) { return x[i]; }, ops, min_power);
  return T(0) + s;
}

}  // namespace stax::xform::torch_order
