#include "ops/roofline.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/clock.h"
#include "ops/cpu.h"
#include "ops/isa_target.h"

namespace brisk {
namespace {

// Integer sums: any bytes (weights included) read at the same speed, no float special cases.
#if defined(__x86_64__)
BRISK_TARGET(BRISK_ISA_AVX512) float sum_avx512(const float* p, size_t n) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 64 <= n; i += 64) {
    a0 = _mm512_add_epi32(a0, _mm512_loadu_si512(p + i));
    a1 = _mm512_add_epi32(a1, _mm512_loadu_si512(p + i + 16));
    a2 = _mm512_add_epi32(a2, _mm512_loadu_si512(p + i + 32));
    a3 = _mm512_add_epi32(a3, _mm512_loadu_si512(p + i + 48));
  }
  // Folded with xor, as the AVX2 loop does: _mm512_reduce_add_epi32 adds as signed ints, which
  // overflow on arbitrary bytes (undefined behaviour the sanitizer build reports).
  alignas(64) int32_t l[16];
  _mm512_store_si512(l, _mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)));
  int32_t x = 0;
  for (int32_t v : l) x ^= v;
  return static_cast<float>(x);
}

BRISK_TARGET(BRISK_ISA_AVX2) float sum_avx2(const float* p, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 32 <= n; i += 32) {
    a0 = _mm256_add_epi32(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi32(a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 8)));
    a2 = _mm256_add_epi32(a2, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 16)));
    a3 = _mm256_add_epi32(a3, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 24)));
  }
  alignas(32) int32_t l[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(l),
                     _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)));
  return static_cast<float>(l[0] ^ l[1] ^ l[2] ^ l[3] ^ l[4] ^ l[5] ^ l[6] ^ l[7]);
}
#endif

float sum_generic(const float* p, size_t n) {
  uint32_t a[16] = {};
  for (size_t i = 0; i + 16 <= n; i += 16)
    for (int l = 0; l < 16; ++l) {
      uint32_t v;
      std::memcpy(&v, p + i + l, 4);
      a[l] += v;
    }
  uint32_t s = 0;
  for (uint32_t v : a) s ^= v;
  return static_cast<float>(s);
}

float sum(Isa isa, const float* p, size_t n) {
  using Sum = float (*)(const float*, size_t);
  static constexpr TierTable<Sum> kSum = {sum_generic, BRISK_X86(sum_avx2), nullptr,
                                          BRISK_X86(sum_avx512), nullptr};
  return pick_tier(isa, kSum)(p, n);
}

#if defined(__x86_64__)

BRISK_TARGET(BRISK_ISA_AVX512) double fma_loop_avx512(int64_t iters) {
  __m512 a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_ps(0.5f + static_cast<float>(i));
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (int64_t k = 0; k < iters; ++k)
    for (int i = 0; i < 12; ++i) a[i] = _mm512_fmadd_ps(a[i], m, c);
  __m512 s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, a[i]);
  return _mm512_reduce_add_ps(s);
}

BRISK_TARGET(BRISK_ISA_AVX512BF16) double bf16_loop_avx512(int64_t iters) {
  __m512 a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm512_setzero_ps();
  const __m512bh x = reinterpret_cast<__m512bh>(_mm512_set1_epi16(0x3f80));
  const __m512bh y = reinterpret_cast<__m512bh>(_mm512_set1_epi16(0x3c00));
  for (int64_t k = 0; k < iters; ++k)
    for (int i = 0; i < 12; ++i) a[i] = _mm512_dpbf16_ps(a[i], x, y);
  __m512 s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, a[i]);
  return _mm512_reduce_add_ps(s);
}

BRISK_TARGET(BRISK_ISA_AVX512VNNI) double int8_loop_avx512(int64_t iters) {
  __m512i a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm512_setzero_si512();
  const __m512i x = _mm512_set1_epi8(1), y = _mm512_set1_epi8(2);
  for (int64_t k = 0; k < iters; ++k)
    for (int i = 0; i < 12; ++i) a[i] = _mm512_dpbusd_epi32(a[i], x, y);
  __m512i s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_epi32(s, a[i]);
  return static_cast<double>(_mm_cvtsi128_si32(_mm512_castsi512_si128(s)));
}

BRISK_TARGET(BRISK_ISA_AVX2) double fma_loop_avx2(int64_t iters) {
  __m256 a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_ps(0.5f + static_cast<float>(i));
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (int64_t k = 0; k < iters; ++k)
    for (int i = 0; i < 12; ++i) a[i] = _mm256_fmadd_ps(a[i], m, c);
  __m256 s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, a[i]);
  alignas(32) float l[8];
  _mm256_store_ps(l, s);
  return l[0] + l[7];
}

BRISK_TARGET(BRISK_ISA_AVXVNNI) double int8_loop_avxvnni(int64_t iters) {
  __m256i a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm256_setzero_si256();
  const __m256i x = _mm256_set1_epi8(1), y = _mm256_set1_epi8(2);
  for (int64_t k = 0; k < iters; ++k)
    for (int i = 0; i < 12; ++i) a[i] = _mm256_dpbusd_avx_epi32(a[i], x, y);
  __m256i s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_epi32(s, a[i]);
  return static_cast<double>(_mm256_extract_epi32(s, 0));
}

