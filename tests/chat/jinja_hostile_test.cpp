// Hostile chat templates (a model file is untrusted, and so is its template): each one ends in a
// one-line error naming the line and column, within the render's step, depth and byte budgets,
// instead of a crash, a stack overflow or gigabytes of memory. The ASan build runs these too.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "chat/chat_template.h"
#include "chat/jinja/interpreter.h"
#include "chat/jinja/strings.h"
#include "core/error.h"

namespace brisk {
namespace {

using json = nlohmann::ordered_json;

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::string render(const std::string& src, const json& ctx = json::object()) {
  return ChatTemplate(src).render(ctx);
}

// The template fails cleanly: brisk::Error, one line, with a position (and `what` in it).
void expect_clean_error(const std::string& src, const std::string& what = "",
                        const json& ctx = json::object()) {
  const std::string shown = src.size() > 80 ? src.substr(0, 80) + "..." : src;
  try {
    const std::string out = render(src, ctx);
    ADD_FAILURE() << shown << ": rendered " << out.size() << " bytes instead of failing";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("line "), std::string::npos) << shown << ": " << msg;
    EXPECT_NE(msg.find("column "), std::string::npos) << shown << ": " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << shown << ": " << msg;
    EXPECT_LT(msg.size(), 400u) << shown << ": " << msg;
    if (!what.empty()) {
      EXPECT_NE(msg.find(what), std::string::npos) << shown << ": " << msg;
    }
  }
}

TEST(JinjaHostile, NamespaceHoldingItself) {
  const std::string ns = "{% set ns = namespace() %}{% set ns.me = ns %}";
  expect_clean_error(ns + "{{ ns }}", "levels deep");
  expect_clean_error(ns + "{{ ns | tojson }}", "levels deep");
  expect_clean_error(ns + "{{ ns | string | length }}");
  expect_clean_error(ns + "{{ 'a' ~ ns }}", "levels deep");
  // Two namespaces holding each other, then dropped: freed without leaking (ASan's leak check).
  EXPECT_EQ(render("{% set a = namespace() %}{% set b = namespace(a=a) %}{% set a.b = b %}ok"),
            "ok");
}

TEST(JinjaHostile, DeepNestingWhileParsing) {
  expect_clean_error("{{ " + repeat("(", 3000) + "1" + repeat(")", 3000) + " }}", "nest");
  expect_clean_error("{{ " + repeat("[", 3000) + repeat("]", 3000) + " }}", "nest");
  expect_clean_error("{{ " + repeat("{'a': ", 3000) + "1" + repeat("}", 3000) + " }}", "nest");
  expect_clean_error("{{ " + repeat("f(", 3000) + repeat(")", 3000) + " }}", "nest");
  expect_clean_error("{{ " + repeat("-", 5000) + "1 }}", "nest");
  expect_clean_error("{% macro m() %}{{ caller() }}{% endmacro %}" +
                         repeat("{% call m() %}", 3000) + repeat("{% endcall %}", 3000),
                     "nest");
  expect_clean_error(repeat("{% if true %}", 10000) + "x" + repeat("{% endif %}", 10000), "nest");
  expect_clean_error(repeat("{% for i in [1] %}", 10000) + "x" + repeat("{% endfor %}", 10000),
                     "nest");
  // Unclosed, too: the error comes before the missing end tag is noticed.
  expect_clean_error(repeat("{% if true %}", 50000), "nest");
}

TEST(JinjaHostile, LongFlatChainsOfOperators) {
  // Left-associative chains make trees as deep as they are long.
  expect_clean_error("{{ 1" + repeat(" + 1", 3000) + " }}", "nest");
  expect_clean_error("{{ 'a'" + repeat(" ~ 'a'", 3000) + " }}", "nest");
  expect_clean_error("{{ " + repeat("not ", 3000) + "true }}", "nest");
  expect_clean_error("{{ 'a'" + repeat(" | upper", 3000) + " }}", "nest");
  expect_clean_error("{{ x" + repeat(".a", 3000) + " }}", "nest");
  expect_clean_error("{{ x" + repeat("[0]", 3000) + " }}", "nest");
  // What real templates write stays well inside the limits.
  EXPECT_EQ(render("{{ 1" + repeat(" + 1", 100) + " }}"), "101");
  EXPECT_EQ(render("{{ " + repeat("(", 100) + "1" + repeat(")", 100) + " }}"), "1");
}

TEST(JinjaHostile, HugeRangesListsAndStrings) {
  expect_clean_error("{{ range(10**9) | length }}", "too long");
  expect_clean_error("{{ range(1000000000) }}", "too long");
  expect_clean_error("{% for i in range(10**9) %}{% endfor %}", "too long");
  expect_clean_error(
      "{% for i in range(10**6) %}{% for j in range(10**6) %}{% endfor %}"
      "{% endfor %}",
      "too much data");
  expect_clean_error(
      "{% set ns = namespace(l=[1]) %}{% for i in range(64) %}"
      "{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l | length }}",
      "too much data");
  expect_clean_error(
      "{% set l = [1] %}{% for i in range(64) %}{% set l = l + l %}"
      "{{ l | length }}{% endfor %}",
      "too much data");
  expect_clean_error(
      "{% set ns = namespace(s='ab') %}{% for i in range(64) %}"
      "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}",
      "too much data");
  expect_clean_error("{{ ('a' * 1000) }}");  // strings do not repeat, as in the reference
  expect_clean_error(
      "{% set ns = namespace(s='abcdefgh') %}{% for i in range(64) %}"
      "{% set ns.s = ns.s.replace('', ns.s) %}{% endfor %}",
      "too much data");
  expect_clean_error(
      "{% set ns = namespace(s=',,,,,,,,') %}{% for i in range(64) %}"
      "{% set ns.s = ns.s.replace(',', ',,,,,,,,') %}{% endfor %}",
      "too large");
  // 4 MiB of commas is allowed; the 4 million strings split from it are not.
  expect_clean_error(
      "{% set ns = namespace(s=',') %}{% for i in range(22) %}"
      "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s.split(',') | length }}");
  expect_clean_error("{{ 'a\nb' | indent(1000000000) }}", "too much data");
  expect_clean_error(
      "{% set ns = namespace(s='x\nx') %}{% for i in range(64) %}"
      "{% set ns.s = ns.s | indent(ns.s | length) %}{% endfor %}",
      "too much data");
  expect_clean_error(
      "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}"
      "{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l }}",
      "levels deep");
  expect_clean_error(
      "{% set ns = namespace(l={}) %}{% for i in range(100000) %}"
      "{% set ns.l = {'k': ns.l} %}{% endfor %}{{ ns.l | tojson }}",
      "levels deep");
  expect_clean_error("{% for i in range(10**6) %}{{ 'x' * 0 }}{% endfor %}");
  expect_clean_error(
      "{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(20) %}"
      "{% set ns.s = ns.s ~ ns.s %}{% endfor %}"
      "{% for i in range(1000) %}{{ ns.s }}{% endfor %}");
}

// Searches run in 64 KiB windows (sanitizers check every byte memmem is handed, per call): a match
// across a window's edge, at the very end, or absent must be found exactly as in one pass.
TEST(JinjaHostile, SearchesFindMatchesAcrossWindowEdges) {
  const size_t w = size_t{1} << 16;
  for (size_t at : {size_t{0}, w - 3, w - 1, w, 2 * w - 5, 3 * w - 4}) {
    std::string hay(3 * w, 'a');
    hay.replace(at, 4, "wxyz");
    EXPECT_EQ(jinja::find_in(hay, "wxyz"), at) << at;
    EXPECT_EQ(jinja::find_in(hay, "wxyz", at), at) << at;
    EXPECT_EQ(jinja::find_in(hay, "wxyz", at + 1), std::string::npos) << at;
  }
  const std::string long_needle(w + 10, 'b');
  std::string hay = std::string(w - 7, 'a') + long_needle + "c";
  EXPECT_EQ(jinja::find_in(hay, long_needle), w - 7);
  EXPECT_EQ(jinja::find_in(hay, long_needle + "d"), std::string::npos);
  EXPECT_EQ(jinja::find_in("abc", "abcd"), std::string::npos);
  EXPECT_EQ(jinja::find_in("abc", "", 3), 3u);
  EXPECT_EQ(jinja::find_in("abc", "c", 4), std::string::npos);
}

TEST(JinjaHostile, ArithmeticNeverWrapsOrTraps) {
  expect_clean_error("{{ 9223372036854775807 + 1 }}", "overflow");
  expect_clean_error("{{ -9223372036854775807 - 2 }}", "overflow");
  expect_clean_error("{{ 4294967296 * 4294967296 }}", "overflow");
  expect_clean_error("{{ 2 ** 63 }}", "overflow");
  expect_clean_error("{{ (-9223372036854775807 - 1) // -1 }}", "overflow");
  expect_clean_error("{{ 1 // 0 }}", "zero");
  expect_clean_error("{{ 1 % 0 }}", "zero");
  expect_clean_error("{{ 1.5 // 0.0 }}", "zero");
  expect_clean_error("{{ 1.5 % 0 }}", "zero");
  expect_clean_error("{{ 99999999999999999999 }}", "beyond 2^63");
  expect_clean_error("{{ [1, 2][::0] }}", "step");
  expect_clean_error("{{ 'ab'[::0] }}", "step");
  // Integers are exact to 2^63 (the reference rounds beyond 2^53 to doubles).
  EXPECT_EQ(render("{{ 9007199254740993 }} {{ 2 ** 62 }} {{ 9223372036854775806 + 1 }}"),
            "9007199254740993 4611686018427387904 9223372036854775807");
  // Division by zero raises, as in Python.
  expect_clean_error("{{ 1 / 0 }}", "zero");
  expect_clean_error("{{ 0.0 / 0 }}", "zero");
  EXPECT_EQ(render("{{ [1, 2, 3][9223372036854775807:] }}{{ 'abc'[-9223372036854775807:] }}"),
            "[]abc");
}

TEST(JinjaHostile, HostileContexts) {
  // A context is untrusted too (an HTTP request's messages and tools).
  json deep = json::array();
  for (int i = 0; i < 1000; ++i) deep = json::array({deep});
  EXPECT_THROW(render("{{ x }}", {{"x", deep}}), Error);
  expect_clean_error("{{ x | length }}", "", {{"x", 18446744073709551615ull}});
  // A long conversation gets a proportionally larger budget: 8 MiB of messages render.
  json msgs = json::array();
  for (int i = 0; i < 1024; ++i)
    msgs.push_back({{"role", "user"}, {"content", std::string(8192, 'a' + i % 26)}});
  const std::string out = render(
      "{% for m in messages %}{{ '<|' + m.role + '|>' + m.content | trim + '\n' }}{% endfor %}",
      {{"messages", msgs}});
  EXPECT_EQ(out.size(), 1024u * (8192 + 9));
}

TEST(JinjaHostile, OversizedTemplate) {
  // Past 1 MiB a template is refused before parsing (real ones are below 30 KiB).
  EXPECT_THROW(render(std::string(2 << 20, 'x')), Error);
  expect_clean_error(repeat("{{1}}", 200001), "nodes");
}

}  // namespace
}  // namespace brisk
