#include "ops/repack.h"

#include <cstring>

#include "core/error.h"
#include "core/quant.h"
#include "ops/cpu.h"

namespace brisk {
namespace {

constexpr int64_t kGroupPairs = 8;

uint64_t pair_bytes(DType t) {
  return t == DType::Q4_0 ? 32 : 64;
}
uint64_t block_bytes(DType t) {
  return t == DType::Q4_0 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
}

}  // namespace

bool repackable(const Tensor& t) {
  return (t.type == DType::Q4_0 || t.type == DType::Q8_0) && t.cols() > 0 && t.cols() % 64 == 0;
}

bool repack_pays_off() {
  return best_isa() == Isa::Avx512 && cpu_features().avx512vnni;
}

void repack_row(DType t, const uint8_t* src, uint8_t* dst, int64_t k) {
  if (k % 64 != 0) fail("repack: row length {} is not a multiple of 64", k);
  const int64_t np = k / 64;
  const uint64_t bb = block_bytes(t), pb = pair_bytes(t);
  for (int64_t g0 = 0; g0 < np; g0 += kGroupPairs) {
    const int64_t n = std::min(kGroupPairs, np - g0);
    auto* scales = reinterpret_cast<uint16_t*>(dst);
    uint8_t* values = dst + 4 * n;
    for (int64_t q = 0; q < n; ++q) {
      const uint8_t* a = src + static_cast<uint64_t>(2 * (g0 + q)) * bb;
      const uint8_t* b = a + bb;
      uint16_t da, db;
      std::memcpy(&da, a, 2);
      std::memcpy(&db, b, 2);
      scales[2 * q] = da;
      scales[2 * q + 1] = db;
      uint8_t* v = values + static_cast<uint64_t>(q) * pb;
      if (t == DType::Q4_0) {
        const auto* qa = reinterpret_cast<const BlockQ4_0*>(a)->qs;
        const auto* qb = reinterpret_cast<const BlockQ4_0*>(b)->qs;
        for (int j = 0; j < 32; ++j) {
          const int va = j < 16 ? qa[j] & 0xF : qa[j - 16] >> 4;
          const int vb = j < 16 ? qb[j] & 0xF : qb[j - 16] >> 4;
          v[j] = static_cast<uint8_t>(va | vb << 4);
        }
      } else {
        std::memcpy(v, reinterpret_cast<const BlockQ8_0*>(a)->qs, 32);
        std::memcpy(v + 32, reinterpret_cast<const BlockQ8_0*>(b)->qs, 32);
      }
    }
    dst += static_cast<uint64_t>(n) * (4 + pb);
  }
}

void unpack_row(DType t, const uint8_t* src, uint8_t* dst, int64_t k) {
  const int64_t np = k / 64;
  const uint64_t bb = block_bytes(t), pb = pair_bytes(t);
  for (int64_t g0 = 0; g0 < np; g0 += kGroupPairs) {
    const int64_t n = std::min(kGroupPairs, np - g0);
    const auto* scales = reinterpret_cast<const uint16_t*>(src);
    const uint8_t* values = src + 4 * n;
    for (int64_t q = 0; q < n; ++q) {
      uint8_t* a = dst + static_cast<uint64_t>(2 * (g0 + q)) * bb;
      uint8_t* b = a + bb;
      std::memcpy(a, &scales[2 * q], 2);
      std::memcpy(b, &scales[2 * q + 1], 2);
      const uint8_t* v = values + static_cast<uint64_t>(q) * pb;
      if (t == DType::Q4_0) {
        auto* qa = reinterpret_cast<BlockQ4_0*>(a)->qs;
        auto* qb = reinterpret_cast<BlockQ4_0*>(b)->qs;
        for (int j = 0; j < 16; ++j) {
          qa[j] = static_cast<uint8_t>((v[j] & 0xF) | (v[j + 16] & 0xF) << 4);
          qb[j] = static_cast<uint8_t>((v[j] >> 4) | (v[j + 16] >> 4) << 4);
        }
      } else {
        std::memcpy(reinterpret_cast<BlockQ8_0*>(a)->qs, v, 32);
        std::memcpy(reinterpret_cast<BlockQ8_0*>(b)->qs, v + 32, 32);
      }
    }
    src += static_cast<uint64_t>(n) * (4 + pb);
  }
}

}  // namespace brisk
