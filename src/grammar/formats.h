// The string formats JSON Schema names and people send (date, time, date-time, uuid, ipv4, ipv6,
// hostname, email, uri) as regular expressions over the text inside the quotes.
#pragma once

#include <string>
#include <string_view>

#include "grammar/grammar.h"

namespace brisk::grammar {

// The pattern a format's values match whole, or null for a format that cannot be enforced.
const char* format_regex(std::string_view format);
std::string format_names();  // "date, time, ..."
// A rule of g matching exactly the format's values; an unknown format is an error naming it.
int32_t add_format(Grammar& g, std::string_view format);

}  // namespace brisk::grammar
