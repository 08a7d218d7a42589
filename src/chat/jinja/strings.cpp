#include "chat/jinja/strings.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <stdexcept>

#include "tokenizer/unicode.h"

namespace brisk::jinja {
namespace {

bool js_space(uint32_t cp) {
  return cpt_is_whitespace(cp) || cp == 0xFEFF;
}

// Unicode's unconditional SpecialCasing for upper case: the characters whose capital is more than
// one code point (JavaScript's toUpperCase, which the reference renderer calls). Generated from
// node 22 (Unicode 17): every code point whose String.prototype.toUpperCase() has two or more.
struct SpecialCase {
  uint32_t cp;
  uint32_t to[3];
};
constexpr SpecialCase kSpecialUpper[] = {
    {0xDF, {0x53, 0x53}},
    {0x149, {0x2BC, 0x4E}},
    {0x1F0, {0x4A, 0x30C}},
    {0x390, {0x399, 0x308, 0x301}},
    {0x3B0, {0x3A5, 0x308, 0x301}},
    {0x587, {0x535, 0x552}},
    {0x1E96, {0x48, 0x331}},
    {0x1E97, {0x54, 0x308}},
    {0x1E98, {0x57, 0x30A}},
    {0x1E99, {0x59, 0x30A}},
    {0x1E9A, {0x41, 0x2BE}},
    {0x1F50, {0x3A5, 0x313}},
    {0x1F52, {0x3A5, 0x313, 0x300}},
    {0x1F54, {0x3A5, 0x313, 0x301}},
    {0x1F56, {0x3A5, 0x313, 0x342}},
    {0x1F80, {0x1F08, 0x399}},
    {0x1F81, {0x1F09, 0x399}},
    {0x1F82, {0x1F0A, 0x399}},
    {0x1F83, {0x1F0B, 0x399}},
    {0x1F84, {0x1F0C, 0x399}},
    {0x1F85, {0x1F0D, 0x399}},
    {0x1F86, {0x1F0E, 0x399}},
    {0x1F87, {0x1F0F, 0x399}},
    {0x1F88, {0x1F08, 0x399}},
    {0x1F89, {0x1F09, 0x399}},
    {0x1F8A, {0x1F0A, 0x399}},
    {0x1F8B, {0x1F0B, 0x399}},
    {0x1F8C, {0x1F0C, 0x399}},
    {0x1F8D, {0x1F0D, 0x399}},
    {0x1F8E, {0x1F0E, 0x399}},
    {0x1F8F, {0x1F0F, 0x399}},
    {0x1F90, {0x1F28, 0x399}},
    {0x1F91, {0x1F29, 0x399}},
    {0x1F92, {0x1F2A, 0x399}},
    {0x1F93, {0x1F2B, 0x399}},
    {0x1F94, {0x1F2C, 0x399}},
    {0x1F95, {0x1F2D, 0x399}},
    {0x1F96, {0x1F2E, 0x399}},
    {0x1F97, {0x1F2F, 0x399}},
    {0x1F98, {0x1F28, 0x399}},
    {0x1F99, {0x1F29, 0x399}},
    {0x1F9A, {0x1F2A, 0x399}},
    {0x1F9B, {0x1F2B, 0x399}},
    {0x1F9C, {0x1F2C, 0x399}},
    {0x1F9D, {0x1F2D, 0x399}},
    {0x1F9E, {0x1F2E, 0x399}},
    {0x1F9F, {0x1F2F, 0x399}},
    {0x1FA0, {0x1F68, 0x399}},
    {0x1FA1, {0x1F69, 0x399}},
    {0x1FA2, {0x1F6A, 0x399}},
    {0x1FA3, {0x1F6B, 0x399}},
    {0x1FA4, {0x1F6C, 0x399}},
    {0x1FA5, {0x1F6D, 0x399}},
    {0x1FA6, {0x1F6E, 0x399}},
    {0x1FA7, {0x1F6F, 0x399}},
    {0x1FA8, {0x1F68, 0x399}},
    {0x1FA9, {0x1F69, 0x399}},
    {0x1FAA, {0x1F6A, 0x399}},
    {0x1FAB, {0x1F6B, 0x399}},
    {0x1FAC, {0x1F6C, 0x399}},
    {0x1FAD, {0x1F6D, 0x399}},
    {0x1FAE, {0x1F6E, 0x399}},
    {0x1FAF, {0x1F6F, 0x399}},
    {0x1FB2, {0x1FBA, 0x399}},
    {0x1FB3, {0x391, 0x399}},
    {0x1FB4, {0x386, 0x399}},
    {0x1FB6, {0x391, 0x342}},
    {0x1FB7, {0x391, 0x342, 0x399}},
    {0x1FBC, {0x391, 0x399}},
    {0x1FC2, {0x1FCA, 0x399}},
    {0x1FC3, {0x397, 0x399}},
    {0x1FC4, {0x389, 0x399}},
    {0x1FC6, {0x397, 0x342}},
    {0x1FC7, {0x397, 0x342, 0x399}},
    {0x1FCC, {0x397, 0x399}},
    {0x1FD2, {0x399, 0x308, 0x300}},
    {0x1FD3, {0x399, 0x308, 0x301}},
    {0x1FD6, {0x399, 0x342}},
    {0x1FD7, {0x399, 0x308, 0x342}},
    {0x1FE2, {0x3A5, 0x308, 0x300}},
    {0x1FE3, {0x3A5, 0x308, 0x301}},
    {0x1FE4, {0x3A1, 0x313}},
    {0x1FE6, {0x3A5, 0x342}},
    {0x1FE7, {0x3A5, 0x308, 0x342}},
    {0x1FF2, {0x1FFA, 0x399}},
    {0x1FF3, {0x3A9, 0x399}},
    {0x1FF4, {0x38F, 0x399}},
    {0x1FF6, {0x3A9, 0x342}},
    {0x1FF7, {0x3A9, 0x342, 0x399}},
    {0x1FFC, {0x3A9, 0x399}},
    {0xFB00, {0x46, 0x46}},
    {0xFB01, {0x46, 0x49}},
    {0xFB02, {0x46, 0x4C}},
    {0xFB03, {0x46, 0x46, 0x49}},
    {0xFB04, {0x46, 0x46, 0x4C}},
    {0xFB05, {0x53, 0x54}},
    {0xFB06, {0x53, 0x54}},
    {0xFB13, {0x544, 0x546}},
    {0xFB14, {0x544, 0x535}},
    {0xFB15, {0x544, 0x53B}},
    {0xFB16, {0x54E, 0x546}},
    {0xFB17, {0x544, 0x53D}},
};

const SpecialCase* special_upper(uint32_t cp) {
  const auto* end = std::end(kSpecialUpper);
  const auto* it = std::lower_bound(std::begin(kSpecialUpper), end, cp,
                                    [](const SpecialCase& c, uint32_t v) { return c.cp < v; });
  return it != end && it->cp == cp ? it : nullptr;
}

bool cased(uint32_t cp) {
  const auto c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT ||
         utf8proc_toupper(static_cast<utf8proc_int32_t>(cp)) != static_cast<utf8proc_int32_t>(cp) ||
         utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)) != static_cast<utf8proc_int32_t>(cp);
}

