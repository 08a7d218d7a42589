#include "server/constraint_fields.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

namespace brisk::server {

namespace {

using Kind = grammar::Constraint::Kind;

// A schema given as an object (or true / false), or as its JSON text (vLLM accepts both); the
// text keeps the keys' order, which is the order properties are generated in.
grammar::Constraint schema(const json& v, const std::string& param) {
  grammar::Constraint c;
  c.kind = Kind::JsonSchema;
  if (v.is_object() || v.is_boolean()) {
    c.text = v.dump();
  } else if (v.is_string()) {
    c.text = v.get<std::string>();  // parsed when compiled: an error there names the field too
  } else {
    bad_param(param, fmt::format("'{}' must be a JSON Schema (an object)", param));
  }
  return c;
}

grammar::Constraint text_kind(Kind k, const json& v, const std::string& param) {
  if (!v.is_string()) bad_param(param, fmt::format("'{}' must be a string", param));
  grammar::Constraint c;
  c.kind = k;
  c.text = v.get<std::string>();
  return c;
}

grammar::Constraint choice(const json& v, const std::string& param) {
  constexpr size_t kMaxChoices = 4096;
  if (!v.is_array() || v.empty())
    bad_param(param, fmt::format("'{}' must be a non-empty list of strings", param));
  if (v.size() > kMaxChoices)
    bad_param(param, fmt::format("'{}': at most {} choices", param, kMaxChoices));
  grammar::Constraint c;
  c.kind = Kind::Choice;
  for (const json& s : v) {
    if (!s.is_string()) bad_param(param, fmt::format("'{}' must be a list of strings", param));
    c.choices.push_back(s.get<std::string>());
  }
  return c;
}

// OpenAI's response_format; llama.cpp's json_object with a "schema" too.
std::optional<grammar::Constraint> response_format(const json& format_field) {
  const std::string p = "response_format";
  if (!format_field.is_object() || !present(format_field, "type") ||
      !format_field.at("type").is_string())
    bad_param(p, "'response_format' must be an object with a 'type'");
  const std::string type = format_field.at("type").get<std::string>();
  if (type == "text") return std::nullopt;
  if (type == "json_object") {
    if (present(format_field, "schema")) return schema(format_field.at("schema"), p + ".schema");
    grammar::Constraint c;
    c.kind = Kind::JsonObject;
    return c;
  }
  if (type != "json_schema")
    bad_param(p,
              fmt::format("response_format type '{}' is not one of text, json_object, json_schema",
                          type));
  if (!present(format_field, "json_schema") || !format_field.at("json_schema").is_object())
    bad_param(p, "'response_format.json_schema' (an object with the 'schema') is required");
  const json& js = format_field.at("json_schema");
  if (present(js, "name") && !js.at("name").is_string())
    bad_param(p, "'response_format.json_schema.name' must be a string");
  if (present(js, "strict") && !js.at("strict").is_boolean())
    bad_param(p, "'response_format.json_schema.strict' must be true or false");
  // Without a schema any JSON value is allowed (as the empty schema allows).
  if (!present(js, "schema")) return schema(json::object(), p);
  return schema(js.at("schema"), p + ".json_schema.schema");
}

// The options a structured_outputs object may carry beside (or instead of) its constraint:
// vLLM's disable_any_whitespace and brisk's oneof_as_anyof.
struct OutputOptions {
  std::optional<bool> compact, oneof_as_anyof;
};

OutputOptions output_options(const json& so) {
  OutputOptions o;
  const std::pair<const char*, std::optional<bool>*> fields[] = {
      {"disable_any_whitespace", &o.compact}, {"oneof_as_anyof", &o.oneof_as_anyof}};
  for (const auto& [key, field] : fields) {
    if (!present(so, key)) continue;
    if (!so.at(key).is_boolean())
      bad_param("structured_outputs",
                fmt::format("'structured_outputs.{}' must be true or false", key));
    *field = so.at(key).get<bool>();
  }
  return o;
}

void apply(const OutputOptions& o, grammar::Constraint& c) {
  if (o.compact) c.style.compact = *o.compact;
  if (o.oneof_as_anyof) c.oneof_as_anyof = *o.oneof_as_anyof;
}

// vLLM's structured_outputs: one of json, regex, choice, grammar, json_object, and the options.
grammar::Constraint structured_outputs(const json& so) {
  const std::string p = "structured_outputs";
  if (!so.is_object()) bad_param(p, "'structured_outputs' must be an object");
  for (const char* key : {"structural_tag", "whitespace_pattern", "disable_additional_properties"})
    if (present(so, key))
      bad_param(p, fmt::format("'structured_outputs.{}' is not supported", key));
  std::vector<grammar::Constraint> found;
  if (present(so, "json")) found.push_back(schema(so.at("json"), p + ".json"));
  if (present(so, "regex")) found.push_back(text_kind(Kind::Regex, so.at("regex"), p + ".regex"));
  if (present(so, "choice")) found.push_back(choice(so.at("choice"), p + ".choice"));
  if (present(so, "grammar"))
    found.push_back(text_kind(Kind::Gbnf, so.at("grammar"), p + ".grammar"));
  if (present(so, "json_object")) {
    if (!so.at("json_object").is_boolean())
      bad_param(p, "'structured_outputs.json_object' must be true");
    if (so.at("json_object").get<bool>()) {
      grammar::Constraint c;
      c.kind = Kind::JsonObject;
      found.push_back(std::move(c));
    }
  }
  if (found.size() != 1)
    bad_param(p,
              "'structured_outputs' must give exactly one of json, regex, choice, grammar, "
              "json_object");
  apply(output_options(so), found[0]);
  return found[0];
}

// structured_outputs with options only ({"disable_any_whitespace": true}): they apply to the
// constraint another field gives (response_format, guided_json, ...), as vLLM applies them.
bool options_only(const json& so) {
  if (!so.is_object()) return false;
  for (const char* key : {"json", "regex", "choice", "grammar", "json_object"})
    if (present(so, key)) return false;
  return present(so, "disable_any_whitespace") || present(so, "oneof_as_anyof");
}

}  // namespace

std::optional<RequestedConstraint> parse_constraint(const json& body) {
  for (const char* key : {"guided_whitespace_pattern", "structural_tag"})
    if (present(body, key)) bad_param(key, fmt::format("'{}' is not supported", key));
  std::optional<OutputOptions> options;
  json b = body;
  if (present(body, "structured_outputs") && options_only(body.at("structured_outputs"))) {
    for (const auto& [k, x] : body.at("structured_outputs").items())
      if (k != "disable_any_whitespace" && k != "oneof_as_anyof")
        bad_param("structured_outputs", fmt::format("'structured_outputs.{}' is not supported", k));
    options = output_options(body.at("structured_outputs"));
    b.erase("structured_outputs");
  }
  std::vector<RequestedConstraint> found;
  auto add = [&](const char* key, auto&& make) {
    if (!present(b, key)) return;
    std::optional<grammar::Constraint> c = make(b.at(key), std::string(key));
    if (c) found.push_back({std::move(*c), key});
  };
  add("response_format", [](const json& v, const std::string&) { return response_format(v); });
  add("structured_outputs",
      [](const json& v, const std::string&) { return std::optional(structured_outputs(v)); });
  add("guided_json",
      [](const json& v, const std::string& p) { return std::optional(schema(v, p)); });
  add("json_schema",
      [](const json& v, const std::string& p) { return std::optional(schema(v, p)); });
  add("guided_regex", [](const json& v, const std::string& p) {
    return std::optional(text_kind(Kind::Regex, v, p));
  });
  add("guided_choice",
      [](const json& v, const std::string& p) { return std::optional(choice(v, p)); });
  // An empty grammar is no grammar (llama.cpp's clients send "grammar": "").
  for (const char* key : {"guided_grammar", "grammar"})
    add(key, [](const json& v, const std::string& p) {
      std::optional<grammar::Constraint> c = text_kind(Kind::Gbnf, v, p);
      if (c->text.empty()) c.reset();
      return c;
    });
  if (found.size() > 1)
    bad_param(found[1].param, fmt::format("'{}' and '{}' both constrain the output: give one",
                                          found[0].param, found[1].param));
  if (found.empty()) {
    if (options)
      bad_param("structured_outputs",
                "'structured_outputs' options need a constraint (response_format, guided_json, "
                "...) to apply to");
    return std::nullopt;
  }
  if (options) apply(*options, found[0].constraint);
  return found[0];
}

}  // namespace brisk::server
