// Measurements of this machine's limits, taken in the same process as a benchmark so that speeds
// can be quoted as a fraction of what the hardware allows.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/thread_pool.h"

namespace brisk {

// Memory read bandwidth in bytes/s with the pool's threads: the median of `reps` passes summing a
// buffer far larger than the caches.
double measure_read_bandwidth(ThreadPool& pool, size_t bytes = size_t{1} << 30, int reps = 7);

// Read bandwidth in bytes/s over memory that already holds data (a model's weights), span by span
// in chunks as the matmul driver splits a matrix (about 1 MiB, at least 8 a thread): where the
// memory sits matters on virtual machines, whose guest pages may be backed by host memory of
// different speeds. The median of `reps` passes over all spans.
double measure_span_bandwidth(ThreadPool& pool, const std::vector<std::span<const uint8_t>>& spans,
                              int reps = 3);

// Peak rates with the pool's threads, from register-only loops of the instructions the kernels of
// the running tier (best_isa()) use; 0 where the tier has none (generic; BF16 dot products below
// avx512bf16, where BF16 weights are widened to f32 and the FMA peak applies). f32 FMA and BF16
// dot products in FLOP/s; int8 dot products in OP/s (a multiply and an add per byte pair) with
// VPDPBUSD, or VPMADDUBSW + VPMADDWD on avx2.
double measure_fma_peak(ThreadPool& pool);
double measure_bf16_dot_peak(ThreadPool& pool);
double measure_int8_dot_peak(ThreadPool& pool);

}  // namespace brisk
