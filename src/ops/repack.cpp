#include "ops/repack.h"

#include <cstring>

#include "core/error.h"
#include "core/quant.h"
#include "ops/cpu.h"

namespace brisk {

bool repackable(const Tensor& t) {
  return (t.type == DType::Q4_0 || t.type == DType::Q8_0) && t.cols() > 0 && t.cols() % 32 == 0 &&
         t.rows() > 0 && t.rows() % kInterleave == 0;
}

bool repack_pays_off() {
  return best_isa() == Isa::Avx512 && cpu_features().avx512vnni;
}

uint64_t group_block_bytes(DType t) {
  return kInterleave * (t == DType::Q4_0 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0));
}

namespace {

// The 32 values of a block as unsigned bytes (Q4_0: 0..15) or int8 (Q8_0), in order, and its scale.
void block_values(DType t, const uint8_t* blk, uint8_t* v, uint16_t& d) {
  std::memcpy(&d, blk, 2);
  if (t == DType::Q4_0) {
    const auto* qs = reinterpret_cast<const BlockQ4_0*>(blk)->qs;
    for (int j = 0; j < 16; ++j) v[j] = qs[j] & 0xF, v[j + 16] = qs[j] >> 4;
  } else {
    std::memcpy(v, reinterpret_cast<const BlockQ8_0*>(blk)->qs, 32);
  }
}

// Where value j of row r of a block column lives: (byte offset in the values, high nibble?).
struct Slot {
  uint64_t byte;
  bool high;
};
Slot slot(DType t, int r, int j) {
  if (t == DType::Q4_0) {
    const int q = j / 8, m = j % 8;
    return {static_cast<uint64_t>(q * 64 + r * 4 + m % 4), m >= 4};
  }
  return {static_cast<uint64_t>((j / 4) * 64 + r * 4 + j % 4), false};
}

}  // namespace

void repack_group(DType t, const uint8_t* src, uint64_t row_bytes, uint8_t* dst, int64_t k) {
  if (k % 32 != 0) fail("repack: row length {} is not a multiple of 32", k);
  const uint64_t bb = t == DType::Q4_0 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  const uint64_t gb = group_block_bytes(t);
  for (int64_t b = 0; b < k / 32; ++b) {
    uint8_t* col = dst + static_cast<uint64_t>(b) * gb;
    auto* scales = reinterpret_cast<uint16_t*>(col);
    uint8_t* vals = col + 2 * kInterleave;
    std::memset(vals, 0, gb - 2 * kInterleave);
    for (int r = 0; r < kInterleave; ++r) {
      uint8_t v[32];
      uint16_t d;
      block_values(t, src + r * row_bytes + static_cast<uint64_t>(b) * bb, v, d);
      scales[r] = d;
      for (int j = 0; j < 32; ++j) {
        const Slot s = slot(t, r, j);
        vals[s.byte] |= static_cast<uint8_t>(s.high ? v[j] << 4 : v[j]);
      }
    }
  }
}

void unpack_group_row(DType t, const uint8_t* group, int i, uint8_t* dst, int64_t k) {
  const uint64_t bb = t == DType::Q4_0 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  const uint64_t gb = group_block_bytes(t);
  for (int64_t b = 0; b < k / 32; ++b) {
    const uint8_t* col = group + static_cast<uint64_t>(b) * gb;
    const uint8_t* vals = col + 2 * kInterleave;
    uint8_t* blk = dst + static_cast<uint64_t>(b) * bb;
    std::memcpy(blk, col + 2 * i, 2);
    uint8_t v[32];
    for (int j = 0; j < 32; ++j) {
      const Slot s = slot(t, i, j);
      v[j] = t == DType::Q4_0 ? (s.high ? vals[s.byte] >> 4 : vals[s.byte] & 0xF) : vals[s.byte];
    }
    if (t == DType::Q4_0) {
      auto* qs = reinterpret_cast<BlockQ4_0*>(blk)->qs;
      for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(v[j] | v[j + 16] << 4);
    } else {
      std::memcpy(reinterpret_cast<BlockQ8_0*>(blk)->qs, v, 32);
    }
  }
}

}  // namespace brisk
