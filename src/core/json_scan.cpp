#include "core/json_scan.h"

#include <cctype>
#include <string>

namespace brisk {

JsonEnd json_value_end(std::string_view s, size_t pos, size_t max_nesting) {
  if (pos >= s.size()) return {JsonSpan::Incomplete, pos};
  const char c = s[pos];
  if (c == '"') {
    for (size_t i = pos + 1; i < s.size(); ++i) {
      if (s[i] == '\\') {
        ++i;
      } else if (s[i] == '"') {
        return {JsonSpan::Complete, i + 1};
      } else if (static_cast<unsigned char>(s[i]) < 0x20) {
        return {JsonSpan::Invalid, i};
      }
    }
    return {JsonSpan::Incomplete, s.size()};
  }
  if (c == '{' || c == '[') {
    std::string closers;
    bool in_str = false, esc = false;
    for (size_t i = pos; i < s.size(); ++i) {
      const char d = s[i];
      if (in_str) {
        if (esc)
          esc = false;
        else if (d == '\\')
          esc = true;
        else if (d == '"')
          in_str = false;
        continue;
      }
      if (d == '"') {
        in_str = true;
      } else if (d == '{' || d == '[') {
        if (closers.size() >= max_nesting) return {JsonSpan::Invalid, i, true};
        closers.push_back(d == '{' ? '}' : ']');
      } else if (d == '}' || d == ']') {
        if (closers.empty() || closers.back() != d) return {JsonSpan::Invalid, i};
        closers.pop_back();
        if (closers.empty()) return {JsonSpan::Complete, i + 1};
      }
    }
    return {JsonSpan::Incomplete, s.size()};
  }
  size_t i = pos;
  while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                          s[i] == '+' || s[i] == '-'))
    ++i;
  if (i == pos) return {JsonSpan::Invalid, pos};
  return {i == s.size() ? JsonSpan::Incomplete : JsonSpan::Complete, i};
}

}  // namespace brisk
