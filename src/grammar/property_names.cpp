#include "grammar/property_names.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <vector>

#include "core/error.h"
#include "grammar/length_bounds.h"
#include "grammar/schema_merge.h"
#include "grammar/string_formats.h"
#include "tokenizer/unicode.h"

namespace brisk::grammar {
namespace {

using json = nlohmann::ordered_json;

// The names a string schema without enum or const allows; -1 when none; root set on success.
int32_t string_names(Grammar& g, const json& s) {
  const std::string pattern = s.value("pattern", std::string());
  std::string format = s.value("format", std::string());
  if (format_is_annotation(format)) format.clear();
  if (!pattern.empty() && !format.empty())
    fail("propertyNames with pattern and format together cannot be enforced");
  auto count = [&](const char* k) -> std::optional<uint32_t> {
    if (!s.contains(k)) return std::nullopt;
    const json& v = s[k];
    if (!v.is_number() || v.get<double>() < 0 || v.get<double>() != std::floor(v.get<double>()))
      fail("'{}' must be a non-negative integer", k);
    return static_cast<uint32_t>(std::min(v.get<double>(), 4e9));
  };
  const uint32_t min = count("minLength").value_or(0);
  const std::optional<uint32_t> max = count("maxLength");
  Grammar language;
  int32_t body;
  if (!pattern.empty()) {
    body = add_regex_search(language, pattern, "pattern");
  } else if (!format.empty()) {
    body = add_format(language, format);
  } else {
    body = language.add_rule("name");
    language.add_alt(body, {Symbol::chars({{0, 0x10FFFF}}), Symbol::ref(body)});
    language.add_alt(body, {});
  }
  language.set_root(body);
  if (min == 0 && !max) {
    g = std::move(language);
    return g.root();
  }
  const int32_t r = add_length_bounded(g, language, min, max);
  if (r >= 0) g.set_root(r);
  return r;
}

bool is_string_type(const json& s) {
  if (!s.contains("type")) return true;
  const json& t = s["type"];
  if (t.is_string()) return t == "string";
  return t.is_array() && std::find(t.begin(), t.end(), json("string")) != t.end();
}

}  // namespace

bool NameLanguage::accepts(const std::string& name) const {
  if (any || none) return any;
  int32_t state = 0;
  for (uint32_t cp : utf8_to_cpts(name)) {
    int32_t next = -1;
    for (const auto& [target, chars] : dfa.moves[size_t(state)])
      for (const CharRange& r : chars)
        if (cp >= r.lo && cp <= r.hi) next = target;
    if (next < 0) return false;
    state = next;
  }
  return dfa.accept[size_t(state)];
}

NameLanguage property_names(const json& s) {
  NameLanguage out;
  if (s.is_boolean()) {
    (s.get<bool>() ? out.any : out.none) = true;
    return out;
  }
  if (!s.is_object()) fail("'propertyNames' must be a schema");
  static const std::set<std::string> kRead = {"type",      "pattern", "format", "minLength",
                                              "maxLength", "enum",    "const"};
  bool constrained = false;
  for (const auto& [k, v] : s.items()) {
    if (!is_validation_keyword(k)) continue;
    if (!kRead.count(k)) fail("propertyNames with '{}' cannot be enforced", k);
    constrained = constrained || k != "type";
  }
  if (!is_string_type(s)) {
    out.none = true;  // keys are strings
    return out;
  }
  if (!constrained) {
    out.any = true;
    return out;
  }
  Grammar allowed;
  const bool listed = s.contains("enum") || s.contains("const");
  if (string_names(allowed, s) < 0) {
    out.none = true;
    return out;
  }
  if (listed) {
    // The listed names the other keywords accept, as alternatives of their characters.
    NameLanguage rest;
    rest.dfa = determinize(allowed);
    const json values = s.contains("const") ? json::array({s["const"]}) : s["enum"];
    if (!values.is_array()) fail("'enum' must be an array");
    Grammar names;
    const int32_t root = names.add_rule("names");
    for (const json& v : values) {
      if (!v.is_string() || !rest.accepts(v.get<std::string>())) continue;
      if (s.contains("const") && s.contains("enum") &&
          std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end())
        continue;
      Sequence seq;
      for (uint32_t c : utf8_to_cpts(v.get<std::string>())) seq.push_back(Symbol::one(c));
      names.add_alt(root, std::move(seq));
    }
    if (names.rule(root).alts.empty()) {
      out.none = true;
      return out;
    }
    names.set_root(root);
    allowed = std::move(names);
  }
  out.dfa = determinize(allowed);
  out.grammar = std::move(allowed);
  return out;
}

}  // namespace brisk::grammar
