// Activations for the integer kernels: each row quantized to int8 in blocks of 32 (a scale per
// block, like GGUF's Q8_0), laid out for the kernels that pair blocks into 64-byte vectors.
// Internal to ops/ (the driver prepares these rows; matmul_quant.cpp and the reference read them).
#pragma once

#include <cstdint>

#include "ops/cpu.h"

namespace brisk::matmul_detail {

// One activation row of k elements (a multiple of 32):
//   qs:  int8[np * 64]        the values, zero-padded to whole pairs of blocks
//   dxv: float[np * 16]       per pair: 8 copies of block 2p's scale, then 8 of block 2p+1's
//   xs:  float[np * 4]        per 16 values: scale * sum of the 16 int8 values
//   hs:  int32[np * 4]        per 16 values: -offset * their sum, for the kernels of interleaved
//                             rows whose weights are offset bytes (value = d * (u - offset)):
//                             they start a block's two halves' integer sums from it
//   ms:  float[np * 2]        per block: -scale * the sum of its values (for weights with a
//                             per-block minimum, as Q4_K)
struct Q8Layout {
  int64_t np;
  uint64_t dxv_off, xs_off, hs_off, ms_off, stride;
  explicit Q8Layout(int64_t k)
      : np((k / 32 + 1) / 2),
        dxv_off(static_cast<uint64_t>(np) * 64),
        xs_off(dxv_off + static_cast<uint64_t>(np) * 64),
        hs_off((xs_off + static_cast<uint64_t>(np) * 16 + 63) / 64 * 64),
        ms_off(hs_off + static_cast<uint64_t>(np) * 16),
        stride((ms_off + static_cast<uint64_t>(np) * 8 + 63) / 64 * 64) {}
};

// Quantizes one row into the layout (dst: stride bytes); hs is filled when offset is not 0.
void quantize_activation_row(const float* x, int64_t k, uint8_t* dst, int offset = 0);
// The same bits with the SIMD of isa's tier (the scalar loop above is its reference).
void quantize_activation_row(Isa isa, const float* x, int64_t k, uint8_t* dst, int offset);

// Activations for the kernels of the grid i-quants and the ternary types (XFormat::Q8K): int8 in
// blocks of 256 with one scale each (largest magnitude / 127, like GGUF's Q8_K), so a weight
// super-block's products sum in integers with no float step inside it. One row of k elements (a
// multiple of 256):
//   qs:  int8[k]          the values
//   d:   float[k / 256]   the blocks' scales
//   s8:  int16[k / 8]     the sums of each 8 values (IQ1 takes its points' shifts from them)
struct Q8KLayout {
  int64_t nsb;
  uint64_t d_off, s8_off, stride;
  explicit Q8KLayout(int64_t k)
      : nsb(k / 256),
        d_off(static_cast<uint64_t>(k)),
        s8_off(d_off + 4 * static_cast<uint64_t>(nsb)),
        stride((s8_off + static_cast<uint64_t>(k) / 4 + 63) / 64 * 64) {}
};
void quantize_activation_q8k(const float* x, int64_t k, uint8_t* dst);
// The same bits with the SIMD of isa's tier.
void quantize_activation_q8k(Isa isa, const float* x, int64_t k, uint8_t* dst);

// The same quantization in tiles of up to 16 tokens (XFormat::Q8Tiles), for the 512-bit kernels of
// interleaved rows: a micro-kernel broadcasts one token's bytes after another's, and with every
// token's data for a block side by side it addresses them all from one pointer at fixed offsets.
// Tile i holds tokens [16i, 16i + w), w = min(16, n - 16i), at byte i * tile_bytes(k); its block b
// (of 32 values) at b * block_bytes(w):
//   qs:  int8[w][32]    the values
//   hs:  int32[w][2]    per 16 values: -offset * their sum
//   hb:  int32[w]       -offset * the sum of the block's 32 values
//   dx:  float[w]       the block's scale
//   ms:  float[w]       -scale * the sum of its values
struct Q8Tiles {
  static constexpr int kTile = 16;
  static constexpr uint64_t block_bytes(int64_t w) { return static_cast<uint64_t>(w) * 52; }
  static constexpr uint64_t tile_bytes(int64_t k) { return block_bytes(kTile) * (k / 32); }
  static constexpr uint64_t hs_off(int64_t w) { return static_cast<uint64_t>(w) * 32; }
  static constexpr uint64_t hb_off(int64_t w) { return static_cast<uint64_t>(w) * 40; }
  static constexpr uint64_t dx_off(int64_t w) { return static_cast<uint64_t>(w) * 44; }
  static constexpr uint64_t ms_off(int64_t w) { return static_cast<uint64_t>(w) * 48; }
};
// Rows [t0, t1) of the n rows at x (stride ldx) into their tiles at dst (k a multiple of 32);
// every value and scale is the same bits as quantize_activation_row's, on every tier.
void quantize_activation_tiles(Isa isa, const float* x, int64_t ldx, int64_t k, int64_t n,
                               int64_t t0, int64_t t1, int offset, uint8_t* dst);

}  // namespace brisk::matmul_detail
