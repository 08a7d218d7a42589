// Matmul micro-kernels for weights that are widened to f32 in registers and multiplied with f32
// activations: every ISA's version, written once and instantiated per weight type through a policy
//   struct P { using T; static float scalar(T); static __m256 load8(const T*);
//              static __m512 load16(const T*); static __m512 load16_masked(__mmask16, const T*); };
// Included by matmul_<type>.cpp only.
#pragma once

#include <vector>

#include "ops/isa_target.h"

#include "ops/matmul_tile.h"

namespace brisk::matmul_detail {

// Portable: one 16-lane accumulator array per output, reduced in a fixed pairwise order.
template <class P, int R, int T>
void micro_generic(const Args& a, int64_t r, int64_t t) {
  float acc[R][T][16] = {};
  const typename P::T* w[R];
  const float* x[T];
  for (int i = 0; i < R; ++i)
    w[i] = reinterpret_cast<const typename P::T*>(a.w + (r + i) * a.w_stride);
  for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const float*>(a.x + (t + j) * a.x_stride);
  for (int64_t k0 = 0; k0 < a.k; k0 += 16) {
    const int n = static_cast<int>(std::min<int64_t>(16, a.k - k0));
    float wv[R][16];
    for (int i = 0; i < R; ++i)
      for (int l = 0; l < n; ++l) wv[i][l] = P::scalar(w[i][k0 + l]);
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < T; ++j)
        for (int l = 0; l < n; ++l) acc[i][j][l] += wv[i][l] * x[j][k0 + l];
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) a.y[(t + j) * a.ldy + r + i] = reduce16(acc[i][j]);
}

#if defined(__x86_64__)
// AVX2: one 8-lane accumulator per output; the tail is added in scalar after the reduction.
template <class P, int R, int T>
BRISK_TARGET(BRISK_ISA_AVX2)
void micro_avx2(const Args& a, int64_t r, int64_t t) {
  __m256 acc[R][T];
  const typename P::T* w[R];
  const float* x[T];
  for (int i = 0; i < R; ++i)
    w[i] = reinterpret_cast<const typename P::T*>(a.w + (r + i) * a.w_stride);
  for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const float*>(a.x + (t + j) * a.x_stride);
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) acc[i][j] = _mm256_setzero_ps();
  int64_t k0 = 0;
  for (; k0 + 8 <= a.k; k0 += 8) {
    if (k0 % 16 == 0)
      for (int i = 0; i < R; ++i) prefetch_ahead(w[i], k0, 16);
    __m256 wv[R];
    for (int i = 0; i < R; ++i) wv[i] = P::load8(w[i] + k0);
    for (int j = 0; j < T; ++j) {
      const __m256 xv = _mm256_loadu_ps(x[j] + k0);
      for (int i = 0; i < R; ++i) acc[i][j] = _mm256_fmadd_ps(wv[i], xv, acc[i][j]);
    }
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) {
      alignas(32) float l[8];
      _mm256_store_ps(l, acc[i][j]);
      float s = ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
      for (int64_t kk = k0; kk < a.k; ++kk) s += P::scalar(w[i][kk]) * x[j][kk];
      a.y[(t + j) * a.ldy + r + i] = s;
    }
}

// One 16-element k-step of a micro-tile into accumulator set S; Masked reads only m's lanes.
template <class P, int R, int T, int S, bool Masked>
BRISK_INLINE(BRISK_ISA_AVX512)
void step_avx512(__m512 (&acc)[R][T][2], const typename P::T* const (&w)[R],
                 const float* const (&x)[T], int64_t K, __mmask16 m) {
  __m512 wv[R];
  for (int i = 0; i < R; ++i) wv[i] = Masked ? P::load16_masked(m, w[i] + K) : P::load16(w[i] + K);
  for (int j = 0; j < T; ++j) {
    const __m512 xv = Masked ? _mm512_maskz_loadu_ps(m, x[j] + K) : _mm512_loadu_ps(x[j] + K);
    for (int i = 0; i < R; ++i) acc[i][j][S] = _mm512_fmadd_ps(wv[i], xv, acc[i][j][S]);
  }
}

