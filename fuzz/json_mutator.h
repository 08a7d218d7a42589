// Structure-aware mutations of JSON Schemas for the fuzz targets: random bytes rarely form a schema
// that reaches the merger or the compiler's deeper paths, so these edit the parsed document instead
// (wrap a subschema in oneOf / anyOf / allOf / not beside a parent's keywords, add a keyword with
// a value of the right or the wrong type, point a $ref anywhere in the document, change a bound,
// graft a subschema from another input, delete a key) and write it back as text.
#pragma once

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace brisk::fuzz {

using ojson = nlohmann::ordered_json;

class JsonMutator {
 public:
  explicit JsonMutator(uint64_t seed) : rng_(seed) {}

  // 1 to 4 edits of doc; donor (may be null) lends subschemas.
  void mutate(ojson& doc, const ojson* donor) {
    for (int n = 1 + static_cast<int>(pick(4)); n > 0; --n) edit(doc, donor);
  }

 private:
  std::mt19937_64 rng_;

  size_t pick(size_t n) { return n ? static_cast<size_t>(rng_() % n) : 0; }

  // Every object and array in doc, with the JSON pointer that names it.
  static void nodes(ojson& j, const std::string& at,
                    std::vector<std::pair<ojson*, std::string>>& out, int depth = 0) {
    if (depth > 48 || out.size() > 4096) return;
    if (j.is_object()) {
      out.emplace_back(&j, at);
      for (auto& [k, v] : j.items()) nodes(v, at + "/" + escape(k), out, depth + 1);
    } else if (j.is_array()) {
      out.emplace_back(&j, at);
      for (size_t i = 0; i < j.size(); ++i)
        nodes(j[i], at + "/" + std::to_string(i), out, depth + 1);
    }
  }

  static std::string escape(const std::string& k) {
    std::string o;
    for (char c : k)
      o += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
    return o;
  }

  ojson number() {
    static const double kNums[] = {
        0,   1,    -1,    2,     3,   5,    10,           0.5,  -0.5,  1.5,    255,
        256, 1000, 65535, 65536, 1e9, -1e9, 4294967296.0, 1e18, 1e300, -1e300, 9007199254740993.0};
    if (pick(4) == 0) return static_cast<int64_t>(rng_() % 200) - 100;
    return kNums[pick(std::size(kNums))];
  }

  ojson small_schema() {
    static const char* kTypes[] = {"null",   "boolean", "object", "array",
                                   "string", "number",  "integer"};
    switch (pick(8)) {
      case 0:
        return true;
      case 1:
        return false;
      case 2:
        return ojson::object();
      case 3:
        return {{"type", kTypes[pick(7)]}};
      case 4:
        return {{"enum", ojson::array({"a", 1, nullptr, true})}};
      case 5:
        return {{"const", "x"}};
      case 6:
        return {{"type", "object"},
                {"properties", {{"a", {{"type", "string"}}}, {"b", {{"type", "integer"}}}}},
                {"required", ojson::array({"a"})},
                {"additionalProperties", false}};
      default:
        return {{"type", "string"}, {"pattern", "^[a-z]+$"}, {"maxLength", number()}};
    }
  }

  // A keyword with a value of its usual shape, or of another one.
  std::pair<std::string, ojson> keyword(const std::vector<std::pair<ojson*, std::string>>& all) {
    static const char* kNumeric[] = {"minimum",          "maximum",    "exclusiveMinimum",
                                     "exclusiveMaximum", "minLength",  "maxLength",
                                     "minItems",         "maxItems",   "minProperties",
                                     "maxProperties",    "multipleOf", "minContains"};
    static const char* kSchemaValued[] = {
        "not",  "items", "additionalProperties", "contains",        "if",
        "then", "else",  "propertyNames",        "additionalItems", "unevaluatedProperties"};
    static const char* kFormats[] = {"date", "date-time",    "time", "email",    "uri",
                                     "uuid", "ipv4",         "ipv6", "hostname", "byte",
                                     "path", "partial-date", "regex"};
    static const char* kTypes[] = {"null",   "boolean", "object", "array",
                                   "string", "number",  "integer"};
    if (pick(8) == 0) {  // any keyword, any value: the wrong types
      static const char* kAny[] = {"type",  "required", "properties",  "enum",
                                   "allOf", "oneOf",    "anyOf",       "$ref",
                                   "items", "pattern",  "uniqueItems", "dependencies"};
      static const ojson kOdd[] = {nullptr, 3, "x", ojson::array(), ojson::object(), true, -1.5};
      return {kAny[pick(std::size(kAny))], kOdd[pick(std::size(kOdd))]};
    }
    switch (pick(11)) {
      case 0:
        return {kNumeric[pick(std::size(kNumeric))], number()};
      case 1:
        return {kSchemaValued[pick(std::size(kSchemaValued))], small_schema()};
      case 2:
        return {"type", pick(3) ? ojson(kTypes[pick(7)])
                                : ojson::array({kTypes[pick(7)], kTypes[pick(7)]})};
      case 3:
        return {"required", ojson::array({"a", "b"})};
      case 4:
        return {"format", kFormats[pick(std::size(kFormats))]};
      case 5: {
        const std::string& at = all[pick(all.size())].second;
        return {"$ref", "#" + at};
      }
      case 6:
        return {"patternProperties", {{"^x-", small_schema()}}};
      case 7:
        return {"dependentRequired", {{"a", ojson::array({"b"})}}};
      case 8:
        return {"uniqueItems", pick(2) == 0};
      case 9:
        return {"pattern", pick(2) ? "^(a|b)*c{2,5}$" : "[0-9]{3}-[0-9]{4}"};
      default:
        return {"enum", ojson::array({"a", "b", 1, nullptr})};
    }
  }

  void edit(ojson& doc, const ojson* donor) {
    std::vector<std::pair<ojson*, std::string>> all;
    nodes(doc, "", all);
    if (all.empty()) {
      doc = small_schema();
      return;
    }
    std::vector<std::pair<ojson*, std::string>> objects;
    for (const auto& n : all)
      if (n.first->is_object()) objects.push_back(n);
    if (objects.empty()) objects.push_back(all[0]);
    ojson& target = *objects[pick(objects.size())].first;
    if (!target.is_object()) target = ojson::object();
    switch (pick(7)) {
      case 0: {  // wrap: a parent keeps its keywords beside branches of the old schema
        static const char* kCombinators[] = {"oneOf", "anyOf", "allOf"};
        ojson branch = target;
        ojson other = small_schema();
        if (pick(2) == 0) {
          target = {{kCombinators[pick(3)], ojson::array({branch, other})}};
        } else {
          ojson parent = ojson::object();
          if (target.contains("type")) parent["type"] = target["type"];
          parent[kCombinators[pick(3)]] = ojson::array({branch, other});
          target = std::move(parent);
        }
        break;
      }
      case 1: {
        auto [k, v] = keyword(all);
        target[k] = std::move(v);
        break;
      }
      case 2: {  // graft a subschema from the donor (or this document)
        std::vector<std::pair<ojson*, std::string>> from;
        ojson copy = donor ? *donor : doc;
        nodes(copy, "", from);
        if (!from.empty()) {
          auto [k, v] = keyword(all);
          target[pick(2) ? k : "properties"] =
              pick(2) ? *from[pick(from.size())].first
                      : ojson{{"p" + std::to_string(pick(4)), *from[pick(from.size())].first}};
        }
        break;
      }
      case 3:  // delete a key
        if (!target.empty()) {
          auto it = target.begin();
          std::advance(it, static_cast<long>(pick(target.size())));
          target.erase(it.key());
        }
        break;
      case 4: {  // $defs and a reference to them, maybe back to itself
        target["$defs"]["d"] = pick(2) ? small_schema() : ojson{{"$ref", "#"}};
        target["allOf"] = ojson::array({{{"$ref", "#/$defs/d"}}});
        break;
      }
      case 5:  // change every number of this schema
        for (auto& [k, v] : target.items())
          if (v.is_number()) v = number();
        break;
      default: {  // not over this schema, beside a type
        ojson inner = target;
        target = {{"not", std::move(inner)}};
        if (pick(2)) target["type"] = "string";
        break;
      }
    }
  }
};

}  // namespace brisk::fuzz
