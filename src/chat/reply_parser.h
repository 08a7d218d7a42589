// A model's reply split the way OpenAI's API returns it: reasoning, content and tool calls, in
// the syntax of any tool-call family (tool_family.h) and reasoning family. One parser serves
// whole replies and streams: parsing a text that may still grow (partial) returns only what no
// continuation can change, so the parse of a longer text extends the parse of any shorter one,
// and the deltas a stream sends join to the whole reply's parse (reply_stream.h).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "chat/reply.h"
#include "chat/tool_family.h"

namespace brisk {

class ReplyParser {
 public:
  // tool_list: the request's tools (OpenAI's list), for the parameters' types where the layout
  // does not say (XML parameters); in_reasoning: the prompt already opened the reasoning block
  // (the template put the start marker at the end of the generation prompt).
  ReplyParser(const ReplyFormat& format, bool in_reasoning = false,
              nlohmann::ordered_json tool_list = nlohmann::ordered_json::array());

  Reply parse(std::string_view text, bool partial) const;
  // The reply read on from `from`, a point an earlier parse of a prefix of `text` marked (what a
  // parse from the start adds after from's sizes); `next` gets the last point this parse marks.
  // A stream that parses each longer text from the last mark reads each byte about once.
  Reply parse_from(std::string_view text, const ReplyResume& from, bool partial,
                   ReplyResume& next) const;

 private:
  const ToolFamily* tools_;
  ReasoningFamily reasoning_;
  bool in_reasoning_;
  nlohmann::ordered_json tool_list_;

  // Where a parse from the start begins: the body, or inside the reasoning block (nullopt: the
  // text may still open the block).
  std::optional<ReplyResume> start(std::string_view text, bool partial) const;
  // The reasoning block from `at`; false while it has not ended.
  bool read_reasoning(std::string_view text, const ReplyResume& at, bool partial, Reply& out,
                      ReplyResume& next) const;
};

}  // namespace brisk
