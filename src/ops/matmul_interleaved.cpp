// Int8 kernels for Q4_0, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS and MXFP4 matrices whose rows were
// interleaved in groups of 16 at load time (ops/repack.h). A 512-bit lane holds 4 consecutive
// weights of one row, so VPDPBUSD with 4 broadcast activation bytes advances 16 rows at once; 32
// values take 8 of them, after which one conversion and one multiply-add per token fold the integer
// sums into the 16 outputs, scaled by (weight scale * activation scale). Offsets (Q4_0: 8, Q8_0:
// 128, Q6_K: 32, IQ4_XS: 128, its table's values stored + 128) are folded in by starting each
// block's integer sum (Q6_K: each half-block's) from the activations' -offset * sum of its values;
// Q4_K's minimums take one more multiply-add with the activations' -scale * sum. Per output, for
// each block of 32 in order:
//   Q4_0, Q8_0  acc += float(sum (u - offset) x) * (d * dx)
//   Q4_K, Q5_K  acc += float(sum u x) * (d * sc * dx);  acc += (dmin * min) * (-dx * sum x)
//   Q6_K        acc += float(sc0 * sum_0..15 (u - 32) x + sc1 * sum_16..31 (u - 32) x) * (d * dx)
//   IQ4_XS      acc += float(sum (table[u] + 128 - 128) x) * ((d * sc) * dx)
//   IQ4_NL      acc += float(sum (table[u] + 128 - 128) x) * (d * dx)
//   MXFP4       likewise, its table the doubled E2M1 values and d its halved E8M0 scale
// Integer sums are exact in any order, and the float steps are the same whatever the tile, batch
// or thread count, so an output's bits never depend on them.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/cpu.h"
#include "ops/isa_target.h"
#include "ops/matmul_q8.h"
#include "ops/matmul_tile.h"
#include "ops/repack.h"
#include "quant/quant.h"
#include "quant/quant_iq4.h"
#include "quant/quant_mxfp4.h"

