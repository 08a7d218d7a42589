#include "core/dtype.h"

#include <array>
#include <cctype>

#include "core/error.h"

namespace brisk {
namespace {

constexpr std::array kTypes = {
    DTypeInfo{DType::F32, "F32", 1, 4},
    DTypeInfo{DType::F16, "F16", 1, 2},
    DTypeInfo{DType::Q4_0, "Q4_0", 32, 18},
    DTypeInfo{DType::Q4_1, "Q4_1", 32, 20},
    DTypeInfo{DType::Q5_0, "Q5_0", 32, 22},
    DTypeInfo{DType::Q5_1, "Q5_1", 32, 24},
    DTypeInfo{DType::Q8_0, "Q8_0", 32, 34},
    DTypeInfo{DType::Q8_1, "Q8_1", 32, 36},
    DTypeInfo{DType::Q2_K, "Q2_K", 256, 84},
    DTypeInfo{DType::Q3_K, "Q3_K", 256, 110},
    DTypeInfo{DType::Q4_K, "Q4_K", 256, 144},
    DTypeInfo{DType::Q5_K, "Q5_K", 256, 176},
    DTypeInfo{DType::Q6_K, "Q6_K", 256, 210},
    DTypeInfo{DType::Q8_K, "Q8_K", 256, 292},
    DTypeInfo{DType::IQ2_XXS, "IQ2_XXS", 256, 66},
    DTypeInfo{DType::IQ2_XS, "IQ2_XS", 256, 74},
    DTypeInfo{DType::IQ3_XXS, "IQ3_XXS", 256, 98},
    DTypeInfo{DType::IQ1_S, "IQ1_S", 256, 50},
    DTypeInfo{DType::IQ4_NL, "IQ4_NL", 32, 18},
    DTypeInfo{DType::IQ3_S, "IQ3_S", 256, 110},
    DTypeInfo{DType::IQ2_S, "IQ2_S", 256, 82},
    DTypeInfo{DType::IQ4_XS, "IQ4_XS", 256, 136},
    DTypeInfo{DType::I8, "I8", 1, 1},
    DTypeInfo{DType::I16, "I16", 1, 2},
    DTypeInfo{DType::I32, "I32", 1, 4},
    DTypeInfo{DType::I64, "I64", 1, 8},
    DTypeInfo{DType::F64, "F64", 1, 8},
    DTypeInfo{DType::IQ1_M, "IQ1_M", 256, 56},
    DTypeInfo{DType::BF16, "BF16", 1, 2},
    DTypeInfo{DType::TQ1_0, "TQ1_0", 256, 54},
    DTypeInfo{DType::TQ2_0, "TQ2_0", 256, 66},
    DTypeInfo{DType::MXFP4, "MXFP4", 32, 17},
};

}  // namespace

std::optional<DTypeInfo> dtype_info(uint32_t id) {
  for (const auto& t : kTypes)
    if (static_cast<uint32_t>(t.type) == id) return t;
  return std::nullopt;
}

const DTypeInfo& dtype_info(DType t) {
  for (const auto& i : kTypes)
    if (i.type == t) return i;
  fail("unknown tensor type id {}", static_cast<uint32_t>(t));
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& t : kTypes) {
    std::string_view n = t.name;
    if (n.size() != name.size()) continue;
    bool eq = true;
    for (size_t i = 0; i < n.size(); ++i)
      if (std::toupper(static_cast<unsigned char>(name[i])) != n[i]) eq = false;
    if (eq) return t.type;
  }
  return std::nullopt;
}

std::optional<uint64_t> dtype_row_bytes(DType t, uint64_t n) {
  const auto& i = dtype_info(t);
  if (n % i.block_elems != 0) return std::nullopt;
  uint64_t r;
  if (__builtin_mul_overflow(n / i.block_elems, uint64_t{i.block_bytes}, &r)) return std::nullopt;
  return r;
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t u;
  if (exp == 0x1f) {
    u = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    u = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    u = sign;
  } else {  // subnormal: normalize
    exp = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    u = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t f32_to_f16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (a >= 0x47800000u) return sign | 0x7c00u;  // >= 65536 or inf
  if (a < 0x38800000u) {                        // subnormal or zero in half precision
    if (a < 0x33000000u) return sign;  // rounds to zero (below half of the smallest subnormal)
    const uint32_t e = a >> 23;
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // half subnormal = m * 2^(e-126); shift is 14..24
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = ((a >> 13) - (112u << 10));
  const uint32_t rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;  // may carry into exponent: correct
  return static_cast<uint16_t>(sign | r);
}

void convert_row_to_f32(DType t, const void* src, float* dst, int64_t n) {
  switch (t) {
    case DType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      return;
    case DType::F16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(s[i]);
      return;
    }
    case DType::BF16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
      return;
    }
    default:
      fail(
          "tensor type {} is not supported yet (quantized weights arrive with the quantization "
          "work)",
          dtype_name(t));
  }
}

}  // namespace brisk
