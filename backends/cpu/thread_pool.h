// A fixed pool of worker threads running `parallel_for` over task indices.
// Results never depend on the number of threads: each task writes its own
// elements, and reductions are never split across tasks.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace stax::backends::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return int(workers_.size()) + 1; }

  /// Runs task(0..n-1) on the workers and the calling thread; returns when
  /// all are done. One parallel_for at a time per pool.
  void parallel_for(int64_t n, const std::function<void(int64_t)>& task);

  /// A pool of `threads` threads for this process (created on first use).
  static ThreadPool& shared(int threads);

 private:
  void work();
  void drain(std::unique_lock<std::mutex>& lock);
  std::vector<std::thread> workers_;
  std::mutex mu_, run_mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t n_ = 0, next_ = 0, finished_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace stax::backends::cpu
