// A model's reply split the way OpenAI's API returns it: reasoning, content and tool calls, for
// every family of tool_syntax.h. One parser serves whole replies and streams: parsing a text that
// may still grow (partial) returns only what no continuation can change, so the parse of a
// longer text extends the parse of any shorter one, and the deltas a stream sends join to the
// whole reply's parse (reply_stream.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "chat/tool_syntax.h"

namespace brisk {

struct ToolCallText {
  std::string name;
  // The arguments as JSON text: what the model wrote, or for layouts that are not JSON
  // (pythonic, XML parameters) the JSON built from them, a parameter at a time.
  std::string arguments;
  bool complete = false;  // the call's syntax closed
};

struct Reply {
  std::string reasoning, content;
  std::vector<ToolCallText> calls;
};

class ReplyParser {
 public:
  // tools: the request's tools (OpenAI's list), for the parameters' types where the layout does
  // not say (XML parameters); in_reasoning: the prompt already opened the reasoning block (the
  // template put the start marker at the end of the generation prompt).
  ReplyParser(ToolFamily tools, ReasoningFamily reasoning, bool in_reasoning = false,
              nlohmann::ordered_json tool_list = nlohmann::ordered_json::array());

  Reply parse(std::string_view text, bool partial) const;

  // Whether a rendered prompt ends inside the family's reasoning block.
  static bool opens_reasoning(std::string_view prompt, ReasoningFamily f);

 private:
  void parse_body(std::string_view text, size_t pos, bool partial, Reply& out) const;
  // Layouts whose calls can only open the reply (Llama 3's JSON, pythonic lists, generic JSON).
  void parse_bare(std::string_view text, size_t pos, bool partial, bool after, Reply& out) const;

  ToolFamily tools_;
  ReasoningFamily reasoning_;
  bool in_reasoning_;
  nlohmann::ordered_json tool_list_;
};

}  // namespace brisk
