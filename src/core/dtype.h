// Element types, numbered as GGUF/ggml numbers them so a file's type id is our enum value.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace brisk {

enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
};

struct DTypeInfo {
  DType type;
  const char* name;
  uint32_t block_elems;  // elements per block (1 for plain types)
  uint32_t block_bytes;  // bytes per block
};

// nullopt for an id no GGUF writer uses.
std::optional<DTypeInfo> dtype_info(uint32_t id);
const DTypeInfo& dtype_info(DType t);
inline const char* dtype_name(DType t) {
  return dtype_info(t).name;
}
std::optional<DType> dtype_from_name(std::string_view name);  // case-insensitive

// Bytes of a row of n elements; nullopt if n is not a whole number of blocks.
std::optional<uint64_t> dtype_row_bytes(DType t, uint64_t n);

// IEEE half and bfloat16 conversions (round to nearest even).
float f16_to_f32(uint16_t h);
// The same value as f16_to_f32, branch-light and inline for kernels' scale reads: the half's
// exponent and mantissa moved into float position and rescaled by 2^112 (exact for normal and
// subnormal halves); infinities and NaNs keep an all-ones exponent.
inline float f16_to_f32_fast(uint16_t h) {
  const uint32_t em = static_cast<uint32_t>(h & 0x7fffu) << 13;
  float f;
  std::memcpy(&f, &em, 4);
  f *= 0x1p112f;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((h & 0x7c00u) == 0x7c00u) u = 0x7f800000u | em;
  u |= static_cast<uint32_t>(h & 0x8000u) << 16;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t f32_to_f16(float f);
inline float bf16_to_f32(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t f32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// Converts n elements of a plain type (F32/F16/BF16) to f32.
void convert_row_to_f32(DType t, const void* src, float* dst, int64_t n);

}  // namespace brisk