// AVX-512: two accumulators per output take alternate 16-element steps, halving the FMA latency
// chain so decode runs at memory speed. The split depends only on k, never on the tile size.
template <class P, int R, int T>
BRISK_TARGET(BRISK_ISA_AVX512)
void micro_avx512(const Args& a, int64_t r, int64_t t) {
  __m512 acc[R][T][2];
  const typename P::T* w[R];
  const float* x[T];
  for (int i = 0; i < R; ++i)
    w[i] = reinterpret_cast<const typename P::T*>(a.w + (r + i) * a.w_stride);
  for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const float*>(a.x + (t + j) * a.x_stride);
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) acc[i][j][0] = acc[i][j][1] = _mm512_setzero_ps();
  int64_t k0 = 0;
  for (; k0 + 32 <= a.k; k0 += 32) {
    for (int i = 0; i < R; ++i) prefetch_ahead(w[i], k0, 32);
    step_avx512<P, R, T, 0, false>(acc, w, x, k0, 0);
    step_avx512<P, R, T, 1, false>(acc, w, x, k0 + 16, 0);
  }
  const bool odd = k0 + 16 <= a.k;
  if (odd) step_avx512<P, R, T, 0, false>(acc, w, x, k0, 0), k0 += 16;
  if (k0 < a.k) {
    const __mmask16 m = static_cast<__mmask16>((1u << (a.k - k0)) - 1);
    if (odd)
      step_avx512<P, R, T, 1, true>(acc, w, x, k0, m);
    else
      step_avx512<P, R, T, 0, true>(acc, w, x, k0, m);
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j)
      a.y[(t + j) * a.ldy + r + i] =
          _mm512_reduce_add_ps(_mm512_add_ps(acc[i][j][0], acc[i][j][1]));
}
#endif

// Rows interleaved 16 at a time at load (ops/repack.h), V values of a row per 4-byte lane (BF16: 2,
// F16: 1): the portable kernel, one row at a time, even and odd k into separate sums as the
// vector kernels do.
constexpr int kInterleavedMaxT = 12;  // tokens per micro-tile of the vector kernels
template <class P, int V, int T>
void interleaved_generic(const Args& a, int64_t r, int64_t t) {
  const auto* g = reinterpret_cast<const typename P::T*>(a.w + r * a.w_stride);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < T; ++j) {
      const auto* x = reinterpret_cast<const float*>(a.x + (t + j) * a.x_stride);
      float s[2] = {0, 0};
      for (int64_t k = 0; k < a.k; ++k)
        s[k % 2] += P::scalar(g[(k / V) * 16 * V + i * V + k % V]) * x[k];
      a.y[(t + j) * a.ldy + r + i] = s[0] + s[1];
    }
}
#if defined(__x86_64__)
// The 256-bit kernel for interleaved rows (AVX2 and up), on f32 activations in tiles of up to 6
// tokens whose values k and k + 1 sit side by side (XFormat::F32PairTiles), so one 64-bit
// broadcast carries both. A weight vector holds both values of 4 of the group's 16 rows, widened
// exactly to f32; the policy gives either
//   U::pairs(g, k, h, lo, hi)  values k and k + 1 (k even) of rows 8h + {0, 1, 4, 5} in lo and
//                              8h + {2, 3, 6, 7} in hi, each row's pair in adjacent lanes, or
//   U::one(g, k, h)            value k of rows 8h..8h+7 in order, which the kernel pairs itself
//                              (and uses alone at an odd row length's last k; BF16 rows are
//                              repacked only at even lengths).
// An accumulator lane is one (row, parity of k), so each output's even and odd k are two FMA
// chains, added at the end by VHADDPS (which puts rows 8h..8h+7 in order), as the portable kernel
// sums them; the order depends only on k. One or two tokens (decode) take both halves in one pass:
// 8 accumulators and the 4 weight vectors of a pair of values. More tokens (up to 6) take the
// halves one after the other: 12 accumulators, 2 weight vectors and the broadcast, so each weight
// vector serves 6 FMAs and each broadcast 2 (with one broadcast per FMA, the loads bound the
// kernel).
constexpr int kInterleaved256MaxT = 6;
BRISK_INLINE(BRISK_ISA_AVX2) __m256 pair_broadcast(const float* x) {
  return _mm256_castpd_ps(_mm256_broadcast_sd(reinterpret_cast<const double*>(x)));
}
// acc + w . b on the even-k lanes only (an odd row length's last value; its odd lanes stay as
// they are, bit for bit).
BRISK_INLINE(BRISK_ISA_AVX2) __m256 fmadd_even(__m256 w, __m256 b, __m256 acc) {
  return _mm256_blend_ps(acc, _mm256_fmadd_ps(w, b, acc), 0x55);
}

