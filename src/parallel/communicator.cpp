#include "parallel/communicator.h"

#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "parallel/mpi_communicator.h"

namespace brisk {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void broadcast(void*, size_t, bool) override {}
  void allgather(const float* mine, std::span<const int64_t> counts, float* all) override {
    if (all != mine && counts[0] > 0)
      std::memcpy(all, mine, static_cast<size_t>(counts[0]) * sizeof(float));
  }
  void gather(const float* mine, std::span<const int64_t> counts, float* all) override {
    allgather(mine, counts, all);
  }
  void abort_job(const std::string& why) override {
    std::fprintf(stderr, "error: %s\n", why.c_str());
    std::_Exit(1);
  }
};

// Ranks as threads: each collective publishes every rank's pointer, waits for all, copies, and
// waits again so no rank reuses its buffer while another still reads it.
struct ThreadGroup {
  explicit ThreadGroup(int n) : bar(n), ptrs(static_cast<size_t>(n)) {}
  std::barrier<> bar;
  std::vector<const void*> ptrs;
};

class ThreadCommunicator final : public Communicator {
 public:
  ThreadCommunicator(std::shared_ptr<ThreadGroup> g, int rank) : g_(std::move(g)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(g_->ptrs.size()); }
  void broadcast(void* data, size_t bytes, bool) override {
    if (rank_ == 0) g_->ptrs[0] = data;
    g_->bar.arrive_and_wait();
    if (rank_ != 0 && bytes > 0) std::memcpy(data, g_->ptrs[0], bytes);
    g_->bar.arrive_and_wait();
  }
  void allgather(const float* mine, std::span<const int64_t> counts, float* all) override {
    exchange(mine, counts, all, true);
  }
  void gather(const float* mine, std::span<const int64_t> counts, float* all) override {
    exchange(mine, counts, all, rank_ == 0);
  }
  void abort_job(const std::string& why) override {
    std::fprintf(stderr, "rank %d: error: %s\n", rank_, why.c_str());
    std::abort();
  }

 private:
  void exchange(const float* mine, std::span<const int64_t> counts, float* all, bool receive) {
    const auto t0 = std::chrono::steady_clock::now();
    g_->ptrs[static_cast<size_t>(rank_)] = mine;
    g_->bar.arrive_and_wait();
    if (receive) {
      int64_t off = 0;
      for (size_t r = 0; r < counts.size(); ++r) {
        if (counts[r] > 0)
          std::memcpy(all + off, g_->ptrs[r], static_cast<size_t>(counts[r]) * sizeof(float));
        off += counts[r];
      }
    }
    g_->bar.arrive_and_wait();
    count_collective(seconds_since(t0));
  }

  std::shared_ptr<ThreadGroup> g_;
  int rank_;
};

std::unique_ptr<Communicator> g_world;

}  // namespace

std::unique_ptr<Communicator> make_local_communicator() {
  return std::make_unique<LocalCommunicator>();
}

std::vector<std::unique_ptr<Communicator>> make_thread_communicators(int n) {
  auto g = std::make_shared<ThreadGroup>(n);
  std::vector<std::unique_ptr<Communicator>> out;
  for (int r = 0; r < n; ++r) out.push_back(std::make_unique<ThreadCommunicator>(g, r));
  return out;
}

Communicator& init_world(int* argc, char*** argv) {
  if (!g_world) {
    if (started_by_mpirun()) {
      if (!mpi_available()) {
        std::fprintf(stderr,
                     "error: started by mpirun, but this brisk was built without Open MPI "
                     "(install libopenmpi-dev and rebuild)\n");
        std::exit(1);
      }
      g_world = make_mpi_communicator(argc, argv);
    } else {
      g_world = make_local_communicator();
    }
  }
  return *g_world;
}

Communicator& world() {
  if (!g_world) g_world = make_local_communicator();
  return *g_world;
}

void finish_world() {
  g_world.reset();
}

bool started_by_mpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

}  // namespace brisk