// The AVX2 kernels' byte dot product: VPMADDUBSW then VPMADDWD per 32 byte pairs (each chain feeds
// its result back as bytes, so nothing is loop-invariant).
BRISK_TARGET(BRISK_ISA_AVX2) double int8_loop_avx2(int64_t iters) {
  __m256i a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_epi8(static_cast<char>(i));
  const __m256i y = _mm256_set1_epi8(1), ones = _mm256_set1_epi16(1);
  for (int64_t k = 0; k < iters; ++k)
    for (int i = 0; i < 12; ++i) a[i] = _mm256_madd_epi16(_mm256_maddubs_epi16(a[i], y), ones);
  __m256i s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_epi32(s, a[i]);
  return static_cast<double>(_mm256_extract_epi32(s, 0));
}
#endif

template <typename F>
double peak(ThreadPool& pool, F loop, double flop_per_iter) {
  const int64_t iters = 20'000'000;
  std::vector<double> rates;
  for (int rep = 0; rep < 3; ++rep) {
    std::atomic<double> sink{0};
    const double t0 = now_seconds();
    pool.run([&](int) { sink = sink + loop(iters); });
    rates.push_back(flop_per_iter * static_cast<double>(iters) * pool.size() /
                    (now_seconds() - t0));
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

double measure_read_bandwidth(ThreadPool& pool, size_t bytes, int reps) {
  const size_t n = bytes / sizeof(float);
  float* buf = static_cast<float*>(std::aligned_alloc(size_t{1} << 21, n * sizeof(float)));
  madvise(buf, n * sizeof(float), MADV_HUGEPAGE);
  pool.parallel_for(static_cast<int64_t>(n), 1 << 16, [&](int64_t b, int64_t e) {
    std::memset(buf + b, 1, static_cast<size_t>(e - b) * sizeof(float));
  });
  const Isa isa = best_isa();
  std::vector<double> rates;
  std::atomic<float> sink{0};
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_seconds();
    // Read the way the kernels read: 1 MiB chunks claimed in order by all threads.
    pool.parallel_chunks(static_cast<int64_t>(n), 1 << 18, [&](int64_t b, int64_t e) {
      const size_t len = static_cast<size_t>(e - b);
      sink = sink + sum(isa, buf + b, len);
    });
    rates.push_back(static_cast<double>(n * sizeof(float)) / (now_seconds() - t0));
  }
  std::free(buf);
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

double measure_span_bandwidth(ThreadPool& pool, const std::vector<std::span<const uint8_t>>& spans,
                              int reps) {
  const Isa isa = best_isa();
  constexpr int64_t kMaxChunk = 1 << 18, kMinChunk = 1 << 12;  // floats: 1 MiB, 16 KiB
  std::vector<double> rates;
  std::atomic<float> sink{0};
  uint64_t total = 0;
  for (const auto& s : spans) total += s.size() / 256 * 256;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_seconds();
    for (const auto& s : spans) {
      const auto* p = reinterpret_cast<const float*>(s.data());
      const int64_t n = static_cast<int64_t>(s.size() / 256 * 64);
      const int64_t chunk = std::clamp<int64_t>(n / (8 * pool.size()), kMinChunk, kMaxChunk);
      pool.parallel_chunks(n, chunk, [&](int64_t b, int64_t e) {
        const size_t len = static_cast<size_t>(e - b);
        sink = sink + sum(isa, p + b, len);
      });
    }
    rates.push_back(static_cast<double>(total) / (now_seconds() - t0));
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

// Each peak is that of the tier the kernels run (best_isa()): its loop and the operations one
// iteration does; 0 where no loop measures it.
namespace {

struct PeakLoop {
  double (*loop)(int64_t) = nullptr;
  double ops_per_iter = 0;
  explicit operator bool() const { return loop != nullptr; }
};

double measure_peak(ThreadPool& pool, const TierTable<PeakLoop>& loops) {
  const PeakLoop l = pick_tier(best_isa(), loops);
  return l ? peak(pool, l.loop, l.ops_per_iter) : 0;
}

}  // namespace

double measure_fma_peak(ThreadPool& pool) {
  return measure_peak(pool, {PeakLoop{}, PeakLoop{BRISK_X86(fma_loop_avx2), 12 * 8 * 2}, PeakLoop{},
                             PeakLoop{BRISK_X86(fma_loop_avx512), 12 * 16 * 2}, PeakLoop{}});
}

double measure_int8_dot_peak(ThreadPool& pool) {
  return measure_peak(pool, {PeakLoop{}, PeakLoop{BRISK_X86(int8_loop_avx2), 12 * 32 * 2},
                             PeakLoop{BRISK_X86(int8_loop_avxvnni), 12 * 32 * 2},
                             PeakLoop{BRISK_X86(int8_loop_avx512), 12 * 64 * 2}, PeakLoop{}});
}

double measure_bf16_dot_peak(ThreadPool& pool) {
  return measure_peak(pool, {PeakLoop{}, PeakLoop{}, PeakLoop{}, PeakLoop{},
                             PeakLoop{BRISK_X86(bf16_loop_avx512), 12 * 32 * 2}});
}

}  // namespace brisk
