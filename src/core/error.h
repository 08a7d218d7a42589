// brisk reports every failure on untrusted input (model files, tokenizers, requests, flags) as an
// Error whose message is one line naming the source and the problem.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace brisk {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

// Checked size arithmetic for sizes read from files: overflow is an error, not a wrap.
// `what` says where, e.g. "model.gguf: tensor 'x' size".
inline uint64_t checked_mul(uint64_t a, uint64_t b, std::string_view what) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail("{}: size overflow", what);
  return r;
}
inline uint64_t checked_add(uint64_t a, uint64_t b, std::string_view what) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail("{}: size overflow", what);
  return r;
}

}  // namespace brisk
