// A persistent pool of worker threads. The calling thread takes part as worker 0, so a pool of
// n threads starts n-1 workers. Workers spin briefly between jobs (decode issues thousands of
// small jobs a second) and then sleep, so an idle engine uses no CPU.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace brisk {

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Calls fn(thread_index) once on each of the pool's threads and returns when all are done.
  template <typename F>
  void run(F&& fn) {
    auto call = [](void* ctx, int i) { (*static_cast<std::remove_reference_t<F>*>(ctx))(i); };
    dispatch(call, &fn);
  }

  // Splits [0, n) into at most size() contiguous ranges of whole `grain`s and calls
  // fn(begin, end) for each. Which thread computes which range never changes a result: callers
  // keep every output's reduction inside one call.
  template <typename F>
  void parallel_for(int64_t n, int64_t grain, F&& fn) {
    if (n <= 0) return;
    const int64_t units = (n + grain - 1) / grain;
    const int64_t parts = units < n_threads_ ? units : n_threads_;
    if (parts <= 1) {
      fn(int64_t{0}, n);
      return;
    }
    run([&](int t) {
      if (t >= parts) return;
      const int64_t u0 = units * t / parts, u1 = units * (t + 1) / parts;
      const int64_t b = u0 * grain, e = u1 * grain < n ? u1 * grain : n;
      if (b < e) fn(b, e);
    });
  }

  // Splits [0, n) into chunks of `chunk` items that the threads claim in order from a shared
  // counter, calling fn(begin, end) for each. Threads thus stream through neighbouring memory
  // together (much faster on many machines than each reading its own distant half) and a slowed
  // thread simply takes fewer chunks. Each chunk is computed whole by one thread, so results do not
  // depend on who ran it.
  template <typename F>
  void parallel_chunks(int64_t n, int64_t chunk, F&& fn) {
    if (n <= 0) return;
    if (chunk < 1) chunk = 1;
    const int64_t chunks = (n + chunk - 1) / chunk;
    if (chunks == 1 || n_threads_ == 1) {
      for (int64_t c = 0; c < chunks; ++c) fn(c * chunk, std::min(n, (c + 1) * chunk));
      return;
    }
    std::atomic<int64_t> next{0};
    run([&](int) {
      for (int64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks;)
        fn(c * chunk, std::min(n, (c + 1) * chunk));
    });
  }

  static int default_threads();

 private:
  using Call = void (*)(void*, int);
  void dispatch(Call call, void* ctx);
  void worker(int index);

  int n_threads_;
  std::vector<std::thread> threads_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  Call call_ = nullptr;
  void* ctx_ = nullptr;
};

}  // namespace brisk
