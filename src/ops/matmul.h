// Y = X · Wᵀ for a weight matrix W (rows = output features, ggml layout) and a batch of f32
// activation rows X. Every output is one dot product whose summation order depends only on the
// row length, never on the batch size, the tile it falls in, or the thread count.
#pragma once

#include <cstdint>
#include <span>

#include "core/tensor.h"
#include "core/thread_pool.h"
#include "ops/cpu.h"

namespace brisk {

// x: n rows of w.cols() floats (row stride ldx); y: n rows, row stride ldy, w.rows() outputs each.
void matmul(const Tensor& w, const float* x, int64_t ldx, int64_t n, float* y, int64_t ldy,
            ThreadPool& pool);
void matmul_isa(Isa isa, const Tensor& w, const float* x, int64_t ldx, int64_t n, float* y,
                int64_t ldy, ThreadPool& pool);

// The quantized types' kernels round the activations to int8 in blocks sharing one scale: of 256
// values for the grid i-quants and the ternary types (whose super-blocks then sum in integers), of
// 32 for the rest. (The reference, ref::matmul, rounds alike.)
bool grid_activations(DType t);
inline int64_t activation_block(DType t) {
  return grid_activations(t) ? 256 : 32;
}

// Several matrices applied to the same activations (q, k and v; gate and up): the activations are
// prepared (quantized, rounded, packed) once for the matrices whose kernels read them alike, in
// order. Each result is the same bits as matmul's.
struct MatmulOut {
  const Tensor* w;
  float* y;
  int64_t ldy;
};
void matmul_shared(std::span<const MatmulOut> outs, const float* x, int64_t ldx, int64_t n,
                   ThreadPool& pool);
void matmul_shared_isa(Isa isa, std::span<const MatmulOut> outs, const float* x, int64_t ldx,
                       int64_t n, ThreadPool& pool);

namespace matmul_detail {

// What a kernel needs to compute outputs of rows [r0,r1) for tokens [t0,t1).
struct Args {
  const uint8_t* w;
  uint64_t w_stride;  // bytes between weight rows
  int64_t k;          // row length
  const uint8_t* x;   // activations, as the kernel asked for them (see XFormat)
  uint64_t x_stride;  // bytes between activation rows (the tiled formats: between tiles)
  float* y;
  int64_t ldy;
  int64_t x_tile = 1;  // the tiled formats: tokens per tile
};
using TileFn = void (*)(const Args&, int64_t r0, int64_t r1, int64_t t0, int64_t t1);
// F32: the rows as given. BF16: rows rounded to bf16, zero-padded to whole 32-value steps. Q8: see
// matmul_q8.h. F32Tiles / BF16Tiles: tokens in tiles of Args::x_tile whose values (BF16Tiles: pairs
// of values rounded to bf16) are interleaved token by token (pack_tiles), so a kernel broadcasting
// one token's value after another's reads one stream at fixed offsets. F32PairTiles: the same with
// 8-byte units, a token's values k and k + 1 (k even; zero past an odd k's end) side by side, so
// one 64-bit broadcast serves the FMAs of both. Q8Tiles: the Q8 values in tiles of 16 tokens
// (matmul_q8.h); x_stride is the bytes between tiles. Q8K: int8 in blocks of 256 (matmul_q8.h).
enum class XFormat { F32, BF16, Q8, F32Tiles, BF16Tiles, Q8Tiles, F32PairTiles, Q8K };
struct Kernel {
  TileFn tile = nullptr;
  XFormat x_format = XFormat::F32;
  int q8_offset = 0;  // Q8 activations: the weights' byte offset, whose sums (hs) are prepared
  // Tokens per call of the tile function worth keeping whole (token blocks are a multiple), and
  // activation bytes per value the kernel reads (0: the whole row as prepared).
  int tile_t = 6;
  int x_bytes_per_value = 0;
  // Rows the driver keeps in one chunk where the matrix allows: a multiple of the 16 of an
  // interleaved group, and for the kernels that decode several groups side by side, all of them
  // (a chunk's rows past the last whole set run one group at a time, one weight stream in flight).
  int row_grain = 16;
  explicit operator bool() const { return tile != nullptr; }
};

// One per weight type, in matmul_<type>.cpp; nullptr tile if the type has no kernel for this ISA.
Kernel kernel_f32(Isa isa);
Kernel kernel_f16(Isa isa);
Kernel kernel_bf16(Isa isa);
Kernel kernel_quant(Isa isa, DType t);  // the GGUF quantized types
// kernel_quant's x86 tiers, each in a file of its own (a kernel per type and micro-tile shape):
// VPDPBUSD on 512 bits; on 256 bits VPMADDUBSW, or VEX VPDPBUSD (AVX-VNNI).
Kernel kernel_quant_avx512(DType t);
Kernel kernel_quant_avx2(DType t);
Kernel kernel_quant_avxvnni(DType t);
// Rows interleaved 16 at a time at load (ops/repack.h): Q4_0, Q8_0, Q4_K, Q6_K; BF16; F16; F32.
Kernel kernel_interleaved(Isa isa, DType t);
Kernel kernel_bf16_interleaved(Isa isa);
Kernel kernel_f16_interleaved(Isa isa);
Kernel kernel_f32_interleaved(Isa isa);

// Packs n rows of k floats as XFormat::F32Tiles, BF16Tiles (k even) or F32PairTiles, `tile` tokens
// per tile: a unit u of token t (F32Tiles: value u; BF16Tiles: values 2u and 2u+1 as two bf16,
// rounded as f32_to_bf16; F32PairTiles: values 2u and 2u+1 as floats, the second 0 past k) lands
// at byte ((t / tile * units + u) * tile + t % tile) * size, units = k (k / 2, (k + 1) / 2) and
// size 4 (4, 8): see tile_units.
void pack_tiles(Isa isa, XFormat f, const float* x, int64_t ldx, int64_t k, int64_t n, int64_t tile,
                uint8_t* dst, ThreadPool& pool);
// The units of a row of k values in a tiled format, and their size in bytes.
struct TileUnits {
  int64_t count, bytes;
};
inline TileUnits tile_units(XFormat f, int64_t k) {
  if (f == XFormat::BF16Tiles) return {k / 2, 4};
  if (f == XFormat::F32PairTiles) return {(k + 1) / 2, 8};
  return {k, 4};
}

}  // namespace matmul_detail
}  // namespace brisk
