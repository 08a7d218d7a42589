// The string formats JSON Schema names and people send (date, time, date-time, duration, uuid,
// ipv4, ipv6, hostname, email, uri, uri-reference, iri, iri-reference, uri-template, json-pointer,
// relative-json-pointer, regex, and OpenAPI's byte) as regular expressions over the text inside
// the quotes. A format no JSON Schema draft defines (int32, color, path, a tool's own names) is an
// annotation, as the drafts say unknown formats are: it constrains nothing.
#pragma once

#include <string>
#include <string_view>

#include "grammar/grammar.h"

namespace brisk::grammar {

// The pattern a format's values match whole, or null for a format that cannot be enforced.
const char* format_regex(std::string_view format);
// Whether a format constrains nothing: one no JSON Schema draft defines.
bool format_is_annotation(std::string_view format);
std::string format_names();  // "date, time, ..."
// A rule of g matching exactly the format's values; an unknown format is an error naming it.
int32_t add_format(Grammar& g, std::string_view format);

}  // namespace brisk::grammar