namespace brisk::matmul_detail {
namespace {

constexpr int kMaxT = 16;  // tokens per micro-tile
static_assert(kInterleave == 16, "group_loop (matmul_tile.h) steps 16 rows");

template <DType Type, int Offset>
struct Interleaved {
  static constexpr DType kType = Type;
  static constexpr int kOffset = Offset;  // subtracted from the stored values (Q4_K: none)
};
using Q4_0I = Interleaved<DType::Q4_0, 8>;
using Q8_0I = Interleaved<DType::Q8_0, 128>;
using Q4_KI = Interleaved<DType::Q4_K, 0>;
using Q6_KI = Interleaved<DType::Q6_K, 32>;
using IQ4_XSI = Interleaved<DType::IQ4_XS, 128>;
using Q5_KI = Interleaved<DType::Q5_K, 0>;
using IQ4_NLI = Interleaved<DType::IQ4_NL, 128>;
using MXFP4I = Interleaved<DType::MXFP4, 128>;

constexpr bool super_blocks(DType t) {
  return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K || t == DType::IQ4_XS;
}

// IQ4_XS: the signed scale (-32..31) of group jb of row i in a column.
inline int iq4xs_column_scale(const uint8_t* col, int jb, int i) {
  return (((col[32 + (jb / 2) * 16 + i] >> (4 * (jb % 2))) & 0xF) |
          ((col[96 + (jb / 4) * 16 + i] >> (2 * (jb % 4))) & 3) << 4) -
         32;
}

// Activation scale of block b (the layout keeps 8 copies per block, pairs of blocks together).
inline const float* block_scale(const float* dxv, int64_t b) {
  return dxv + (b / 2) * 16 + (b % 2) * 8;
}

// Portable: the same arithmetic, one row and one block of 32 at a time, with the SIMD kernels'
// fused multiply-adds (std::fma), so every ISA gives the same bits. (Only tests run it: rows are
// interleaved only where a SIMD kernel reads them.)
template <class P, int T>
void interleaved_generic(const Args& a, int64_t r, int64_t t) {
  constexpr DType kT = P::kType;
  constexpr int kBlock = super_blocks(kT) ? 256 : 32;
  const Q8Layout L(a.k);
  const uint64_t gb = group_block_bytes(kT);
  const uint8_t* g = a.w + r * a.w_stride;
  float acc[kInterleave][T] = {};
  for (int64_t c = 0; c < a.k / kBlock; ++c) {
    const uint8_t* col = g + static_cast<uint64_t>(c) * gb;
    const auto* h16 = reinterpret_cast<const uint16_t*>(col);
    for (int i = 0; i < kInterleave; ++i) {
      uint8_t v[256];
      column_values(kT, col, i, v);
      const float d = kT == DType::MXFP4 ? mxfp4_half_scale(col[i]) : f16_to_f32_fast(h16[i]);
      for (int jb = 0; jb < kBlock / 32; ++jb) {
        const int64_t b = c * (kBlock / 32) + jb;
        const uint8_t* u = v + 32 * jb;
        for (int j = 0; j < T; ++j) {
          const uint8_t* xr = a.x + (t + j) * a.x_stride;
          const auto* qx = reinterpret_cast<const int8_t*>(xr) + b * 32;
          const auto* hs = reinterpret_cast<const int32_t*>(xr + L.hs_off);
          const float dx = *block_scale(reinterpret_cast<const float*>(xr + L.dxv_off), b);
          int32_t s0 = P::kOffset ? hs[2 * b] : 0, s1 = P::kOffset ? hs[2 * b + 1] : 0;
          for (int l = 0; l < 16; ++l) {
            int u0 = kT == DType::Q8_0 ? (u[l] ^ 0x80) : u[l];
            int u1 = kT == DType::Q8_0 ? (u[l + 16] ^ 0x80) : u[l + 16];
            if constexpr (kT == DType::IQ4_XS || kT == DType::IQ4_NL)
              u0 = kIQ4ValuesPlus128[u0], u1 = kIQ4ValuesPlus128[u1];
            if constexpr (kT == DType::MXFP4)
              u0 = kMXFP4ValuesPlus128[u0], u1 = kMXFP4ValuesPlus128[u1];
            s0 += u0 * qx[l];
            s1 += u1 * qx[l + 16];
          }
          if constexpr (kT == DType::Q4_K || kT == DType::Q5_K) {
            const uint8_t lo = col[64 + jb * 16 + i];
            const uint8_t hi = (col[192 + (jb / 2) * 16 + i] >> (4 * (jb % 2))) & 0xF;
            const float ws = d * static_cast<float>((lo & 0xF) | (hi & 3) << 4);
            const float wm =
                f16_to_f32_fast(h16[16 + i]) * static_cast<float>((lo >> 4) | (hi >> 2) << 4);
            acc[i][j] = std::fma(static_cast<float>(s0 + s1), ws * dx, acc[i][j]);
            acc[i][j] = std::fma(wm, reinterpret_cast<const float*>(xr + L.ms_off)[b], acc[i][j]);
          } else if constexpr (kT == DType::IQ4_XS) {
            const float ws = d * static_cast<float>(iq4xs_column_scale(col, jb, i));
            acc[i][j] = std::fma(static_cast<float>(s0 + s1), ws * dx, acc[i][j]);
          } else if constexpr (kT == DType::Q6_K) {
            const int sa = static_cast<int8_t>(col[32 + (2 * jb) * 16 + i]);
            const int sb = static_cast<int8_t>(col[32 + (2 * jb + 1) * 16 + i]);
            acc[i][j] = std::fma(static_cast<float>(s0 * sa + s1 * sb), d * dx, acc[i][j]);
          } else {
            acc[i][j] = std::fma(static_cast<float>(s0 + s1), d * dx, acc[i][j]);
          }
        }
      }
    }
  }
  for (int j = 0; j < T; ++j)
    for (int i = 0; i < kInterleave; ++i) a.y[(t + j) * a.ldy + r + i] = acc[i][j];
}

#if defined(__x86_64__)
// acc += u . (the 4 activation bytes at p, in every lane), the bytes broadcast by the dot product's
// own memory operand: GCC 12 only emits a separate broadcast, which costs a vector slot as well.
using Int32Alias = int32_t __attribute__((may_alias, aligned(1)));
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i dpbusd_bcast(__m512i acc, __m512i u, const int8_t* p) {
  asm("vpdpbusd %2%{1to16%}, %1, %0"
      : "+v"(acc)
      : "v"(u), "m"(*reinterpret_cast<const Int32Alias*>(p)));
  return acc;
}

// The activation rows of a micro-tile's tokens (the 256-bit kernels' few: their pointers fit
// registers).
template <int T>
struct Tokens {
  const int8_t* qx[T];
  const float* dx[T];
  const int32_t* hs[T];
  const float* ms[T];
  Tokens(const Args& a, int64_t t) {
    const Q8Layout L(a.k);
    for (int j = 0; j < T; ++j) {
      const uint8_t* xr = a.x + (t + j) * a.x_stride;
      qx[j] = reinterpret_cast<const int8_t*>(xr);
      dx[j] = reinterpret_cast<const float*>(xr + L.dxv_off);
      hs[j] = reinterpret_cast<const int32_t*>(xr + L.hs_off);
      ms[j] = reinterpret_cast<const float*>(xr + L.ms_off);
    }
  }
};

// A micro-tile's T tokens: their tile of activations (XFormat::Q8Tiles; T is the tile's width,
// since the tile loop steps whole tiles of 16 and only the last is narrower), every field of
// block b at a fixed offset from one pointer.
template <int T>
struct TileBlocks {
  using L = Q8Tiles;
  const uint8_t* tile;
  TileBlocks(const Args& a, int64_t t)
      : tile(a.x + static_cast<uint64_t>(t / L::kTile) * a.x_stride) {}
  const uint8_t* block(int64_t b) const {
    return tile + static_cast<uint64_t>(b) * L::block_bytes(T);
  }
  static const int8_t* qs(const uint8_t* blk, int j) {
    return reinterpret_cast<const int8_t*>(blk) + 32 * j;
  }
  static const int32_t* hs(const uint8_t* blk, int j) {
    return reinterpret_cast<const int32_t*>(blk + L::hs_off(T)) + 2 * j;
  }
  static int32_t hb(const uint8_t* blk, int j) {
    return reinterpret_cast<const int32_t*>(blk + L::hb_off(T))[j];
  }
  static float dx(const uint8_t* blk, int j) {
    return reinterpret_cast<const float*>(blk + L::dx_off(T))[j];
  }
  static float ms(const uint8_t* blk, int j) {
    return reinterpret_cast<const float*>(blk + L::ms_off(T))[j];
  }
};

// 4 nibble vectors at p: u[2q] = low nibbles of vector q, u[2q+1] = its high nibbles.
BRISK_INLINE(BRISK_ISA_AVX512VNNI) void nibbles(const uint8_t* p, __m512i (&u)[8]) {
  const __m512i m = _mm512_set1_epi8(0x0F);
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    const __m512i v = _mm512_loadu_si512(p + 64 * q);
    u[2 * q] = _mm512_and_si512(v, m);
    u[2 * q + 1] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m);
  }
}

