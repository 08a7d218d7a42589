// The tile loop every matmul kernel shares: rows in groups of up to 4, tokens in groups of up to
// MaxT, each group computed by a micro-kernel instantiated for its exact size. The micro-kernels
// give each output its own accumulators walked over k in one fixed order, so a (row, token) result
// is the same bits in a 4xMaxT group, a 1x1 group, or any size between.
#pragma once

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ops/matmul.h"

namespace brisk::matmul_detail {

using MicroFn = void (*)(const Args&, int64_t r, int64_t t);

#define BRISK_MICRO_ROW(fn, R) \
  { fn<R, 1>, fn<R, 2>, fn<R, 3>, fn<R, 4>, fn<R, 5>, fn<R, 6> }
#define BRISK_MICRO_TABLE(fn) \
  { BRISK_MICRO_ROW(fn, 1), BRISK_MICRO_ROW(fn, 2), BRISK_MICRO_ROW(fn, 3), BRISK_MICRO_ROW(fn, 4) }
#define BRISK_MICRO_ROW3(fn, R) \
  { fn<R, 1>, fn<R, 2>, fn<R, 3> }
#define BRISK_MICRO_TABLE3(fn)                                                 \
  {                                                                            \
    BRISK_MICRO_ROW3(fn, 1), BRISK_MICRO_ROW3(fn, 2), BRISK_MICRO_ROW3(fn, 3), \
        BRISK_MICRO_ROW3(fn, 4)                                                \
  }

#define BRISK_MICRO_ROW4(fn, R) \
  { fn<R, 1>, fn<R, 2>, fn<R, 3>, fn<R, 4> }
#define BRISK_MICRO_TABLE4(fn)                                                 \
  {                                                                            \
    BRISK_MICRO_ROW4(fn, 1), BRISK_MICRO_ROW4(fn, 2), BRISK_MICRO_ROW4(fn, 3), \
        BRISK_MICRO_ROW4(fn, 4)                                                \
  }

template <int MaxT, const MicroFn (*Table)[MaxT]>
void tile_loop(const Args& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  if (t1 - t0 == 1) {
    // Decode: one weight row at a time. A single sequential stream per thread lets the hardware
    // prefetcher reach full memory bandwidth; interleaving rows 4 KiB apart does not.
    for (int64_t r = r0; r < r1; ++r) Table[0][0](a, r, t0);
    return;
  }
  for (int64_t r = r0; r < r1; r += 4) {
    const int64_t nr = std::min<int64_t>(4, r1 - r);
    for (int64_t t = t0; t < t1; t += MaxT) {
      const int64_t nt = std::min<int64_t>(MaxT, t1 - t);
      Table[nr - 1][nt - 1](a, r, t);
    }
  }
}

// Few tokens (a verification pass, a small batch): one weight row at a time with all the tokens
// in one call, Row[n - 1] computing n tokens, so each thread reads one sequential stream as in
// decode. With 4-row tiles each row group's reads stalled the FMAs instead (F32 1024x384 from
// memory, one thread: 2 tokens took 1.3x and 5 tokens 1.9x the time of one; one row at a time
// with the reads prefetched ahead, 1.1x and 1.3x). Past RowT tokens, the register tiles of
// tile_loop reuse each activation load across rows.
template <int MaxT, const MicroFn (*Table)[MaxT], int RowT, const MicroFn* Row>
void tile_loop_rows(const Args& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  if (t1 - t0 > RowT) return tile_loop<MaxT, Table>(a, r0, r1, t0, t1);
  for (int64_t r = r0; r < r1; ++r) Row[t1 - t0 - 1](a, r, t0);
}
#define BRISK_MICRO_ONE_ROW8(fn) \
  { fn<1, 1>, fn<1, 2>, fn<1, 3>, fn<1, 4>, fn<1, 5>, fn<1, 6>, fn<1, 7>, fn<1, 8> }

// Software prefetch of a weight row kPrefetchAhead bytes past the elements [k0, k0 + n) a step
// reads (one request per cache line): the hardware prefetchers alone left the FMAs waiting on
// memory (the same F32 matrix decoded 25% faster with it: 34 against 46 us).
constexpr int kPrefetchAhead = 4096;
template <class T>
inline void prefetch_ahead(const T* row, int64_t k0, int64_t n) {
#if defined(__x86_64__)
  const char* p = reinterpret_cast<const char*>(row + k0) + kPrefetchAhead;
  for (int64_t b = 0; b < n * static_cast<int64_t>(sizeof(T)); b += 64)
    _mm_prefetch(p + b, _MM_HINT_T0);
#else
  (void)row, (void)k0, (void)n;
#endif
}

// Decode over rows interleaved in groups of 16 (ops/repack.h) reads each thread's rows as one
// sequential stream; a step that reads the bytes [p, p + n) of it also requests, into L1, the lines
// that begin in [p + kStreamAhead, p + kStreamAhead + n), so over consecutive steps every line is
// requested once, kStreamAhead ahead, across column and group boundaries alike. The hardware
// prefetchers alone kept too few lines in flight: one thread, 5632x2048 from memory
// (brisk_kernels_bench, alternating, three rounds), Q4_0 21-30 -> 33-38 GB/s, Q4_K 22-28 -> 30-36,
// Q6_K 21-25 -> 29-32, F16 16-30 -> 25-33, BF16 (VDPBF16PS) 16-30 -> 25-33; on AVX2 Q8_0 19 ->
// 27-29. 4 KiB ahead gained less, 16 KiB no more. (The k-quants prefetched 3 columns ahead into L2
// before, ~7 KiB: slower.) Every kernel does the same for up to kStreamTokens tokens a call (a few
// sequences decoding, a verification pass: the group still comes from memory), the 256-bit ones in
// their first half's pass: 5632x2048 x 4 tokens, Q4_K 14-16 -> 25-29 GB/s on AVX-512, 6.4-6.9 ->
// 11-13 on AVX2, Q8_0 25-31 -> 36-42 and 7-8 -> 13-14 (Q4_0 about level on AVX-512, 10 -> 16-18 on
// AVX2), F16 20-22 -> 27-32 and 14-15 -> 18-19, BF16 level (VDPBF16PS) and 13.5-14.6 -> 18.7-19.4
// (AVX2); 128-token prompt blocks were level. A prefetch never faults, so the lines past a matrix's
// end are harmless. 2026-12-05, end to end (`brisk bench -p 1 -n 64 -t 2`, TinyLlama-shaped,
// alternating): 8 KiB ahead had become too far. Q4_K_M at 1 KiB beat 8 KiB in each of 6 pairs:
// 57-69 against 46-55 tokens/s on AVX-512, 40-46 against 38-40 on AVX2 (no prefetch at all was
// level with 1 KiB on a second sitting). F16 20-23 against 15-22; Q4_0 about level. 2026-12-06, the
// same command, 1 / 2 / 4 KiB side by side, two rounds, with four groups decoded at a time
// (decode_group_loop): 2 KiB ahead won 14 of 16 pairs against 1 KiB. AVX2 tier Q4_0 45, 49 ->
// 58, 59; Q8_0 28, 29 -> 34, 35; Q4_K_M 53, 48 -> 56, 53; F16 19.0, 19.0 -> 20.2, 19.6. AVX-512
// Q4_0 56, 59 -> 59, 64; Q8_0 37, 36 -> 40, 40; F16 17.1, 17.6 -> 15.5, 20.0; Q4_K_M 61, 60 ->
// 54, 64. 4 KiB was between the two.
constexpr uintptr_t kStreamAhead = 2048;
constexpr int kStreamTokens = 4;
inline void prefetch_stream(const void* p, uint64_t n) {
#if defined(__x86_64__)
  const uintptr_t b = reinterpret_cast<uintptr_t>(p) + kStreamAhead;
  for (uintptr_t l = (b + 63) & ~uintptr_t{63}; l < b + n; l += 64)
    _mm_prefetch(reinterpret_cast<const char*>(l), _MM_HINT_T0);
#else
  (void)p, (void)n;
#endif
}

// The tile loop of the kernels for rows interleaved in groups of 16 (ops/repack.h; r0 and r1 are
// multiples of 16: see repackable and the driver's chunks): each group over the tokens in
// micro-tiles of up to MaxT, Table[n - 1] computing n tokens.
template <int MaxT, const MicroFn* Table>
void group_loop(const Args& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  for (int64_t r = r0; r < r1; r += 16)
    for (int64_t t = t0; t < t1; t += MaxT) Table[std::min<int64_t>(MaxT, t1 - t) - 1](a, r, t);
}

// One token's rows [r0, r1) (decode): Groups computing G groups side by side while they last (G
// streams of weights in flight), then One each group left; both give a group the same bits.
template <int G, MicroFn Groups, MicroFn One>
void decode_group_loop(const Args& a, int64_t r0, int64_t r1, int64_t t) {
  int64_t r = r0;
  if constexpr (G > 1)
    for (; r + 16 * G <= r1; r += 16 * G) Groups(a, r, t);
  for (; r < r1; r += 16) One(a, r, t);
}

// Sums 16 lanes in a fixed pairwise order (the generic kernels' horizontal reduction).
inline float reduce16(const float* v) {
  float s8[8], s4[4];
  for (int i = 0; i < 8; ++i) s8[i] = v[i] + v[i + 8];
  for (int i = 0; i < 4; ++i) s4[i] = s8[i] + s8[i + 4];
  return (s4[0] + s4[2]) + (s4[1] + s4[3]);
}

}  // namespace brisk::matmul_detail
