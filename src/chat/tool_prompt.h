// Tools for a template that has no place for them (the generic JSON layout): the tools and the
// reply's JSON shapes described in the system message, as llama.cpp does for such templates.
#pragma once

#include <nlohmann/json.hpp>

namespace brisk {

// The messages with the description added to the first system message (or a new one first).
nlohmann::ordered_json describe_tools(const nlohmann::ordered_json& messages,
                                      const nlohmann::ordered_json& tools);

}  // namespace brisk
