#include "server/tools.h"

#include <fmt/format.h>

namespace brisk::server {

namespace {

constexpr size_t kMaxTools = 128;

void check_tool(const json& t, size_t i) {
  const std::string at = fmt::format("tools[{}]", i);
  if (!t.is_object()) bad_param(at, fmt::format("'{}' must be an object", at));
  if (!present(t, "type") || t.at("type") != "function")
    bad_param(at + ".type", fmt::format("'{}.type' must be \"function\"", at));
  if (!present(t, "function") || !t.at("function").is_object())
    bad_param(at + ".function", fmt::format("'{}.function' must be an object", at));
  const json& f = t.at("function");
  if (!present(f, "name") || !f.at("name").is_string() || f.at("name").get<std::string>().empty())
    bad_param(at + ".function.name",
              fmt::format("'{}.function.name' must be a non-empty string", at));
  if (present(f, "parameters") && !f.at("parameters").is_object())
    bad_param(at + ".function.parameters",
              fmt::format("'{}.function.parameters' must be a JSON Schema object", at));
  if (present(f, "strict") && !f.at("strict").is_boolean())
    bad_param(at + ".function.strict",
              fmt::format("'{}.function.strict' must be true or false", at));
}

// OpenAI's deprecated `functions` and `function_call` as `tools` and `tool_choice`.
json legacy_as_tools(const json& b) {
  if (present(b, "tools") || present(b, "tool_choice"))
    bad_param("functions", "give either 'functions' / 'function_call' or 'tools' / 'tool_choice'");
  json out = b;
  if (present(b, "functions")) {
    if (!b.at("functions").is_array()) bad_param("functions", "'functions' must be a list");
    json tools = json::array();
    for (const json& f : b.at("functions"))
      tools.push_back({{"type", "function"}, {"function", f}});
    out["tools"] = std::move(tools);
  }
  if (present(b, "function_call")) {
    const json& fc = b.at("function_call");
    if (fc.is_string())
      out["tool_choice"] = fc;
    else if (fc.is_object() && fc.contains("name"))
      out["tool_choice"] = {{"type", "function"}, {"function", {{"name", fc["name"]}}}};
    else
      bad_param("function_call", "'function_call' must be none, auto or {\"name\": ...}");
  }
  out.erase("functions");
  out.erase("function_call");
  return out;
}

}  // namespace

ChatTools parse_tools(const json& body) {
  const bool legacy = present(body, "functions") || present(body, "function_call");
  const json b = legacy ? legacy_as_tools(body) : body;
  ChatTools t;
  t.legacy = legacy;
  if (present(b, "tools")) {
    if (!b.at("tools").is_array()) bad_param("tools", "'tools' must be a list");
    if (b.at("tools").size() > kMaxTools)
      bad_param("tools", fmt::format("at most {} tools (as OpenAI's API allows)", kMaxTools));
    t.tools = b.at("tools");
    for (size_t i = 0; i < t.tools.size(); ++i) check_tool(t.tools[i], i);
  }
  if (present(b, "tool_choice")) {
    const json& tc = b.at("tool_choice");
    const char* what = "'tool_choice' must be none, auto, required or a named function";
    using Mode = ToolChoice::Mode;
    if (tc.is_string()) {
      const std::string mode = tc.get<std::string>();
      if (mode == "none")
        t.choice.mode = Mode::None;
      else if (mode == "auto")
        t.choice.mode = Mode::Auto;
      else if (mode == "required")
        t.choice.mode = Mode::Required;
      else
        bad_param("tool_choice", what);
    } else if (tc.is_object() && tc.value("type", "") == "function" && tc.contains("function") &&
               tc["function"].is_object() && tc["function"].contains("name") &&
               tc["function"]["name"].is_string()) {
      t.choice.mode = Mode::Function;
      t.choice.function = tc["function"]["name"].get<std::string>();
      bool found = false;
      for (const json& x : t.tools) found |= x["function"]["name"] == t.choice.function;
      if (!found)
        bad_param("tool_choice", fmt::format("tool_choice names '{}', which is not among the tools",
                                             t.choice.function));
    } else {
      bad_param("tool_choice", what);
    }
    if ((t.choice.mode == Mode::Required || t.choice.mode == Mode::Function) && t.tools.empty())
      bad_param("tool_choice", "'tool_choice' asks for a call but no 'tools' were given");
  }
  if (present(b, "parallel_tool_calls")) {
    if (!b.at("parallel_tool_calls").is_boolean())
      bad_param("parallel_tool_calls", "'parallel_tool_calls' must be true or false");
    t.choice.parallel = b.at("parallel_tool_calls").get<bool>();
  }
  // A named function is called once; the legacy fields knew one call per reply.
  if (t.choice.mode == ToolChoice::Mode::Function || t.legacy) t.choice.parallel = false;
  return t;
}

void to_legacy_function_call(json& c) {
  const char* key = c.contains("message") ? "message" : "delta";
  if (c.contains(key) && c[key].contains("tool_calls")) {
    json& m = c[key];
    const json first = m["tool_calls"].empty() ? json::object() : m["tool_calls"][0];
    m.erase("tool_calls");
    if (first.contains("function")) m["function_call"] = first["function"];
  }
  if (c.contains("finish_reason") && c["finish_reason"] == "tool_calls")
    c["finish_reason"] = "function_call";
}

}  // namespace brisk::server
