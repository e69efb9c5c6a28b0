// A wall-clock deadline for one solver call (internal to proofs/). Z3
// 4.8.10-4.8.12's own "timeout" runs on a timer thread pool that can
// deadlock (Z3Prover/z3#5371, #5990); we never set it, and instead interrupt
// the context from a thread of our own (Z3_interrupt is the thread-safe way
// in). The interrupt only cancels a check in progress, so a late one is
// harmless; a check in a phase that polls no cancel flag (some rewriting and
// bit-blasting steps) misses one, so after expiry the interrupt is repeated
// every 20 ms until the guarded call returns.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace stax::proofs {

class Deadline {
 public:
  Deadline(unsigned ms, std::function<void()> on_expiry) {
    thread_ = std::thread([this, ms, f = std::move(on_expiry)] {
      std::unique_lock<std::mutex> lock(mu_);
      if (cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return done_; })) return;
      expired_ = true;
      do f();
      while (!cv_.wait_for(lock, std::chrono::milliseconds(20), [this] { return done_; }));
    });
  }
  ~Deadline() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;
  /// Whether the deadline passed (valid once the guarded call returned).
  bool expired() {
    std::lock_guard<std::mutex> lock(mu_);
    return expired_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false, expired_ = false;
  std::thread thread_;
};

}  // namespace stax::proofs
