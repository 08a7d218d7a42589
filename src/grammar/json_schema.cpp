#include "grammar/json_schema.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "grammar/json_values.h"
#include "grammar/pattern_keys.h"
#include "grammar/property_names.h"
#include "grammar/schema_merge.h"
#include "grammar/schema_negation.h"
#include "grammar/stacks.h"
#include "grammar/string_formats.h"

namespace brisk::grammar {
namespace {

using json = nlohmann::ordered_json;

// A grammar's texts, checked whole: lowered once, then one walk a text.
class TextCheck {
 public:
  explicit TextCheck(const Grammar& g) : bg_(lower_to_bytes(g)), st_(bg_) {}
  TextCheck(const TextCheck&) = delete;
  TextCheck& operator=(const TextCheck&) = delete;
  bool accepts(std::string_view text) {
    int32_t s = st_.start();
    for (char c : text) s = st_.step(s, static_cast<uint8_t>(c));
    return (st_.flags(s) & StackSets::kAccept) != 0;
  }

 private:
  ByteGrammar bg_;
  StackSets st_;
};

// Whether the pattern (search semantics, as enforced) matches the text.
bool pattern_matches(const std::string& pattern, const std::string& text, const std::string& path) {
  Grammar g;
  try {
    g.set_root(add_regex_search(g, pattern, "pattern"));
  } catch (const Error& e) {
    fail("json_schema: at {}: {}", path, e.what());
  }
  return TextCheck(g).accepts(text);
}

const char* const kTypes[] = {"null", "boolean", "object", "array", "string", "number", "integer"};

class SchemaCompiler {
 public:
  SchemaCompiler(Grammar& g, const json& root, const SchemaOptions& o)
      : g_(g), root_(root), o_(o), t0_(now_seconds()) {
    draft_ = o.draft ? o.draft : schema_draft(root);
    json_ = add_json_rules(g, o.style);
  }

  int32_t compile() {
    check_ids(root_, 0, true);
    const int32_t v = value(root_, "#", 0);
    if (v < 0) fail("json_schema: the schema accepts no value at all");
    const int32_t r = g_.add_rule("schema");
    g_.add_alt(r, {Symbol::ref(json_.ws), Symbol::ref(v), Symbol::ref(json_.ws)});
    return r;
  }

 private:
  [[noreturn]] void error(const std::string& path, const std::string& what) const {
    fail("json_schema: at {}: {}", path, what);
  }

  // $id in a subschema moves the base $ref resolves against; refused where a $ref could see it.
  void check_ids(const json& s, int depth, bool top) {
    if (depth > 2 * o_.max_depth) error("#", "the schema nests too deeply");
    if (s.is_object()) {
      for (const char* id : {"$id", "id"})
        if (!top && s.contains(id) && s[id].is_string() && has_ref_) {
          if (std::string(id) == "id" && draft_ > 4) continue;
          error("#", fmt::format("'{}' in a subschema (a new base for $ref) is not supported", id));
        }
      if (s.contains("$ref")) has_ref_ = true;
      for (const auto& [k, v] : s.items()) check_ids(v, depth + 1, false);
    } else if (s.is_array()) {
      for (const auto& v : s) check_ids(v, depth + 1, false);
    }
  }

  void tick(int depth, const std::string& path) {
    if (depth > o_.max_depth)
      error(path, fmt::format("schemas nest deeper than {} (the limit)", o_.max_depth));
    if (now_seconds() - t0_ > o_.max_seconds)
      error(path, fmt::format("compiling took longer than {} s (the limit)", o_.max_seconds));
  }

  // A rule matching exactly the values s accepts, or -1 when it accepts none. A keyword whose
  // value has the wrong JSON type anywhere below is reported at its schema's path (innermost
  // first: an Error is not a json::exception, so outer levels let it pass).
  int32_t value(const json& s, const std::string& path, int depth) {
    try {
      return checked_value(s, path, depth);
    } catch (const nlohmann::json::exception& e) {
      error(path, fmt::format("a keyword has a value of the wrong type ({})", e.what()));
    }
  }

  int32_t checked_value(const json& s, const std::string& path, int depth) {
    tick(depth, path);
    if (s.is_boolean()) return s.get<bool>() ? json_.value : -1;
    if (!s.is_object()) error(path, "a schema must be an object or a boolean");
    if (s.contains("$ref") && (draft_ <= 7 || !has_validation_siblings(s)))
      return ref_rule(s["$ref"], path, depth);
    if (s.contains("$ref") || s.contains("allOf"))
      return value(own(merger().flatten(s, path)), path, depth + 1);
    for (const char* k : {"dependencies", "dependentRequired", "dependentSchemas"})
      if (s.contains(k)) return value(own(without_dependencies(s, path)), path, depth + 1);
    if (s.contains("not") || (s.contains("if") && (s.contains("then") || s.contains("else")))) {
      SchemaMerger m = merger();
      return value(own(without_negations(s, m, path)), path, depth + 1);
    }
    for (const char* k : {"contains", "minContains", "maxContains", "unevaluatedItems",
                          "unevaluatedProperties", "$dynamicRef", "$recursiveRef"})
      if (s.contains(k)) error(path, fmt::format("'{}' cannot be enforced", k));
    if (s.contains("anyOf") || s.contains("oneOf")) return alternatives(s, path, depth);
    return typed(s, path, depth);
  }

  static bool has_validation_siblings(const json& s) {
    for (const auto& [k, v] : s.items())
      if (k != "$ref" && is_validation_keyword(k)) return true;
    return false;
  }

  SchemaMerger merger() { return SchemaMerger(root_, draft_, o_.max_depth, t0_ + o_.max_seconds); }
  const json& own(json s) {
    owned_.push_back(std::make_unique<json>(std::move(s)));
    return *owned_.back();
  }

