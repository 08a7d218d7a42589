#include "grammar/formats.h"

#include <array>
#include <string>

#include "core/error.h"

namespace brisk::grammar {
namespace {

// RFC 3339's full-date, with each month's days and February 29 in leap years only; years from
// 0001 (year 0 is RFC 3339's but not every validator's, Python's for one).
#define YEAR "(\\d{3}[1-9]|\\d\\d[1-9]0|\\d[1-9]00|[1-9]000)"
#define DATE                                                                                       \
  "(" YEAR "-(0[13578]|1[02])-(0[1-9]|[12]\\d|3[01])|" YEAR                                        \
  "-(0[469]|11)-(0[1-9]|[12]\\d|30)|" YEAR                                                         \
  "-02-(0[1-9]|1\\d|2[0-8])|(\\d\\d(0[48]|[2468][048]|[13579][26])|([2468][048]|[13579][26]|0[48]" \
  ")"                                                                                              \
  "00)-02-29)"
// RFC 3339's full-time: a leap second allowed, Z or an offset, fractions to nanoseconds (any
// length is RFC 3339's; a bound keeps a model from padding one forever).
#define TIME \
  "([01]\\d|2[0-3]):[0-5]\\d:([0-5]\\d|60)(\\.\\d{1,9})?([Zz]|[+-]([01]\\d|2[0-3]):[0-5]\\d)"
#define OCTET "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)"
#define IPV4 OCTET "(\\." OCTET "){3}"
#define H16 "[0-9A-Fa-f]{1,4}"
// RFC 4291's text forms: eight groups, or fewer around one "::", the last 32 bits maybe dotted.
#define IPV6                                                                                       \
  "(" H16 ":){7}" H16 "|(" H16 ":){6}" IPV4 "|::(" H16 ":){0,5}(" H16 "|" IPV4 ")?|" H16 "::(" H16 \
  ":){0,4}(" H16 "|" IPV4 ")?|(" H16 ":)" H16 "::(" H16 ":){0,3}(" H16 "|" IPV4 ")?|(" H16         \
  ":){2}" H16 "::(" H16 ":){0,2}(" H16 "|" IPV4 ")?|(" H16 ":){3}" H16 "::(" H16 ":)?(" H16        \
  "|" IPV4 ")?|(" H16 ":){4}" H16 "::(" H16 "|" IPV4 ")?|(" H16 ":){5}" H16 "::(" H16 ")?|(" H16   \
  ":){6}" H16 "::"
// RFC 3986's grammar, exactly (a validator parses URIs by it): characters as classes (the '-'
// last in each), percent-escapes, the authority with an IP literal, userinfo and port.
#define CHARS_UNRESERVED_SUB "A-Za-z0-9._~!$&'()*+,;="
#define PCT "%[0-9A-Fa-f]{2}"
#define PCHAR "([" CHARS_UNRESERVED_SUB ":@-]|" PCT ")"
#define QUERY "(" PCHAR "|[/?])*"
#define AUTHORITY                                                                        \
  "(([" CHARS_UNRESERVED_SUB ":-]|" PCT ")*@)?(\\[(" IPV6                                \
  "|v[0-9A-Fa-f]+\\.[" CHARS_UNRESERVED_SUB ":-]+)\\]|([" CHARS_UNRESERVED_SUB "-]|" PCT \
  ")*)(:[0-9]*)?"
#define PATH_REST "(/" PCHAR "*)*"
#define AFTER_PATH "(\\?" QUERY ")?(#" QUERY ")?"
#define URI                                                                               \
  "[A-Za-z][A-Za-z0-9+.-]*:(//" AUTHORITY PATH_REST "|/(" PCHAR "+" PATH_REST ")?|" PCHAR \
  "+" PATH_REST ")?" AFTER_PATH
// A relative reference's first segment has no ':' (it would read as a scheme).
#define RELATIVE_REF                                                                          \
  "(//" AUTHORITY PATH_REST "|/(" PCHAR "+" PATH_REST ")?|([" CHARS_UNRESERVED_SUB "@-]|" PCT \
  ")+" PATH_REST ")?" AFTER_PATH
#define LABEL "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
#define HOSTNAME LABEL "(\\." LABEL ")*"
#define ATOM "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"

struct Format {
  const char* name;
  const char* regex;
};

constexpr Format kFormats[] = {
    {"date", DATE},
    {"time", TIME},
    {"date-time", DATE "[Tt]" TIME},
    {"uuid", "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"},
    {"ipv4", IPV4},
    {"ipv6", IPV6},
    {"hostname", HOSTNAME},
    // RFC 5321's dot-atom local part at a hostname (quoted local parts and address literals are
    // not generated).
    {"email", ATOM "(\\." ATOM ")*@" HOSTNAME},
    // RFC 6901: reference tokens, each after a '/', with '~' escaped as ~0 or ~1.
    {"json-pointer", "(/([^/~]|~[01])*)*"},
    // draft-handrews-relative-json-pointer-01: how far up, then '#' or a JSON pointer.
    {"relative-json-pointer", "(0|[1-9][0-9]*)(#|(/([^/~]|~[01])*)*)"},
    {"uri", URI},
    {"uri-reference", URI "|" RELATIVE_REF},
};

}  // namespace

const char* format_regex(std::string_view format) {
  for (const Format& f : kFormats)
    if (format == f.name) return f.regex;
  return nullptr;
}

std::string format_names() {
  std::string out;
  for (const Format& f : kFormats) out += std::string(out.empty() ? "" : ", ") + f.name;
  return out;
}

int32_t add_format(Grammar& g, std::string_view format) {
  const char* re = format_regex(format);
  if (!re)
    fail("format '{}' cannot be enforced (these can: {})", std::string(format), format_names());
  return add_regex(g, re, "format-" + std::string(format));
}

}  // namespace brisk::grammar
