#include "chat/messages.h"

#include <algorithm>
#include <iterator>
#include <string>

namespace brisk {

using json = nlohmann::ordered_json;

namespace {

template <typename... Args>
[[noreturn]] void invalid(fmt::format_string<Args...> f, Args&&... args) {
  throw InvalidMessages(fmt::format(f, std::forward<Args>(args)...));
}

json check_parts(const json& parts, const std::string& where) {
  json out = json::array();
  for (size_t k = 0; k < parts.size(); ++k) {
    const json& part = parts[k];
    if (!part.is_object() || !part.contains("type") || !part.at("type").is_string())
      invalid("{}.content[{}] must be an object with a type", where, k);
    if (part.at("type") != "text")
      invalid("{}.content[{}]: content of type '{}' is not supported (text only)", where, k,
              part.at("type").get<std::string>());
    if (!part.contains("text") || !part.at("text").is_string())
      invalid("{}.content[{}].text must be a string", where, k);
    out.push_back({{"type", "text"}, {"text", part.at("text").get<std::string>()}});
  }
  return out;
}

// An assistant turn's calls, their JSON-string arguments given to the template parsed: templates
// iterate `tool_call.function.arguments` as a mapping (as transformers and vLLM pass them).
json check_tool_calls(const json& calls, const std::string& where) {
  if (!calls.is_array()) invalid("{}.tool_calls must be a list", where);
  json out = calls;
  for (size_t k = 0; k < out.size(); ++k) {
    json& c = out[k];
    if (!c.is_object() || !c.contains("function") || !c["function"].is_object())
      invalid("{}.tool_calls[{}].function must be an object", where, k);
    json& f = c["function"];
    if (!f.contains("name") || !f["name"].is_string())
      invalid("{}.tool_calls[{}].function.name must be a string", where, k);
    if (f.contains("arguments") && f["arguments"].is_string()) {
      try {
        json args = json::parse(f["arguments"].get<std::string>());
        if (args.is_object()) f["arguments"] = std::move(args);
      } catch (const json::exception&) {
        // Not JSON: the template gets the text as it was sent.
      }
    }
  }
  return out;
}

}  // namespace

json check_messages(const json& messages) {
  if (!messages.is_array()) invalid("'messages' must be a list");
  json out = json::array();
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    const std::string where = fmt::format("messages[{}]", i);
    if (!m.is_object()) invalid("{} must be an object", where);
    if (!m.contains("role") || !m.at("role").is_string())
      invalid("{}.role must be a string", where);
    const std::string role = m.at("role").get<std::string>();
    static const char* kRoles[] = {"system", "developer", "user", "assistant", "tool", "function"};
    if (std::find(std::begin(kRoles), std::end(kRoles), role) == std::end(kRoles))
      invalid("{}.role '{}' is not one of system, developer, user, assistant, tool", where, role);
    json o = m;
    const json* c = m.contains("content") ? &m.at("content") : nullptr;
    if (c == nullptr || c->is_null()) {
      if (role != "assistant") invalid("{}.content is required", where);
      // The SDKs send a turn that only calls tools with null content, which most templates
      // cannot print ("Cannot perform operation on null values"); vLLM renders it as "".
      o["content"] = "";
    } else if (c->is_array()) {
      o["content"] = check_parts(*c, where);
    } else if (!c->is_string()) {
      invalid("{}.content must be a string or a list of content parts", where);
    }
    if (m.contains("tool_calls") && !m.at("tool_calls").is_null())
      o["tool_calls"] = check_tool_calls(m.at("tool_calls"), where);
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace brisk
