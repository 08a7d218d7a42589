// How a model family marks its reasoning, found from its chat template: a block between two
// markers (<think>...</think> and the like), or harmony's analysis channel (gpt-oss).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace brisk {

enum class ReasoningFamily {
  None,
  ThinkTags,   // <think>...</think> (Qwen 3, QwQ, DeepSeek R1, ...)
  CommandR7B,  // <|START_THINKING|>...<|END_THINKING|>
  Harmony,     // gpt-oss: the analysis channel
};

// --reasoning-parser names: "think", "command_r7b", "harmony", "none".
std::optional<ReasoningFamily> reasoning_family_named(std::string_view name);
const char* reasoning_family_name(ReasoningFamily f);

ReasoningFamily detect_reasoning_family(std::string_view template_source);

// The reasoning block's markers ("" for None, and for Harmony, whose channels the reply parser
// reads itself).
struct ReasoningMarkers {
  std::string start, end;
};
ReasoningMarkers reasoning_markers(ReasoningFamily f);

// Whether a rendered prompt ends inside the family's reasoning block (the template opened it).
bool prompt_opens_reasoning(std::string_view prompt, ReasoningFamily f);

}  // namespace brisk