  int32_t ref_rule(const json& ref, const std::string& path, int depth) {
    const json& target = resolve_ref(root_, ref, path);
    if (target.is_boolean() && !target.get<bool>()) return -1;
    if (auto it = ref_rules_.find(&target); it != ref_rules_.end()) return it->second;
    // The rule exists before its body, so a recursive reference finds it.
    const int32_t r = g_.add_rule("ref");
    ref_rules_[&target] = r;
    const int32_t v = value(target, ref.get<std::string>(), depth + 1);
    if (v < 0) error(path, fmt::format("$ref {} accepts no value", ref.dump()));
    g_.add_alt(r, {Symbol::ref(v)});
    return r;
  }

  int32_t alternatives(const json& s, const std::string& path, int depth) {
    if (s.contains("anyOf") && s.contains("oneOf"))
      error(path, "anyOf and oneOf together cannot be enforced");
    const std::string key = s.contains("anyOf") ? "anyOf" : "oneOf";
    const json& branches = s[key];
    if (!branches.is_array() || branches.empty())
      error(path, fmt::format("'{}' must be a non-empty array of schemas", key));
    json base = s;
    base.erase(key);
    const bool siblings = has_validation_siblings(base);
    std::vector<const json*> parts;
    for (size_t i = 0; i < branches.size(); ++i) {
      const std::string p = fmt::format("{}/{}/{}", path, key, i);
      parts.push_back(siblings ? &own(merger().merge_pair(base, branches[i], p)) : &branches[i]);
    }
    if (key == "oneOf" && !o_.oneof_as_anyof) {
      try {
        merger().check_disjoint(parts, path);
      } catch (const Error&) {
        // Branches that may overlap: each one without the others, where that is a schema.
        const auto exclusive = exclusive_branches(parts, path, depth);
        if (!exclusive) throw;
        parts = *exclusive;
      }
    }
    const int32_t r = g_.add_rule(key);
    for (size_t i = 0; i < parts.size(); ++i) {
      const int32_t v = value(*parts[i], fmt::format("{}/{}/{}", path, key, i), depth + 1);
      if (v >= 0) g_.add_alt(r, {Symbol::ref(v)});
    }
    return g_.rule(r).alts.empty() ? -1 : r;
  }

  // oneOf [B1, ..., Bn] as anyOf [B1 and not the others, ...], when every branch's complement is a
  // schema (schema_negation.h) or the branch is a list of values (then those that another branch
  // accepts are dropped); nullopt otherwise.
  std::optional<std::vector<const json*>> exclusive_branches(const std::vector<const json*>& parts,
                                                             const std::string& path, int depth) {
    SchemaMerger m = merger();
    std::vector<json> flat;
    std::vector<std::optional<json>> negated;
    for (const json* b : parts) {
      flat.push_back(m.flatten(*b, path));
      try {
        negated.push_back(negate_schema(flat.back(), m, path));
      } catch (const Error&) {
        negated.push_back(std::nullopt);
      }
    }
    auto is_values = [&](size_t i) {
      return flat[i].is_object() && flat[i].contains("enum") && flat[i]["enum"].is_array();
    };
    // Whether branch j accepts the value v: each branch's grammar compiled once, on first use.
    std::vector<std::unique_ptr<TextCheck>> checks(flat.size());
    std::vector<bool> built(flat.size(), false);
    auto accepts = [&](size_t j, const json& v) {
      if (!built[j]) {
        built[j] = true;
        checks[j] = branch_check(flat[j], path, depth);
      }
      return checks[j] && checks[j]->accepts(v.dump());
    };
    std::vector<const json*> out;
    for (size_t i = 0; i < flat.size(); ++i) {
      if (is_values(i)) {
        json kept = flat[i];
        kept["enum"] = json::array();
        for (const json& v : flat[i]["enum"]) {
          // Decided by matching v's text, which is exact for scalars written one way only.
          if (!(v.is_string() || v.is_boolean() || v.is_null() || v.is_number_integer()))
            return std::nullopt;
          bool elsewhere = false;
          for (size_t j = 0; j < flat.size() && !elsewhere; ++j)
            elsewhere = j != i && accepts(j, v);
          if (!elsewhere) kept["enum"].push_back(v);
        }
        out.push_back(&own(std::move(kept)));
        continue;
      }
      json all = json::array({flat[i]});
      for (size_t j = 0; j < flat.size(); ++j) {
        if (j == i) continue;
        if (is_values(j)) {  // only the values of j that i also accepts are left out of i
          json both = json::array();
          for (const json& v : flat[j]["enum"])
            if (accepts(i, v)) both.push_back(v);
          if (!both.empty()) all.push_back({{kNotEnum, std::move(both)}});
          continue;
        }
        if (!negated[j]) return std::nullopt;
        all.push_back(*negated[j]);
      }
      out.push_back(&own(json{{"allOf", std::move(all)}}));
    }
    return out;
  }

  // The compact texts of the values the schema s (of this document) accepts, as a check; null
  // where s accepts nothing or cannot be compiled.
  std::unique_ptr<TextCheck> branch_check(const json& s, const std::string& path, int depth) {
    Grammar g;
    try {
      SchemaOptions o = o_;
      o.style.compact = true;
      SchemaCompiler sub(g, root_, o);
      sub.t0_ = t0_;
      const int32_t rule = sub.value(s, path, depth + 1);
      if (rule < 0) return nullptr;
      g.set_root(rule);
      return std::make_unique<TextCheck>(g);
    } catch (const Error&) {
      return nullptr;
    }
  }

