// Tool calling in a chat request: `tools`, `tool_choice` and `parallel_tool_calls` checked
// field by field (an error names the field, as OpenAI's do), and what the template is given.
#pragma once

#include <string>

#include "server/openai.h"

namespace brisk::server {

struct ChatTools {
  json tools = json::array();   // as the client sent them (checked), in its key order
  std::string choice = "auto";  // none, auto, required, or function (then `function` names it)
  std::string function;
  bool parallel = true;
  // Whether calls may come: tools were given and tool_choice is not none.
  bool active() const { return !tools.empty() && choice != "none"; }
};

// Throws ApiError 400 naming the field: tools[i].function.name missing, a tool_choice naming a
// function that is not among the tools, ...
ChatTools parse_tools(const json& body);

}  // namespace brisk::server
