// UTF-8 helpers shared by the tokenizers, the streaming detokenizer and the file loaders.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace brisk {

// Length of the UTF-8 sequence that starts with byte c (1 for an invalid lead byte).
inline size_t utf8_len(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c & 0xe0) == 0xc0) return 2;
  if ((c & 0xf0) == 0xe0) return 3;
  if ((c & 0xf8) == 0xf0) return 4;
  return 1;
}

// The code point at s[pos], advancing pos past it; false (pos unchanged) for a sequence that is not
// well-formed UTF-8 (truncated, overlong, a surrogate, beyond U+10FFFF).
bool utf8_decode(std::string_view s, size_t& pos, uint32_t& cp);

bool utf8_valid(std::string_view s);

// Length of the longest prefix of s that does not end inside an incomplete UTF-8 sequence.
size_t utf8_complete_prefix(std::string_view s);

}  // namespace brisk