// Q5_K: the fifth bits of a sub-block's 32 values (64 bytes at p, see repack.h) into u: bit i of
// each byte is the fifth bit of the value the same byte of u[i] holds, moved to bit 4.
BRISK_INLINE(BRISK_ISA_AVX512VNNI) void add_fifth_bits(const uint8_t* p, __m512i (&u)[8]) {
  const __m512i hv = _mm512_loadu_si512(p);
  const __m512i bit4 = _mm512_set1_epi8(0x10);
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    // (16-bit shifts: what crosses into a neighbouring byte never lands on bit 4.)
    const __m512i b = i < 4 ? _mm512_slli_epi16(hv, 4 - i) : _mm512_srli_epi16(hv, i - 4);
    u[i] = _mm512_or_si512(u[i], _mm512_and_si512(b, bit4));
  }
}

// Q4_K/Q5_K: the 6-bit scales and mins of a column's 8 sub-blocks x 16 rows, unpacked all at once
// with byte operations (one sub-block at a time took as many vector operations as its dot
// products). Bytes 64..191 hold each one's low 4 bits (scale | min << 4, sub-block-major), bytes
// 192..255 the high 2 bits of a pair of sub-blocks in the nibble of the sub-block's parity.
BRISK_INLINE(BRISK_ISA_AVX512VNNI)
void k4_column_scales(const uint8_t* col, uint8_t (&out)[2][128]) {
  const __m512i m4 = _mm512_set1_epi8(0x0F), m3 = _mm512_set1_epi8(3);
  const __m512i h = _mm512_loadu_si512(col + 192);
  for (int v = 0; v < 2; ++v) {  // sub-blocks 4v .. 4v + 3
    const __m512i lo = _mm512_loadu_si512(col + 64 + 64 * v);
    // The high bits of sub-blocks 4v + i: pair 2v + i / 2's 16 bytes, high nibbles for odd i.
    __m512i hi = v == 0 ? _mm512_shuffle_i64x2(h, h, _MM_SHUFFLE(1, 1, 0, 0))
                        : _mm512_shuffle_i64x2(h, h, _MM_SHUFFLE(3, 3, 2, 2));
    hi = _mm512_mask_srli_epi32(hi, 0xF0F0, hi, 4);
    const __m512i sc =
        _mm512_or_si512(_mm512_and_si512(lo, m4), _mm512_slli_epi16(_mm512_and_si512(hi, m3), 4));
    const __m512i mn =
        _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(lo, 4), m4),
                        _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(hi, 2), m3), 4));
    _mm512_store_si512(out[0] + 64 * v, sc);
    _mm512_store_si512(out[1] + 64 * v, mn);
  }
}