// Where the kernel takes a group's weight vectors from: the weights themselves, widened as it goes
// (decode reads them once, from memory), or a copy widened beforehand (prompt batches: a group's
// weights serve every micro-tile of the token block, and widening them once leaves the micro-tile
// loop only loads, broadcasts and FMAs; widening in the loop takes 2 of every 14 FMA-port slots and
// the pairing shuffles more). Both give the same vectors, so the bits are the same. pairs(k, h,
// lo, hi) as U::pairs; last(k, h, lo, hi) the same for an odd row length's last value k (the odd
// lanes zero).
template <class U>
struct FromWeights {
  const uint8_t* g;
  static constexpr bool kOddLength = requires(const uint8_t* p) { U::one(p, int64_t{0}, 0); };
  BRISK_INLINE(BRISK_ISA_AVX2) void pairs(int64_t k, int h, __m256& lo, __m256& hi) const {
    if constexpr (requires { U::pairs(g, k, h, lo, hi); }) {
      U::pairs(g, k, h, lo, hi);
    } else {
      const __m256 v0 = U::one(g, k, h), v1 = U::one(g, k + 1, h);
      lo = _mm256_unpacklo_ps(v0, v1);
      hi = _mm256_unpackhi_ps(v0, v1);
    }
  }
  // A few tokens (decode): requests the stream ahead of values k and k + 1 (matmul_tile.h).
  void prefetch_pair(int64_t k) const {
    prefetch_stream(g + U::kColumnBytes * k, 2 * U::kColumnBytes);
  }
  BRISK_INLINE(BRISK_ISA_AVX2) void last(int64_t k, int h, __m256& lo, __m256& hi) const {
    if constexpr (kOddLength) {
      const __m256 v = U::one(g, k, h), z = _mm256_setzero_ps();
      lo = _mm256_unpacklo_ps(v, z);
      hi = _mm256_unpackhi_ps(v, z);
    }
  }
};
// The widened copy of values [k0, ...): for value k (even) and half h, lo then hi at
// w[(k - k0 + h) * 16].
struct FromWidened {
  const float* w;
  int64_t k0;
  static constexpr bool kOddLength = true;
  void prefetch_pair(int64_t) const {}  // in cache: widened just before
  BRISK_INLINE(BRISK_ISA_AVX2) void pairs(int64_t k, int h, __m256& lo, __m256& hi) const {
    lo = _mm256_loadu_ps(w + (k - k0 + h) * 16);
    hi = _mm256_loadu_ps(w + (k - k0 + h) * 16 + 8);
  }
  BRISK_INLINE(BRISK_ISA_AVX2) void last(int64_t k, int h, __m256& lo, __m256& hi) const {
    pairs(k, h, lo, hi);
  }
};
template <class U>
BRISK_TARGET(BRISK_ISA_AVX2)
void widen_group_256(const uint8_t* g, int64_t k0, int64_t k1, float* dst) {
  const FromWeights<U> src{g};
  __m256 lo, hi;
  int64_t i = k0;
  for (; i + 2 <= k1; i += 2)
    for (int h = 0; h < 2; ++h) {
      src.pairs(i, h, lo, hi);
      _mm256_storeu_ps(dst + (i - k0 + h) * 16, lo);
      _mm256_storeu_ps(dst + (i - k0 + h) * 16 + 8, hi);
    }
  if constexpr (FromWeights<U>::kOddLength)
    if (i < k1)
      for (int h = 0; h < 2; ++h) {
        src.last(i, h, lo, hi);
        _mm256_storeu_ps(dst + (i - k0 + h) * 16, lo);
        _mm256_storeu_ps(dst + (i - k0 + h) * 16 + 8, hi);
      }
}

