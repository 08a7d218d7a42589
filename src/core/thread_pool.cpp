#include "core/thread_pool.h"

#include <chrono>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace brisk {
namespace {

// Polls of a waiting caller before it sleeps: some tens of microseconds, longer than a kernel's
// typical imbalance between threads.
constexpr int kSpinPolls = 2000;

inline void cpu_relax() {
#if defined(__x86_64__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads < 1 ? 1 : n_threads) {
  for (int i = 1; i < n_threads_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (auto& t : threads_) t.join();
}

int ThreadPool::default_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

void ThreadPool::dispatch(Call call, void* ctx) {
  if (n_threads_ == 1) {
    call(ctx, 0);
    return;
  }
  call_ = call;
  ctx_ = ctx;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  call(ctx, 0);
  // Spin briefly, then sleep until the last worker finishes: when the machine has more runnable
  // threads than cores (other processes, parallel test runs), spinning would hold the core the
  // late worker needs for a whole time slice.
  int polls = 0;
  for (int p; (p = pending_.load(std::memory_order_acquire)) != 0;) {
    if (++polls < kSpinPolls)
      cpu_relax();
    else
      pending_.wait(p, std::memory_order_acquire);
  }
}

void ThreadPool::worker(int index) {
  uint64_t seen = 0;
  for (;;) {
    // Wait for about a millisecond before sleeping, so back-to-back kernels cost no wake-up: spin
    // for the first tens of microseconds, then yield the core between polls (when other threads
    // want the cores, a spinning worker would otherwise keep them from running for a time slice).
    const auto spin_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    uint64_t g;
    int polls = 0;
    while ((g = generation_.load(std::memory_order_acquire)) == seen) {
      if (++polls < kSpinPolls) {
        cpu_relax();
      } else if (std::chrono::steady_clock::now() < spin_until) {
        std::this_thread::yield();
      } else {
        generation_.wait(seen, std::memory_order_acquire);
      }
    }
    seen = g;
    if (stop_.load()) return;
    call_(ctx_, index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

}  // namespace brisk
