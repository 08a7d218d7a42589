#include "ops/repack.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/error.h"
#include "ops/cpu.h"
#include "quant/quant.h"
#include "quant/quant_iq4.h"
#include "quant/quant_mxfp4.h"

namespace brisk {

static_assert(sizeof(BlockQ4_0) == sizeof(BlockIQ4_NL), "IQ4_NL repacks as Q4_0's layout");

namespace {

uint64_t block_bytes(DType t) {
  switch (t) {
    case DType::F32:
      return 4;  // one value
    case DType::BF16:
      return 4;  // a pair of values
    case DType::F16:
      return 2;  // one value
    case DType::Q4_0:
    case DType::IQ4_NL:  // the same 18 bytes: an f16 scale and 16 bytes of nibbles
      return sizeof(BlockQ4_0);
    case DType::Q8_0:
      return sizeof(BlockQ8_0);
    case DType::MXFP4:
      return sizeof(BlockMXFP4);
    case DType::Q4_K:
      return sizeof(BlockQ4_K);
    case DType::Q5_K:
      return sizeof(BlockQ5_K);
    case DType::IQ4_XS:
      return sizeof(BlockIQ4_XS);
    default:
      return sizeof(BlockQ6_K);
  }
}

int block_values(DType t) {
  return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K || t == DType::IQ4_XS ? kQKK
         : t == DType::BF16                                                             ? 2
         : t == DType::F16 || t == DType::F32                                           ? 1
                                                                                        : kQK;
}

// 32 values (unsigned bytes below 64) into 4 vectors: vector q, lane r, byte m holds value 8q+m in
// its low nibble and value 8q+4+m in its high one; with 2 more vectors of the values' bits 4-5
// (lane r, byte m, bits 2i..2i+1: value 4(4h+i)+m of vector h) when `high` is given.
void put32(const uint8_t* v, int r, uint8_t* lo, uint8_t* high) {
  for (int q = 0; q < 4; ++q)
    for (int m = 0; m < 4; ++m)
      lo[q * 64 + r * 4 + m] =
          static_cast<uint8_t>((v[8 * q + m] & 0xF) | (v[8 * q + 4 + m] & 0xF) << 4);
  if (high)
    for (int h = 0; h < 2; ++h)
      for (int m = 0; m < 4; ++m) {
        int b = 0;
        for (int i = 0; i < 4; ++i) b |= (v[4 * (4 * h + i) + m] >> 4) << (2 * i);
        high[h * 64 + r * 4 + m] = static_cast<uint8_t>(b);
      }
}
// Q5_K's fifth bits of 32 values, arranged like the nibble vectors' values: lane r, byte m, bit i =
// bit 4 of value 8(i/2) + 4(i%2) + m (the value that byte m of the kernels' i-th vector holds).
void put_fifth(const uint8_t* v, int r, uint8_t* hb) {
  for (int m = 0; m < 4; ++m) {
    int byte = 0;
    for (int i = 0; i < 8; ++i) byte |= ((v[8 * (i / 2) + 4 * (i % 2) + m] >> 4) & 1) << i;
    hb[r * 4 + m] = static_cast<uint8_t>(byte);
  }
}
void get_fifth(const uint8_t* hb, int r, uint8_t* v) {
  for (int m = 0; m < 4; ++m)
    for (int i = 0; i < 8; ++i)
      v[8 * (i / 2) + 4 * (i % 2) + m] |= static_cast<uint8_t>(((hb[r * 4 + m] >> i) & 1) << 4);
}

void get32(const uint8_t* lo, const uint8_t* high, int r, uint8_t* v) {
  for (int j = 0; j < 32; ++j) {
    const int q = j / 8, m = j % 8;
    v[j] = (lo[q * 64 + r * 4 + m % 4] >> (m >= 4 ? 4 : 0)) & 0xF;
    if (high) {
      const int u = j / 4, h = u / 4, i = u % 4;
      v[j] |= static_cast<uint8_t>(((high[h * 64 + r * 4 + j % 4] >> (2 * i)) & 3) << 4);
    }
  }
}

// A 32-value block's 16 bytes of nibbles (values 0..15 low, 16..31 high; Q4_0, IQ4_NL, MXFP4)
// placed in lane r of a column's nibble vectors at p, and back.
void put_nibbles(const uint8_t* qs, int r, uint8_t* p) {
  uint8_t v[32];
  for (int j = 0; j < 16; ++j) v[j] = qs[j] & 0xF, v[j + 16] = qs[j] >> 4;
  put32(v, r, p, nullptr);
}
void get_nibbles(const uint8_t* p, int r, uint8_t* qs) {
  uint8_t v[32];
  get32(p, nullptr, r, v);
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(v[j] | v[j + 16] << 4);
}

// Q4_K's and Q5_K's columns: the same header (d, dmin, eight 6-bit scales and mins) and nibble
// vectors; Q5_K adds a vector of fifth bits per sub-block. (The caller zeroes the high-bits bytes.)
template <class B>
void pack_k4(const B& b, int r, uint8_t* col) {
  constexpr bool kFifth = std::is_same_v<B, BlockQ5_K>;
  auto* h16 = reinterpret_cast<uint16_t*>(col);
  h16[r] = b.d;
  h16[16 + r] = b.dmin;
  uint8_t v[32];
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    k4_scale_min(j, b.scales, sc, m);
    col[64 + j * 16 + r] = static_cast<uint8_t>((sc & 0xF) | (m & 0xF) << 4);
    col[192 + (j / 2) * 16 + r] |=
        static_cast<uint8_t>(((sc >> 4) | (m >> 4) << 2) << (4 * (j % 2)));
    for (int l = 0; l < 32; ++l) {
      const uint8_t q = b.qs[(j / 2) * 32 + l];
      v[l] = j % 2 ? q >> 4 : q & 0xF;
      if constexpr (kFifth) v[l] |= static_cast<uint8_t>(((b.qh[l] >> j) & 1) << 4);
    }
    if constexpr (kFifth) {
      put32(v, r, col + q5k_nibbles(j), nullptr);
      put_fifth(v, r, col + q5k_fifth(j));
    } else {
      put32(v, r, col + 256 + j * 256, nullptr);
    }
  }
}

template <class B>
void unpack_k4(const uint8_t* col, int r, B& b) {
  constexpr bool kFifth = std::is_same_v<B, BlockQ5_K>;
  const auto* h16 = reinterpret_cast<const uint16_t*>(col);
  b.d = h16[r];
  b.dmin = h16[16 + r];
  if constexpr (kFifth) std::memset(b.qh, 0, sizeof b.qh);
  uint8_t sc[8], m[8], v[32];
  for (int j = 0; j < 8; ++j) {
    const uint8_t lo = col[64 + j * 16 + r];
    const uint8_t hi = (col[192 + (j / 2) * 16 + r] >> (4 * (j % 2))) & 0xF;
    sc[j] = static_cast<uint8_t>((lo & 0xF) | (hi & 3) << 4);
    m[j] = static_cast<uint8_t>((lo >> 4) | (hi >> 2) << 4);
    if constexpr (kFifth) {
      get32(col + q5k_nibbles(j), nullptr, r, v);
      get_fifth(col + q5k_fifth(j), r, v);
    } else {
      get32(col + 256 + j * 256, nullptr, r, v);
    }
    for (int l = 0; l < 32; ++l) {
      uint8_t& q = b.qs[(j / 2) * 32 + l];
      q = j % 2 ? static_cast<uint8_t>((q & 0xF) | (v[l] & 0xF) << 4) : (v[l] & 0xF);
      if constexpr (kFifth) b.qh[l] |= static_cast<uint8_t>((v[l] >> 4) << j);
    }
  }
  for (int j = 0; j < 4; ++j) {
    b.scales[j] = static_cast<uint8_t>(sc[j] | (sc[j + 4] >> 4) << 6);
    b.scales[j + 4] = static_cast<uint8_t>(m[j] | (m[j + 4] >> 4) << 6);
    b.scales[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | (m[j + 4] & 0xF) << 4);
  }
}

// The 16 rows' blocks of one block column, in and out. Layouts: see repack.h.
void pack_column(DType t, const uint8_t* const* blk, uint8_t* col) {
  if (t == DType::Q4_K || t == DType::Q5_K)
    std::memset(col + 192, 0, 64);                       // two sub-blocks' bits share a byte
  if (t == DType::IQ4_XS) std::memset(col + 32, 0, 96);  // likewise the groups' scale bits
  auto* h16 = reinterpret_cast<uint16_t*>(col);
  for (int r = 0; r < kInterleave; ++r) {
    uint8_t v[kQKK];
    switch (t) {
      case DType::F32:
      case DType::BF16:
        std::memcpy(col + 4 * r, blk[r], 4);
        break;
      case DType::F16:
        std::memcpy(col + 2 * r, blk[r], 2);
        break;
      case DType::Q4_0:
      case DType::IQ4_NL: {  // nibbles: Q4_0's values, IQ4_NL's table indices
        const auto* b = reinterpret_cast<const BlockQ4_0*>(blk[r]);
        h16[r] = b->d;
        put_nibbles(b->qs, r, col + 32);
        break;
      }
      case DType::MXFP4: {  // the E8M0 scale bytes, then nibbles as Q4_0's (table indices)
        const auto* b = reinterpret_cast<const BlockMXFP4*>(blk[r]);
        col[r] = b->e;
        put_nibbles(b->qs, r, col + 16);
        break;
      }
      case DType::Q8_0: {
        const auto* b = reinterpret_cast<const BlockQ8_0*>(blk[r]);
        h16[r] = b->d;
        for (int m = 0; m < 8; ++m) std::memcpy(col + 32 + m * 64 + r * 4, b->qs + 4 * m, 4);
        break;
      }
      case DType::Q4_K:
        pack_k4(*reinterpret_cast<const BlockQ4_K*>(blk[r]), r, col);
        break;
      case DType::Q5_K:
        pack_k4(*reinterpret_cast<const BlockQ5_K*>(blk[r]), r, col);
        break;
      case DType::IQ4_XS: {
        const auto* b = reinterpret_cast<const BlockIQ4_XS*>(blk[r]);
        h16[r] = b->d;
        for (int g = 0; g < 8; ++g) {
          const int sc = iq4xs_scale(*b, g) + 32;
          col[32 + (g / 2) * 16 + r] |= static_cast<uint8_t>((sc & 0xF) << (4 * (g % 2)));
          col[96 + (g / 4) * 16 + r] |= static_cast<uint8_t>((sc >> 4) << (2 * (g % 4)));
          for (int j = 0; j < 16; ++j)
            v[j] = b->qs[16 * g + j] & 0xF, v[j + 16] = b->qs[16 * g + j] >> 4;
          put32(v, r, col + 128 + g * 256, nullptr);
        }
        break;
      }
      default: {  // Q6_K
        const auto* b = reinterpret_cast<const BlockQ6_K*>(blk[r]);
        h16[r] = b->d;
        for (int s = 0; s < 16; ++s) col[32 + s * 16 + r] = static_cast<uint8_t>(b->scales[s]);
        q6k_values(b, v);
        for (int j = 0; j < 8; ++j)
          put32(v + 32 * j, r, col + 288 + j * 384, col + 288 + j * 384 + 256);
      }
    }
  }
}

void unpack_column(DType t, const uint8_t* col, int r, uint8_t* out) {
  const auto* h16 = reinterpret_cast<const uint16_t*>(col);
  uint8_t v[kQKK];
  switch (t) {
    case DType::F32:
    case DType::BF16:
      std::memcpy(out, col + 4 * r, 4);
      break;
    case DType::F16:
      std::memcpy(out, col + 2 * r, 2);
      break;
    case DType::Q4_0:
    case DType::IQ4_NL: {
      auto* b = reinterpret_cast<BlockQ4_0*>(out);
      b->d = h16[r];
      get_nibbles(col + 32, r, b->qs);
      break;
    }
    case DType::MXFP4: {
      auto* b = reinterpret_cast<BlockMXFP4*>(out);
      b->e = col[r];
      get_nibbles(col + 16, r, b->qs);
      break;
    }
    case DType::Q8_0: {
      auto* b = reinterpret_cast<BlockQ8_0*>(out);
      b->d = h16[r];
      for (int j = 0; j < 32; ++j)
        b->qs[j] = static_cast<int8_t>(col[32 + (j / 4) * 64 + r * 4 + j % 4]);
      break;
    }
    case DType::Q4_K:
      unpack_k4(col, r, *reinterpret_cast<BlockQ4_K*>(out));
      break;
    case DType::Q5_K:
      unpack_k4(col, r, *reinterpret_cast<BlockQ5_K*>(out));
      break;
    case DType::IQ4_XS: {
      auto* b = reinterpret_cast<BlockIQ4_XS*>(out);
      b->d = h16[r];
      b->scales_h = 0;
      std::memset(b->scales_l, 0, sizeof b->scales_l);
      for (int g = 0; g < 8; ++g) {
        const int sc = ((col[32 + (g / 2) * 16 + r] >> (4 * (g % 2))) & 0xF) |
                       ((col[96 + (g / 4) * 16 + r] >> (2 * (g % 4))) & 3) << 4;
        b->scales_l[g / 2] |= static_cast<uint8_t>((sc & 0xF) << (4 * (g % 2)));
        b->scales_h |= static_cast<uint16_t>((sc >> 4) << (2 * g));
        get32(col + 128 + g * 256, nullptr, r, v);
        for (int j = 0; j < 16; ++j)
          b->qs[16 * g + j] = static_cast<uint8_t>(v[j] | v[j + 16] << 4);
      }
      break;
    }
    default: {  // Q6_K
      auto* b = reinterpret_cast<BlockQ6_K*>(out);
      b->d = h16[r];
      for (int s = 0; s < 16; ++s) b->scales[s] = static_cast<int8_t>(col[32 + s * 16 + r]);
      for (int j = 0; j < 8; ++j)
        get32(col + 288 + j * 384, col + 288 + j * 384 + 256, r, v + 32 * j);
      q6k_set_values(b, v);
    }
  }
}

}  // namespace

