// A model's reply as any text, read in every family's syntax: parsing must not fail, and the
// reply streamed (a byte at a time, and in two pieces) must join to the whole reply's parse, so
// a client never gets deltas that contradict the final message. The first byte picks the family,
// the reasoning markers and whether the prompt opened the reasoning block.
#include <cstdlib>
#include <iterator>
#include <string>
#include <string_view>

#include "chat/reply_stream.h"

namespace {

using namespace brisk;

void same_or_abort(const Reply& a, const Reply& b) {
  if (a.reasoning != b.reasoning || a.content != b.content || a.calls.size() != b.calls.size())
    std::abort();
  for (size_t i = 0; i < a.calls.size(); ++i)
    if (a.calls[i].name != b.calls[i].name || a.calls[i].arguments != b.calls[i].arguments)
      std::abort();
}

Reply streamed(const ReplyParser& p, std::string_view text, size_t piece) {
  ReplyStream st(p);
  for (size_t i = 0; i < text.size(); i += piece) st.push(text.substr(i, piece));
  st.finish();
  return st.sent();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 1024) return 0;  // a call being written is read again from its start
  const std::vector<const ToolFamily*>& families = ToolFamily::all();  // "none" included
  const ReasoningFamily reasoning[] = {ReasoningFamily::None, ReasoningFamily::ThinkTags,
                                       ReasoningFamily::CommandR7B, ReasoningFamily::Harmony};
  const uint8_t pick = data[0];
  const size_t nf = families.size(), nr = std::size(reasoning);
  const ReplyParser p({families[pick % nf], reasoning[(pick / nf) % nr]},
                      (pick / (nf * nr)) % 2 == 1);
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const Reply whole = p.parse(text, false);
  same_or_abort(streamed(p, text, 1), whole);
  same_or_abort(streamed(p, text, 1 + text.size() / 2), whole);
  return 0;
}
