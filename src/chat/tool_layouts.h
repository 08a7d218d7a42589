// The pieces tool-call readers share (chat/families/ holds each family's own): JSON call objects
// and lists, harmony messages, content between calls. Each reader reads from a position, appends
// the calls it has read (a call once its name is known, its arguments as far as they go) and
// says where it stopped and whether the layout closed there. On a text that may grow (partial)
// nothing is appended that a continuation could change.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/reply.h"
#include "core/json_scan.h"

namespace brisk::tool_layouts {

using Span = JsonSpan;
// How deep a reply's JSON may nest before its value counts as broken (core/json_scan.h).
inline constexpr size_t kMaxReplyNesting = 256;

// Where the reply's JSON value at pos ends (json_value_end, nested at most kMaxReplyNesting deep).
// While a GrowingReply is in scope on this thread, the scan of a value the text ran out in is
// kept in it and gone on from on the next read, so a call's arguments streamed over many pieces
// are scanned about once.
JsonEnd value_end(std::string_view s, size_t pos);
// A reply that only grows (a stream's text), read on this thread while the object lives. The
// readers' signatures stay those of a single read; what a stream keeps between reads lives here.
class GrowingReply {
 public:
  explicit GrowingReply(JsonScanState& scan);
  ~GrowingReply();
  GrowingReply(const GrowingReply&) = delete;
  GrowingReply& operator=(const GrowingReply&) = delete;

 private:
  JsonScanState* outer_;
};

inline bool contains(std::string_view s, std::string_view what) {
  return s.find(what) != s.npos;
}
bool is_ws(char c);
size_t skip_ws(std::string_view s, size_t pos);
std::string_view trim_left(std::string_view s);
std::string_view trim_right(std::string_view s);
// Whether the text from pos could still grow into `m` (it is a proper prefix of it).
bool may_become(std::string_view s, size_t pos, std::string_view m);
// The longest end of `s` that is a proper beginning of one of the markers: text that may yet
// become a marker, held back from a stream.
size_t marker_tail(std::string_view s, const std::vector<std::string>& markers);
// A complete JSON string's value ("" when it does not decode).
std::string decode_string(std::string_view quoted);
// A string as JSON text (ill-formed UTF-8 replaced).
std::string quote(std::string_view s);

struct Section {
  size_t end;
  bool complete;
};

// Content between calls: whitespace next to a call (or to the reasoning block) is the layout's,
// not the reply's; at the end of a partial text, trailing whitespace and the beginning of one
// of `markers` wait. Returns where in `piece` what it added ends (0: it added nothing).
size_t add_content(Reply& out, std::string_view piece, bool after_marker, bool before_marker,
                   bool partial_end, const std::vector<std::string>& markers);
// A point to resume the body's reading from: pos, with the reader's state, `out` as read so far.
void mark(ReplyResume& resume, size_t pos, bool after_marker, int state, const Reply& out);
// The rest of the text from pos as content, marking where a later read may resume with `state`
// (a state that reads content alone).
void content_to_end(std::string_view s, size_t pos, bool after_marker, bool partial,
                    const std::vector<std::string>& markers, int state, Reply& out,
                    ReplyResume& resume);

// The keys a layout's call object names its parts with.
struct CallKeys {
  std::vector<std::string_view> name = {"name"};
  std::vector<std::string_view> args = {"arguments", "parameters"};
};

// {"name": "f", "arguments": {...}} (other keys skipped; arguments given as a JSON string are
// decoded once complete).
Section read_call_object(std::string_view s, size_t pos, bool partial, const CallKeys& keys,
                         std::vector<ToolCallText>& out);
// '[' item (',' item)* ']', whitespace anywhere; it stops where an item stops short.
Section read_list(std::string_view s, size_t pos, const std::function<Section(size_t)>& item);
// A section that ends with `marker` after what `c` read (whitespace between): where it closes.
Section closed_by(std::string_view s, Section c, std::string_view marker);
// [call, call, ...]
Section read_call_array(std::string_view s, size_t pos, bool partial, const CallKeys& keys,
                        std::vector<ToolCallText>& out);

// Whether the text at a position opens calls, as soon as that is known.
enum class Decided { Calls, Content, Undecided };
// Whether the JSON object at q is a call (its first key is one of `keys`); value_at: where that
// key's value starts.
Decided first_key_is(std::string_view s, size_t q, bool partial,
                     const std::vector<std::string_view>& keys, size_t* value_at = nullptr);
// A reply whose calls can only open it: after an optional tag (a special token in some
// vocabularies), `opens` says whether the text at a position is calls and `read` reads them;
// the text after them is content.
void read_opening_calls(std::string_view s, const ReplyResume& from, bool partial,
                        std::string_view tag, const std::function<Decided(size_t)>& opens,
                        const std::function<Section(size_t)>& read, Reply& out,
                        ReplyResume& resume);

// gpt-oss's harmony messages, the whole reply: the analysis channel to reasoning, the final (and
// any other) channel to content, a message to functions.NAME to a call (when `calls`).
void read_harmony(std::string_view s, const ReplyResume& from, bool partial, bool calls, Reply& out,
                  ReplyResume& resume);

}  // namespace brisk::tool_layouts
