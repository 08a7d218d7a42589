#include "core/thread_pool.h"

#include <chrono>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace brisk {
namespace {

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
  while (pending_.load(std::memory_order_acquire) != 0) cpu_relax();
}

void ThreadPool::worker(int index) {
  uint64_t seen = 0;
  for (;;) {
    // Spin for about a millisecond before sleeping: back-to-back kernels then cost no wake-up.
    const auto spin_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    uint64_t g;
    int polls = 0;
    while ((g = generation_.load(std::memory_order_acquire)) == seen) {
      cpu_relax();
      if (++polls == 256) {
        polls = 0;
        if (std::chrono::steady_clock::now() > spin_until) {
          generation_.wait(seen, std::memory_order_acquire);
        }
      }
    }
    seen = g;
    if (stop_.load()) return;
    call_(ctx_, index);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace brisk
