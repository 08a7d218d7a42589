#include "chat/reasoning_family.h"

#include <array>
#include <utility>

namespace brisk {

namespace {

struct Entry {
  const char* name;
  ReasoningFamily family;
  const char* start;  // the block's markers ("" where there is no block)
  const char* end;
};

// Detection tries the rows in order: harmony's channel marker first, then the named blocks.
constexpr std::array<Entry, 4> kFamilies = {{
    {"harmony", ReasoningFamily::Harmony, "", ""},
    {"command_r7b", ReasoningFamily::CommandR7B, "<|START_THINKING|>", "<|END_THINKING|>"},
    {"think", ReasoningFamily::ThinkTags, "<think>", "</think>"},
    {"none", ReasoningFamily::None, "", ""},
}};

const Entry& entry(ReasoningFamily f) {
  for (const Entry& e : kFamilies)
    if (e.family == f) return e;
  return kFamilies.back();
}

bool has(std::string_view s, std::string_view what) {
  return s.find(what) != s.npos;
}

}  // namespace

std::optional<ReasoningFamily> reasoning_family_named(std::string_view name) {
  for (const Entry& e : kFamilies)
    if (name == e.name) return e.family;
  return std::nullopt;
}

const char* reasoning_family_name(ReasoningFamily f) {
  return entry(f).name;
}

ReasoningFamily detect_reasoning_family(std::string_view t) {
  if (has(t, "<|channel|>")) return ReasoningFamily::Harmony;
  for (const Entry& e : kFamilies)
    if (*e.start && (has(t, e.start) || has(t, e.end))) return e.family;
  return ReasoningFamily::None;
}

ReasoningMarkers reasoning_markers(ReasoningFamily f) {
  const Entry& e = entry(f);
  return {e.start, e.end};
}

bool prompt_opens_reasoning(std::string_view prompt, ReasoningFamily f) {
  const ReasoningMarkers m = reasoning_markers(f);
  if (m.start.empty()) return false;
  const size_t open = prompt.rfind(m.start);
  if (open == prompt.npos || prompt.find(m.end, open) != prompt.npos) return false;
  return prompt.substr(open + m.start.size()).find_first_not_of(" \n\r\t") == prompt.npos;
}

}  // namespace brisk
