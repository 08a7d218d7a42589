#include "grammar/schema_negation.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <vector>

#include "core/error.h"

namespace brisk::grammar {
namespace {

[[noreturn]] void error(const std::string& path, const std::string& what) {
  fail("json_schema: at {}: {}", path, what);
}

constexpr int kMaxNegationDepth = 16;

const char* const kAllTypes[] = {"null", "boolean", "object", "array", "string", "number"};

// The types outside `v` (a type name or a list); nullopt where that is not a list of types (not
// integer alone: the non-integral numbers are no JSON Schema type).
std::optional<json> other_types(const json& v) {
  std::set<std::string> named;
  for (const json& x : v.is_array() ? v : json::array({v})) {
    if (!x.is_string()) return std::nullopt;
    named.insert(x.get<std::string>());
  }
  if (named.count("integer") && !named.count("number")) return std::nullopt;
  json out = json::array();
  for (const char* t : kAllTypes)
    if (!named.count(t)) out.push_back(t);
  return out;
}

// The other side of a bound or length, on the one type the keyword judges.
std::optional<json> other_side(const std::string& k, const json& v) {
  if (!v.is_number()) return std::nullopt;
  static const struct {
    const char *key, *type, *other;
    int shift;  // a count's complement: n - 1 below, n + 1 above
  } kBounds[] = {{"minimum", "number", "exclusiveMaximum", 0},
                 {"maximum", "number", "exclusiveMinimum", 0},
                 {"exclusiveMinimum", "number", "maximum", 0},
                 {"exclusiveMaximum", "number", "minimum", 0},
                 {"minLength", "string", "maxLength", -1},
                 {"maxLength", "string", "minLength", 1},
                 {"minItems", "array", "maxItems", -1},
                 {"maxItems", "array", "minItems", 1},
                 {"minProperties", "object", "maxProperties", -1},
                 {"maxProperties", "object", "minProperties", 1}};
  for (const auto& b : kBounds) {
    if (k != b.key) continue;
    if (b.shift == 0) return json{{"type", b.type}, {b.other, v}};
    const double n = v.get<double>() + b.shift;
    if (n < 0) return json(false);  // no count is below 0: `min... 0` holds for every value
    return json{{"type", b.type}, {b.other, static_cast<int64_t>(n)}};
  }
  return std::nullopt;
}

}  // namespace

std::optional<json> negate_schema(const json& s, SchemaMerger& m, const std::string& path,
                                  int depth) {
  if (depth > kMaxNegationDepth) return std::nullopt;
  if (s.is_boolean()) return json(!s.get<bool>());
  if (!s.is_object()) return std::nullopt;
  json f = m.flatten(s, path);  // $ref and allOf merged, const as a one-value enum
  if (f.is_boolean()) return json(!f.get<bool>());
  if (f.contains("not") || (f.contains("if") && (f.contains("then") || f.contains("else"))))
    f = without_negations(f, m, path, depth + 1);
  // The schema holds when each of its keywords does, so its complement is the anyOf of theirs
  // (the properties keywords judge together; a keyword that holds for every value adds nothing).
  std::vector<json> parts;
  bool props_done = false;
  for (const auto& [k, v] : f.items()) {
    if (!is_validation_keyword(k)) continue;
    std::optional<json> part;
    if (k == "type") {
      if (const auto t = other_types(v)) part = json{{"type", *t}};
    } else if (k == "enum") {
      if (v.is_array()) part = json{{kNotEnum, v}};
    } else if (k == kNotEnum) {
      part = json{{"enum", v}};
    } else if (k == "required") {
      if (!v.is_array()) return std::nullopt;
      json any = json::array();
      for (const json& n : v) {
        if (!n.is_string()) return std::nullopt;
        any.push_back({{"type", "object"}, {"properties", {{n.get<std::string>(), false}}}});
      }
      part = any.empty() ? json(false) : json{{"anyOf", any}};
    } else if (k == "properties" || k == "additionalProperties" || k == "patternProperties") {
      if (props_done) continue;
      props_done = true;
      const json extra = f.value("additionalProperties", json(true));
      if (!(extra == json(true) || extra == json::object()) ||
          (f.contains("patternProperties") && !f["patternProperties"].empty()))
        return std::nullopt;  // "some key outside these" is no schema
      const json props = f.value("properties", json::object());
      if (!props.is_object()) return std::nullopt;
      json any = json::array();
      for (const auto& [name, sub] : props.items()) {
        const auto neg = negate_schema(sub, m, path + "/properties/" + name, depth + 1);
        if (!neg) return std::nullopt;
        if (*neg == json(false)) continue;
        any.push_back({{"type", "object"}, {"required", {name}}, {"properties", {{name, *neg}}}});
      }
      part = any.empty() ? json(false) : json{{"anyOf", any}};
    } else if (k == "anyOf") {
      if (!v.is_array()) return std::nullopt;
      json all = json::array();
      for (size_t i = 0; i < v.size(); ++i) {
        const auto neg = negate_schema(v[i], m, fmt::format("{}/anyOf/{}", path, i), depth + 1);
        if (!neg) return std::nullopt;
        all.push_back(*neg);
      }
      part = json{{"allOf", all}};
    } else if (k == "not") {
      part = v;
    } else {
      part = other_side(k, v);
    }
    if (!part) return std::nullopt;
    if (*part != json(false)) parts.push_back(std::move(*part));
  }
  if (parts.empty()) return json(false);  // every value passes f
  if (parts.size() == 1) return parts[0];
  return json{{"anyOf", parts}};
}

namespace {

// a and b at once. Both may hold anyOf: their branches pair up (at most 64 pairs).
json conjoin(const json& a, const json& b, const std::string& path) {
  if (b.is_boolean()) return b.get<bool>() ? a : json(false);
  if (a.is_boolean()) return a.get<bool>() ? b : json(false);
  if (!(a.contains("anyOf") && b.contains("anyOf"))) return json{{"allOf", {a, b}}};
  const json& x = a["anyOf"];
  const json& y = b["anyOf"];
  if (!x.is_array() || !y.is_array() || x.size() * y.size() > 64)
    error(path, "anyOf beside a negation makes too many branches to enforce");
  json ra = a, rb = b, pairs = json::array();
  ra.erase("anyOf");
  rb.erase("anyOf");
  for (const json& i : x)
    for (const json& j : y) pairs.push_back({{"allOf", {i, j}}});
  return json{{"allOf", {ra, rb}}, {"anyOf", pairs}};
}

}  // namespace

json without_dependencies(const json& s, const std::string& path) {
  json out = s;
  json all = json::array();
  for (const char* key : {"dependencies", "dependentRequired", "dependentSchemas"}) {
    if (!s.contains(key)) continue;
    out.erase(key);
    const json& deps = s[key];
    if (!deps.is_object()) error(path, fmt::format("'{}' must be an object", key));
    for (const auto& [name, v] : deps.items()) {
      json present;
      if (v.is_array()) {  // names that must come with it
        json required = json::array({name});
        for (const json& n : v) {
          if (!n.is_string()) error(path, fmt::format("'{}/{}' must list names", key, name));
          required.push_back(n);
        }
        present = {{"required", std::move(required)}};
      } else if (v.is_object() || v.is_boolean()) {  // a schema the object must then satisfy
        // The name declared first, so it is generated before the schema's own properties.
        present = {{"allOf", {json{{"required", {name}}, {"properties", {{name, true}}}}, v}}};
      } else {
        error(path, fmt::format("'{}/{}' must be a list of names or a schema", key, name));
      }
      all.push_back({{"anyOf", {json{{"properties", {{name, false}}}}, std::move(present)}}});
    }
  }
  if (all.empty()) return out;
  all.insert(all.begin(), std::move(out));
  return json{{"allOf", std::move(all)}};
}

json without_negations(const json& s, SchemaMerger& m, const std::string& path, int depth) {
  struct Open {
    SchemaMerger& m;
    ~Open() { --m.negations_open; }
  } open{m};
  if (++m.negations_open > kMaxNegationDepth || depth > kMaxNegationDepth)
    error(path, fmt::format("negations (not, if) nest deeper than {} (a $ref into itself?)",
                            kMaxNegationDepth));
  json out = s;
  if (out.contains("not")) {
    const auto neg = negate_schema(out["not"], m, path + "/not", depth + 1);
    if (!neg)
      error(path,
            "'not' cannot be enforced over this schema (only over types, enum, const, "
            "required, properties, bounds, lengths, anyOf and allOf of those)");
    out.erase("not");
    out = conjoin(out, *neg, path);
  }
  if (out.is_object() && out.contains("if")) {
    const json cond = out["if"];
    const bool branches = out.contains("then") || out.contains("else");
    const json then = out.value("then", json(true)), other = out.value("else", json(true));
    for (const char* k : {"if", "then", "else"}) out.erase(k);
    if (!branches) return out;  // `if` alone asserts nothing
    const auto neg = negate_schema(cond, m, path + "/if", depth + 1);
    if (!neg)
      error(path,
            "'if' / 'then' / 'else' cannot be enforced with this 'if' (its complement must be "
            "a schema: types, enum, const, required, properties, bounds, lengths)");
    const json either = {
        {"anyOf", {conjoin(cond, then, path + "/then"), conjoin(*neg, other, path + "/else")}}};
    out = conjoin(out, either, path);
  }
  return out;
}

}  // namespace brisk::grammar