  int32_t typed(const json& s, const std::string& path, int depth) {
    if (s.contains("enum") || s.contains("const")) return literals(s, path, depth);
    const std::vector<std::string> types = type_set(s, path);
    const Excluded ex = excluded(s, types, path);
    const int32_t r = g_.add_rule("value");
    for (const std::string& t : types) {
      int32_t v = -1;
      if (t == "null" && !ex.null) v = add_literal(g_, nullptr, json_.ws);
      if (t == "boolean") {
        v = g_.add_rule("boolean");
        for (bool b : {true, false})
          if (!ex.booleans.count(b)) g_.add_alt(v, {Symbol::ref(add_literal(g_, b, json_.ws))});
        if (g_.rule(v).alts.empty()) v = -1;
      }
      if (t == "string") v = ex.strings.empty() ? string(s, path) : string_except(s, ex, path);
      if (t == "number" || t == "integer") v = number(s, path, t == "integer");
      if (t == "object") v = object(s, path, depth);
      if (t == "array") v = array(s, path, depth);
      if (v >= 0) g_.add_alt(r, {Symbol::ref(v)});
    }
    return g_.rule(r).alts.empty() ? -1 : r;
  }

  // What a negated enum (kNotEnum) leaves out, by type; values it cannot leave out of a grammar
  // (numbers, objects, arrays) are refused where their type is allowed.
  struct Excluded {
    bool null = false;
    std::set<bool> booleans;
    std::vector<std::string> strings;
  };
  static Excluded excluded(const json& s, const std::vector<std::string>& types,
                           const std::string& path) {
    Excluded ex;
    if (!s.contains(kNotEnum)) return ex;
    for (const json& v : s[kNotEnum]) {
      if (v.is_null())
        ex.null = true;
      else if (v.is_boolean())
        ex.booleans.insert(v.get<bool>());
      else if (v.is_string())
        ex.strings.push_back(v.get<std::string>());
      else if (has_type(v, types))
        fail(
            "json_schema: at {}: 'not' over the value {} cannot be enforced (only over null, "
            "booleans and strings)",
            path, v.dump());
    }
    return ex;
  }

  int32_t string_except(const json& s, const Excluded& ex, const std::string& path) {
    for (const char* k : {"pattern", "minLength", "maxLength"})
      if (s.contains(k))
        error(path, fmt::format("'not' over strings beside '{}' cannot be enforced", k));
    if (s.contains("format") && s["format"].is_string() &&
        !format_is_annotation(s["format"].get<std::string>()))
      error(path, "'not' over strings beside 'format' cannot be enforced");
    try {
      return add_string_except(g_, ex.strings, &name_escapes_);
    } catch (const Error& e) {
      error(path, e.what());
    }
  }

  // The types s allows: its `type` (integer dropped where number is there), else all.
  static std::vector<std::string> type_set(const json& s, const std::string& path) {
    std::vector<std::string> named;
    if (!s.contains("type")) {
      named = {"null", "boolean", "object", "array", "string", "number"};
    } else {
      const json& t = s["type"];
      for (const json& x : t.is_array() ? t : json::array({t})) {
        if (!x.is_string() || std::find(std::begin(kTypes), std::end(kTypes),
                                        x.get<std::string>()) == std::end(kTypes))
          fail("json_schema: at {}: 'type' {} is not a JSON Schema type", path, x.dump());
        if (std::find(named.begin(), named.end(), x.get<std::string>()) == named.end())
          named.push_back(x.get<std::string>());
      }
    }
    if (std::find(named.begin(), named.end(), "number") != named.end())
      named.erase(std::remove(named.begin(), named.end(), "integer"), named.end());
    return named;
  }

  // A check of a value's compact text against the schema s; nothing when s accepts no value.
  std::optional<std::unique_ptr<TextCheck>> value_check(const json& s, const std::string& path,
                                                        int depth) {
    Grammar g;
    SchemaOptions o = o_;
    o.style.compact = true;
    SchemaCompiler sub(g, root_, o);
    sub.t0_ = t0_;
    const int32_t rule = sub.value(s, path, depth + 1);
    if (rule < 0) return std::nullopt;
    g.set_root(rule);
    return std::make_unique<TextCheck>(g);
  }

  // Checks of enum or const values against the schema's other keywords: all of them at once, or
  // where that schema cannot be compiled as a grammar (minLength beside pattern), each keyword
  // (or group of keywords read together) apart, since a value must pass them all. Empty
  // (nullopt) when some part accepts no value at all.
  std::optional<std::vector<std::unique_ptr<TextCheck>>> literal_checks(const json& s,
                                                                        const std::string& path,
                                                                        int depth) {
    json rest = json::object();
    for (const auto& [k, v] : s.items())
      if (k != "enum" && k != "const" && k != kNotEnum && k != "type" && is_validation_keyword(k))
        rest[k] = v;
    std::vector<std::unique_ptr<TextCheck>> out;
    if (rest.empty()) return out;
    try {
      auto c = value_check(rest, path, depth);
      if (!c) return std::nullopt;
      out.push_back(std::move(*c));
      return out;
    } catch (const Error&) {
    }
    static const std::vector<std::vector<std::string>> kTogether = {
        {"properties", "patternProperties", "additionalProperties", "required", "propertyNames",
         "minProperties", "maxProperties", "dependencies", "dependentRequired", "dependentSchemas",
         "unevaluatedProperties"},
        {"items", "prefixItems", "additionalItems", "contains", "minItems", "maxItems",
         "uniqueItems", "minContains", "maxContains", "unevaluatedItems"},
        {"if", "then", "else"},
        {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}};
    std::map<std::string, json> parts;
    for (const auto& [k, v] : rest.items()) {
      std::string group = k;
      for (const auto& together : kTogether)
        if (std::find(together.begin(), together.end(), k) != together.end()) group = together[0];
      if (!parts.count(group)) parts[group] = json::object();
      parts[group][k] = v;
    }
    for (const auto& [group, part] : parts) {
      std::optional<std::unique_ptr<TextCheck>> c;
      try {
        c = value_check(part, path, depth);
      } catch (const Error& e) {
        error(path, fmt::format("'{}' together with enum or const cannot be enforced: {}",
                                part.begin().key(), e.what()));
      }
      if (!c) return std::nullopt;
      out.push_back(std::move(*c));
    }
    return out;
  }

