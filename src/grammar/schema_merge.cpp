#include "grammar/schema_merge.h"

#include <fmt/format.h>
#include <algorithm>
#include <set>

#include "core/clock.h"
#include "core/error.h"
#include "grammar/schema_negation.h"

namespace brisk::grammar {
namespace {

const std::set<std::string, std::less<>> kValidation = {"type",
                                                        "enum",
                                                        "const",
                                                        "multipleOf",
                                                        "maximum",
                                                        "exclusiveMaximum",
                                                        "minimum",
                                                        "exclusiveMinimum",
                                                        "maxLength",
                                                        "minLength",
                                                        "pattern",
                                                        "items",
                                                        "prefixItems",
                                                        "additionalItems",
                                                        "maxItems",
                                                        "minItems",
                                                        "uniqueItems",
                                                        "contains",
                                                        "maxContains",
                                                        "minContains",
                                                        "maxProperties",
                                                        "minProperties",
                                                        "required",
                                                        "properties",
                                                        "patternProperties",
                                                        "additionalProperties",
                                                        "dependencies",
                                                        "dependentRequired",
                                                        "dependentSchemas",
                                                        "propertyNames",
                                                        "if",
                                                        "then",
                                                        "else",
                                                        "allOf",
                                                        "anyOf",
                                                        "oneOf",
                                                        "not",
                                                        "$ref",
                                                        "$dynamicRef",
                                                        "$recursiveRef",
                                                        "unevaluatedItems",
                                                        "unevaluatedProperties",
                                                        "format",
                                                        "\x01not-enum"};

[[noreturn]] void error(const std::string& path, const std::string& what) {
  fail("json_schema: at {}: {}", path, what);
}

std::string pointer_token(std::string t) {
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '%' && i + 2 < t.size() && isxdigit(static_cast<unsigned char>(t[i + 1])) &&
        isxdigit(static_cast<unsigned char>(t[i + 2]))) {
      out += static_cast<char>(std::stoi(t.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += t[i];
    }
  }
  std::string un;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '~' && i + 1 < out.size() && (out[i + 1] == '0' || out[i + 1] == '1')) {
      un += out[i + 1] == '0' ? '~' : '/';
      ++i;
    } else {
      un += out[i];
    }
  }
  return un;
}

// The JSON types a schema's values may have (integer inside number).
std::set<std::string> value_types(const json& s) {
  std::set<std::string> out;
  if (s.is_object() && s.contains("enum") && s["enum"].is_array()) {
    for (const json& v : s["enum"])
      out.insert(v.is_number() ? "number" : std::string(v.type_name()));
    return out;
  }
  if (s.is_object() && s.contains("type")) {
    const json& t = s["type"];
    for (const json& x : t.is_array() ? t : json::array({t}))
      if (x.is_string()) out.insert(x == "integer" ? "number" : x.get<std::string>());
    return out;
  }
  return {"null", "boolean", "object", "array", "string", "number"};
}

}  // namespace

bool is_validation_keyword(const std::string& k) {
  return kValidation.count(k) > 0;
}

int schema_draft(const json& root) {
  if (!root.is_object() || !root.contains("$schema") || !root["$schema"].is_string()) return 2020;
  const std::string s = root["$schema"].get<std::string>();
  if (s.find("draft-04") != std::string::npos || s.find("draft-03") != std::string::npos) return 4;
  if (s.find("draft-06") != std::string::npos) return 6;
  if (s.find("draft-07") != std::string::npos) return 7;
  if (s.find("2019-09") != std::string::npos) return 2019;
  return 2020;
}

const json& resolve_ref(const json& root, const json& ref, const std::string& path) {
  if (!ref.is_string()) error(path, "'$ref' must be a string");
  const std::string r = ref.get<std::string>();
  if (r.empty() || r[0] != '#' || (r.size() > 1 && r[1] != '/'))
    error(path,
          fmt::format("$ref '{}' cannot be resolved (only '#/...' pointers into this schema)", r));
  const json* at = &root;
  size_t p = 1;
  while (p < r.size()) {
    const size_t next = r.find('/', p + 1);
    const std::string tok =
        pointer_token(r.substr(p + 1, next == std::string::npos ? next : next - p - 1));
    if (at->is_object() && at->contains(tok)) {
      at = &(*at)[tok];
    } else if (at->is_array() && !tok.empty() &&
               tok.find_first_not_of("0123456789") == std::string::npos && tok.size() < 9 &&
               std::stoul(tok) < at->size()) {
      at = &(*at)[std::stoul(tok)];
    } else {
      error(path, fmt::format("$ref '{}' names nothing in the schema", r));
    }
    p = next == std::string::npos ? r.size() : next;
  }
  return *at;
}

