// A conversation with tools fitted to what its template can render (ChatTemplate::caps), as
// llama.cpp does for templates written without tools: tools a template has no place for are
// described in the system message (ToolFamily::tool_instructions) (or the first user turn where it
// forbids one), past calls are written as the JSON the model is asked to reply with, and tool
// results come back as user turns where the template refuses the `tool` role.
#pragma once

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"

namespace brisk {

// messages (checked: an InvalidMessages error names what is wrong) rewritten for caps;
// description: text to add to the system message or, failing that, the first user turn ("" adds
// none). Conversations without tool calls, results or a description pass unchanged.
nlohmann::ordered_json fit_tools_to_template(const nlohmann::ordered_json& messages,
                                             const TemplateCaps& caps,
                                             const std::string& description);

}  // namespace brisk
