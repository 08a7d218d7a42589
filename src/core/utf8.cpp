#include "core/utf8.h"

namespace brisk {

bool utf8_decode(std::string_view s, size_t& pos, uint32_t& cp) {
  if (pos >= s.size()) return false;
  const auto c = static_cast<unsigned char>(s[pos]);
  if (c < 0x80) {
    cp = c;
    ++pos;
    return true;
  }
  size_t n;
  uint32_t v;
  if ((c & 0xe0) == 0xc0) {
    n = 2;
    v = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    v = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4;
    v = c & 0x07;
  } else {
    return false;
  }
  if (pos + n > s.size()) return false;
  for (size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[pos + k]);
    if ((cc & 0xc0) != 0x80) return false;
    v = (v << 6) | (cc & 0x3f);
  }
  if ((n == 2 && v < 0x80) || (n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || v > 0x10ffff ||
      (v >= 0xd800 && v <= 0xdfff))
    return false;
  cp = v;
  pos += n;
  return true;
}

bool utf8_valid(std::string_view s) {
  size_t i = 0;
  uint32_t cp;
  while (i < s.size())
    if (!utf8_decode(s, i, cp)) return false;
  return true;
}

size_t utf8_complete_prefix(std::string_view s) {
  // Look back at most 3 bytes for a lead byte whose sequence is not finished yet.
  const size_t n = s.size();
  for (size_t back = 1; back <= 4 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(s[n - back]);
    if ((c & 0xc0) == 0x80) continue;  // continuation byte: keep looking for the lead
    const size_t need = utf8_len(c);
    return need > back ? n - back : n;
  }
  return n;
}

}  // namespace brisk