NumericBounds numeric_bounds(const json& s, int draft, const std::string& path) {
  NumericBounds b;
  auto num = [&](const char* k) -> std::optional<double> {
    if (!s.contains(k)) return std::nullopt;
    if (!s[k].is_number()) error(path, fmt::format("'{}' must be a number", k));
    return s[k].get<double>();
  };
  auto tighter = [](std::optional<std::pair<double, bool>>& cur, double v, bool excl, bool lower) {
    if (!cur || (lower ? v > cur->first : v < cur->first) || (v == cur->first && excl))
      cur = std::make_pair(v, excl);
  };
  const std::optional<double> mn = num("minimum"), mx = num("maximum");
  if (draft <= 4) {
    auto flag = [&](const char* k) {
      if (!s.contains(k)) return false;
      if (!s[k].is_boolean()) error(path, fmt::format("'{}' must be true or false (draft 4)", k));
      return s[k].get<bool>();
    };
    const bool emin = flag("exclusiveMinimum"), emax = flag("exclusiveMaximum");
    if (mn) tighter(b.lo, *mn, emin, true);
    if (mx) tighter(b.hi, *mx, emax, false);
    return b;
  }
  if (mn) tighter(b.lo, *mn, false, true);
  if (mx) tighter(b.hi, *mx, false, false);
  if (const auto e = num("exclusiveMinimum")) tighter(b.lo, *e, true, true);
  if (const auto e = num("exclusiveMaximum")) tighter(b.hi, *e, true, false);
  return b;
}

// const as a one-value enum; draft 4's exclusive flags as draft 6's numbers.
json SchemaMerger::normalized(json s) const {
  if (s.contains("const")) {
    json e = json::array();
    if (!s.contains("enum") || !s["enum"].is_array() ||
        std::find(s["enum"].begin(), s["enum"].end(), s["const"]) != s["enum"].end())
      e.push_back(s["const"]);
    s["enum"] = e;
    s.erase("const");
  }
  if (draft_ <= 4)
    for (auto [flag, bound] :
         {std::pair{"exclusiveMinimum", "minimum"}, std::pair{"exclusiveMaximum", "maximum"}})
      if (s.contains(flag) && s[flag].is_boolean()) {
        if (s[flag].get<bool>() && s.contains(bound)) {
          s[flag] = s[bound];
          s.erase(bound);
        } else {
          s.erase(flag);
        }
      }
  return s;
}

void SchemaMerger::step(const std::string& path) {
  if (--steps_left_ < 0)
    error(path, "allOf and $ref expand into too many schemas to merge (the limit)");
  if ((steps_left_ & 255) == 0 && now_seconds() > deadline_)
    error(path, "merging allOf and $ref took longer than the compile time limit");
}

json SchemaMerger::flatten(const json& s, const std::string& path, int depth) {
  step(path);
  if (depth > max_depth_)
    error(path, "allOf or $ref nests too deeply to merge (a recursive $ref under allOf?)");
  if (s.is_boolean()) return s.get<bool>() ? json::object() : json(false);
  if (!s.is_object()) error(path, "a schema must be an object or a boolean");
  json base = s;
  std::vector<json> parts;
  if (base.contains("$ref")) {
    const json& target = resolve_ref(root_, base["$ref"], path);
    if (draft_ <= 7) return flatten(target, path, depth + 1);
    parts.push_back(flatten(target, path, depth + 1));
    base.erase("$ref");
  }
  if (base.contains("allOf")) {
    if (!base["allOf"].is_array()) error(path, "'allOf' must be an array of schemas");
    for (size_t i = 0; i < base["allOf"].size(); ++i)
      parts.push_back(flatten(base["allOf"][i], fmt::format("{}/allOf/{}", path, i), depth + 1));
    base.erase("allOf");
  }
  json out = normalized(std::move(base));
  for (const json& p : parts) out = merge(out, p, path, depth + 1);
  return out;
}

json SchemaMerger::merge_pair(const json& a, const json& b, const std::string& path) {
  return merge(flatten(a, path), flatten(b, path), path, 0);
}

json SchemaMerger::merge_child(const json& a, const json& b, const std::string& path, int depth) {
  return merge(flatten(a, path, depth + 1), flatten(b, path, depth + 1), path, depth + 1);
}

namespace {

// A keyword's value checked for the shape merging reads it in; the error names the keyword.
std::set<std::string> type_names(const json& v, const std::string& path) {
  std::set<std::string> out;
  for (const json& x : v.is_array() ? v : json::array({v})) {
    if (!x.is_string()) error(path, "'type' must be a type name or a list of type names");
    out.insert(x.get<std::string>());
  }
  return out;
}

double number_of(const json& v, const std::string& k, const std::string& path) {
  if (!v.is_number()) error(path, fmt::format("'{}' must be a number", k));
  return v.get<double>();
}

const json& array_of(const json& v, const std::string& k, const std::string& path) {
  if (!v.is_array()) error(path, fmt::format("'{}' must be an array", k));
  return v;
}

}  // namespace