bool case_ignorable(uint32_t cp) {
  const auto c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_ME || c == UTF8PROC_CATEGORY_CF ||
         c == UTF8PROC_CATEGORY_LM || c == UTF8PROC_CATEGORY_SK || cp == '\'' || cp == '.' ||
         cp == ':' || cp == 0xB7 || cp == 0x2018 || cp == 0x2019 || cp == 0x2024 || cp == 0x2027;
}

// Capital sigma at the end of a word lowers to final sigma (Unicode's Final_Sigma condition):
// a cased letter before it and none after it, looking past case-ignorable characters.
bool final_sigma(const std::vector<uint32_t>& cps, size_t i) {
  size_t b = i;
  while (b > 0 && case_ignorable(cps[b - 1])) --b;
  if (b == 0 || !cased(cps[b - 1])) return false;
  size_t a = i + 1;
  while (a < cps.size() && case_ignorable(cps[a])) ++a;
  return a == cps.size() || !cased(cps[a]);
}

}  // namespace

std::string js_trim(const std::string& s, bool left, bool right) {
  const auto cps = utf8_to_cpts(s);
  size_t b = 0, e = cps.size();
  if (left)
    while (b < e && js_space(cps[b])) ++b;
  if (right)
    while (e > b && js_space(cps[e - 1])) --e;
  return cpts_to_utf8(std::vector<uint32_t>(cps.begin() + static_cast<long>(b),
                                            cps.begin() + static_cast<long>(e)));
}

std::string js_upper(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (uint32_t cp : utf8_to_cpts(s)) {
    if (const SpecialCase* sc = special_upper(cp)) {
      for (uint32_t c : sc->to)
        if (c) append_utf8(out, c);
      continue;
    }
    append_utf8(out, static_cast<uint32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(cp))));
  }
  return out;
}

std::string js_lower(const std::string& s) {
  const auto cps = utf8_to_cpts(s);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    const uint32_t cp = cps[i];
    if (cp == 0x130) {  // İ lowers to i and a combining dot, the one such unconditional mapping
      out += "i\xCC\x87";
    } else if (cp == 0x3A3) {
      append_utf8(out, final_sigma(cps, i) ? 0x3C2 : 0x3C3);
    } else {
      append_utf8(out, static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
    }
  }
  return out;
}

