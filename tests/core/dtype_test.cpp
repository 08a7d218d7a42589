#include <gtest/gtest.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cmath>
#include <cstring>

#include "core/dtype.h"
#include "ops/cpu.h"

namespace brisk {
namespace {

TEST(DType, InfoMatchesGgufBlockLayouts) {
  EXPECT_EQ(dtype_info(DType::Q4_0).block_bytes, 18u);
  EXPECT_EQ(dtype_info(DType::Q4_K).block_bytes, 144u);
  EXPECT_EQ(dtype_info(DType::Q6_K).block_elems, 256u);
  EXPECT_EQ(dtype_info(DType::BF16).block_bytes, 2u);
  EXPECT_FALSE(dtype_info(uint32_t{4}).has_value());  // Q4_2 was removed from the format
  EXPECT_EQ(*dtype_row_bytes(DType::Q8_0, 64), 68u);
  EXPECT_FALSE(dtype_row_bytes(DType::Q8_0, 33).has_value());
  EXPECT_EQ(*dtype_from_name("q4_k"), DType::Q4_K);
}

// The hardware's conversions: F16C on x86, FCVT (through __fp16) on Arm.
#if defined(__x86_64__)
__attribute__((target("f16c"))) float hw_f16_to_f32(uint16_t h) {
  return _cvtsh_ss(h);
}
__attribute__((target("f16c"))) uint16_t hw_f32_to_f16(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
bool hw_halves() {
  return cpu_features().f16c;
}
#elif defined(__aarch64__)
float hw_f16_to_f32(uint16_t h) {
  __fp16 v;
  std::memcpy(&v, &h, 2);
  return static_cast<float>(v);
}
uint16_t hw_f32_to_f16(float f) {
  const __fp16 v = static_cast<__fp16>(f);
  uint16_t h;
  std::memcpy(&h, &v, 2);
  return h;
}
bool hw_halves() {
  return true;
}
#else
float hw_f16_to_f32(uint16_t) {
  return 0;
}
uint16_t hw_f32_to_f16(float) {
  return 0;
}
bool hw_halves() {
  return false;
}
#endif

TEST(DType, HalfConversionsMatchHardwareExhaustively) {
  if (!hw_halves()) GTEST_SKIP() << "no hardware half conversions to compare against";
  for (uint32_t h = 0; h < 65536; ++h) {
    const float a = f16_to_f32(static_cast<uint16_t>(h)),
                b = hw_f16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(b)) {
      ASSERT_TRUE(std::isnan(a));
      continue;
    }
    ASSERT_EQ(std::memcmp(&a, &b, 4), 0) << h;
  }
  // f32 -> f16 rounding on a dense sweep of bit patterns, subnormals and overflow included.
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 4099) {
    const uint32_t bits = static_cast<uint32_t>(u);
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16(f), hw_f32_to_f16(f)) << std::hex << bits;
  }
}

TEST(DType, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  float f;
  uint32_t u = 0x3f808000;  // exactly halfway between 0x3f80 and 0x3f81: even wins
  std::memcpy(&f, &u, 4);
  EXPECT_EQ(f32_to_bf16(f), 0x3f80);
  u = 0x3f818000;  // halfway, odd below: rounds up
  std::memcpy(&f, &u, 4);
  EXPECT_EQ(f32_to_bf16(f), 0x3f82);
  EXPECT_EQ(bf16_to_f32(0x4049), 3.140625f);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
}

}  // namespace
}  // namespace brisk

namespace brisk {
namespace {
// The kernels' inline half conversion agrees with the reference on every one of the 65536 halves.
TEST(DType, FastHalfConversionIsExactForEveryHalf) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float a = f16_to_f32(static_cast<uint16_t>(h)),
                b = f16_to_f32_fast(static_cast<uint16_t>(h));
    if (std::isnan(a)) {
      ASSERT_TRUE(std::isnan(b)) << h;
    } else {
      ASSERT_EQ(a, b) << h;
      ASSERT_EQ(std::signbit(a), std::signbit(b)) << h;
    }
  }
}
}  // namespace
}  // namespace brisk