  // The values of enum or const that the schema's other keywords accept.
  int32_t literals(const json& s, const std::string& path, int depth) {
    auto checks = literal_checks(s, path, depth);
    if (!checks) return -1;
    const json excluded = s.value(kNotEnum, json::array());
    json values = s.contains("const") ? json::array({s["const"]}) : s["enum"];
    if (!values.is_array()) error(path, "'enum' must be an array");
    if (s.contains("const") && s.contains("enum")) {
      json both = json::array();
      for (const json& v : s["enum"])
        if (v == s["const"]) both.push_back(v);
      values = both;
    }
    const std::vector<std::string> types = type_set(s, path);
    const int32_t r = g_.add_rule("enum");
    std::vector<json> seen;
    for (const json& v : values) {
      if (std::find(seen.begin(), seen.end(), v) != seen.end() || !has_type(v, types) ||
          std::find(excluded.begin(), excluded.end(), v) != excluded.end())
        continue;
      const std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
      if (!std::all_of(checks->begin(), checks->end(),
                       [&](const auto& c) { return c->accepts(text); }))
        continue;
      seen.push_back(v);
      g_.add_alt(r, {Symbol::ref(add_literal(g_, v, json_.ws))});
    }
    return seen.empty() ? -1 : r;
  }

  static bool has_type(const json& v, const std::vector<std::string>& types) {
    auto in = [&](const char* t) {
      return std::find(types.begin(), types.end(), t) != types.end();
    };
    switch (v.type()) {
      case json::value_t::null:
        return in("null");
      case json::value_t::boolean:
        return in("boolean");
      case json::value_t::object:
        return in("object");
      case json::value_t::array:
        return in("array");
      case json::value_t::string:
        return in("string");
      case json::value_t::number_float: {
        const double d = v.get<double>();
        return in("number") || (in("integer") && std::isfinite(d) && d == std::floor(d));
      }
      default:
        return in("number") || in("integer");
    }
  }

  int32_t string(const json& s, const std::string& path) {
    StringSpec spec;
    auto count = [&](const char* k) -> std::optional<uint32_t> {
      if (!s.contains(k)) return std::nullopt;
      const json& v = s[k];
      if (!v.is_number() || v.get<double>() < 0 || v.get<double>() != std::floor(v.get<double>()))
        error(path, fmt::format("'{}' must be a non-negative integer", k));
      return static_cast<uint32_t>(std::min(v.get<double>(), 4e9));
    };
    spec.min_length = count("minLength").value_or(0);
    spec.max_length = count("maxLength");
    if (s.contains("pattern")) {
      if (!s["pattern"].is_string()) error(path, "'pattern' must be a string");
      spec.pattern = s["pattern"].get<std::string>();
    }
    if (s.contains("format") && s["format"].is_string())
      spec.format = s["format"].get<std::string>();
    return shared_string(spec, path);
  }

  // One rule for each kind of string however many properties have it: a grammar position's
  // classification of the vocabulary is computed once (the first visit to a string's body walks
  // the whole vocabulary trie), so copies would each cost it again.
  int32_t shared_string(const StringSpec& spec, const std::string& path) {
    const std::string key =
        fmt::format("{}|{}|{}|{}", spec.min_length,
                    spec.max_length ? int64_t{*spec.max_length} : -1, spec.format, spec.pattern);
    if (auto it = strings_.find(key); it != strings_.end()) return it->second;
    try {
      return strings_[key] = add_string(g_, spec, &bodies_);
    } catch (const Error& e) {
      error(path, e.what());
    }
  }

  int32_t number(const json& s, const std::string& path, bool integer) {
    if (s.contains("multipleOf")) {
      const json& m = s["multipleOf"];
      if (!m.is_number() || m.get<double>() != 1.0)
        error(path, "'multipleOf' cannot be enforced (except 1)");
      integer = true;
    }
    const NumericBounds b = numeric_bounds(s, draft_, path);
    std::optional<NumberBound> nlo, nhi;
    if (b.lo) nlo = NumberBound{b.lo->first, b.lo->second};
    if (b.hi) nhi = NumberBound{b.hi->first, b.hi->second};
    std::optional<Bound> lo, hi;
    auto to_bound = [&](double v, bool excl, bool upper) -> Bound {
      if (std::fabs(v) > static_cast<double>(kMaxBound))
        error(path, fmt::format("a bound of {} is past what can be enforced", v));
      if (v == std::floor(v)) return {static_cast<int64_t>(v), excl};
      // On integers a fractional bound is the integer inside it.
      return {static_cast<int64_t>(upper ? std::floor(v) : std::ceil(v)), false};
    };
    if (integer && b.lo) lo = to_bound(b.lo->first, b.lo->second, false);
    if (integer && b.hi) hi = to_bound(b.hi->first, b.hi->second, true);
    // One rule per kind of number, as for strings: each copy's digit chains would be classified
    // on their own first visits.
    auto text = [](const auto& bound) {
      return bound ? fmt::format("{}{}", bound->value, bound->exclusive ? "x" : "")
                   : std::string("-");
    };
    const std::string key = integer ? fmt::format("i|{}|{}", text(lo), text(hi))
                                    : fmt::format("n|{}|{}", text(nlo), text(nhi));
    if (auto it = numbers_.find(key); it != numbers_.end()) return it->second;
    try {
      return numbers_[key] = integer ? add_integer(g_, lo, hi) : add_number(g_, nlo, nhi);
    } catch (const Error& e) {
      error(path, e.what());
    }
  }

