// String operations with JavaScript's meaning (the reference renderer's): trim's notion of
// whitespace, Unicode upper/lower case, title case by ASCII word boundaries, lengths and indices
// in characters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace brisk::jinja {

std::string js_trim(const std::string& s, bool left = true, bool right = true);
std::string js_upper(const std::string& s);
std::string js_lower(const std::string& s);
// Python's str.title(): a cased character after an uncased one in title case, the other cased
// ones in lower case ("straße" -> "Straße").
std::string py_title(const std::string& s);
// Python's str.capitalize(): the first character in title case, the rest in lower case.
std::string py_capitalize(const std::string& s);
std::vector<std::string> utf8_chars(const std::string& s);
// Length in code points, as Python counts.
int64_t char_length(const std::string& s);
// Where `needle` first occurs in `hay` at or after `from`, in linear time; npos if nowhere.
size_t find_in(const std::string& hay, const std::string& needle, size_t from = 0);
// Python's str.split: on runs of whitespace when sep is null. Throws past max_pieces pieces.
std::vector<std::string> py_split(const std::string& s, const std::string* sep, int64_t maxsplit,
                                  size_t max_pieces = SIZE_MAX);
// Throws rather than make a result longer than max_bytes.
std::string replace_all(const std::string& s, const std::string& from, const std::string& to,
                        int64_t count, size_t max_bytes = SIZE_MAX);

}  // namespace brisk::jinja
