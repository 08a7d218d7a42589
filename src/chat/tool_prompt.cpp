#include "chat/tool_prompt.h"

#include <string>

namespace brisk {

using ojson = nlohmann::ordered_json;

ojson describe_tools(const ojson& messages, const ojson& tools) {
  std::string text =
      "You can call the following tools to answer the user. Each is a JSON Schema of its "
      "arguments:\n";
  for (const ojson& t : tools) text += t.dump() + "\n";
  text +=
      "\nReply with JSON only. To call tools: {\"tool_calls\": [{\"name\": \"tool_name\", "
      "\"arguments\": {...}}]}. To answer directly: {\"response\": \"your answer\"}.";
  ojson out = messages;
  if (!out.empty() && out[0].is_object() && out[0].value("role", "") == "system" &&
      out[0].contains("content") && out[0]["content"].is_string()) {
    out[0]["content"] = out[0]["content"].get<std::string>() + "\n\n" + text;
  } else {
    out.insert(out.begin(), ojson{{"role", "system"}, {"content", text}});
  }
  return out;
}

}  // namespace brisk
