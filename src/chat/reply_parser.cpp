#include "chat/reply_parser.h"

#include <utility>

namespace brisk {

using namespace tool_layouts;

ReplyParser::ReplyParser(const ReplyFormat& format, bool in_reasoning,
                         nlohmann::ordered_json tool_list)
    : tools_(format.tools),
      reasoning_(format.reasoning),
      in_reasoning_(in_reasoning && format.reasoning != ReasoningFamily::None),
      tool_list_(std::move(tool_list)) {}

Reply ReplyParser::parse(std::string_view text, bool partial) const {
  Reply out;
  if (tools_->carries_reasoning()) {
    tools_->read_reply(text, 0, partial, tool_list_, out);
    return out;
  }
  if (reasoning_ == ReasoningFamily::Harmony) {  // harmony's channels, with no calls to read
    read_harmony(text, partial, false, out);
    return out;
  }
  size_t pos = 0;
  const ReasoningMarkers m = reasoning_markers(reasoning_);
  bool inside = in_reasoning_;
  if (!inside && !m.start.empty()) {
    const size_t p = skip_ws(text, 0);
    if (text.substr(p).starts_with(m.start)) {
      inside = true;
      pos = p + m.start.size();
    } else if (partial && (p == text.size() || may_become(text, p, m.start))) {
      return out;  // it may still open the reasoning
    }
  }
  if (inside) {
    const size_t e = text.find(m.end, pos);
    std::string_view r = trim_left(text.substr(pos, e == text.npos ? text.npos : e - pos));
    if (e == text.npos && partial) r.remove_suffix(marker_tail(r, {m.end}));
    out.reasoning = trim_right(r);
    if (e == text.npos) return out;
    pos = e + m.end.size();
  }
  tools_->read_reply(text, pos, partial, tool_list_, out);
  return out;
}

}  // namespace brisk
