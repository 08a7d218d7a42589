// Load-time repacking of Q4_0 and Q8_0 matrices into the layout the int8 kernels read fastest (the
// file on disk is never changed; the matrix keeps its size). Rows are interleaved in groups of 16,
// one group after another; within a group, block column after block column:
//   [16 f16 scales: row 0..15] [values of the 16 rows' blocks]
//   Q4_0 values: 4 x 64 bytes; vector q, 4-byte lane r holds, for m = 0..3, the byte
//                (value 8q+m of row r) | (value 8q+4+m of row r) << 4   (unsigned 0..15)
//   Q8_0 values: 8 x 64 bytes; vector m, lane r holds values 4m..4m+3 of row r (int8)
// so a block column is 8 vectors of which lane r holds 4 consecutive values of row r: one
// VPDPBUSD per 4 activations gives 16 rows' partial sums at once, and one block scale conversion
// and one multiply-add per 32 values turn them into 16 outputs, without any horizontal sum.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace brisk {

constexpr int64_t kInterleave = 16;  // rows per group

// Whether this tensor can be repacked (its type and shape allow it).
bool repackable(const Tensor& t);
// Whether the running CPU has kernels for repacked rows that beat the GGUF layout.
bool repack_pays_off();

// One group: src holds 16 GGUF rows of k values, row_bytes apart; dst receives 16 * row_bytes.
void repack_group(DType t, const uint8_t* src, uint64_t row_bytes, uint8_t* dst, int64_t k);
// Row i (0..15) of a repacked group, back in the GGUF layout (row_bytes bytes).
void unpack_group_row(DType t, const uint8_t* group, int i, uint8_t* dst, int64_t k);
// Bytes of one block column of a group (16 blocks).
uint64_t group_block_bytes(DType t);

}  // namespace brisk
