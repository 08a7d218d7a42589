// Measurements of this machine's limits, taken in the same process as a benchmark so that speeds
// can be quoted as a fraction of what the hardware allows.
#pragma once

#include "core/thread_pool.h"

namespace brisk {

// Memory read bandwidth in bytes/s with the pool's threads: the median of `reps` passes summing a
// buffer far larger than the caches.
double measure_read_bandwidth(ThreadPool& pool, size_t bytes = size_t{1} << 30, int reps = 7);

// Peak f32 FMA and BF16 dot-product rates (FLOP/s) with the pool's threads, from register-only
// loops.
double measure_fma_peak(ThreadPool& pool);
double measure_bf16_dot_peak(ThreadPool& pool);
// Peak int8 dot-product rate (OP/s: a multiply and an add per byte pair) with VPDPBUSD.
double measure_int8_dot_peak(ThreadPool& pool);

}  // namespace brisk