// s + the integer dot product of one token's 32 activation bytes at xb with the 16 rows' values
// u, in one chain: with many tokens in flight the chains overlap, and one chain needs no second
// starting value nor an add (faster than two chains of four).
BRISK_INLINE(BRISK_ISA_AVX512VNNI)
__m512i dot32(const __m512i (&u)[8], const int8_t* xb, __m512i s) {
#pragma GCC unroll 8
  for (int m = 0; m < 8; ++m) s = dpbusd_bcast(s, u[m], xb + 4 * m);
  return s;
}

// The same as two chains, values 0..15 into s0 and 16..31 into s1 (Q6_K scales them apart).
BRISK_INLINE(BRISK_ISA_AVX512VNNI)
void dot32_halves(const __m512i (&u)[8], const int8_t* xb, __m512i& s0, __m512i& s1) {
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) {
    s0 = dpbusd_bcast(s0, u[m], xb + 4 * m);
    s1 = dpbusd_bcast(s1, u[m + 4], xb + 16 + 4 * m);
  }
}

// MXFP4: 16 rows' E8M0 bytes at p as their halved scales, mxfp4_half_scale's bits lane by lane.
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512 e8m0_half16(const uint8_t* p) {
  const __m512i e = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
  const __m512i tiny = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);  // e = 0, 1
  const __mmask16 big = _mm512_cmpge_epu32_mask(e, _mm512_set1_epi32(2));
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(big, tiny, normal));
}

// One block column (16 rows) into the tokens' accumulators; b0: the column's first block of 32.
template <class P, int T>
BRISK_INLINE(BRISK_ISA_AVX512VNNI)
void column(const uint8_t* col, int64_t b0, const TileBlocks<T>& x, __m512 (&acc)[T]) {
  using X = TileBlocks<T>;
  constexpr DType kT = P::kType;
  const __m512 dv =
      kT == DType::MXFP4
          ? e8m0_half16(col)
          : _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(col)));
  if constexpr (kT == DType::Q4_0 || kT == DType::Q8_0 || kT == DType::IQ4_NL ||
                kT == DType::MXFP4) {
    __m512i u[8];
    if constexpr (kT == DType::Q4_0) {
      nibbles(col + 32, u);
    } else if constexpr (kT == DType::IQ4_NL || kT == DType::MXFP4) {
      nibbles(col + (kT == DType::MXFP4 ? 16 : 32), u);
      const __m512i table = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(
          kT == DType::MXFP4 ? kMXFP4ValuesPlus128 : kIQ4ValuesPlus128)));
#pragma GCC unroll 8
      for (int m = 0; m < 8; ++m) u[m] = _mm512_shuffle_epi8(table, u[m]);
    } else {
      const __m512i f = _mm512_set1_epi8(static_cast<char>(0x80));
#pragma GCC unroll 8
      for (int m = 0; m < 8; ++m) u[m] = _mm512_xor_si512(_mm512_loadu_si512(col + 32 + 64 * m), f);
    }
    const uint8_t* blk = x.block(b0);
