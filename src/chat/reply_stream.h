// A reply parsed as it streams: as each piece arrives, the text is read on from the last point the
// parser marked (ReplyResume: past content, reasoning and whole calls; a call being written is
// read again from its start, its arguments' JSON scanned on from where the text ran out), and
// what became final since the last piece is the delta to send.
// The deltas of a stream join to the whole reply's parse.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chat/reply_parser.h"

namespace brisk {

struct ReplyDelta {
  std::string reasoning, content;
  struct Call {
    size_t index;
    bool first;        // the call's first delta: it carries the name
    std::string name;  // on the first delta
    std::string arguments;
  };
  std::vector<Call> calls;
  bool empty() const { return reasoning.empty() && content.empty() && calls.empty(); }
};

class ReplyStream {
 public:
  explicit ReplyStream(ReplyParser p) : parser_(std::move(p)) {}
  ReplyDelta push(std::string_view more);
  ReplyDelta finish();  // the text is whole
  // The last piece: push(more) and finish() as one delta (a call's arguments in one part).
  ReplyDelta push_last(std::string_view more);
  const Reply& sent() const { return sent_; }
  const std::string& text() const { return text_; }

 private:
  // Reads on from resume_ and sends what is new.
  ReplyDelta read(bool partial);

  ReplyParser parser_;
  std::string text_;
  Reply sent_;
  ReplyResume resume_;
  JsonScanState scan_;  // the value the text ran out in (a call's arguments being written)
};

}  // namespace brisk
