#include "tokenizer/jinja/strings.h"

#include <utf8proc.h>

#include <stdexcept>

#include "tokenizer/unicode.h"

namespace brisk::jinja {
namespace {

bool js_space(uint32_t cp) {
  return cpt_is_whitespace(cp) || cp == 0xFEFF;
}
bool ascii_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
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
  for (uint32_t cp : utf8_to_cpts(s)) {
    if (cp == 0xDF) {  // ß has no one-character capital
      out += "SS";
      continue;
    }
    append_utf8(out, static_cast<uint32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(cp))));
  }
  return out;
}

std::string js_lower(const std::string& s) {
  std::string out;
  for (uint32_t cp : utf8_to_cpts(s)) append_utf8(out, cpt_to_lower(cp));
  return out;
}

std::string js_title(const std::string& s) {
  std::string out = s;
  for (size_t i = 0; i < out.size(); ++i)
    if (ascii_word(out[i]) && (i == 0 || !ascii_word(out[i - 1])) && out[i] >= 'a' && out[i] <= 'z')
      out[i] = static_cast<char>(out[i] - 'a' + 'A');
  return out;
}

std::string js_capitalize(const std::string& s) {
  const auto chars = utf8_chars(s);
  if (chars.empty()) return s;
  return js_upper(chars[0]) + s.substr(chars[0].size());
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

int64_t utf16_length(const std::string& s) {
  int64_t n = 0;
  for (uint32_t cp : utf8_to_cpts(s)) n += cp >= 0x10000 ? 2 : 1;
  return n;
}

std::vector<std::string> py_split(const std::string& s, const std::string* sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (!sep) {
    const auto cps = utf8_to_cpts(js_trim(s, true, false));
    size_t i = 0;
    while (i < cps.size()) {
      size_t j = i;
      while (j < cps.size() && !js_space(cps[j])) ++j;
      if (maxsplit != -1 && static_cast<int64_t>(out.size()) >= maxsplit) {
        out.push_back(
            cpts_to_utf8(std::vector<uint32_t>(cps.begin() + static_cast<long>(i), cps.end())));
        return out;
      }
      out.push_back(cpts_to_utf8(std::vector<uint32_t>(cps.begin() + static_cast<long>(i),
                                                       cps.begin() + static_cast<long>(j))));
      i = j;
      while (i < cps.size() && js_space(cps[i])) ++i;
    }
    return out;
  }
  if (sep->empty()) throw std::runtime_error("empty separator");
  size_t p = 0;
  while (true) {
    const size_t q = s.find(*sep, p);
    if (q == std::string::npos) break;
    out.push_back(s.substr(p, q - p));
    p = q + sep->size();
  }
  out.push_back(s.substr(p));
  if (maxsplit != -1 && static_cast<int64_t>(out.size()) > maxsplit) {
    std::string rest = out[static_cast<size_t>(maxsplit)];
    for (size_t k = static_cast<size_t>(maxsplit) + 1; k < out.size(); ++k) rest += *sep + out[k];
    out.resize(static_cast<size_t>(maxsplit));
    out.push_back(rest);
  }
  return out;
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to,
                        int64_t count) {
  if (count == 0) return s;
  int64_t left = count < 0 ? INT64_MAX : count;
  std::string out;
  if (from.empty()) {  // inserts between characters, at both ends too
    const auto chars = utf8_chars(s);
    for (size_t k = 0; k <= chars.size(); ++k) {
      if (left > 0) {
        out += to;
        --left;
      }
      if (k < chars.size()) out += chars[k];
    }
    return out;
  }
  size_t p = 0;
  while (left > 0) {
    const size_t q = s.find(from, p);
    if (q == std::string::npos) break;
    out += s.substr(p, q - p) + to;
    p = q + from.size();
    --left;
  }
  return out + s.substr(p);
}

}  // namespace brisk::jinja