void column_values(DType t, const uint8_t* col, int r, uint8_t* v) {
  switch (t) {
    case DType::Q4_0:
    case DType::IQ4_NL:
      get32(col + 32, nullptr, r, v);
      break;
    case DType::MXFP4:
      get32(col + 16, nullptr, r, v);
      break;
    case DType::Q8_0:
      for (int j = 0; j < 32; ++j) v[j] = col[32 + (j / 4) * 64 + r * 4 + j % 4];
      break;
    case DType::Q4_K:
      for (int j = 0; j < 8; ++j) get32(col + 256 + j * 256, nullptr, r, v + 32 * j);
      break;
    case DType::Q5_K:
      for (int j = 0; j < 8; ++j) {
        get32(col + q5k_nibbles(j), nullptr, r, v + 32 * j);
        get_fifth(col + q5k_fifth(j), r, v + 32 * j);
      }
      break;
    case DType::IQ4_XS:
      for (int j = 0; j < 8; ++j) get32(col + 128 + j * 256, nullptr, r, v + 32 * j);
      break;
    default:
      for (int j = 0; j < 8; ++j)
        get32(col + 288 + j * 384, col + 288 + j * 384 + 256, r, v + 32 * j);
  }
}

bool repackable(const Tensor& t) {
  const bool typed = t.type == DType::Q4_0 || t.type == DType::IQ4_NL || t.type == DType::Q8_0 ||
                     t.type == DType::Q4_K || t.type == DType::Q5_K || t.type == DType::Q6_K ||
                     t.type == DType::IQ4_XS || t.type == DType::BF16 || t.type == DType::F16 ||
                     t.type == DType::F32 || t.type == DType::MXFP4;
  return typed && t.cols() > 0 && t.cols() % block_values(t.type) == 0 && t.rows() > 0 &&
         t.rows() % kInterleave == 0;
}

