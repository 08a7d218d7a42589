#include "tokenizer/unicode.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

namespace brisk {

std::vector<uint32_t> utf8_to_cpts(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  size_t i = 0;
  while (i < s.size()) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n =
        utf8proc_iterate(p + i, static_cast<utf8proc_ssize_t>(s.size() - i), &cp);
    if (n <= 0) {
      out.push_back(0xFFFD);
      ++i;
    } else {
      out.push_back(static_cast<uint32_t>(cp));
      i += static_cast<size_t>(n);
    }
  }
  return out;
}

namespace {

// Length of the well-formed sequence at s[i], or 0 with `bad` set to the length of its maximal
// subpart (the bytes one U+FFFD replaces).
size_t utf8_sequence(std::string_view s, size_t i, size_t& bad) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(i);
  bad = 1;
  if (c < 0x80) return 1;
  size_t need = 0;
  uint8_t lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  for (size_t k = 1; k <= need; ++k) {
    if (i + k >= s.size()) return 0;
    const uint8_t x = b(i + k);
    if (x < (k == 1 ? lo : 0x80) || x > (k == 1 ? hi : 0xBF)) return 0;
    bad = k + 1;
  }
  return need + 1;
}

}  // namespace

std::string utf8_sanitize(std::string_view s) {
  size_t i = 0, bad = 0;
  while (i < s.size()) {
    const size_t n = utf8_sequence(s, i, bad);
    if (n == 0) break;
    i += n;
  }
  if (i == s.size()) return std::string(s);
  std::string out(s.substr(0, i));
  while (i < s.size()) {
    const size_t n = utf8_sequence(s, i, bad);
    if (n) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      i += std::min(bad, s.size() - i);
    }
  }
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string cpts_to_utf8(const std::vector<uint32_t>& cps) {
  std::string out;
  out.reserve(cps.size());
  for (uint32_t c : cps) append_utf8(out, c);
  return out;
}

NormForm parse_norm_form(std::string_view name) {
  std::string n(name);
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n == "nfc") return NormForm::NFC;
  if (n == "nfd") return NormForm::NFD;
  if (n == "nfkc") return NormForm::NFKC;
  if (n == "nfkd") return NormForm::NFKD;
  return NormForm::None;
}

std::string normalize(std::string_view s, NormForm form) {
  if (form == NormForm::None || s.empty()) return std::string(s);
  // ASCII is already in every normalization form.
  bool ascii = true;
  for (char c : s) ascii &= static_cast<unsigned char>(c) < 0x80;
  if (ascii) return std::string(s);
  int opt = UTF8PROC_STABLE;
  switch (form) {
    case NormForm::NFC:
      opt |= UTF8PROC_COMPOSE;
      break;
    case NormForm::NFD:
      opt |= UTF8PROC_DECOMPOSE;
      break;
    case NormForm::NFKC:
      opt |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
      break;
    case NormForm::NFKD:
      opt |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
      break;
    case NormForm::None:
      break;
  }
  utf8proc_uint8_t* res = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                          static_cast<utf8proc_ssize_t>(s.size()), &res,
                                          static_cast<utf8proc_option_t>(opt));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(res, &std::free);
  if (n < 0) return std::string(s);
  return std::string(reinterpret_cast<const char*>(res), static_cast<size_t>(n));
}

namespace {
utf8proc_category_t category(uint32_t cp) {
  return cp > 0x10FFFF ? UTF8PROC_CATEGORY_CN
                       : utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}
}  // namespace

bool cpt_is_whitespace(uint32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool cpt_is_punctuation(uint32_t cp) {
  const auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

bool cpt_is_control(uint32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF || c == UTF8PROC_CATEGORY_CN ||
         c == UTF8PROC_CATEGORY_CO;
}

bool cpt_is_mark_nonspacing(uint32_t cp) {
  return category(cp) == UTF8PROC_CATEGORY_MN;
}

bool cpt_is_cjk_ideograph(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

uint32_t cpt_to_lower(uint32_t cp) {
  if (cp > 0x10FFFF) return cp;
  return static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
}

}  // namespace brisk
