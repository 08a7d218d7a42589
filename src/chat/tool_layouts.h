// The readers of each tool-call layout (reply_parser.h decides where they start). Each reads one
// layout from a position, appends the calls it has read (a call once its name is known, its
// arguments as far as they go) and says where it stopped and whether the layout closed there.
// On a text that may grow (partial) nothing is appended that a continuation could change.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "chat/reply_parser.h"
#include "core/json_scan.h"

namespace brisk::tool_layouts {

using Span = JsonSpan;
// How deep a reply's JSON may nest before its value counts as broken (core/json_scan.h).
inline constexpr size_t kMaxReplyNesting = 256;
size_t skip_ws(std::string_view s, size_t pos);
// Whether the text from pos could still grow into `m` (it is a proper prefix of it).
bool may_become(std::string_view s, size_t pos, std::string_view m);

struct Section {
  size_t end;
  bool complete;
};

// The keys a layout's call object names its parts with.
struct CallKeys {
  std::vector<std::string_view> name = {"name"};
  std::vector<std::string_view> args = {"arguments", "parameters"};
};

// {"name": "f", "arguments": {...}} (other keys skipped; arguments given as a JSON string are
// decoded once complete).
Section read_call_object(std::string_view s, size_t pos, bool partial, const CallKeys& keys,
                         std::vector<ToolCallText>& out);
// [call, call, ...]
Section read_call_array(std::string_view s, size_t pos, bool partial, const CallKeys& keys,
                        std::vector<ToolCallText>& out);
// <function=NAME><parameter=KEY>VALUE</parameter>...</function> (Qwen3-Coder); a value becomes
// a JSON string unless its parameter's schema says otherwise and it parses as JSON.
Section read_xml_function(std::string_view s, size_t pos, bool partial,
                          const nlohmann::ordered_json& tools, std::vector<ToolCallText>& out);
// [f(a=1, b="x"), g()] with Python literals as values.
Section read_pythonic(std::string_view s, size_t pos, std::vector<ToolCallText>& out);
// NAME[ARGS]{...} (Mistral's newer layout, after [TOOL_CALLS]).
Section read_name_args(std::string_view s, size_t pos, bool partial,
                       std::vector<ToolCallText>& out);
// <｜tool▁call▁begin｜>...<｜tool▁calls▁end｜> (DeepSeek V3 and V3.1, after the calls' begin
// marker).
Section read_deepseek(std::string_view s, size_t pos, bool partial, std::vector<ToolCallText>& out);

// gpt-oss's harmony messages, the whole reply: the analysis channel to reasoning, the final (and
// any other) channel to content, a message to functions.NAME to a call (when `calls`).
void read_harmony(std::string_view s, bool partial, bool calls, Reply& out);

// The longest end of `s` that is a proper beginning of one of the markers: text that may yet
// become a marker, held back from a stream.
size_t marker_tail(std::string_view s, const std::vector<std::string>& markers);

}  // namespace brisk::tool_layouts
