#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "core/thread_pool.h"

namespace brisk {
namespace {

TEST(ThreadPool, RunsEveryIndexOnce) {
  for (int n : {1, 2, 3, 8}) {
    ThreadPool pool(n);
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    for (int rep = 0; rep < 1000; ++rep) pool.run([&](int i) { hits[i]++; });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1000);
  }
}

TEST(ThreadPool, ParallelForCoversRangeInWholeGrains) {
  ThreadPool pool(3);
  for (int64_t n : {1, 15, 16, 17, 100, 1000}) {
    std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
    pool.parallel_for(n, 16, [&](int64_t b, int64_t e) {
      EXPECT_EQ(b % 16, 0);
      for (int64_t i = b; i < e; ++i) seen[i]++;
    });
    for (auto& s : seen) EXPECT_EQ(s.load(), 1);
  }
}

TEST(ThreadPool, SurvivesIdleSleepAndWakes) {
  ThreadPool pool(2);
  std::atomic<int> c{0};
  pool.run([&](int) { c++; });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // workers go to sleep
  pool.run([&](int) { c++; });
  EXPECT_EQ(c.load(), 4);
}

}  // namespace
}  // namespace brisk
