// The constraint a request with tools decodes under, in its model family's syntax: with
// tool_choice "required" or a named function, a call (or several, when parallel calls are
// allowed) whose arguments match the function's parameters schema; with "auto", free text in
// which a call, once its trigger appears, must be whole and valid (a lazy grammar: the free text
// costs a check of the sampled token). A reasoning block may come first.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "chat/tool_family.h"
#include "grammar/constraint.h"

namespace brisk {

// OpenAI's tool_choice and parallel_tool_calls, as the server and the command line take them.
struct ToolChoice {
  enum class Mode { None, Auto, Required, Function };
  Mode mode = Mode::Auto;
  std::string function;  // Mode::Function: the function's name
  bool parallel = true;
  static const char* name(Mode m);  // none, auto, required, function
};

// tools: OpenAI's list, checked. A function whose schema cannot be enforced takes any JSON
// object, unless it is strict (then the error names tools[i].function.parameters). nullopt: no
// constraint (tool_choice none, or a family without tool calls).
std::optional<grammar::Constraint> tool_constraint(const ReplyFormat& format, bool in_reasoning,
                                                   const nlohmann::ordered_json& tools,
                                                   const ToolChoice& choice);

}  // namespace brisk