void SchemaMerger::merge_key(json& out, const std::string& k, const json& va, const json& vb,
                             const std::string& path, int depth) {
  if (k == "type") {
    const std::set<std::string> ta = type_names(va, path), tb = type_names(vb, path);
    json both = json::array();
    for (const std::string& t : ta) {
      if (tb.count(t))
        both.push_back(t);
      else if (t == "integer" && tb.count("number"))
        both.push_back(t);
      else if (t == "number" && tb.count("integer"))
        both.push_back("integer");
    }
    out[k] = both;
  } else if (k == "properties") {
    if (!va.is_object() || !vb.is_object()) error(path, "'properties' must be an object");
    json merged = va;
    for (const auto& [n, x] : vb.items())
      merged[n] = va.contains(n) ? merge_child(va[n], x, path + "/properties/" + n, depth) : x;
    out[k] = std::move(merged);
  } else if (k == "required") {
    json merged = array_of(va, k, path);
    for (const json& n : array_of(vb, k, path))
      if (std::find(merged.begin(), merged.end(), n) == merged.end()) merged.push_back(n);
    out[k] = std::move(merged);
  } else if (k == "minimum" || k == "minLength" || k == "minItems" || k == "exclusiveMinimum" ||
             k == "minProperties") {
    out[k] = number_of(va, k, path) >= number_of(vb, k, path) ? va : vb;
  } else if (k == "maximum" || k == "maxLength" || k == "maxItems" || k == "exclusiveMaximum" ||
             k == "maxProperties") {
    out[k] = number_of(va, k, path) <= number_of(vb, k, path) ? va : vb;
  } else if (k == "\x01not-enum") {  // schema_negation.h's kNotEnum: none of either side's
    json both = array_of(va, k, path);
    for (const json& x : array_of(vb, k, path))
      if (std::find(both.begin(), both.end(), x) == both.end()) both.push_back(x);
    out[k] = both;
  } else if (k == "enum") {
    const json& eb = array_of(vb, k, path);
    json both = json::array();
    for (const json& x : array_of(va, k, path))
      if (std::find(eb.begin(), eb.end(), x) != eb.end()) both.push_back(x);
    out[k] = both;
  } else if (k == "not") {  // neither a nor b: not (a or b)
    out[k] = json{{"anyOf", {va, vb}}};
  } else if (k == "anyOf") {  // a branch of each: the pairs no value can satisfy left out
    const json& x = array_of(va, k, path);
    const json& y = array_of(vb, k, path);
    json pairs = json::array();
    json rest = out;  // what the pair must also satisfy (a parent's required names, say)
    rest.erase(k);
    for (const json& i : x)
      for (const json& j : y) {
        // The pair merged now: kept as {"allOf": [i, j]}, a pair of pairs would be merged again
        // at every level (eight conditionals in one allOf nest eight deep).
        json pair;
        try {
          pair = flatten(json{{"allOf", {i, j}}}, path, depth + 1);
          if (unsatisfiable(pair, depth + 1) ||
              unsatisfiable(flatten(json{{"allOf", {rest, pair}}}, path, depth + 1), depth + 1))
            continue;
        } catch (const Error&) {
          pair = {{"allOf", {i, j}}};  // left for the compiler, which names what it cannot merge
        }
        pairs.push_back(std::move(pair));
        if (pairs.size() > 64)
          error(path, "allOf with two anyOf (or conditionals) makes too many branches to enforce");
      }
    if (pairs.empty()) pairs.push_back(false);
    out[k] = std::move(pairs);
  } else if ((k == "items" && !va.is_array() && !vb.is_array()) || k == "additionalProperties") {
    out[k] = merge_child(va, vb, path + "/" + k, depth);
  } else if (is_validation_keyword(k)) {
    error(path, fmt::format("allOf with two different '{}' cannot be merged", k));
  }
}