// acc[j][h] + w[h] . (token j's pair of values at xk + 2 j) for the micro-tile's T tokens; Even:
// the even-k lanes only (an odd row length's last value).
template <int T, int H, bool Even>
BRISK_INLINE(BRISK_ISA_AVX2)
void pair_step(const __m256 (&w)[H][2], const float* xk, __m256 (&acc)[T][H][2]) {
  for (int j = 0; j < T; ++j) {
    const __m256 b = pair_broadcast(xk + 2 * j);
    for (int h = 0; h < H; ++h)
      for (int p = 0; p < 2; ++p)
        acc[j][h][p] =
            Even ? fmadd_even(w[h][p], b, acc[j][h][p]) : _mm256_fmadd_ps(w[h][p], b, acc[j][h][p]);
  }
}

// T tokens, H halves of the group per pass (2 for decode, else 1), over the values [k0, k1) (k0
// even): from k0 = 0 the accumulators start at zero, else from state (T x 2 halves x 2 vectors,
// written there by the span before); at k1 = a.k the outputs are stored, else the accumulators go
// back to state. The chains run in the same order however k is split, so the bits are the same.
template <int T, int H, class S, bool Spans = false>
BRISK_TARGET(BRISK_ISA_AVX2)
void interleaved_avx2(const Args& a, S src, int64_t r, int64_t t, int64_t k0 = 0, int64_t k1 = -1,
                      float* state = nullptr) {
  if constexpr (!Spans) k0 = 0, k1 = a.k;
  // Value k of token j at x[k * xt + 2 j] (k even) and k + 1 beside it.
  const int64_t xt = a.x_tile;
  const float* x = reinterpret_cast<const float*>(a.x + t / xt * a.x_stride) + t % xt * 2;
  for (int h0 = 0; h0 < 2; h0 += H) {
    float* st = state + h0 * 16;  // token j, half h0 + h, vector p at st[j * 32 + h * 16 + p * 8]
    __m256 acc[T][H][2];
    if (Spans && k0 > 0) {
      for (int j = 0; j < T; ++j)
        for (int h = 0; h < H; ++h)
          for (int p = 0; p < 2; ++p) acc[j][h][p] = _mm256_loadu_ps(st + j * 32 + h * 16 + p * 8);
    } else {
      for (int j = 0; j < T; ++j)
        for (int h = 0; h < H; ++h) acc[j][h][0] = acc[j][h][1] = _mm256_setzero_ps();
    }
    __m256 w[H][2];
    int64_t k = k0;
    for (; k + 2 <= k1; k += 2) {
      if (T <= kStreamTokens && h0 == 0) src.prefetch_pair(k);  // the first pass reads memory
      for (int h = 0; h < H; ++h) src.pairs(k, h0 + h, w[h][0], w[h][1]);
      pair_step<T, H, false>(w, x + k * xt, acc);
    }
    if constexpr (S::kOddLength)
      if (k < k1) {
        for (int h = 0; h < H; ++h) src.last(k, h0 + h, w[h][0], w[h][1]);
        pair_step<T, H, true>(w, x + k * xt, acc);
      }
    if (Spans && k1 < a.k) {
      for (int j = 0; j < T; ++j)
        for (int h = 0; h < H; ++h)
          for (int p = 0; p < 2; ++p) _mm256_storeu_ps(st + j * 32 + h * 16 + p * 8, acc[j][h][p]);
    } else {
      for (int j = 0; j < T; ++j)
        for (int h = 0; h < H; ++h)
          _mm256_storeu_ps(a.y + (t + j) * a.ldy + r + 8 * (h0 + h),
                           _mm256_hadd_ps(acc[j][h][0], acc[j][h][1]));
    }
  }
}
// One token over G groups side by side (rows r..r+16G-1), as interleaved_groups does on 512 bits:
// each row's chains are those of interleaved_avx2<1, 2>, in the same order. Three groups fill the
// 16 registers (12 accumulators); one thread, 5632x2048 (brisk_kernels_bench, median of 5, during
// a compile): F16 1.52-1.82 ms -> 1.12-1.29, BF16 1.53-1.68 -> 1.13-1.16; two gained half that.
template <class U, int G>
BRISK_TARGET(BRISK_ISA_AVX2)
void interleaved_avx2_groups(const Args& a, int64_t r, int64_t t) {
  const int64_t xt = a.x_tile;
  const float* x = reinterpret_cast<const float*>(a.x + t / xt * a.x_stride) + t % xt * 2;
  const uint8_t* g = a.w + r * a.w_stride;
  const uint64_t gs = 16 * a.w_stride;
  __m256 acc[G][2][2];
#pragma GCC unroll 8
  for (int i = 0; i < G; ++i)
    for (int h = 0; h < 2; ++h) acc[i][h][0] = acc[i][h][1] = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 2 <= a.k; k += 2) {
    const __m256 b = pair_broadcast(x + k * xt);
#pragma GCC unroll 8
    for (int i = 0; i < G; ++i) {
      const FromWeights<U> src{g + i * gs};
      src.prefetch_pair(k);
      for (int h = 0; h < 2; ++h) {
        __m256 lo, hi;
        src.pairs(k, h, lo, hi);
        acc[i][h][0] = _mm256_fmadd_ps(lo, b, acc[i][h][0]);
        acc[i][h][1] = _mm256_fmadd_ps(hi, b, acc[i][h][1]);
      }
    }
  }
  if constexpr (FromWeights<U>::kOddLength)
    if (k < a.k) {
      const __m256 b = pair_broadcast(x + k * xt);
      for (int i = 0; i < G; ++i)
        for (int h = 0; h < 2; ++h) {
          __m256 lo, hi;
          FromWeights<U>{g + i * gs}.last(k, h, lo, hi);
          acc[i][h][0] = fmadd_even(lo, b, acc[i][h][0]);
          acc[i][h][1] = fmadd_even(hi, b, acc[i][h][1]);
        }
    }
