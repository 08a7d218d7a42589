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
std::optional<ojson> other_types(const ojson& v) {
  std::set<std::string> named;
  for (const ojson& x : v.is_array() ? v : ojson::array({v})) {
    if (!x.is_string()) return std::nullopt;
    named.insert(x.get<std::string>());
  }
  if (named.count("integer") && !named.count("number")) return std::nullopt;
  ojson out = ojson::array();
  for (const char* t : kAllTypes)
    if (!named.count(t)) out.push_back(t);
  return out;
}

// The other side of a bound or length, on the one type the keyword judges.
std::optional<ojson> other_side(const std::string& k, const ojson& v) {
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
    if (b.shift == 0) return ojson{{"type", b.type}, {b.other, v}};
    const double n = v.get<double>() + b.shift;
    if (n < 0) return ojson(false);  // no count is below 0: `min... 0` holds for every value
    return ojson{{"type", b.type}, {b.other, static_cast<int64_t>(n)}};
  }
  return std::nullopt;
}

}  // namespace

std::optional<ojson> negate_schema(const ojson& s, SchemaMerger& m, const std::string& path,
                                   int depth) {
  if (depth > kMaxNegationDepth) return std::nullopt;
  if (s.is_boolean()) return ojson(!s.get<bool>());
  if (!s.is_object()) return std::nullopt;
  ojson f = m.flatten(s, path);  // $ref and allOf merged, const as a one-value enum
  if (f.is_boolean()) return ojson(!f.get<bool>());
  if (f.contains("not") || (f.contains("if") && (f.contains("then") || f.contains("else"))))
    f = without_negations(f, m, path, depth + 1);
  // The schema holds when each of its keywords does, so its complement is the anyOf of theirs
  // (the properties keywords judge together; a keyword that holds for every value adds nothing).
  std::vector<ojson> parts;
  bool props_done = false;
  for (const auto& [k, v] : f.items()) {
    if (!is_validation_keyword(k)) continue;
    std::optional<ojson> part;
    if (k == "type") {
      if (const auto t = other_types(v)) part = ojson{{"type", *t}};
    } else if (k == "enum") {
      if (v.is_array()) part = ojson{{kNotEnum, v}};
    } else if (k == kNotEnum) {
      part = ojson{{"enum", v}};
    } else if (k == "required") {
      if (!v.is_array()) return std::nullopt;
      ojson any = ojson::array();
      for (const ojson& n : v) {
        if (!n.is_string()) return std::nullopt;
        any.push_back({{"type", "object"}, {"properties", {{n.get<std::string>(), false}}}});
      }
      part = any.empty() ? ojson(false) : ojson{{"anyOf", any}};
    } else if (k == "properties" || k == "additionalProperties" || k == "patternProperties") {
      if (props_done) continue;
      props_done = true;
      const ojson extra = f.value("additionalProperties", ojson(true));
      if (!(extra == ojson(true) || extra == ojson::object()) ||
          (f.contains("patternProperties") && !f["patternProperties"].empty()))
        return std::nullopt;  // "some key outside these" is no schema
      const ojson props = f.value("properties", ojson::object());
      if (!props.is_object()) return std::nullopt;
      ojson any = ojson::array();
      for (const auto& [name, sub] : props.items()) {
        const auto neg = negate_schema(sub, m, path + "/properties/" + name, depth + 1);
        if (!neg) return std::nullopt;
        if (*neg == ojson(false)) continue;
        any.push_back({{"type", "object"}, {"required", {name}}, {"properties", {{name, *neg}}}});
      }
      part = any.empty() ? ojson(false) : ojson{{"anyOf", any}};
    } else if (k == "anyOf") {
      if (!v.is_array()) return std::nullopt;
      ojson all = ojson::array();
      for (size_t i = 0; i < v.size(); ++i) {
        const auto neg = negate_schema(v[i], m, fmt::format("{}/anyOf/{}", path, i), depth + 1);
        if (!neg) return std::nullopt;
        all.push_back(*neg);
      }
      part = ojson{{"allOf", all}};
    } else if (k == "not") {
      part = v;
    } else {
      part = other_side(k, v);
    }
    if (!part) return std::nullopt;
    if (*part != ojson(false)) parts.push_back(std::move(*part));
  }
  if (parts.empty()) return ojson(false);  // every value passes f
  if (parts.size() == 1) return parts[0];
  return ojson{{"anyOf", parts}};
}

