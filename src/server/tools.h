// Tool calling in a chat request: `tools`, `tool_choice` and `parallel_tool_calls` checked
// field by field (an error names the field, as OpenAI's do), and what the template is given.
#pragma once

#include <string>

#include "chat/tool_grammar.h"
#include "server/openai.h"

namespace brisk::server {

struct ChatTools {
  json tools = json::array();  // as the client sent them (checked), in its key order
  ToolChoice choice;           // tool_choice and parallel_tool_calls
  // The request used the legacy `functions` / `function_call` fields, mapped to tools and
  // tool_choice: the reply is given back in their shape (message.function_call).
  bool legacy = false;
  // Whether calls may come: tools were given and tool_choice is not none.
  bool active() const { return !tools.empty() && choice.mode != ToolChoice::Mode::None; }
};

// Throws ApiError 400 naming the field: tools[i].function.name missing, a tool_choice naming a
// function that is not among the tools, ... A named tool_choice (or function_call) gives one
// call, as OpenAI's and vLLM's do.
ChatTools parse_tools(const json& body);

// A reply choice (message.tool_calls) or stream chunk (delta.tool_calls) in the legacy shape:
// the first call as function_call {name, arguments}, finish_reason "function_call".
void to_legacy_function_call(json& choice_or_chunk);

}  // namespace brisk::server
