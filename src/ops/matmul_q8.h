// Activations for the integer kernels: each row quantized to int8 in blocks of 32 (a scale per
// block, like GGUF's Q8_0), laid out for the kernels that pair blocks into 64-byte vectors.
// Internal to ops/ (the driver prepares these rows; matmul_quant.cpp and the reference read them).
#pragma once

#include <cstdint>

namespace brisk::matmul_detail {

// One activation row of k elements (a multiple of 32):
//   qs:  int8[np * 64]        the values, zero-padded to whole pairs of blocks
//   dxv: float[np * 16]       per pair: 8 copies of block 2p's scale, then 8 of block 2p+1's
//   xs:  float[np * 4]        per 16 values: scale * sum of the 16 int8 values
//   ls:  int32[np * 16]       per 4 values (one VPDPBUSD lane): -offset * their sum, for kernels
//                             whose weights are offset bytes (value = d * (u - offset)): the
//                             dot product starts from it instead of 0
//   hs:  int32[np * 4]        per 16 values: -offset * their sum (the same for the kernels of
//                             interleaved rows, which start a block's two halves from it)
//   ms:  float[np * 2]        per block: -scale * the sum of its values (for weights with a
//                             per-block minimum, as Q4_K)
struct Q8Layout {
  int64_t np;
  uint64_t dxv_off, xs_off, ls_off, hs_off, ms_off, stride;
  explicit Q8Layout(int64_t k)
      : np((k / 32 + 1) / 2),
        dxv_off(static_cast<uint64_t>(np) * 64),
        xs_off(dxv_off + static_cast<uint64_t>(np) * 64),
        ls_off((xs_off + static_cast<uint64_t>(np) * 16 + 63) / 64 * 64),
        hs_off(ls_off + static_cast<uint64_t>(np) * 64),
        ms_off(hs_off + static_cast<uint64_t>(np) * 16),
        stride((ms_off + static_cast<uint64_t>(np) * 8 + 63) / 64 * 64) {}
};

// Quantizes one row into the layout (dst: stride bytes); ls and hs are filled when offset is not 0.
void quantize_activation_row(const float* x, int64_t k, uint8_t* dst, int offset = 0);

}  // namespace brisk::matmul_detail
