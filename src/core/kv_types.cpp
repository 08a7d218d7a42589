#include "core/kv_types.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/dtype.h"
#include "core/error.h"

namespace brisk {

const char* kv_type_name(KvType t) {
  switch (t) {
    case KvType::F32:
      return "f32";
    case KvType::F16:
      return "f16";
    case KvType::BF16:
      return "bf16";
    case KvType::Q8:
      return "q8_0";
  }
  return "?";
}

KvType parse_kv_type(const std::string& s) {
  if (s == "f32") return KvType::F32;
  if (s == "f16") return KvType::F16;
  if (s == "bf16") return KvType::BF16;
  if (s == "q8_0" || s == "q8") return KvType::Q8;
  fail("unknown KV cache type '{}' (expected f32, f16, bf16 or q8_0)", s);
}

size_t kv_elem_bytes(KvType t) {
  switch (t) {
    case KvType::F32:
      return 4;
    case KvType::F16:
    case KvType::BF16:
      return 2;
    case KvType::Q8:
      return 1;
  }
  return 4;
}

void store_kv_row(KvType t, const float* src, void* dst, int n_head, int head_dim, float* scales) {
  const int64_t n = static_cast<int64_t>(n_head) * head_dim;
  switch (t) {
    case KvType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      return;
    case KvType::F16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = f32_to_f16(src[i]);
      return;
    case KvType::BF16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = f32_to_bf16(src[i]);
      return;
    case KvType::Q8:
      for (int h = 0; h < n_head; ++h) {
        const float* x = src + static_cast<int64_t>(h) * head_dim;
        int8_t* q = static_cast<int8_t*>(dst) + static_cast<int64_t>(h) * head_dim;
        float amax = 0;
        for (int d = 0; d < head_dim; ++d) amax = std::max(amax, std::fabs(x[d]));
        const float scale = amax / 127.0f;
        const float inv = scale > 0 ? 1.0f / scale : 0.0f;
        for (int d = 0; d < head_dim; ++d)
          q[d] = static_cast<int8_t>(std::clamp(std::lrintf(x[d] * inv), -127L, 127L));
        scales[h] = scale;
      }
      return;
  }
}

float load_kv_elem(KvType t, const void* row, int64_t i) {
  switch (t) {
    case KvType::F32:
      return static_cast<const float*>(row)[i];
    case KvType::F16:
      return f16_to_f32(static_cast<const uint16_t*>(row)[i]);
    case KvType::BF16:
      return bf16_to_f32(static_cast<const uint16_t*>(row)[i]);
    case KvType::Q8:
      return static_cast<float>(static_cast<const int8_t*>(row)[i]);
  }
  return 0.0f;
}

}  // namespace brisk