json SchemaMerger::merge(const json& a, const json& b, const std::string& path, int depth) {
  step(path);
  if (depth > max_depth_) error(path, "allOf nests too deeply to merge");
  if (a.is_boolean() || b.is_boolean()) return json(false);  // flattened: false only
  // Two conditionals (allOf: [{if, then}, {if, then}], common in real schemas): one of them
  // becomes its anyOf of the two cases first, whose branches then pair with the other side's.
  if (a.contains("if") && b.contains("if") && (b.contains("then") || b.contains("else")))
    return merge(a, flatten(without_negations(b, *this, path, depth), path, depth + 1), path,
                 depth + 1);
  json out = a;
  for (const auto& [k, vb] : b.items()) {
    if (!out.contains(k)) {
      out[k] = vb;
      continue;
    }
    const json va = out[k];
    if (va != vb) merge_key(out, k, va, vb, path, depth);
  }
  // Each side's additionalProperties also judges the other side's properties it does not declare.
  for (const auto* side : {&a, &b}) {
    const json& other = side == &a ? b : a;
    if (!side->contains("additionalProperties")) continue;
    if (other.contains("patternProperties") || side->contains("patternProperties"))
      error(path, "allOf mixing patternProperties and additionalProperties cannot be merged");
    // Named copies: a range-for over items() of a temporary reads it after it is destroyed.
    const json mine = side->value("properties", json::object());
    const json theirs = other.value("properties", json::object());
    if (!mine.is_object() || !theirs.is_object()) error(path, "'properties' must be an object");
    if (theirs.empty()) continue;
    for (const auto& [n, x] : theirs.items()) {
      if (mine.contains(n)) continue;
      json judged = merge_child(out["properties"][n], (*side)["additionalProperties"],
                                path + "/properties/" + n, depth);
      out["properties"][n] = std::move(judged);
    }
  }
  return out;
}

bool SchemaMerger::unsatisfiable(const json& s, int depth) {
  if (s.is_boolean()) return !s.get<bool>();
  if (!s.is_object() || depth > max_depth_) return false;
  for (const char* k : {"enum", "type"})
    if (s.contains(k) && s[k].is_array() && s[k].empty()) return true;
  // A required property no value satisfies (two discriminators that differ, say).
  if (!s.contains("required") || !s["required"].is_array() || !s.contains("properties") ||
      !s["properties"].is_object())
    return false;
  for (const json& n : s["required"]) {
    if (!n.is_string() || !s["properties"].contains(n.get<std::string>())) continue;
    const json& p = s["properties"][n.get<std::string>()];
    if (p.is_boolean() ? !p.get<bool>() : unsatisfiable(flatten(p, "#", depth + 1), depth + 1))
      return true;
  }
  return false;
}

bool SchemaMerger::disjoint(const json& a, const json& b, const std::string& path) {
  if (a.is_boolean() || b.is_boolean()) return true;  // flattened: false only
  const std::set<std::string> ta = value_types(a), tb = value_types(b);
  std::set<std::string> common;
  for (const std::string& t : ta)
    if (tb.count(t)) common.insert(t);
  if (common.empty()) return true;
  if (a.contains("enum") && b.contains("enum")) {
    for (const json& x : a["enum"])
      if (std::find(b["enum"].begin(), b["enum"].end(), x) != b["enum"].end()) return false;
    return true;
  }
  if (common != std::set<std::string>{"object"}) return false;
  // A required property whose allowed values differ (a discriminator).
  const json pa = a.value("properties", json::object()), pb = b.value("properties", json::object());
  const json ra = a.value("required", json::array()), rb = b.value("required", json::array());
  for (const auto& [n, x] : pa.items()) {
    if (!pb.contains(n) || std::find(ra.begin(), ra.end(), json(n)) == ra.end() ||
        std::find(rb.begin(), rb.end(), json(n)) == rb.end())
      continue;
    const json fx = flatten(x, path), fy = flatten(pb[n], path);
    if (fx.is_object() && fy.is_object() && fx.contains("enum") && fy.contains("enum") &&
        disjoint(fx, fy, path))
      return true;
  }
  // A property one side requires and the other forbids (closed by additionalProperties false, or
  // declared as false).
  auto forbids = [](const json& s, const json& props, const json& name) {
    if (!name.is_string()) return false;
    const std::string n = name.get<std::string>();
    if (props.is_object() && props.contains(n)) return props[n] == json(false);
    if (s.contains("patternProperties") && !s["patternProperties"].empty()) return false;
    const json extra = s.value("additionalProperties", json(true));
    return extra == json(false);
  };
  for (const json& n : ra)
    if (forbids(b, pb, n)) return true;
  for (const json& n : rb)
    if (forbids(a, pa, n)) return true;
  return false;
}

void SchemaMerger::check_disjoint(const std::vector<const json*>& branches,
                                  const std::string& path) {
  std::vector<json> flat;
  for (const json* b : branches) flat.push_back(flatten(*b, path));
  for (size_t i = 0; i < flat.size(); ++i)
    for (size_t j = i + 1; j < flat.size(); ++j)
      if (!disjoint(flat[i], flat[j], path))
        error(path, fmt::format("oneOf branches {} and {} may both match, which oneOf forbids and "
                                "a grammar cannot enforce (anyOf can be; a request may opt into "
                                "oneOf as anyOf)",
                                i, j));
}

}  // namespace brisk::grammar
