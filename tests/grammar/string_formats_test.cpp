// JSON Schema's string formats as grammars: valid and invalid values of each, and every calendar
// day of four years (leap years included) against the calendar.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/error.h"
#include "grammar/recognizer.h"
#include "grammar/string_formats.h"

namespace brisk::grammar {
namespace {

using test::accepts;

Grammar format_grammar(const char* name) {
  Grammar g;
  g.set_root(add_format(g, name));
  g.check();
  return g;
}

TEST(Formats, ValidAndInvalidValues) {
  const struct {
    const char* format;
    std::vector<const char*> valid, invalid;
  } cases[] = {
      {"date",
       {"2026-12-04", "2024-02-29", "2000-02-29", "1999-12-31"},
       {"2026-13-01", "2026-02-30", "1900-02-29", "2023-02-29", "2026-12-4", "2026/12/04", ""}},
      {"time",
       {"23:59:60Z", "08:30:00.123+05:30", "00:00:00z"},
       {"24:00:00Z", "08:30:00", "8:30:00Z", "08:60:00Z", "08:30:00+5:30"}},
      {"date-time",
       {"2026-12-04T18:42:00Z", "2024-02-29t00:00:00.5-01:00"},
       {"2026-12-04 18:42:00Z", "2026-12-04T18:42Z"}},
      {"uuid",
       {"123e4567-e89b-12d3-a456-426614174000", "ABCDEF01-2345-6789-abcd-ef0123456789"},
       {"123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400g"}},
      {"ipv4",
       {"192.168.0.1", "0.0.0.0", "255.255.255.255"},
       {"256.1.1.1", "01.2.3.4", "1.2.3", "1.2.3.4.5"}},
      {"ipv6",
       {"::", "::1", "fe80::1", "2001:db8:0:0:0:0:2:1", "::ffff:192.168.0.1",
        "1::", "1:2:3:4:5:6:7::"},
       {":::", "1:2:3:4:5:6:7:8:9", "12345::", "1::2::3", "::ffff:256.1.1.1"}},
      {"hostname",
       {"example.com", "a", "xn--bcher-kva.example", "a-b.c-d"},
       {"-a.com", "a-.com", "a..b", "a_b.com", ""}},
      {"email",
       {"joe@example.com", "first.last+tag@sub.example.org"},
       {"joe", "@example.com", "joe@", "jo..e@example.com", "joe@-x.com"}},
      {"uri",
       {"https://example.com/a?b=c#d", "urn:isbn:0451450523", "mailto:joe@example.com"},
       {"//example.com", "1http://x", "http://exa mple.com", "http://x/%zz"}},
      {"iri",
       {"https://例え.jp/パス?q=値", "urn:isbn:0451450523", "http://x/%41"},
       {"例え.jp", "http://x y", "http://x/%zz", "http://x/<a>"}},
      {"iri-reference", {"/パス/x", "https://例え.jp", "", "a#b"}, {"a b", "%g0", "a|b"}},
      {"uri-template",
       {"https://api.example.com/users/{id}{?fields,limit}", "{+path}/x", "{var:3}", "plain"},
       {"{}", "{a b}", "{?}", "x}", "a b"}},
      {"duration",
       {"P1Y2M3DT4H5M6S", "PT0S", "P3W", "P1D", "PT1H30M", "P1M", "P1YT1S"},
       {"P", "PT", "P1H", "1D", "P1W2D", "PT1D", "P1S", "P1.5D"}},
      {"byte", {"", "aGVsbG8=", "aGk=", "YWJj", "+/+/"}, {"aGVsbG8", "a", "aGk==", "a=bc", "a b="}},
      {"regex",
       {"", "^[a-z]+$", "a|b", "(x(y)*)+", "\\d{3}-\\d{4}", ".*\\.svg", "(?:a|b)?c{2,}", "[^,]+"},
       {"(", "a)", "[", "[]", "*a", "a**", "(((a)))", "\\q", "[z-a]", "a{3,2}"}},
  };
  for (const auto& c : cases) {
    const Grammar g = format_grammar(c.format);
    for (const char* v : c.valid) EXPECT_TRUE(accepts(g, v)) << c.format << ": " << v;
    for (const char* v : c.invalid) EXPECT_FALSE(accepts(g, v)) << c.format << ": " << v;
  }
}

TEST(Formats, EveryDayOfFourYears) {
  const Grammar g = format_grammar("date");
  const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  for (int year : {1900, 2000, 2023, 2024}) {
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    for (int month = 1; month <= 12; ++month)
      for (int day = 1; day <= 31; ++day) {
        const int last = days[month - 1] + (month == 2 && leap ? 1 : 0);
        EXPECT_EQ(accepts(g, fmt::format("{:04}-{:02}-{:02}", year, month, day)), day <= last)
            << year << "-" << month << "-" << day;
      }
  }
}

// Formats no JSON Schema draft defines are annotations, as the drafts say: they constrain
// nothing. Those the drafts define but brisk cannot promise are refused by name.
TEST(Formats, UndefinedFormatsAreAnnotations) {
  for (const char* f : {"int32", "color", "path", "abc-draft-js_RawDraftContentState", "semver"})
    EXPECT_TRUE(format_is_annotation(f)) << f;
  for (const char* f : {"date", "regex", "idn-email", "idn-hostname", "byte", "duration"})
    EXPECT_FALSE(format_is_annotation(f)) << f;
}

TEST(Formats, UnknownFormatsAreNamed) {
  Grammar g;
  try {
    add_format(g, "idn-email");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'idn-email'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("date-time"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace brisk::grammar
