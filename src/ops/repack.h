// Load-time repacking of Q4_0, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4, BF16, F16 and F32
// matrices into the layout the int8 kernels read fastest (the file on disk is never changed; the
// matrix keeps its size). Rows are interleaved in groups of 16, one group after another; within a
// group, block column after block column (a column: the 16 rows' blocks of 32 values, or
// super-blocks of 256 for the k-quants). Values are kept in vectors of which 4-byte lane r holds 4
// consecutive values of row r, so one VPDPBUSD per 4 activations advances 16 rows at once and a
// block's scales apply to 16 outputs in one multiply, with no horizontal sums. 32 values v
// (unsigned, below 64) take 4 "nibble vectors": vector q, lane r, byte m = v[8q+m] | v[8q+4+m] << 4
// (so its low nibbles give values 8q..8q+3 and its high ones 8q+4..8q+7), and, for 6-bit values, 2
// "high vectors": vector h, lane r, byte m, bits 2i..2i+1 = bits 4-5 of v[4(4h+i)+m]. A column
// (byte offsets; rN = rows 0..15 side by side):
//   Q4_0, IQ4_NL: [0] f16 d[r16] [32] nibble vectors (values, or table indices, as stored)
//   MXFP4: [0] E8M0 scale byte[r16] [16] nibble vectors (table indices, as stored)
//   Q8_0: [0] f16 d[r16] [32] 8 vectors, vector m lane r = values 4m..4m+3 of row r (int8)
//   Q4_K: [0] f16 d[r16] [32] f16 dmin[r16] [64] for sub-block j: (sc & 15) | (min & 15) << 4,
//         16 bytes each [192] per pair of sub-blocks, 16 bytes: nibble j%2 = (sc >> 4) | (min >> 4)
//         << 2 [256] per sub-block of 32: nibble vectors (256 bytes)
//   Q5_K: as Q4_K up to [256], then per sub-block of 32: nibble vectors of the low 4 bits (256
//         bytes), then a vector of fifth bits, lane r byte m bit i = bit 4 of value
//         8(i/2) + 4(i%2) + m (64 bytes). (Each sub-block's bytes together, in the order a kernel
//         reads them: with the fifth bits after all 8 sub-blocks, every column's first read of
//         them waited on memory, and Q5_K decoded at a third of the read rate.)
//   Q6_K: [0] f16 d[r16] [32] int8 scale of each 16 values, 16 bytes per scale [288] per 32
//         values: nibble vectors then high vectors (384 bytes)
//   IQ4_XS: [0] f16 d[r16] [32] per pair of groups of 32, 16 bytes: nibble g%2 = low 4 bits of
//         group g's 6-bit scale [96] per 4 groups, 16 bytes: bits 2(g%4).. = its high 2 bits
//         [128] per group: nibble vectors of table indices (256 bytes)
//   BF16: columns of 2 values: lane r = values 2p, 2p+1 of row r (one VDPBF16PS operand)
//   F16:  columns of 1 value: the 16 rows' value k side by side (one VCVTPH2PS operand)
//   F32:  columns of 1 value, likewise (one 512-bit FMA operand)
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace brisk {

constexpr int64_t kInterleave = 16;  // rows per group

// Whether this tensor can be repacked (its type and shape allow it).
bool repackable(const Tensor& t);
// Whether the running CPU has kernels for repacked rows of this type that beat the GGUF layout.
bool repack_pays_off(DType t);

// One group: src holds 16 GGUF rows of k values, row_bytes apart; dst receives 16 * row_bytes.
void repack_group(DType t, const uint8_t* src, uint64_t row_bytes, uint8_t* dst, int64_t k);
// Row i (0..15) of a repacked group, back in the GGUF layout (row_bytes bytes).
void unpack_group_row(DType t, const uint8_t* group, int i, uint8_t* dst, int64_t k);
// The values of row r (0..15) in one block column, in order, as stored (Q8_0: int8 bits; the
// others unsigned), for portable kernels and tests.
void column_values(DType t, const uint8_t* col, int r, uint8_t* v);
// Bytes of one block column of a group (16 blocks or super-blocks).
uint64_t group_block_bytes(DType t);
// Q5_K: the byte offsets in a column of sub-block j's nibble vectors and its fifth-bits vector.
constexpr uint64_t q5k_nibbles(int j) {
  return 256 + 320 * static_cast<uint64_t>(j);
}
constexpr uint64_t q5k_fifth(int j) {
  return q5k_nibbles(j) + 256;
}

}  // namespace brisk
