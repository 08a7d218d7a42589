// Load-time repacking of Q4_0 and Q8_0 weight rows into the layout the int8 kernels read fastest
// (the file on disk is never changed; the row size stays the same). A row of k values is cut into
// pairs of 32-blocks, and the pairs into groups of up to 8:
//   group = [f16 scale of each block of its pairs: 2 * n] [n pairs of packed values]
//   Q4_0 pair: 32 bytes, byte j = (value j of block A) | (value j of block B) << 4
//   Q8_0 pair: 64 bytes, the int8 values of A then B
// so one 32-byte load and two masks give a pair's 64 unsigned values in order, and one conversion
// gives 16 scales.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace brisk {

// Whether this tensor can be repacked (its type and row length allow it).
bool repackable(const Tensor& t);
// Whether the running CPU has kernels for repacked rows that beat the GGUF layout.
bool repack_pays_off();

void repack_row(DType t, const uint8_t* src, uint8_t* dst, int64_t k);
void unpack_row(DType t, const uint8_t* src, uint8_t* dst, int64_t k);  // back to GGUF

}  // namespace brisk
