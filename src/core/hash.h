// FNV-1a (64-bit): a stable hash of bytes, the same in every process and build (the web assets'
// ETags, the check that every rank of a split model loaded the same file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace brisk {

constexpr uint64_t kFnv1aOffset = 1469598103934665603ull;

// Continues hash h over n bytes at p.
inline uint64_t fnv1a(const void* p, size_t n, uint64_t h = kFnv1aOffset) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

// A running FNV-1a over a sequence of fields; strings carry their length, so ("ab", "c") and
// ("a", "bc") differ.
struct Digest {
  uint64_t h = kFnv1aOffset;
  void add(const void* p, size_t n) { h = fnv1a(p, n, h); }
  void add(std::string_view s) { add(s.data(), s.size()), add(s.size()); }
  template <class T>
  requires std::is_trivially_copyable_v<T>
  void add(const T& v) { add(&v, sizeof v); }
};

}  // namespace brisk