#pragma GCC unroll 16
    for (int j = 0; j < T; ++j) {
      const __m512i s = dot32(u, X::qs(blk, j), _mm512_set1_epi32(X::hb(blk, j)));
      const __m512 d = _mm512_mul_ps(dv, _mm512_set1_ps(X::dx(blk, j)));
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), d, acc[j]);
    }
  } else if constexpr (kT == DType::Q4_K || kT == DType::Q5_K) {
    const __m512 mv =
        _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(col + 32)));
    alignas(64) uint8_t scales[2][128];  // [scale, min][sub-block * 16 + row]
    k4_column_scales(col, scales);
    for (int jb = 0; jb < 8; ++jb) {
      const __m512i sc = _mm512_cvtepu8_epi32(
          _mm_load_si128(reinterpret_cast<const __m128i*>(scales[0] + 16 * jb)));
      const __m512i mn = _mm512_cvtepu8_epi32(
          _mm_load_si128(reinterpret_cast<const __m128i*>(scales[1] + 16 * jb)));
      const __m512 ws = _mm512_mul_ps(dv, _mm512_cvtepi32_ps(sc));
      const __m512 wm = _mm512_mul_ps(mv, _mm512_cvtepi32_ps(mn));
      __m512i u[8];
      if constexpr (kT == DType::Q5_K) {
        nibbles(col + q5k_nibbles(jb), u);
        add_fifth_bits(col + q5k_fifth(jb), u);
      } else {
        nibbles(col + 256 + 256 * jb, u);
      }
      const uint8_t* blk = x.block(b0 + jb);
#pragma GCC unroll 16
      for (int j = 0; j < T; ++j) {
        const __m512i s = dot32(u, X::qs(blk, j), _mm512_setzero_si512());
        const __m512 d = _mm512_mul_ps(ws, _mm512_set1_ps(X::dx(blk, j)));
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), d, acc[j]);
        acc[j] = _mm512_fmadd_ps(wm, _mm512_set1_ps(X::ms(blk, j)), acc[j]);
      }
    }
  } else if constexpr (kT == DType::IQ4_XS) {
    const __m512i table =
        _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(kIQ4ValuesPlus128)));
    const __m512i m15 = _mm512_set1_epi32(15), m3 = _mm512_set1_epi32(3);
    for (int jb = 0; jb < 8; ++jb) {
      const __m512i lo = _mm512_srli_epi32(
          _mm512_cvtepu8_epi32(
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(col + 32 + 16 * (jb / 2)))),
          4 * (jb % 2));
      const __m512i hi = _mm512_srli_epi32(
          _mm512_cvtepu8_epi32(
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(col + 96 + 16 * (jb / 4)))),
          2 * (jb % 4));
      const __m512i sc =
          _mm512_sub_epi32(_mm512_or_si512(_mm512_and_si512(lo, m15),
                                           _mm512_slli_epi32(_mm512_and_si512(hi, m3), 4)),
                           _mm512_set1_epi32(32));
      const __m512 ws = _mm512_mul_ps(dv, _mm512_cvtepi32_ps(sc));
      __m512i u[8];
      nibbles(col + 128 + 256 * jb, u);
#pragma GCC unroll 8
      for (int m = 0; m < 8; ++m) u[m] = _mm512_shuffle_epi8(table, u[m]);
      const uint8_t* blk = x.block(b0 + jb);
#pragma GCC unroll 16
      for (int j = 0; j < T; ++j) {
        const __m512i s = dot32(u, X::qs(blk, j), _mm512_set1_epi32(X::hb(blk, j)));
        const __m512 d = _mm512_mul_ps(ws, _mm512_set1_ps(X::dx(blk, j)));
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), d, acc[j]);
      }
    }
  } else {  // Q6_K
    const __m512i m30 = _mm512_set1_epi8(0x30);
    for (int jb = 0; jb < 8; ++jb) {
      const __m512i sa = _mm512_cvtepi8_epi32(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(col + 32 + 32 * jb)));
      const __m512i sb = _mm512_cvtepi8_epi32(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(col + 48 + 32 * jb)));
      const uint8_t* vals = col + 288 + 384 * jb;
      __m512i u[8];
      nibbles(vals, u);
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m512i hv = _mm512_loadu_si512(vals + 256 + 64 * h);
        u[4 * h] = _mm512_or_si512(u[4 * h], _mm512_and_si512(_mm512_slli_epi16(hv, 4), m30));
        u[4 * h + 1] =
            _mm512_or_si512(u[4 * h + 1], _mm512_and_si512(_mm512_slli_epi16(hv, 2), m30));
        u[4 * h + 2] = _mm512_or_si512(u[4 * h + 2], _mm512_and_si512(hv, m30));
        u[4 * h + 3] =
            _mm512_or_si512(u[4 * h + 3], _mm512_and_si512(_mm512_srli_epi16(hv, 2), m30));
      }
      const uint8_t* blk = x.block(b0 + jb);