#pragma GCC unroll 8
  for (int i = 0; i < G; ++i)
    for (int h = 0; h < 2; ++h)
      _mm256_storeu_ps(a.y + t * a.ldy + r + 16 * i + 8 * h,
                       _mm256_hadd_ps(acc[i][h][0], acc[i][h][1]));
}
constexpr int kDecodeGroups256 = 3;

// The 256-bit kernel of a weight policy U: a block of up to one micro-tile (decode) reads the
// weights straight from memory; longer blocks widen each group first.
template <class U>
struct Interleaved256 {
  template <int T>
  static void direct(const Args& a, int64_t r, int64_t t) {
    interleaved_avx2<T, T <= 2 ? 2 : 1>(a, FromWeights<U>{a.w + r * a.w_stride}, r, t);
  }
  template <int T>
  static void widened(const Args& a, const float* wg, int64_t r, int64_t t, int64_t k0, int64_t k1,
                      float* state) {
    interleaved_avx2<T, 1, FromWidened, true>(a, FromWidened{wg, k0}, r, t, k0, k1, state);
  }
  static constexpr MicroFn kDirect[kInterleaved256MaxT] = {direct<1>, direct<2>, direct<3>,
                                                           direct<4>, direct<5>, direct<6>};
  using WideFn = void (*)(const Args&, const float*, int64_t, int64_t, int64_t, int64_t, float*);
  static constexpr WideFn kWidened[kInterleaved256MaxT] = {widened<1>, widened<2>, widened<3>,
                                                           widened<4>, widened<5>, widened<6>};
  // Values per widened span: 16 rows x 256 f32 = 16 KiB, which stays in L1 with a micro-tile's
  // activations while every micro-tile of the block runs over it. Widening a whole row length
  // (128 KiB at k = 2048) left the micro-tiles reading twice the bytes of the f16 rows from L2,
  // and on an AMD EPYC (Zen 5) that was slower than widening in the loop.
  static constexpr int64_t kSpan = 256;
  static void tile(const Args& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    constexpr int kT = kInterleaved256MaxT;
    if (t1 - t0 == 1)
      return decode_group_loop<kDecodeGroups256, interleaved_avx2_groups<U, kDecodeGroups256>,
                               direct<1>>(a, r0, r1, t0);
    if (t1 - t0 <= kT) return group_loop<kT, kDirect>(a, r0, r1, t0, t1);
    thread_local std::vector<float> wide, state;
    wide.resize(static_cast<size_t>(kSpan * 16));
    state.resize(static_cast<size_t>((t1 - t0 + kT - 1) / kT * kT * 4 * 8));
    for (int64_t r = r0; r < r1; r += 16)
      for (int64_t k0 = 0; k0 < a.k; k0 += kSpan) {
        const int64_t k1 = std::min(a.k, k0 + kSpan);
        widen_group_256<U>(a.w + r * a.w_stride, k0, k1, wide.data());
        for (int64_t t = t0; t < t1; t += kT)
          kWidened[std::min<int64_t>(kT, t1 - t) - 1](a, wide.data(), r, t, k0, k1,
                                                      state.data() + (t - t0) * 4 * 8);
      }
  }
  static Kernel kernel() {
    return {tile, XFormat::F32PairTiles, 0, kInterleaved256MaxT, 4, 16 * kDecodeGroups256};
  }
};