namespace {
// A character's title case: its own mapping where it has one, else its upper case (Python's
// full mapping: "ŉ" -> "ʼN").
std::string title_char(uint32_t cp) {
  const auto t = utf8proc_totitle(static_cast<utf8proc_int32_t>(cp));
  std::string c;
  append_utf8(c, cp);
  if (t == static_cast<utf8proc_int32_t>(cp)) return js_upper(c);
  std::string out;
  append_utf8(out, static_cast<uint32_t>(t));
  return out;
}
}  // namespace

std::string py_title(const std::string& s) {
  std::string out;
  bool after_cased = false;
  for (uint32_t cp : utf8_to_cpts(s)) {
    std::string c;
    append_utf8(c, cp);
    const bool is_cased = cased(cp);
    out += !is_cased ? c : after_cased ? js_lower(c) : title_char(cp);
    after_cased = is_cased;
  }
  return out;
}

std::string py_capitalize(const std::string& s) {
  const std::vector<uint32_t> cps = utf8_to_cpts(s);
  if (cps.empty()) return s;
  std::string first;
  append_utf8(first, cps[0]);
  return title_char(cps[0]) + js_lower(s.substr(first.size()));
}

std::vector<std::string> utf8_chars(const std::string& s) {
  std::vector<std::string> out;
  for (uint32_t cp : utf8_to_cpts(s)) {
    std::string c;
    append_utf8(c, cp);
    out.push_back(std::move(c));
  }
  return out;
}

int64_t char_length(const std::string& s) {
  return static_cast<int64_t>(utf8_to_cpts(s).size());
}

size_t find_in(const std::string& hay, const std::string& needle, size_t from) {
  if (from > hay.size()) return std::string::npos;
  if (needle.empty()) return from;
  // glibc's memmem is linear in the worst case (two-way search), std::string::find is not. It is
  // given windows that overlap by the needle's length less one: sanitizers check the whole range
  // memmem is handed on every call, which made replace() or split() over a long string quadratic.
  const size_t window = std::max<size_t>(size_t{1} << 16, 2 * needle.size());
  size_t at = from;
  while (hay.size() - at >= needle.size()) {
    const size_t len = std::min(window, hay.size() - at);
    const void* p = memmem(hay.data() + at, len, needle.data(), needle.size());
    if (p) return static_cast<size_t>(static_cast<const char*>(p) - hay.data());
    if (len == hay.size() - at) break;
    at += len - needle.size() + 1;
  }
  return std::string::npos;
}

std::vector<std::string> py_split(const std::string& s, const std::string* sep, int64_t maxsplit,
                                  size_t max_pieces) {
  std::vector<std::string> out;
  auto push = [&](std::string piece) {
    if (out.size() >= max_pieces) throw std::runtime_error("split() makes too many pieces");
    out.push_back(std::move(piece));
  };
  if (!sep) {
    const auto cps = utf8_to_cpts(js_trim(s, true, false));
    size_t i = 0;
    while (i < cps.size()) {
      size_t j = i;
      while (j < cps.size() && !js_space(cps[j])) ++j;
      if (maxsplit != -1 && static_cast<int64_t>(out.size()) >= maxsplit) {
        push(cpts_to_utf8(std::vector<uint32_t>(cps.begin() + static_cast<long>(i), cps.end())));
        return out;
      }
      push(cpts_to_utf8(std::vector<uint32_t>(cps.begin() + static_cast<long>(i),
                                              cps.begin() + static_cast<long>(j))));
      i = j;
      while (i < cps.size() && js_space(cps[i])) ++i;
    }
    return out;
  }
  if (sep->empty()) throw std::runtime_error("empty separator");
  size_t p = 0;
  for (int64_t made = 0; maxsplit == -1 || made < maxsplit; ++made) {
    const size_t q = find_in(s, *sep, p);
    if (q == std::string::npos) break;
    push(s.substr(p, q - p));
    p = q + sep->size();
  }
  push(s.substr(p));
  return out;
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to,
                        int64_t count, size_t max_bytes) {
  if (count == 0) return s;
  int64_t left = count < 0 ? INT64_MAX : count;
  std::string out;
  auto grow = [&](const std::string& piece) {
    if (out.size() + piece.size() > max_bytes)
      throw std::runtime_error("replace() makes a string too large for a template");
    out += piece;
  };
  if (from.empty()) {  // inserts between characters, at both ends too
    const auto chars = utf8_chars(s);
    for (size_t k = 0; k <= chars.size(); ++k) {
      if (left > 0) {
        grow(to);
        --left;
      }
      if (k < chars.size()) grow(chars[k]);
    }
    return out;
  }
  size_t p = 0;
  while (left > 0) {
    const size_t q = find_in(s, from, p);
    if (q == std::string::npos) break;
    grow(s.substr(p, q - p));
    grow(to);
    p = q + from.size();
    --left;
  }
  grow(s.substr(p));
  return out;
}

}  // namespace brisk::jinja
