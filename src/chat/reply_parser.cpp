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
  ReplyResume next;
  return parse_from(text, {}, partial, next);
}

std::optional<ReplyResume> ReplyParser::start(std::string_view text, bool partial) const {
  ReplyResume at;
  at.part = ReplyResume::Part::Body;
  const ReasoningMarkers m = reasoning_markers(reasoning_);
  if (tools_->carries_reasoning() || m.start.empty()) return at;
  if (!in_reasoning_) {
    const size_t p = skip_ws(text, 0);
    if (partial && (p == text.size() || may_become(text, p, m.start))) return std::nullopt;
    if (!text.substr(p).starts_with(m.start)) return at;
    at.pos = p + m.start.size();
  }
  at.part = ReplyResume::Part::Reasoning;
  return at;
}

// The block's text is trimmed at both ends. Inside it, a later read resumes at the end of the
// text added (state 1: no leading whitespace left to trim), as content does
// (tool_layouts::content_to_end); after the end marker, the body starts.
bool ReplyParser::read_reasoning(std::string_view text, const ReplyResume& at, bool partial,
                                 Reply& out, ReplyResume& next) const {
  const ReasoningMarkers m = reasoning_markers(reasoning_);
  const size_t e = text.find(m.end, at.pos);
  const std::string_view whole = text.substr(at.pos, e == text.npos ? text.npos : e - at.pos);
  std::string_view r = at.state == 0 ? trim_left(whole) : whole;
  if (e == text.npos && partial) r.remove_suffix(marker_tail(r, {m.end}));
  r = trim_right(r);
  out.reasoning += r;
  if (e != text.npos) {
    mark(next, e + m.end.size(), true, 0, out);
    return true;
  }
  if (!r.empty()) {
    next.pos = static_cast<size_t>(r.data() - text.data()) + r.size();
    next.state = 1;
    next.reasoning = out.reasoning.size();
  }
  return false;
}

Reply ReplyParser::parse_from(std::string_view text, const ReplyResume& from, bool partial,
                              ReplyResume& next) const {
  Reply out;
  next = from;
  ReplyResume at = from;
  if (at.part == ReplyResume::Part::Start) {
    const std::optional<ReplyResume> s = start(text, partial);
    if (!s) return out;  // it may still open the reasoning
    at = *s;
  }
  // Marks are made relative to `out`, then counted from the start.
  at.reasoning = at.content = at.calls = 0;
  next = at;
  bool body = at.part == ReplyResume::Part::Body;
  if (!body) {
    body = read_reasoning(text, at, partial, out, next);
    at = next;
  }
  if (body) {
    if (reasoning_ == ReasoningFamily::Harmony && !tools_->carries_reasoning())
      read_harmony(text, at, partial, false, out, next);  // harmony's channels, no calls to read
    else
      tools_->read_reply(text, at, partial, tool_list_, out, next);
  }
  next.reasoning += from.reasoning;
  next.content += from.content;
  next.calls += from.calls;
  return out;
}

}  // namespace brisk
