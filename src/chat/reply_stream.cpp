#include "chat/reply_stream.h"

namespace brisk {

namespace {

// What `tail` adds to `sent`, whose first `base` bytes were final before it (so the reply now is
// sent[0, base) + tail, and sent a prefix of that), taken into sent.
std::string extend(std::string& sent, size_t base, const std::string& tail) {
  if (sent.size() < base) return "";
  const size_t have = sent.size() - base;
  if (tail.size() <= have || tail.compare(0, have, sent, base, have) != 0) return "";
  std::string d = tail.substr(have);
  sent += d;
  return d;
}

}  // namespace

ReplyDelta ReplyStream::push(std::string_view more) {
  if (more.empty()) return {};  // a token that released no text (half a character) changes nothing
  text_ += more;
  return read(true);
}

ReplyDelta ReplyStream::finish() {
  return read(false);
}

ReplyDelta ReplyStream::push_last(std::string_view more) {
  ReplyDelta d = push(more);
  ReplyDelta rest = finish();
  d.reasoning += rest.reasoning;
  d.content += rest.content;
  for (auto& c : rest.calls) {
    if (!c.first && !d.calls.empty() && d.calls.back().index == c.index)
      d.calls.back().arguments += c.arguments;
    else
      d.calls.push_back(std::move(c));
  }
  return d;
}

ReplyDelta ReplyStream::read(bool partial) {
  ReplyResume next;
  const tool_layouts::GrowingReply growing(scan_);
  const Reply tail = parser_.parse_from(text_, resume_, partial, next);
  const ReplyResume& from = resume_;
  ReplyDelta d;
  d.reasoning = extend(sent_.reasoning, from.reasoning, tail.reasoning);
  d.content = extend(sent_.content, from.content, tail.content);
  for (size_t j = 0; j < tail.calls.size(); ++j) {
    const ToolCallText& c = tail.calls[j];
    const size_t i = from.calls + j;
    if (i < sent_.calls.size()) {
      ToolCallText& s = sent_.calls[i];
      s.complete = c.complete;
      std::string args = extend(s.arguments, 0, c.arguments);
      if (!args.empty()) d.calls.push_back({i, false, "", std::move(args)});
    } else {
      sent_.calls.push_back(c);
      d.calls.push_back({i, true, c.name, c.arguments});
    }
  }
  resume_ = next;
  return d;
}

}  // namespace brisk
