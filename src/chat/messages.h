// A conversation as clients send it (OpenAI's chat messages), checked in one place for every
// caller: the server, brisk chat and brisk template all render through ChatTemplate::apply, which
// checks here first.
#pragma once

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace brisk {

// A conversation that is not in OpenAI's shape; the message names the message and part
// ("messages[1].content[0]: ...").
class InvalidMessages : public Error {
 public:
  using Error::Error;
};

// Checks roles and content (an empty list is a conversation too; the API refuses it itself) and
// returns the messages with each content part reduced to its
// {"type": "text", "text": ...}; content may be a string, a list of text parts, or null or absent
// in an assistant's turn that only calls tools (rendered as ""). Tool calls' arguments sent as
// JSON text reach the template parsed; other fields (name, tool_call_id, ...) pass unchanged.
nlohmann::ordered_json check_messages(const nlohmann::ordered_json& messages);

}  // namespace brisk
