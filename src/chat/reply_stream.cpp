#include "chat/reply_stream.h"

namespace brisk {

namespace {

// What `now` adds to `sent` (a parse of a shorter text, so a prefix of it), taken into sent.
std::string extend(std::string& sent, const std::string& now) {
  if (now.size() <= sent.size() || now.compare(0, sent.size(), sent) != 0) return "";
  std::string d = now.substr(sent.size());
  sent = now;
  return d;
}

}  // namespace

ReplyDelta ReplyStream::push(std::string_view more) {
  if (more.empty()) return {};  // a token that released no text (half a character) changes nothing
  text_ += more;
  return advance(parser_.parse(text_, true));
}

ReplyDelta ReplyStream::finish() {
  return advance(parser_.parse(text_, false));
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

ReplyDelta ReplyStream::advance(const Reply& now) {
  ReplyDelta d;
  d.reasoning = extend(sent_.reasoning, now.reasoning);
  d.content = extend(sent_.content, now.content);
  for (size_t i = 0; i < now.calls.size(); ++i) {
    const ToolCallText& c = now.calls[i];
    if (i < sent_.calls.size()) {
      ToolCallText& s = sent_.calls[i];
      s.complete = c.complete;
      std::string args = extend(s.arguments, c.arguments);
      if (!args.empty()) d.calls.push_back({i, false, "", std::move(args)});
    } else {
      sent_.calls.push_back(c);
      d.calls.push_back({i, true, c.name, c.arguments});
    }
  }
  return d;
}

}  // namespace brisk