#pragma GCC unroll 16
      for (int j = 0; j < T; ++j) {
        const int32_t* hs = X::hs(blk, j);
        __m512i s0 = _mm512_set1_epi32(hs[0]), s1 = _mm512_set1_epi32(hs[1]);
        dot32_halves(u, X::qs(blk, j), s0, s1);
        const __m512i isum =
            _mm512_add_epi32(_mm512_mullo_epi32(s0, sa), _mm512_mullo_epi32(s1, sb));
        const __m512 d = _mm512_mul_ps(dv, _mm512_set1_ps(X::dx(blk, j)));
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), d, acc[j]);
      }
    }
  }
}

template <class P, int T>
BRISK_TARGET(BRISK_ISA_AVX512VNNI)
void interleaved_vnni(const Args& a, int64_t r, int64_t t) {
  constexpr int kBlock = super_blocks(P::kType) ? 256 : 32;
  const uint64_t gb = group_block_bytes(P::kType);
  const uint8_t* g = a.w + r * a.w_stride;
  const TileBlocks<T> x(a, t);
  __m512 acc[T];
#pragma GCC unroll 16
  for (int j = 0; j < T; ++j) acc[j] = _mm512_setzero_ps();
  const int64_t n_col = a.k / kBlock;
  for (int64_t c = 0; c < n_col; ++c) {
    if constexpr (T <= kStreamTokens) prefetch_stream(g + static_cast<uint64_t>(c) * gb, gb);
    column<P, T>(g + static_cast<uint64_t>(c) * gb, c * (kBlock / 32), x, acc);
  }
#pragma GCC unroll 16
  for (int j = 0; j < T; ++j) _mm512_storeu_ps(a.y + (t + j) * a.ldy + r, acc[j]);
}

// One token over G groups side by side (rows r..r+16G-1), each group's columns summed as
// interleaved_vnni<P, 1> sums them, in the same order: G streams of weights in flight. It pays for
// the 32-value blocks, whose columns are little work per byte: tg64 on the TinyLlama-shaped files,
// 2 threads, alternating, two rounds, Q8_0 30.5-34.2 -> 35.5-39.7 tokens/s, Q4_0 57.8-59.6 ->
// 61.6-63.9 with 4 groups (2 were level). The k-quants' columns do more per byte, and several at a
// time lost a quarter of Q4_K_M's speed: they keep one group at a time.
template <class P, int G>
BRISK_TARGET(BRISK_ISA_AVX512VNNI)
void interleaved_vnni_groups(const Args& a, int64_t r, int64_t t) {
  constexpr int kBlock = super_blocks(P::kType) ? 256 : 32;
  const uint64_t gb = group_block_bytes(P::kType), gs = 16 * a.w_stride;
  const uint8_t* g = a.w + r * a.w_stride;
  const TileBlocks<1> x(a, t);
  __m512 acc[G][1];
#pragma GCC unroll 8
  for (int i = 0; i < G; ++i) acc[i][0] = _mm512_setzero_ps();
  const int64_t n_col = a.k / kBlock;
  for (int64_t c = 0; c < n_col; ++c)
#pragma GCC unroll 8
    for (int i = 0; i < G; ++i) {
      const uint8_t* col = g + i * gs + static_cast<uint64_t>(c) * gb;
      prefetch_stream(col, gb);
      column<P, 1>(col, c * (kBlock / 32), x, acc[i]);
    }
#pragma GCC unroll 8
  for (int i = 0; i < G; ++i) _mm512_storeu_ps(a.y + t * a.ldy + r + 16 * i, acc[i][0]);
}
constexpr int decode_groups(DType t) {
  return super_blocks(t) ? 1 : 4;
}

// The 256-bit kernels, once per byte dot-product instruction (same bits).
constexpr int kMaxT256 = 4;  // 16 registers: 8 weight vectors, the accumulators, temporaries
static_assert(kMaxT256 <= kStreamTokens, "every 256-bit micro-tile prefetches its stream");
namespace avx2 {
#define BRISK_I256_TARGET BRISK_ISA_AVX2
#define BRISK_I256_DOT 0
#include "ops/matmul_interleaved_avx2-inl.h"
}  // namespace avx2
namespace avxvnni {
#define BRISK_I256_TARGET BRISK_ISA_AVXVNNI
#define BRISK_I256_DOT 1
#include "ops/matmul_interleaved_avx2-inl.h"
}  // namespace avxvnni
#endif

