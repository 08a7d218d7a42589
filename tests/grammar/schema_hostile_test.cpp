// Schemas as clients really send them, and as an attacker would: every one compiles to a grammar
// or ends in a brisk::Error naming where it failed, never a crash, another exception or a hang.
// The sanitizer build runs these too, which is what catches a read of a freed JSON value.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "grammar/json_schema.h"
#include "grammar/recognizer.h"

namespace brisk::grammar {
namespace {

using ojson = nlohmann::ordered_json;

// Compiles s: true when it compiled, false when it was refused with an Error; any other exception
// fails the test with the schema.
bool compiles(const ojson& s) {
  try {
    json_schema_grammar(s);
    return true;
  } catch (const Error&) {
    return false;
  } catch (const std::exception& e) {
    ADD_FAILURE() << s.dump() << " threw a non-brisk exception: " << e.what();
    return false;
  }
}

// The schema that took the server down (issue 52): a parent type beside object branches, each
// closed by additionalProperties false.
TEST(SchemaHostile, ParentTypeBesideClosedObjectBranches) {
  const ojson s = ojson::parse(
      R"({"type":"object","oneOf":[{"properties":{"a":{"type":"string"}},"required":["a"],)"
      R"("additionalProperties":false},{"properties":{"b":{"type":"string"}},"required":["b"],)"
      R"("additionalProperties":false}]})");
  const Grammar g = json_schema_grammar(s);
  EXPECT_TRUE(test::accepts(g, R"({"a": "x"})"));
  EXPECT_TRUE(test::accepts(g, R"({"b": "y"})"));
  EXPECT_FALSE(test::accepts(g, R"({"a": "x", "b": "y"})"));
  EXPECT_FALSE(test::accepts(g, R"({})"));
  EXPECT_FALSE(test::accepts(g, R"("a")"));
  ojson any = s;
  any["anyOf"] = any["oneOf"];
  any.erase("oneOf");
  EXPECT_TRUE(test::accepts(json_schema_grammar(any), R"({"b": "y"})"));
}

// Both sides closed or open, properties on one side or both, through allOf and through a parent
// beside anyOf: the merge judges each side's extra properties by the other's
// additionalProperties.
TEST(SchemaHostile, AdditionalPropertiesAcrossMergedSides) {
  const std::vector<ojson> sides = {
      ojson::object(),
      {{"type", "object"}},
      {{"properties", {{"a", {{"type", "string"}}}}}},
      {{"properties", {{"a", {{"type", "string"}}}}}, {"additionalProperties", false}},
      {{"properties", {{"b", {{"type", "integer"}}}}}, {"additionalProperties", false}},
      {{"properties", {{"b", {{"type", "integer"}}}}},
       {"additionalProperties", {{"type", "integer"}}}},
      {{"additionalProperties", false}},
      {{"required", {"a"}}, {"additionalProperties", {{"type", "string"}}}},
  };
  for (const ojson& a : sides)
    for (const ojson& b : sides) {
      compiles({{"allOf", {a, b}}});
      ojson parent = a;
      parent["anyOf"] = ojson::array({b, {{"type", "object"}}});
      compiles(parent);
      parent["oneOf"] = parent["anyOf"];
      parent.erase("anyOf");
      compiles(parent);
    }
}

// Each keyword with a value of every wrong JSON type, where the compiler reads it directly, where
// allOf merges it with another schema's, and where a parent merges into oneOf / anyOf branches.
TEST(SchemaHostile, KeywordsOfTheWrongTypeAreRefusedByName) {
  const std::vector<std::string> keywords = {"type",
                                             "enum",
                                             "const",
                                             "multipleOf",
                                             "maximum",
                                             "minimum",
                                             "exclusiveMaximum",
                                             "exclusiveMinimum",
                                             "maxLength",
                                             "minLength",
                                             "pattern",
                                             "format",
                                             "items",
                                             "prefixItems",
                                             "additionalItems",
                                             "maxItems",
                                             "minItems",
                                             "uniqueItems",
                                             "contains",
                                             "maxProperties",
                                             "minProperties",
                                             "required",
                                             "properties",
                                             "patternProperties",
                                             "additionalProperties",
                                             "dependencies",
                                             "dependentRequired",
                                             "propertyNames",
                                             "allOf",
                                             "anyOf",
                                             "oneOf",
                                             "not",
                                             "$ref",
                                             "if",
                                             "then",
                                             "$defs",
                                             "definitions"};
  const std::vector<ojson> values = {nullptr,
                                     true,
                                     false,
                                     0,
                                     -1,
                                     1.5,
                                     1e300,
                                     "x",
                                     "",
                                     ojson::array(),
                                     ojson::array({1, "a"}),
                                     ojson::object(),
                                     {{"type", 3}},
                                     ojson::array({ojson::object()})};
  const ojson base = {{"type", "object"},
                      {"properties", {{"a", {{"type", "string"}}}}},
                      {"required", {"a"}},
                      {"minimum", 1},
                      {"enum", {1, 2}}};
  for (const std::string& k : keywords)
    for (const ojson& v : values) {
      const ojson bad = {{k, v}};
      compiles(bad);
      compiles({{"allOf", {base, bad}}});
      compiles({{"allOf", {bad, base}}});
      ojson parent = base;
      parent.erase("enum");
      parent["oneOf"] = ojson::array({bad, {{"type", "object"}, {"additionalProperties", false}}});
      compiles(parent);
      ojson p2 = bad;
      p2["anyOf"] = ojson::array({base, {{"properties", {{k, v}}}}});
      compiles(p2);
      for (int draft : {4, 7}) {
        ojson d = bad;
        d["$schema"] = fmt::format("http://json-schema.org/draft-0{}/schema#", draft);
        compiles(d);
      }
    }
}

// $refs shared under allOf at every level expand to 2^depth schemas: refused by the merger's
// bound, not left to run for ever.
TEST(SchemaHostile, ExponentialAllOfExpansionIsRefused) {
  ojson defs = ojson::object();
  const int levels = 40;
  for (int i = 0; i < levels; ++i) {
    const std::string next = fmt::format("#/$defs/d{}", i + 1);
    defs[fmt::format("d{}", i)] = {
        {"allOf", {{{"$ref", next}}, {{"$ref", next}}}},
        {"properties", {{fmt::format("p{}", i), {{"type", "integer"}}}}}};
  }
  defs[fmt::format("d{}", levels)] = {{"type", "object"}};
  const ojson s = {{"$defs", defs}, {"$ref", "#/$defs/d0"}, {"required", {"p0"}}};
  EXPECT_THROW(json_schema_grammar(s), Error);
  const ojson t = {{"$defs", defs}, {"allOf", {{{"$ref", "#/$defs/d0"}}}}};
  EXPECT_THROW(json_schema_grammar(t), Error);
}

// References that loop back on themselves, through allOf, oneOf branches and properties.
TEST(SchemaHostile, SelfReferencesEndInAnErrorOrARecursiveRule) {
  for (
      const char* text : {
          R"({"$ref": "#"})",
          R"({"allOf": [{"$ref": "#"}]})",
          R"({"type": "object", "oneOf": [{"$ref": "#"}, {"required": ["a"]}]})",
          R"({"type": "object", "anyOf": [{"$ref": "#/anyOf/0"}]})",
          R"({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})",
          R"({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"})",
          R"({"type": "object", "properties": {"x": {"$ref": "#"}}, "additionalProperties": false})",
          R"({"properties": {"x": {"$ref": "#"}}, "allOf": [{"properties": {"x": {"$ref": "#"}}}]})",
          // Negations that reach themselves (the structure-aware fuzzer's first find).
          R"({"$defs": {"d": {"not": {"$ref": "#"}}}, "allOf": [{"$ref": "#/$defs/d"}]})",
          R"({"not": {"$ref": "#"}})",
          R"({"if": {"$ref": "#"}, "then": {"type": "string"}})",
          R"({"allOf": [{"if": {"$ref": "#"}, "then": {}}, {"if": {"$ref": "#"}, "else": {}}]})",
      })
    compiles(ojson::parse(text));
}

}  // namespace
}  // namespace brisk::grammar
