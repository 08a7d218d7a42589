#include "chat/tool_syntax.h"

#include <array>
#include <utility>

namespace brisk {

namespace {

constexpr std::array<std::pair<const char*, ToolFamily>, 13> kToolNames = {{
    {"hermes", ToolFamily::Hermes},
    {"qwen3_coder", ToolFamily::Qwen3Coder},
    {"llama3_json", ToolFamily::Llama3Json},
    {"pythonic", ToolFamily::Pythonic},
    {"mistral", ToolFamily::MistralV3},
    {"mistral_v11", ToolFamily::MistralV11},
    {"deepseek_v3", ToolFamily::DeepSeekV3},
    {"granite", ToolFamily::Granite},
    {"command_r7b", ToolFamily::CommandR7B},
    {"firefunction_v2", ToolFamily::FireFunction},
    {"openai", ToolFamily::GptOss},
    {"generic", ToolFamily::GenericJson},
    {"none", ToolFamily::None},
}};

constexpr std::array<std::pair<const char*, ReasoningFamily>, 4> kReasoningNames = {{
    {"think", ReasoningFamily::ThinkTags},
    {"command_r7b", ReasoningFamily::CommandR7B},
    {"harmony", ReasoningFamily::Harmony},
    {"none", ReasoningFamily::None},
}};

bool has(std::string_view s, std::string_view what) {
  return s.find(what) != s.npos;
}

// A family by its name in one of the tables above, and the other way round.
template <typename Table>
auto by_name(const Table& t, std::string_view name) -> std::optional<decltype(t[0].second)> {
  for (const auto& [n, f] : t)
    if (name == n) return f;
  return std::nullopt;
}
template <typename Table, typename Family>
const char* name_of(const Table& t, Family f) {
  for (const auto& [n, g] : t)
    if (f == g) return n;
  return "none";
}

}  // namespace

std::optional<ToolFamily> tool_family_named(std::string_view name) {
  return by_name(kToolNames, name);
}
std::optional<ReasoningFamily> reasoning_family_named(std::string_view name) {
  return by_name(kReasoningNames, name);
}
const char* tool_family_name(ToolFamily f) {
  return name_of(kToolNames, f);
}
const char* reasoning_family_name(ReasoningFamily f) {
  return name_of(kReasoningNames, f);
}

std::vector<std::string> tool_family_names() {
  std::vector<std::string> out;
  for (const auto& [n, f] : kToolNames) out.emplace_back(n);
  return out;
}

// Most specific markers first: Qwen3-Coder's XML sits inside Hermes' <tool_call>, and several
// families' instructions quote JSON with "name" and "arguments".
ToolFamily detect_tool_family(std::string_view t) {
  if (has(t, "<|channel|>")) return ToolFamily::GptOss;
  if (has(t, "tool\u2581calls\u2581begin") || has(t, "tool\u2581call\u2581begin"))
    return ToolFamily::DeepSeekV3;
  if (has(t, "[TOOL_CALLS]"))
    return has(t, "[ARGS]") ? ToolFamily::MistralV11 : ToolFamily::MistralV3;
  if (has(t, "<|START_ACTION|>")) return ToolFamily::CommandR7B;
  if (has(t, "<|tool_call|>")) return ToolFamily::Granite;
  if (has(t, "functools[")) return ToolFamily::FireFunction;
  if (has(t, "<function=") && has(t, "<parameter=")) return ToolFamily::Qwen3Coder;
  if (has(t, "<tool_call>")) return ToolFamily::Hermes;
  if (has(t, "[func_name1(") || has(t, "[func_name(")) return ToolFamily::Pythonic;
  if (has(t, "<|python_tag|>") || (has(t, "\"parameters\"") && has(t, "\"name\"")))
    return ToolFamily::Llama3Json;
  return ToolFamily::GenericJson;
}

ReasoningFamily detect_reasoning_family(std::string_view t) {
  if (has(t, "<|channel|>")) return ReasoningFamily::Harmony;
  if (has(t, "<|START_THINKING|>")) return ReasoningFamily::CommandR7B;
  if (has(t, "<think>") || has(t, "</think>")) return ReasoningFamily::ThinkTags;
  return ReasoningFamily::None;
}

ReasoningMarkers reasoning_markers(ReasoningFamily f) {
  switch (f) {
    case ReasoningFamily::ThinkTags:
      return {"<think>", "</think>"};
    case ReasoningFamily::CommandR7B:
      return {"<|START_THINKING|>", "<|END_THINKING|>"};
    case ReasoningFamily::Harmony:  // channels, not a block: the reply parser reads them itself
    case ReasoningFamily::None:
      break;
  }
  return {};
}

std::string tool_call_trigger(ToolFamily f) {
  switch (f) {
    case ToolFamily::Hermes:
    case ToolFamily::Qwen3Coder:
      return "<tool_call>";
    case ToolFamily::MistralV3:
    case ToolFamily::MistralV11:
      return "[TOOL_CALLS]";
    case ToolFamily::DeepSeekV3:
      return "<\uff5ctool\u2581calls\u2581begin\uff5c>";
    case ToolFamily::Granite:
      return "<|tool_call|>";
    case ToolFamily::CommandR7B:
      return "<|START_ACTION|>";
    case ToolFamily::FireFunction:
      return "functools";
    case ToolFamily::GptOss:
      return "to=functions.";
    case ToolFamily::Llama3Json:
    case ToolFamily::Pythonic:
    case ToolFamily::GenericJson:
    case ToolFamily::None:
      break;
  }
  return "";
}

}  // namespace brisk