// The AVX-512 kernel for interleaved rows with activations packed in tiles (XFormat::F32Tiles or
// BF16Tiles), t a multiple of the tile size. A lane and a token hold one 4-byte unit (F16: a value,
// BF16: a pair of values); the policy gives
//   U::weights(g, u)         the 16 rows' unit u, as a vector, from the group's weights g;
//   U::token<J>(acc, w, x)   acc + w . (token J's unit at x + 4 J).
// Each broadcast is a constant offset from one pointer. Two accumulators per output (even and odd
// units, added at the end) keep decode off the latency chain; the order depends only on k. Every
// loop over the accumulators is unrolled so they stay registers (else GCC keeps the arrays in
// memory, zeroes them with REP STOSQ and spills them at the end).
// Token t's first unit in its tile of activations (4 bytes per token per unit), and the bytes from
// one of its units to the next.
inline const uint8_t* tile_token(const Args& a, int64_t t) {
  return a.x + t / a.x_tile * a.x_stride + t % a.x_tile * 4;
}
inline int64_t tile_unit_stride(const Args& a) {
  return a.x_tile * 4;
}
template <class U, int T, int J = 0>
BRISK_INLINE(BRISK_ISA_AVX512)
void tile_tokens(__m512 (&acc)[T], __m512 w, const uint8_t* x) {
  if constexpr (J < T) {
    acc[J] = U::template token<J>(acc[J], w, x);
    tile_tokens<U, T, J + 1>(acc, w, x);
  }
}
template <class U, int T>
BRISK_TARGET(BRISK_ISA_AVX512)
void interleaved_tiles(const Args& a, int64_t r, int64_t t) {
  const uint8_t* g = a.w + r * a.w_stride;
  const int64_t units = a.k / U::kValues;
  const int64_t next = tile_unit_stride(a);
  const uint8_t* x = tile_token(a, t);
  __m512 acc0[T], acc1[T];
#pragma GCC unroll 12
  for (int j = 0; j < T; ++j) acc0[j] = acc1[j] = _mm512_setzero_ps();
  int64_t u = 0;
  for (; u + 2 <= units; u += 2, x += 2 * next) {
    if constexpr (T <= kStreamTokens) prefetch_stream(g + u * U::kUnitBytes, 2 * U::kUnitBytes);
    const __m512 w0 = U::weights(g, u), w1 = U::weights(g, u + 1);
    tile_tokens<U, T>(acc0, w0, x);
    tile_tokens<U, T>(acc1, w1, x + next);
  }
  if (u < units) tile_tokens<U, T>(acc0, U::weights(g, u), x);
#pragma GCC unroll 12
  for (int j = 0; j < T; ++j)
    _mm512_storeu_ps(a.y + (t + j) * a.ldy + r, _mm512_add_ps(acc0[j], acc1[j]));
}

