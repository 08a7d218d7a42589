// How the KV cache stores keys and values: the element types, a row's encoding, and spans of
// stored rows, which the attention kernels (ops/attention.h) read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace brisk {

enum class KvType : uint8_t { F32, F16, BF16, Q8 };

const char* kv_type_name(KvType t);
// Parses f32, f16, bf16, q8_0 (also q8); throws naming the value otherwise.
KvType parse_kv_type(const std::string& s);
size_t kv_elem_bytes(KvType t);

// K and V rows of positions [pos0, pos0 + n), `kv_stride` elements apart; each row holds all KV
// heads. For Q8, k_scale/v_scale hold n_head_kv scales per position (a value is scale * int8);
// other types leave them null.
struct KvSpan {
  const void* k;
  const void* v;
  int64_t pos0;
  int64_t n;
  const float* k_scale = nullptr;
  const float* v_scale = nullptr;
};

// Stores a row of n_head * head_dim floats in type t; for Q8 also one scale per head into `scales`
// (each head's values over 127 steps of its largest magnitude).
void store_kv_row(KvType t, const float* src, void* dst, int n_head, int head_dim,
                  float* scales = nullptr);
// Reads element i of a row of type t (Q8 gives the raw int8 value).
float load_kv_elem(KvType t, const void* row, int64_t i);

}  // namespace brisk