bool repack_pays_off(DType t) {
  switch (t) {
    case DType::Q4_0:
    case DType::IQ4_NL:
    case DType::Q8_0:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::IQ4_XS:
    case DType::MXFP4:
      return best_isa() >= Isa::Avx2;  // 256-bit kernels, or 512-bit ones with VNNI
    case DType::BF16:
    case DType::F16:
      return best_isa() >= Isa::Avx2;
    case DType::F32:
      // The 512-bit kernel reads a group once for up to 12 tokens (verifying a draft of 5: 1.35x
      // one token's time, against 2.4x on the file's rows); the 256-bit one takes 2 at a time and
      // lost to the file's rows from 3 tokens on.
      return best_isa() >= Isa::Avx512;
    default:
      return false;
  }
}

namespace {

// 16 columns of the 16 rows at a time, each column BB bytes: contiguous reads and writes through a
// small tile. (BB a constant: with a run-time size every 2-byte move was a call to memmove, most of
// a BF16 or F16 model's load.)
template <int BB>
void transpose_columns(const uint8_t* src, uint64_t row_bytes, uint8_t* dst, int64_t n_col) {
  constexpr uint64_t gb = kInterleave * BB;
  for (int64_t c0 = 0; c0 < n_col; c0 += 16) {
    const int64_t n = std::min<int64_t>(16, n_col - c0);
    alignas(64) uint8_t tile[16 * gb];
    for (int r = 0; r < kInterleave; ++r) {
      const uint8_t* row = src + r * row_bytes + c0 * BB;
      for (int64_t q = 0; q < n; ++q) std::memcpy(tile + q * gb + r * BB, row + q * BB, BB);
    }
    std::memcpy(dst + c0 * gb, tile, static_cast<size_t>(n) * gb);
  }
}

}  // namespace

