// How a model family writes tool calls and reasoning, found from its chat template: the markers
// and layouts its template teaches the model (and renders for past turns), so fine-tunes and
// variants of a family are recognized by what they contain, not by being a known file.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace brisk {

enum class ToolFamily {
  None,        // no tool calls are parsed
  Hermes,      // Hermes 2 Pro, Qwen 2.5 / 3: <tool_call>{"name", "arguments"}</tool_call>
  Qwen3Coder,  // <tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call>
  Llama3Json,  // Llama 3.1-3.3: {"name", "parameters"} (after <|python_tag|> or bare), ';' between
  Pythonic,    // Llama 3.2 / 4 and others: [get_weather(city="Paris"), ...]
  MistralV3,   // [TOOL_CALLS][{"name", "arguments"}, ...]
  MistralV11,  // [TOOL_CALLS]NAME[ARGS]{...}, once per call
  DeepSeekV3,  // <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```...
  Granite,     // <|tool_call|>[{"name", "arguments"}, ...]
  CommandR7B,  // <|START_ACTION|>[{"tool_call_id", "tool_name", "parameters"}, ...]<|END_ACTION|>
  FireFunction,  // functools[{"name", "arguments"}, ...]
  GptOss,  // harmony: <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}
  GenericJson,  // a template without tools: {"tool_calls": [...]} or {"response": "..."}
};

enum class ReasoningFamily {
  None,
  ThinkTags,   // <think>...</think> (Qwen 3, QwQ, DeepSeek R1, ...)
  CommandR7B,  // <|START_THINKING|>...<|END_THINKING|>
  Harmony,     // gpt-oss: the analysis channel
};

// --tool-call-parser / --reasoning-parser names (vLLM's where it has one): "hermes",
// "qwen3_coder", "llama3_json", "pythonic", "mistral", "mistral_v11", "deepseek_v3", "granite",
// "command_r7b", "firefunction_v2", "openai" (gpt-oss), "generic", "none"; reasoning: "think",
// "command_r7b", "harmony", "none".
std::optional<ToolFamily> tool_family_named(std::string_view name);
std::optional<ReasoningFamily> reasoning_family_named(std::string_view name);
const char* tool_family_name(ToolFamily f);
const char* reasoning_family_name(ReasoningFamily f);
std::vector<std::string> tool_family_names();

// From a chat template's source. A template that never mentions tools gets GenericJson: the
// tools are then described in a system message (tools_system_prompt) and the reply is JSON.
ToolFamily detect_tool_family(std::string_view template_source);
ReasoningFamily detect_reasoning_family(std::string_view template_source);

// Both, as a server or command applies them to every reply.
struct ReplyFormat {
  ToolFamily tools = ToolFamily::None;
  ReasoningFamily reasoning = ReasoningFamily::None;
};
inline ReplyFormat detect_reply_format(std::string_view template_source) {
  return {detect_tool_family(template_source), detect_reasoning_family(template_source)};
}

// The reasoning markers of a family ("" for None).
struct ReasoningMarkers {
  std::string start, end;
};
ReasoningMarkers reasoning_markers(ReasoningFamily f);

// The text that starts a call in the family's syntax (what a lazy grammar waits for; "" where a
// call can only open the reply, as in Llama 3's and the pythonic and generic layouts).
std::string tool_call_trigger(ToolFamily f);

}  // namespace brisk
