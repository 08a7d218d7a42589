// Latency and bandwidth of the collectives a split model runs, under mpirun: the numbers
// docs/parallel.md's multi-node model is built on. Each size is gathered from every rank (each
// contributing size / ranks), timed over many rounds after a warm-up; rank 0 prints the median.
//   mpirun -np 2 build/bench/brisk_collectives_bench                       (shared memory)
//   mpirun -np 2 --mca btl tcp,self build/bench/brisk_collectives_bench    (TCP, here loopback)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "parallel/communicator.h"

int main(int argc, char** argv) {
  brisk::Communicator& c = brisk::init_world(&argc, &argv);
  const int n = c.size();
  if (c.rank() == 0)
    std::printf("%d ranks\n| bytes gathered | median us | GB/s (bytes / time) |\n|--:|--:|--:|\n",
                n);
  for (int64_t bytes : {256, 4096, 8192, 22528, 65536, 262144, 1048576, 4194304}) {
    const int64_t per = std::max<int64_t>(1, bytes / 4 / n);
    std::vector<int64_t> counts(static_cast<size_t>(n), per);
    std::vector<float> mine(static_cast<size_t>(per), 1.0f), all(static_cast<size_t>(per * n));
    const int rounds = bytes <= 65536 ? 2000 : 200;
    std::vector<double> t;
    for (int r = 0; r < rounds + 50; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      c.allgather(mine.data(), counts, all.data());
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (r >= 50) t.push_back(s);
    }
    std::sort(t.begin(), t.end());
    const double med = t[t.size() / 2];
    if (c.rank() == 0)
      std::printf("| %ld | %.1f | %.2f |\n", static_cast<long>(per * n * 4), med * 1e6,
                  static_cast<double>(per * n * 4) / med / 1e9);
  }
  brisk::finish_world();
  return 0;
}