  int32_t object(const json& s, const std::string& path, int depth);
  int32_t object_members(const std::vector<std::pair<int32_t, bool>>& members, int32_t extra);
  int32_t counted_members(const std::vector<std::pair<int32_t, bool>>& members, int32_t extra,
                          uint64_t min, std::optional<uint64_t> max, const std::string& path);
  int32_t extra_members(const json& s, const std::vector<std::string>& names,
                        const NameLanguage* allowed, const std::string& path, int depth);
  void pattern_members(const json& pp, const std::vector<std::string>& patterns, const json& extra,
                       const std::vector<std::string>& names, const NameLanguage* allowed,
                       const std::string& path, int depth,
                       const std::function<void(int32_t, int32_t)>& add);
  std::optional<NameLanguage> allowed_names(const json& s, const std::string& path);
  int32_t array(const json& s, const std::string& path, int depth);
  std::optional<std::vector<json>> finite_values(const json& items, const std::string& path);
  int32_t unique_items(const json& items, uint64_t min, uint64_t max, const std::string& path);

  Grammar& g_;
  const json& root_;
  SchemaOptions o_;
  int draft_;
  double t0_;
  bool has_ref_ = false;
  JsonRules json_{};
  std::map<const json*, int32_t> ref_rules_;
  std::map<std::string, int32_t> strings_;  // by spec
  std::map<std::string, int32_t> numbers_;  // by kind and bounds
  StringBodies bodies_;                     // their length chains
  NameEscapes name_escapes_;                // shared by the keys that are none of some names
  std::vector<std::unique_ptr<json>> owned_;
};

int32_t SchemaCompiler::object(const json& s, const std::string& path, int depth) {
  const json props = s.value("properties", json::object());
  const json required = s.value("required", json::array());
  if (!props.is_object()) error(path, "'properties' must be an object");
  if (!required.is_array()) error(path, "'required' must be an array");
  auto is_required = [&](const std::string& n) {
    return std::find(required.begin(), required.end(), json(n)) != required.end();
  };
  const std::optional<NameLanguage> allowed = allowed_names(s, path);
  auto named_ok = [&](const std::string& n) { return !allowed || allowed->accepts(n); };
  std::vector<std::string> names;
  std::vector<std::pair<int32_t, bool>> members;  // member rule, required
  auto member = [&](const std::string& name, int32_t value) {
    const int32_t m = g_.add_rule("member");
    g_.add_alt(m, {Symbol::ref(add_literal(g_, json(name), json_.ws)), Symbol::ref(json_.ws),
                   Symbol::one(':'), Symbol::ref(json_.ws), Symbol::ref(value)});
    return m;
  };
  for (const auto& [name, sub] : props.items()) {
    if (!named_ok(name)) {  // propertyNames refuses the name: the property cannot be present
      if (is_required(name)) return -1;
      continue;
    }
    names.push_back(name);
    const int32_t v = value(sub, path + "/properties/" + name, depth + 1);
    if (v < 0) {
      if (is_required(name)) return -1;  // a required property no value satisfies
      continue;
    }
    members.push_back({member(name, v), is_required(name)});
  }
  // Required names the properties leave out take additionalProperties' schema.
  const json extra = s.value("additionalProperties", json(true));
  for (const json& n : required) {
    if (!n.is_string()) error(path, "'required' must list strings");
    const std::string name = n.get<std::string>();
    if (props.contains(name)) continue;
    if (!named_ok(name)) return -1;
    if (s.contains("patternProperties"))
      error(path, "a required property left to patternProperties cannot be enforced");
    names.push_back(name);
    const int32_t v = value(extra, path + "/additionalProperties", depth + 1);
    if (v < 0) return -1;
    members.push_back({member(name, v), true});
  }
  const size_t n_required = static_cast<size_t>(
      std::count_if(members.begin(), members.end(), [](const auto& m) { return m.second; }));
  const int32_t more = extra_members(s, names, allowed ? &*allowed : nullptr, path, depth);
  for (const char* k : {"minProperties", "maxProperties"})
    if (s.contains(k) && !s[k].is_number()) error(path, fmt::format("'{}' must be a number", k));
  auto count = [&](const char* k) -> std::optional<uint64_t> {
    if (!s.contains(k)) return std::nullopt;
    const double v = s[k].get<double>();
    if (v < 0 || v != std::floor(v)) error(path, fmt::format("'{}' must be a count", k));
    return static_cast<uint64_t>(std::min(v, 1e9));
  };
  const uint64_t min_props = count("minProperties").value_or(0);
  const std::optional<uint64_t> max_props = count("maxProperties");
  const bool min_binds = min_props > n_required;
  const bool max_binds = max_props && (more >= 0 || *max_props < members.size());
  if (min_binds || max_binds) return counted_members(members, more, min_props, max_props, path);
  return object_members(members, more);
}

// The keys beyond the declared ones (patternProperties' or additionalProperties') as one member
// rule, or -1 when there are none.
// propertyNames as a language of names (property_names.h); nothing when it allows every name.
std::optional<NameLanguage> SchemaCompiler::allowed_names(const json& s, const std::string& path) {
  if (!s.contains("propertyNames")) return std::nullopt;
  const std::string at = path + "/propertyNames";
  const json* pn = &s["propertyNames"];
  for (int hops = 0; pn->is_object() && pn->size() == 1 && pn->contains("$ref"); ++hops) {
    if (hops == 64) error(at, "$ref chains past 64 links");
    pn = &resolve_ref(root_, (*pn)["$ref"], at);
  }
  std::optional<NameLanguage> out;
  try {
    out = property_names(*pn);
  } catch (const Error& e) {
    error(at, e.what());
  }
  if (out->any) out.reset();
  return out;
}

int32_t SchemaCompiler::extra_members(const json& s, const std::vector<std::string>& names,
                                      const NameLanguage* allowed, const std::string& path,
                                      int depth) {
  if (allowed && allowed->none) return -1;
  const json extra = s.value("additionalProperties", json(true));
  const int32_t m = g_.add_rule("extra-member");
  auto add = [&](int32_t key, int32_t value) {
    g_.add_alt(m, {Symbol::ref(key), Symbol::ref(json_.ws), Symbol::one(':'), Symbol::ref(json_.ws),
                   Symbol::ref(value)});
  };
  if (s.contains("patternProperties") && !s["patternProperties"].is_object())
    error(path, "'patternProperties' must be an object");
  if (s.contains("patternProperties") && !s["patternProperties"].empty()) {
    const json& pp = s["patternProperties"];
    std::vector<std::string> patterns;
    bool one_schema = true;
    for (const auto& [pattern, sub] : pp.items()) {
      for (const std::string& n : names)
        if (pattern_matches(pattern, n, path))
          error(path, fmt::format("property '{}' also matches patternProperties '{}': cannot be "
                                  "enforced",
                                  n, pattern));
      patterns.push_back(pattern);
      one_schema = one_schema && sub == pp.begin().value();
    }
    if (one_schema && extra.is_boolean() && !extra.get<bool>() && !allowed) {
      // Every key matches a pattern and takes the one schema: no need to tell patterns apart.
      const int32_t v = value(pp.begin().value(), path + "/patternProperties", depth + 1);
      for (const std::string& pattern : patterns) {
        StringSpec spec;
        spec.pattern = pattern;
        if (v >= 0) add(shared_string(spec, path + "/patternProperties"), v);
      }
    } else {
      pattern_members(pp, patterns, extra, names, allowed, path, depth, add);
    }
  } else if (allowed) {
    pattern_members(json::object(), {}, extra, names, allowed, path, depth, add);
  } else if (!(extra.is_boolean() && !extra.get<bool>())) {
    const int32_t v = value(extra, path + "/additionalProperties", depth + 1);
    if (v >= 0) add(add_string_except(g_, names, &name_escapes_), v);
  }
  return g_.rule(m).alts.empty() ? -1 : m;
}

// Extra keys told apart by the patterns they match (pattern_keys.h): each class of keys takes
// the schemas of its patterns, or additionalProperties' when it matches none.
void SchemaCompiler::pattern_members(const json& pp, const std::vector<std::string>& patterns,
                                     const json& extra, const std::vector<std::string>& names,
                                     const NameLanguage* allowed, const std::string& path,
                                     int depth, const std::function<void(int32_t, int32_t)>& add) {
  const auto first = static_cast<int32_t>(g_.rules().size());
  std::vector<PatternKeys> classes;
  try {
    classes = add_pattern_keys(g_, patterns, names, allowed ? &allowed->grammar : nullptr);
  } catch (const Error& e) {
    error(path + "/patternProperties", e.what());
  }
  to_json_chars(g_, first);
  for (const PatternKeys& k : classes) {
    int32_t v = -1;
    if (k.patterns.empty()) {
      if (extra.is_boolean() && !extra.get<bool>()) continue;
      v = value(extra, path + "/additionalProperties", depth + 1);
    } else if (k.patterns.size() == 1) {
      const std::string& p = patterns[k.patterns[0]];
      v = value(pp[p], path + "/patternProperties/" + p, depth + 1);
    } else {
      json all = json::array();
      for (size_t i : k.patterns) all.push_back(pp[patterns[i]]);
      v = value(json{{"allOf", std::move(all)}}, path + "/patternProperties", depth + 1);
    }
    if (v < 0) continue;
    const int32_t key = g_.add_rule("key");
    g_.add_alt(key, {Symbol::one('"'), Symbol::ref(k.rule), Symbol::one('"')});
    add(key, v);
  }
}

// object_members with the members counted, for minProperties and maxProperties: rule (i, c)
// holds the members from declared member i on after c members, the count going as far as the
// bound that matters (and staying there when there is no maximum).
int32_t SchemaCompiler::counted_members(const std::vector<std::pair<int32_t, bool>>& members,
                                        int32_t extra, uint64_t min, std::optional<uint64_t> max,
                                        const std::string& path) {
  constexpr uint64_t kMaxCount = 64;
  const uint64_t top = max ? *max : min;  // counts above `top` are `top` (no maximum) or refused
  if (top > kMaxCount)
    error(path,
          fmt::format("minProperties or maxProperties past {} cannot be enforced", kMaxCount));
  if (max && *max < min) return -1;
  const int32_t ws = json_.ws;
  auto sep = [&](uint64_t c) {
    return c == 0 ? Sequence{Symbol::ref(ws)}
                  : Sequence{Symbol::ref(ws), Symbol::one(','), Symbol::ref(ws)};
  };
  auto next = [&](uint64_t c) { return max ? c + 1 : std::min(c + 1, top); };
  const size_t n = members.size();
  // A rule left without alternatives (no way on from there) is never referred to: -1.
  auto alive = [&](int32_t rule) { return g_.rule(rule).alts.empty() ? -1 : rule; };
  // tail[c]: the extra members after c members in all. A rule with no maximum loops on itself
  // at the top count, so each is made before its alternatives.
  std::vector<int32_t> tail(top + 1);
  for (uint64_t c = top + 1; c-- > 0;) {
    tail[c] = g_.add_rule("members");
    if (c >= min) g_.add_alt(tail[c], {});
  }
  for (uint64_t c = top + 1; c-- > 0;) {
    if (extra < 0 || (max && c >= *max)) continue;
    Sequence more = sep(c);
    more.push_back(Symbol::ref(extra));
    more.push_back(Symbol::ref(tail[next(c)]));
    if (next(c) == c || !g_.rule(tail[next(c)]).alts.empty()) g_.add_alt(tail[c], std::move(more));
  }
  std::vector<int32_t> decl(top + 1);
  for (uint64_t c = 0; c <= top; ++c) decl[c] = alive(tail[c]);
  // decl[c] for member i, built from the last member back.
  for (size_t i = n; i-- > 0;) {
    const auto [m, required] = members[i];
    std::vector<int32_t> here(top + 1);
    for (uint64_t c = 0; c <= top; ++c) {
      here[c] = g_.add_rule("members");
      if ((!max || c < *max) && decl[next(c)] >= 0) {
        Sequence take = sep(c);
        take.push_back(Symbol::ref(m));
        take.push_back(Symbol::ref(decl[next(c)]));
        g_.add_alt(here[c], std::move(take));
      }
      if (!required && decl[c] >= 0) g_.add_alt(here[c], {Symbol::ref(decl[c])});
      here[c] = alive(here[c]);
    }
    decl = std::move(here);
  }
  if (decl[0] < 0) return -1;
  const int32_t r = g_.add_rule("object");
  g_.add_alt(r, {Symbol::one('{'), Symbol::ref(decl[0]), Symbol::ref(ws), Symbol::one('}')});
  return r;
}

// "{" then the declared members in order (the optional ones may be left out), then any number of
// extra members, commas between; rule i has two forms: before any member (first) and after one.
int32_t SchemaCompiler::object_members(const std::vector<std::pair<int32_t, bool>>& members,
                                       int32_t extra) {
  const int32_t ws = json_.ws;
  const Sequence comma = {Symbol::ref(ws), Symbol::one(','), Symbol::ref(ws)};
  // After the declared members, the extra ones: `first` before any member, `after` after one.
  int32_t first = g_.add_rule("members"), after = g_.add_rule("members");
  g_.add_alt(first, {});
  if (extra >= 0) {
    Sequence more = comma;
    more.push_back(Symbol::ref(extra));
    more.push_back(Symbol::ref(after));
    g_.add_alt(after, std::move(more));
    g_.add_alt(first, {Symbol::ref(ws), Symbol::ref(extra), Symbol::ref(after)});
  }
  g_.add_alt(after, {});
  for (size_t i = members.size(); i-- > 0;) {
    const auto [m, req] = members[i];
    const int32_t f = g_.add_rule("members"), a = g_.add_rule("members");
    g_.add_alt(f, {Symbol::ref(ws), Symbol::ref(m), Symbol::ref(after)});
    Sequence next = comma;
    next.push_back(Symbol::ref(m));
    next.push_back(Symbol::ref(after));
    g_.add_alt(a, std::move(next));
    if (!req) {
      g_.add_alt(f, {Symbol::ref(first)});
      g_.add_alt(a, {Symbol::ref(after)});
    }
    first = f;
    after = a;
  }
  const int32_t r = g_.add_rule("object");
  g_.add_alt(r, {Symbol::one('{'), Symbol::ref(first), Symbol::ref(ws), Symbol::one('}')});
  return r;
}

// The values an items schema allows when they are few and known (enum, const, boolean, null),
// else none.
std::optional<std::vector<json>> SchemaCompiler::finite_values(const json& items,
                                                               const std::string& path) {
  if (!items.is_object()) return std::nullopt;
  const json flat = merger().flatten(items, path);
  if (!flat.is_object()) return std::nullopt;
  for (const auto& [k, v] : flat.items())
    if (k != "enum" && k != "const" && k != "type" && is_validation_keyword(k)) return std::nullopt;
  const std::vector<std::string> types = type_set(flat, path);
  std::vector<json> candidates;
  if (flat.contains("enum") || flat.contains("const")) {
    const json values = flat.contains("enum") ? flat["enum"] : json::array({flat["const"]});
    if (!values.is_array()) error(path, "'enum' must be an array");
    for (const json& v : values)
      if (!flat.contains("const") || v == flat["const"]) candidates.push_back(v);
  } else if (flat.contains("type")) {
    for (const std::string& t : types) {
      if (t == "boolean")
        candidates.insert(candidates.end(), {json(false), json(true)});
      else if (t == "null")
        candidates.push_back(nullptr);
      else
        return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  std::vector<json> out;
  for (const json& v : candidates)
    if (has_type(v, types) && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}

// uniqueItems over items of a few known values: which values have been used is the state, so an
// array of n values has 2^n rules (n at most 10), each taking any unused value next.
int32_t SchemaCompiler::unique_items(const json& items, uint64_t min, uint64_t max,
                                     const std::string& path) {
  const auto values = finite_values(items, path);
  if (!values)
    error(path,
          "'uniqueItems' cannot be enforced (only over items of a few known values: enum, "
          "const, boolean)");
  const size_t n = values->size();
  constexpr size_t kMaxValues = 10;
  if (n > kMaxValues)
    error(path, fmt::format("'uniqueItems' over {} values cannot be enforced (at most {})", n,
                            kMaxValues));
  max = std::min<uint64_t>(max, n);
  if (min > max) return -1;
  std::vector<int32_t> literal(n);
  for (size_t i = 0; i < n; ++i) literal[i] = add_literal(g_, (*values)[i], json_.ws);
  const int32_t ws = json_.ws;
  // Rule `used`: the rest of the array once the values in the bit set `used` are in it.
  std::vector<int32_t> rule(size_t{1} << n);
  for (size_t used = 0; used < rule.size(); ++used) rule[used] = g_.add_rule("unique-items");
  for (size_t used = 0; used < rule.size(); ++used) {
    const auto count = static_cast<uint64_t>(std::popcount(used));
    if (count >= min) g_.add_alt(rule[used], {});
    if (count >= max) continue;
    for (size_t i = 0; i < n; ++i) {
      if (used >> i & 1) continue;
      Sequence next = used ? Sequence{Symbol::ref(ws), Symbol::one(','), Symbol::ref(ws)}
                           : Sequence{Symbol::ref(ws)};
      next.push_back(Symbol::ref(literal[i]));
      next.push_back(Symbol::ref(rule[used | size_t{1} << i]));
      g_.add_alt(rule[used], std::move(next));
    }
  }
  const int32_t r = g_.add_rule("array");
  g_.add_alt(r, {Symbol::one('['), Symbol::ref(rule[0]), Symbol::ref(ws), Symbol::one(']')});
  return r;
}

int32_t SchemaCompiler::array(const json& s, const std::string& path, int depth) {
  std::vector<json> prefix;
  json rest = true;
  const bool tuple_items = s.contains("items") && s["items"].is_array();
  auto is_schema = [](const json& v) { return v.is_object() || v.is_boolean(); };
  if (s.contains("prefixItems") && !s["prefixItems"].is_array())
    error(path, "'prefixItems' must be an array of schemas");
  if (s.contains("items") && !is_schema(s["items"]) && !s["items"].is_array())
    error(path, "'items' must be a schema or an array of schemas");
  if (s.contains("additionalItems") && !is_schema(s["additionalItems"]))
    error(path, "'additionalItems' must be a schema");
  if (s.contains("prefixItems") && draft_ >= 2020) {
    for (const json& x : s["prefixItems"]) prefix.push_back(x);
    if (s.contains("items")) rest = s["items"];
  } else if (tuple_items) {
    for (const json& x : s["items"]) prefix.push_back(x);
    if (s.contains("additionalItems")) rest = s["additionalItems"];
  } else if (s.contains("items")) {
    rest = s["items"];
  }
  const uint64_t limit = g_.limits().max_repeat;
  auto count = [&](const char* k, uint64_t dflt) {
    if (!s.contains(k)) return dflt;
    const json& v = s[k];
    if (!v.is_number() || v.get<double>() < 0) error(path, fmt::format("'{}' must be >= 0", k));
    return static_cast<uint64_t>(std::min(v.get<double>(), 1e18));
  };
  const uint64_t min = count("minItems", 0);
  uint64_t max = count("maxItems", UINT64_MAX);
  if (s.contains("uniqueItems") && !s["uniqueItems"].is_boolean())
    error(path, "'uniqueItems' must be true or false");
  if (s.value("uniqueItems", false) && max > 1) {
    if (!prefix.empty()) error(path, "'uniqueItems' beside tuple items cannot be enforced");
    return unique_items(rest, min, max, path);
  }
  std::vector<int32_t> items;
  for (size_t i = 0; i < prefix.size() && i < max; ++i) {
    const int32_t v = value(prefix[i], fmt::format("{}/items/{}", path, i), depth + 1);
    if (v < 0) {
      max = i;
      break;
    }
    items.push_back(v);
  }
  const int32_t rest_rule =
      items.size() < prefix.size() ? -1 : value(rest, path + "/items", depth + 1);
  if (rest_rule < 0) max = std::min<uint64_t>(max, items.size());
  if (min > max) return -1;
  const uint64_t fixed = std::max<uint64_t>(min, items.size());
  if (fixed > limit || (max != UINT64_MAX && max > limit))
    error(path, fmt::format("array bounds past {} items cannot be enforced", limit));
  const int32_t ws = json_.ws;
  auto sep = [&](uint64_t i) {
    return i == 0 ? Sequence{Symbol::ref(ws)}
                  : Sequence{Symbol::ref(ws), Symbol::one(','), Symbol::ref(ws)};
  };
  // Rule i: the rest of the array after i items, built from the end; past the last bounded one,
  // a comma loop of items of the rest's schema when there is no maximum.
  const uint64_t last = max == UINT64_MAX ? fixed : max;
  int32_t tail = g_.add_rule("items");
  g_.add_alt(tail, {});
  if (max == UINT64_MAX) {
    const int32_t loop = tail;
    g_.add_alt(loop, {Symbol::ref(ws), Symbol::one(','), Symbol::ref(ws), Symbol::ref(rest_rule),
                      Symbol::ref(loop)});
    if (last == 0) {
      tail = g_.add_rule("items");
      g_.add_alt(tail, {});
      g_.add_alt(tail, {Symbol::ref(ws), Symbol::ref(rest_rule), Symbol::ref(loop)});
    }
  }
  for (uint64_t i = last; i-- > 0;) {
    const int32_t r = g_.add_rule("items");
    if (i >= min) g_.add_alt(r, {});
    Sequence s1 = sep(i);
    s1.push_back(Symbol::ref(i < items.size() ? items[i] : rest_rule));
    s1.push_back(Symbol::ref(tail));
    g_.add_alt(r, std::move(s1));
    tail = r;
  }
  const int32_t r = g_.add_rule("array");
  g_.add_alt(r, {Symbol::one('['), Symbol::ref(tail), Symbol::ref(ws), Symbol::one(']')});
  return r;
}

}  // namespace

int32_t add_json_schema(Grammar& g, const json& schema, const SchemaOptions& o) {
  return SchemaCompiler(g, schema, o).compile();
}

Grammar json_schema_grammar(const json& schema, const SchemaOptions& o) {
  Grammar g;
  g.set_root(add_json_schema(g, schema, o));
  g.check();
  return g;
}

}  // namespace brisk::grammar
