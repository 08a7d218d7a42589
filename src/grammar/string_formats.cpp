#include "grammar/string_formats.h"

#include <array>
#include <string>
#include <utility>

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
// RFC 3339 Appendix A's duration (numbers of at most 9 digits, so a model cannot pad one forever).
#define DNUM "\\d{1,9}"
#define DUR_TIME "T(" DNUM "H(" DNUM "M(" DNUM "S)?)?|" DNUM "M(" DNUM "S)?|" DNUM "S)"
#define DURATION                                                                                   \
  "P((" DNUM "D|" DNUM "M(" DNUM "D)?|" DNUM "Y(" DNUM "M(" DNUM "D)?)?)(" DUR_TIME ")?|" DUR_TIME \
  "|" DNUM "W)"
// RFC 3987's IRIs are RFC 3986's URIs with ucschar beside the unreserved characters (iri_format).
#define UCSCHAR                                                                                    \
  "\\u00a0-\\ud7ff\\uf900-\\ufdcf\\ufdf0-\\uffef\\u{10000}-\\u{1fffd}\\u{20000}-\\u{2fffd}\\u{"    \
  "30000}-"                                                                                        \
  "\\u{3fffd}\\u{40000}-\\u{4fffd}\\u{50000}-\\u{5fffd}\\u{60000}-\\u{6fffd}\\u{70000}-\\u{7fffd}" \
  "\\u{80000}-"                                                                                    \
  "\\u{8fffd}\\u{90000}-\\u{9fffd}\\u{a0000}-\\u{afffd}\\u{b0000}-\\u{bfffd}\\u{c0000}-\\u{cfffd}" \
  "\\u{d0000}-"                                                                                    \
  "\\u{dfffd}\\u{e1000}-\\u{efffd}"
// RFC 6570: literals and {expressions} of variable names with an operator and modifiers.
#define VARSPEC "([A-Za-z0-9_]|" PCT ")([A-Za-z0-9_.]|" PCT ")*(:[1-9]\\d{0,3}|\\*)?"
#define URI_TEMPLATE                                                                      \
  "(([^\\x00-\\x20\"'%<>\\\\^`{|}\\x7f]|" PCT ")|\\{[+#./;?&=,!@|]?" VARSPEC "(," VARSPEC \
  ")*\\})"                                                                                \
  "*"
// A regular expression, as far as a grammar can promise one is valid: literal characters,
// escapes of syntax characters and classes, '.', classes (ranges within digits or letters of one
// case, in order), anchors, greedy
// quantifiers (no {n,m}, whose n > m would not compile), and groups two deep (deeper ones cannot
// be counted by a regular language). Each such text compiles in ECMAScript (with the u flag too)
// and in Python alike.
#define RE_ESC "\\\\[\\\\^$.|?*+()\\[\\]{}/dDwWsSbBnrtfv]"
#define RE_CLASS "\\[\\^?(" RE_ESC "|\\\\-|RANGE|[^\\\\\\]\\[^-])+\\]"
#define RE_ATOM "([^\\\\^$.|?*+()\\[\\]{}]|" RE_ESC "|\\.|" RE_CLASS ")"
#define RE_QUANT "([?*+]|\\{\\d{1,4},?\\})?"
#define RE_SEQ0 "(" RE_ATOM RE_QUANT ")*"
#define RE_GROUP1 "\\((\\?:)?" RE_SEQ0 "(\\|" RE_SEQ0 ")*\\)"
#define RE_SEQ1 "((" RE_ATOM "|" RE_GROUP1 ")" RE_QUANT ")*"
#define RE_GROUP2 "\\((\\?:)?" RE_SEQ1 "(\\|" RE_SEQ1 ")*\\)"
#define RE_SEQ2 "\\^?((" RE_ATOM "|" RE_GROUP2 ")" RE_QUANT ")*\\$?"
#define REGEX RE_SEQ2 "(\\|" RE_SEQ2 ")*"

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
    {"uri-template", URI_TEMPLATE},
    {"duration", DURATION},
    // OpenAPI's base64 text (RFC 4648, padded).
    {"byte", "([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"},
};

// Formats the JSON Schema drafts define that brisk cannot promise (internationalized names).
constexpr const char* kRefused[] = {"idn-email", "idn-hostname"};

}  // namespace

// URI's and RELATIVE_REF's character classes with ucschar added (the IPvFuture literal stays
// ASCII, as RFC 3987 has it).
static const std::string& iri_format(bool reference) {
  static const std::array<std::string, 2> iri = [] {
    auto widen = [](std::string re) {
      const std::string ascii = CHARS_UNRESERVED_SUB, wide = CHARS_UNRESERVED_SUB UCSCHAR;
      for (size_t at = re.find(ascii); at != std::string::npos;
           at = re.find(ascii, at + wide.size()))
        re.replace(at, ascii.size(), wide);
      const std::string future = "v[0-9A-Fa-f]+\\.[";
      const size_t f = re.find(future + wide);
      if (f != std::string::npos) re.replace(f + future.size(), wide.size(), ascii);
      return re;
    };
    return std::array<std::string, 2>{widen(URI), widen(URI "|" RELATIVE_REF)};
  }();
  return iri[reference];
}

// REGEX with RANGE spelled out: each range from a character to one at or after it, within the
// digits or the letters of one case ("a-[a-z]|b-[b-z]|...").
static const std::string& regex_format() {
  static const std::string re = [] {
    std::string ranges;
    for (const auto& [lo, hi] : {std::pair{'0', '9'}, std::pair{'a', 'z'}, std::pair{'A', 'Z'}})
      for (char c = lo; c <= hi; ++c)
        ranges += std::string(ranges.empty() ? "" : "|") + c + "-[" + c + "-" + hi + "]";
    std::string out = REGEX;
    for (size_t at = out.find("RANGE"); at != std::string::npos; at = out.find("RANGE", at))
      out.replace(at, 5, "(" + ranges + ")");
    return out;
  }();
  return re;
}

const char* format_regex(std::string_view format) {
  for (const Format& f : kFormats)
    if (format == f.name) return f.regex;
  if (format == "regex") return regex_format().c_str();
  if (format == "iri" || format == "iri-reference") return iri_format(format != "iri").c_str();
  return nullptr;
}

bool format_is_annotation(std::string_view format) {
  if (format_regex(format)) return false;
  for (const char* f : kRefused)
    if (format == f) return false;
  return true;
}

std::string format_names() {
  std::string out;
  for (const Format& f : kFormats) out += std::string(out.empty() ? "" : ", ") + f.name;
  return out + ", iri, iri-reference, regex";
}

int32_t add_format(Grammar& g, std::string_view format) {
  const char* re = format_regex(format);
  if (!re)
    fail("format '{}' cannot be enforced (these can: {})", std::string(format), format_names());
  return add_regex(g, re, "format-" + std::string(format));
}

}  // namespace brisk::grammar