#define BRISK_T16(fn)                                                                              \
  {                                                                                                \
    fn<1>, fn<2>, fn<3>, fn<4>, fn<5>, fn<6>, fn<7>, fn<8>, fn<9>, fn<10>, fn<11>, fn<12>, fn<13>, \
        fn<14>, fn<15>, fn<16>                                                                     \
  }
static_assert(kMaxT == 16 && Q8Tiles::kTile == kMaxT);

template <class P>
struct InterleavedKernels {
  template <int T>
  static void gen(const Args& a, int64_t r, int64_t t) {
    interleaved_generic<P, T>(a, r, t);
  }
  static constexpr MicroFn kGeneric[kMaxT] = BRISK_T16(gen);
#if defined(__x86_64__)
  template <int T>
  static void vnni(const Args& a, int64_t r, int64_t t) {
    interleaved_vnni<P, T>(a, r, t);
  }
  static constexpr MicroFn kVnni[kMaxT] = BRISK_T16(vnni);
  // group_loop, with one token's groups taken decode_groups at a time.
  static void vnni_loop(const Args& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    constexpr int G = decode_groups(P::kType);
    if (G == 1 || t1 - t0 != 1) return group_loop<kMaxT, kVnni>(a, r0, r1, t0, t1);
    decode_group_loop<G, interleaved_vnni_groups<P, G>, interleaved_vnni<P, 1>>(a, r0, r1, t0);
  }
  template <int T>
  static void maddubs256(const Args& a, int64_t r, int64_t t) {
    avx2::interleaved_256<P, T>(a, r, t);
  }
  template <int T>
  static void vnni256(const Args& a, int64_t r, int64_t t) {
    avxvnni::interleaved_256<P, T>(a, r, t);
  }
  static constexpr MicroFn kAvx2[kMaxT256] = {maddubs256<1>, maddubs256<2>, maddubs256<3>,
                                              maddubs256<4>};
  static constexpr MicroFn kAvxVnni[kMaxT256] = {vnni256<1>, vnni256<2>, vnni256<3>, vnni256<4>};
  static void avx2_loop(const Args& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    if (t1 - t0 == 1) return avx2::decode_256<P>(a, r0, r1, t0);
    group_loop<kMaxT256, kAvx2>(a, r0, r1, t0, t1);
  }
  static void avxvnni_loop(const Args& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    if (t1 - t0 == 1) return avxvnni::decode_256<P>(a, r0, r1, t0);
    group_loop<kMaxT256, kAvxVnni>(a, r0, r1, t0, t1);
  }
#endif
  static Kernel pick(Isa isa) {
#if defined(__x86_64__)
    constexpr int kGrain = 16 * decode_groups(P::kType);
    if (isa == Isa::Avx512) return {vnni_loop, XFormat::Q8Tiles, P::kOffset, kMaxT, 2, kGrain};
    if (isa == Isa::Avx2Vnni) return {avxvnni_loop, XFormat::Q8, P::kOffset, kMaxT256, 1, kGrain};
    if (isa == Isa::Avx2) return {avx2_loop, XFormat::Q8, P::kOffset, kMaxT256, 1, kGrain};
#endif
    if (isa == Isa::Generic)
      return {group_loop<kMaxT, kGeneric>, XFormat::Q8, P::kOffset, kMaxT, 1};
    return {nullptr, XFormat::Q8, 0};
  }
};

}  // namespace

Kernel kernel_interleaved(Isa isa, DType t) {
  if (t == DType::Q4_0) return InterleavedKernels<Q4_0I>::pick(isa);
  if (t == DType::Q8_0) return InterleavedKernels<Q8_0I>::pick(isa);
  if (t == DType::Q4_K) return InterleavedKernels<Q4_KI>::pick(isa);
  if (t == DType::Q6_K) return InterleavedKernels<Q6_KI>::pick(isa);
  if (t == DType::IQ4_XS) return InterleavedKernels<IQ4_XSI>::pick(isa);
  if (t == DType::Q5_K) return InterleavedKernels<Q5_KI>::pick(isa);
  if (t == DType::IQ4_NL) return InterleavedKernels<IQ4_NLI>::pick(isa);
  if (t == DType::MXFP4) return InterleavedKernels<MXFP4I>::pick(isa);
  return {nullptr, XFormat::Q8, 0};
}

}  // namespace brisk::matmul_detail
