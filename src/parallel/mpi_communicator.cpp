#include "parallel/mpi_communicator.h"

#ifdef BRISK_MPI
#include <mpi.h>

#include <fmt/format.h>
#include <algorithm>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <thread>
#endif

namespace brisk {

#ifdef BRISK_MPI
namespace {

using Clock = std::chrono::steady_clock;

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(int* argc, char*** argv) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local_size_);
    MPI_Comm_free(&node);
    if (provided < MPI_THREAD_SERIALIZED)
      abort("this Open MPI does not allow calls from more than one thread (MPI_THREAD_SERIALIZED)");
    if (const char* t = std::getenv("BRISK_MPI_TIMEOUT")) {
      const long v = std::strtol(t, nullptr, 10);
      if (v < 1 || v > 86400)
        abort("BRISK_MPI_TIMEOUT must be a number of seconds from 1 to 86400");
      timeout_ = std::chrono::seconds(v);
    }
  }
  ~MpiCommunicator() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_size() const override { return local_size_; }

  void broadcast(void* data, size_t bytes, bool idle) override {
    if (size_ == 1) return;
    const int n = to_int(bytes, "broadcast");
    // Always the nonblocking form: MPI matches a nonblocking collective only with nonblocking
    // ones, and the idle wait needs it.
    MPI_Request req;
    MPI_Ibcast(data, n, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
    if (!idle) return wait(req, "a broadcast from rank 0");
    // Open MPI's waits poll without pause; a rank waiting for the next step polls for a
    // millisecond (a step usually follows at once), then sleeps between polls, up to 1 ms. No
    // time limit: a server may stay idle for days.
    const auto t0 = Clock::now();
    auto pause = std::chrono::microseconds(20);
    for (int done = 0;;) {
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done) return;
      if (Clock::now() - t0 > std::chrono::milliseconds(1)) {
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(1000));
      }
    }
  }

  void allgather(const float* mine, std::span<const int64_t> counts, float* all) override {
    const auto t0 = Clock::now();
    layout(counts);
    MPI_Request req;
    MPI_Iallgatherv(mine, counts_[static_cast<size_t>(rank_)], MPI_FLOAT, all, counts_.data(),
                    displs_.data(), MPI_FLOAT, MPI_COMM_WORLD, &req);
    wait(req, "a gather of every rank's rows");
    count_collective(std::chrono::duration<double>(Clock::now() - t0).count());
  }

  void gather(const float* mine, std::span<const int64_t> counts, float* all) override {
    const auto t0 = Clock::now();
    layout(counts);
    MPI_Request req;
    MPI_Igatherv(mine, counts_[static_cast<size_t>(rank_)], MPI_FLOAT, all, counts_.data(),
                 displs_.data(), MPI_FLOAT, 0, MPI_COMM_WORLD, &req);
    wait(req, "a gather of the classifier's rows");
    count_collective(std::chrono::duration<double>(Clock::now() - t0).count());
  }

  void abort_job(const std::string& why) override {
    std::fprintf(stderr, "brisk rank %d: error: %s\n", rank_, why.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);  // should MPI_Abort ever return
  }

 private:
  // Within a step every rank reaches each collective within a layer's compute of the others; a
  // rank that does not has hung (or its machine has), and the job ends rather than hang with it.
  void wait(MPI_Request& req, const char* what) {
    const auto t0 = Clock::now();
    for (int done = 0, polls = 0;; ++polls) {
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done) return;
      if (polls % 4096 == 0 && Clock::now() - t0 > timeout_)
        abort(
            fmt::format("{} has waited {} s for the other ranks: one of them has stopped "
                        "(BRISK_MPI_TIMEOUT sets the limit)",
                        what, timeout_.count()));
    }
  }

  int to_int(int64_t n, const char* what) {
    if (n < 0 || n > INT_MAX) abort(std::string(what) + ": message over 2^31 elements");
    return static_cast<int>(n);
  }
  // MPI counts and displacements are ints.
  void layout(std::span<const int64_t> counts) {
    counts_.resize(counts.size());
    displs_.resize(counts.size());
    int64_t off = 0;
    for (size_t r = 0; r < counts.size(); ++r) {
      counts_[r] = to_int(counts[r], "gather");
      displs_[r] = to_int(off, "gather");
      off += counts[r];
    }
  }

  int rank_ = 0, size_ = 1, local_size_ = 1;
  std::chrono::seconds timeout_{30};
  std::vector<int> counts_, displs_;
};

}  // namespace

bool mpi_available() {
  return true;
}

std::unique_ptr<Communicator> make_mpi_communicator(int* argc, char*** argv) {
  return std::make_unique<MpiCommunicator>(argc, argv);
}
#else
bool mpi_available() {
  return false;
}

std::unique_ptr<Communicator> make_mpi_communicator(int*, char***) {
  return make_local_communicator();
}
#endif

}  // namespace brisk
