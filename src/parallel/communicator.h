// The ranks a model's layers are split over (tensor parallelism), and the few collectives the
// split forward needs. Every collective here only moves bytes, never adds: a split model computes
// each output row on exactly one rank with the one-process kernel, so gathering rows gives the
// same bits as one process (see docs/parallel.md).
//
// Three implementations: one process (size 1, every call a copy or nothing), threads of one
// process standing in for ranks (tests), and Open MPI ranks (parallel/mpi_communicator.cpp, when
// the build found Open MPI and the program was started by mpirun).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace brisk {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Ranks on this machine (this one included): they share its cores.
  virtual int local_size() const { return size(); }

  // Rank 0's `bytes` bytes at `data` reach every rank. idle: the caller may wait long (a rank
  // waiting for the next step while the server has no work), so it waits without keeping a core
  // busy.
  virtual void broadcast(void* data, size_t bytes, bool idle = false) = 0;
  // Rank r contributes counts[r] floats from `mine`; every rank receives all of them in rank order
  // in `all` (sum of counts).
  virtual void allgather(const float* mine, std::span<const int64_t> counts, float* all) = 0;
  // As allgather, but only rank 0 receives (`all` may be null elsewhere).
  virtual void gather(const float* mine, std::span<const int64_t> counts, float* all) = 0;
  // Ends every rank of the job now, after printing `why` with this rank's number: for faults that
  // leave the ranks out of step (one rank failed where the others did not).
  [[noreturn]] void abort(const std::string& why) {
    abort_job(why);
    std::abort();  // abort_job does not return
  }

  // Seconds this rank has spent inside allgather and gather (waiting for the slowest rank
  // included), and how many it ran.
  // Readable from any thread (the server's /metrics) while the step thread runs collectives.
  double collective_seconds() const { return collective_seconds_.load(std::memory_order_relaxed); }
  int64_t collectives() const { return collectives_.load(std::memory_order_relaxed); }

 protected:
  virtual void abort_job(const std::string& why) = 0;
  void count_collective(double seconds) {
    collective_seconds_.fetch_add(seconds, std::memory_order_relaxed);
    collectives_.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  std::atomic<double> collective_seconds_{0};
  std::atomic<int64_t> collectives_{0};
};

// One process: rank 0 of 1.
std::unique_ptr<Communicator> make_local_communicator();
// n ranks as n threads of this process (rank i is element i; each thread uses its own).
std::vector<std::unique_ptr<Communicator>> make_thread_communicators(int n);

// The job this process belongs to: Open MPI ranks when started by mpirun (and built with Open
// MPI), else one process. Call once, first thing in main; finish_world() at the end.
Communicator& init_world(int* argc, char*** argv);
Communicator& world();
void finish_world();
// Whether this build can run under mpirun.
bool mpi_available();

}  // namespace brisk