// One token over G groups side by side (rows r..r+16G-1), each group's sums exactly those of
// interleaved_tiles<U, 1> (so the bits do not depend on how the rows were taken). G streams of
// weights in flight where one group at a time left each thread's reads waiting on memory: one
// thread, 5632x2048 F16 (brisk_kernels_bench, median of 5, alternating) 1.5-2.2 ms -> 0.84-1.0,
// two threads 0.78-0.83 -> 0.46-0.54 (BF16 0.63-0.66 -> 0.43-0.49). 2 groups gained half as
// much; 6 and 8 were level with 4.
template <class U, int G, int I = 0>
BRISK_INLINE(BRISK_ISA_AVX512)
void groups_unit(__m512 (&acc)[G], const uint8_t* g, uint64_t gstride, int64_t u,
                 const uint8_t* x) {
  if constexpr (I < G) {
    acc[I] = U::template token<0>(acc[I], U::weights(g + I * gstride, u), x);
    groups_unit<U, G, I + 1>(acc, g, gstride, u, x);
  }
}
template <class U, int G>
BRISK_TARGET(BRISK_ISA_AVX512)
void interleaved_groups(const Args& a, int64_t r, int64_t t) {
  const uint8_t* g = a.w + r * a.w_stride;
  const uint64_t gs = 16 * a.w_stride;
  const int64_t units = a.k / U::kValues;
  const int64_t next = tile_unit_stride(a);
  const uint8_t* x = tile_token(a, t);
  __m512 acc0[G], acc1[G];
#pragma GCC unroll 8
  for (int i = 0; i < G; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  int64_t u = 0;
  for (; u + 2 <= units; u += 2, x += 2 * next) {
#pragma GCC unroll 8
    for (int i = 0; i < G; ++i) prefetch_stream(g + i * gs + u * U::kUnitBytes, 2 * U::kUnitBytes);
    groups_unit<U, G>(acc0, g, gs, u, x);
    groups_unit<U, G>(acc1, g, gs, u + 1, x + next);
  }
  if (u < units) groups_unit<U, G>(acc0, g, gs, u, x);
#pragma GCC unroll 8
  for (int i = 0; i < G; ++i)
    _mm512_storeu_ps(a.y + t * a.ldy + r + 16 * i, _mm512_add_ps(acc0[i], acc1[i]));
}

// group_loop, with one token's groups taken kDecodeGroups at a time (Table[0] computes one).
constexpr int kDecodeGroups = 4;
template <int MaxT, const MicroFn* Table, class U>
void group_loop_decode(const Args& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  if (t1 - t0 != 1) return group_loop<MaxT, Table>(a, r0, r1, t0, t1);
  decode_group_loop<kDecodeGroups, interleaved_groups<U, kDecodeGroups>, Table[0]>(a, r0, r1, t0);
}
#endif

#define BRISK_T12(fn) \
  { fn<1>, fn<2>, fn<3>, fn<4>, fn<5>, fn<6>, fn<7>, fn<8>, fn<9>, fn<10>, fn<11>, fn<12> }
static_assert(kInterleavedMaxT == 12, "BRISK_T12 lists the tile sizes");

// The kernels for interleaved rows of one value per 4-byte lane or less (F16, F32): P the scalar
// policy, V the 512-bit unit policy (interleaved_tiles), H the 256-bit one (interleaved_avx2); V
// and H are read on x86 only.
template <class P, class V, class H>
struct InterleavedValues {
  template <int T>
  static void generic(const Args& a, int64_t r, int64_t t) {
    interleaved_generic<P, 1, T>(a, r, t);
  }
  static constexpr MicroFn kGeneric[kInterleavedMaxT] = BRISK_T12(generic);
#if defined(__x86_64__)
  template <int T>
  static void avx512(const Args& a, int64_t r, int64_t t) {
    interleaved_tiles<V, T>(a, r, t);
  }
  static constexpr MicroFn kAvx512[kInterleavedMaxT] = BRISK_T12(avx512);
#endif
  static Kernel pick(Isa isa) {
    constexpr int kMaxT = kInterleavedMaxT;
#if defined(__x86_64__)
    if (isa == Isa::Avx512)
      return {
          group_loop_decode<kMaxT, kAvx512, V>, XFormat::F32Tiles, 0, kMaxT, 4, 16 * kDecodeGroups};
    if (isa == Isa::Avx2) return Interleaved256<H>::kernel();
#endif
    if (isa == Isa::Generic) return {group_loop<kMaxT, kGeneric>, XFormat::F32, 0, kMaxT, 4};
    return {nullptr, XFormat::F32};
  }
};

// Tables of every tile size's instantiation for one policy, and the kernel for an ISA.
template <class P>
struct WidenKernels {
  template <int R, int T>
  static void generic(const Args& a, int64_t r, int64_t t) {
    micro_generic<P, R, T>(a, r, t);
  }
  static constexpr MicroFn kGeneric[4][6] = BRISK_MICRO_TABLE(generic);
  static constexpr MicroFn kGenericRow[8] = BRISK_MICRO_ONE_ROW8(generic);
#if defined(__x86_64__)
  template <int R, int T>
  static void avx2(const Args& a, int64_t r, int64_t t) {
    micro_avx2<P, R, T>(a, r, t);
  }
  template <int R, int T>
  static void avx512(const Args& a, int64_t r, int64_t t) {
    micro_avx512<P, R, T>(a, r, t);
  }
  static constexpr MicroFn kAvx2[4][6] = BRISK_MICRO_TABLE(avx2);
  static constexpr MicroFn kAvx512[4][3] = BRISK_MICRO_TABLE3(avx512);
  static constexpr MicroFn kAvx2Row[8] = BRISK_MICRO_ONE_ROW8(avx2);
  static constexpr MicroFn kAvx512Row[8] = BRISK_MICRO_ONE_ROW8(avx512);
#endif

  // {nullptr} where the policy has no kernel for the ISA (a type may bring its own instead).
  static Kernel pick(Isa isa) {
    switch (isa) {
#if defined(__x86_64__)
      case Isa::Avx512:
        if constexpr (requires { P::load16(nullptr); })
          return {tile_loop_rows<3, kAvx512, 8, kAvx512Row>, XFormat::F32};
        return {nullptr, XFormat::F32};
      case Isa::Avx2:
        return {tile_loop_rows<6, kAvx2, 8, kAvx2Row>, XFormat::F32};
#endif
      case Isa::Generic:
        return {tile_loop_rows<6, kGeneric, 8, kGenericRow>, XFormat::F32};
      default:
        return {nullptr, XFormat::F32};
    }
  }
};

}  // namespace brisk::matmul_detail
