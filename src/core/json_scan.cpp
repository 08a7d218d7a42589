#include "core/json_scan.h"

#include <cctype>

namespace brisk {

namespace {

// A string at the top: a control character in it makes the value Invalid.
JsonEnd scan_string(std::string_view s, JsonScanState& st) {
  for (size_t i = st.at; i < s.size(); ++i) {
    if (st.escaped) {
      st.escaped = false;
    } else if (s[i] == '\\') {
      st.escaped = true;
    } else if (s[i] == '"') {
      return {JsonSpan::Complete, i + 1};
    } else if (static_cast<unsigned char>(s[i]) < 0x20) {
      return {JsonSpan::Invalid, i};
    }
  }
  return {JsonSpan::Incomplete, s.size()};
}

JsonEnd scan_container(std::string_view s, size_t max_nesting, JsonScanState& st) {
  for (size_t i = st.at; i < s.size(); ++i) {
    const char d = s[i];
    if (st.in_string) {
      if (st.escaped)
        st.escaped = false;
      else if (d == '\\')
        st.escaped = true;
      else if (d == '"')
        st.in_string = false;
      continue;
    }
    if (d == '"') {
      st.in_string = true;
    } else if (d == '{' || d == '[') {
      if (st.closers.size() >= max_nesting) return {JsonSpan::Invalid, i, true};
      st.closers.push_back(d == '{' ? '}' : ']');
    } else if (d == '}' || d == ']') {
      if (st.closers.empty() || st.closers.back() != d) return {JsonSpan::Invalid, i};
      st.closers.pop_back();
      if (st.closers.empty()) return {JsonSpan::Complete, i + 1};
    }
  }
  return {JsonSpan::Incomplete, s.size()};
}

}  // namespace

JsonEnd json_value_end(std::string_view s, size_t pos, size_t max_nesting) {
  JsonScanState fresh;
  return json_value_end(s, pos, max_nesting, fresh);
}

JsonEnd json_value_end(std::string_view s, size_t pos, size_t max_nesting, JsonScanState& state) {
  if (pos >= s.size()) return {JsonSpan::Incomplete, pos};
  const char c = s[pos];
  if (c == '"' || c == '{' || c == '[') {
    // A scan of another value leaves the kept one alone: a reader scans the values before the
    // one still being written (a call's name before its arguments) on every read.
    const bool resume = state.start == pos && state.at <= s.size();
    JsonScanState fresh;
    JsonScanState& st = resume ? state : fresh;
    if (!resume) st.at = c == '"' ? pos + 1 : pos;
    const JsonEnd e = c == '"' ? scan_string(s, st) : scan_container(s, max_nesting, st);
    if (e.state == JsonSpan::Incomplete) {
      st.start = pos;
      st.at = s.size();
      if (!resume) state = std::move(fresh);
    } else if (resume) {
      state = JsonScanState{};
    }
    return e;
  }
  size_t i = pos;
  while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                          s[i] == '+' || s[i] == '-'))
    ++i;
  if (i == pos) return {JsonSpan::Invalid, pos};
  return {i == s.size() ? JsonSpan::Incomplete : JsonSpan::Complete, i};
}

}  // namespace brisk