namespace {

// a and b at once. Both may hold anyOf: their branches pair up (at most 64 pairs).
ojson conjoin(const ojson& a, const ojson& b, const std::string& path) {
  if (b.is_boolean()) return b.get<bool>() ? a : ojson(false);
  if (a.is_boolean()) return a.get<bool>() ? b : ojson(false);
  if (!(a.contains("anyOf") && b.contains("anyOf"))) return ojson{{"allOf", {a, b}}};
  const ojson& x = a["anyOf"];
  const ojson& y = b["anyOf"];
  if (!x.is_array() || !y.is_array() || x.size() * y.size() > 64)
    error(path, "anyOf beside a negation makes too many branches to enforce");
  ojson ra = a, rb = b, pairs = ojson::array();
  ra.erase("anyOf");
  rb.erase("anyOf");
  for (const ojson& i : x)
    for (const ojson& j : y) pairs.push_back({{"allOf", {i, j}}});
  return ojson{{"allOf", {ra, rb}}, {"anyOf", pairs}};
}

}  // namespace

ojson without_dependencies(const ojson& s, const std::string& path) {
  ojson out = s;
  ojson all = ojson::array();
  for (const char* key : {"dependencies", "dependentRequired", "dependentSchemas"}) {
    if (!s.contains(key)) continue;
    out.erase(key);
    const ojson& deps = s[key];
    if (!deps.is_object()) error(path, fmt::format("'{}' must be an object", key));
    for (const auto& [name, v] : deps.items()) {
      ojson present;
      if (v.is_array()) {  // names that must come with it
        ojson required = ojson::array({name});
        for (const ojson& n : v) {
          if (!n.is_string()) error(path, fmt::format("'{}/{}' must list names", key, name));
          required.push_back(n);
        }
        present = {{"required", std::move(required)}};
      } else if (v.is_object() || v.is_boolean()) {  // a schema the object must then satisfy
        // The name declared first, so it is generated before the schema's own properties.
        present = {{"allOf", {ojson{{"required", {name}}, {"properties", {{name, true}}}}, v}}};
      } else {
        error(path, fmt::format("'{}/{}' must be a list of names or a schema", key, name));
      }
      all.push_back({{"anyOf", {ojson{{"properties", {{name, false}}}}, std::move(present)}}});
    }
  }
  if (all.empty()) return out;
  all.insert(all.begin(), std::move(out));
  return ojson{{"allOf", std::move(all)}};
}

ojson without_negations(const ojson& s, SchemaMerger& m, const std::string& path, int depth) {
  struct Open {
    SchemaMerger& m;
    ~Open() { --m.negations_open; }
  } open{m};
  if (++m.negations_open > kMaxNegationDepth || depth > kMaxNegationDepth)
    error(path, fmt::format("negations (not, if) nest deeper than {} (a $ref into itself?)",
                            kMaxNegationDepth));
  ojson out = s;
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
    const ojson cond = out["if"];
    const bool branches = out.contains("then") || out.contains("else");
    const ojson then = out.value("then", ojson(true)), other = out.value("else", ojson(true));
    for (const char* k : {"if", "then", "else"}) out.erase(k);
    if (!branches) return out;  // `if` alone asserts nothing
    const auto neg = negate_schema(cond, m, path + "/if", depth + 1);
    if (!neg)
      error(path,
            "'if' / 'then' / 'else' cannot be enforced with this 'if' (its complement must be "
            "a schema: types, enum, const, required, properties, bounds, lengths)");
    const ojson either = {
        {"anyOf", {conjoin(cond, then, path + "/then"), conjoin(*neg, other, path + "/else")}}};
    out = conjoin(out, either, path);
  }
  return out;
}

}  // namespace brisk::grammar