uint64_t group_block_bytes(DType t) {
  return kInterleave * block_bytes(t);
}

void repack_group(DType t, const uint8_t* src, uint64_t row_bytes, uint8_t* dst, int64_t k) {
  const int bv = block_values(t);
  if (k % bv != 0) fail("repack: row length {} is not a multiple of {}", k, bv);
  const uint64_t bb = block_bytes(t), gb = group_block_bytes(t);
  if (t == DType::BF16 || t == DType::F16 || t == DType::F32) {  // gigabytes of plain moves
    // (BF16's 4-byte columns and F32's move alike; F16's are 2 bytes.)
    if (bb == 2)
      transpose_columns<2>(src, row_bytes, dst, k / bv);
    else
      transpose_columns<4>(src, row_bytes, dst, k / bv);
    return;
  }
  for (int64_t b = 0; b < k / bv; ++b) {
    const uint8_t* blk[kInterleave];
    for (int r = 0; r < kInterleave; ++r)
      blk[r] = src + r * row_bytes + static_cast<uint64_t>(b) * bb;
    pack_column(t, blk, dst + static_cast<uint64_t>(b) * gb);
  }
}

void unpack_group_row(DType t, const uint8_t* group, int i, uint8_t* dst, int64_t k) {
  const uint64_t bb = block_bytes(t), gb = group_block_bytes(t);
  for (int64_t b = 0; b < k / block_values(t); ++b)
    unpack_column(t, group + static_cast<uint64_t>(b) * gb, i, dst + static_cast<uint64_t>(b) * bb);
}

}  // namespace brisk
