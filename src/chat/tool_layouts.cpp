#include "chat/tool_layouts.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

namespace brisk::tool_layouts {

namespace {

using json = nlohmann::ordered_json;

bool one_of(std::string_view key, const std::vector<std::string_view>& keys) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// The call being read: appended once its name is known, its arguments kept up to date.
struct PendingCall {
  explicit PendingCall(std::vector<ToolCallText>& o) : out(o) {}
  std::vector<ToolCallText>& out;
  std::optional<std::string> name;
  std::string args;
  bool added = false;

  void sync() {
    if (!name) return;
    if (!added) {
      out.push_back({*name, args, false});
      added = true;
    } else {
      out.back().arguments = args;
    }
  }
  void close() {
    sync();
    if (added) out.back().complete = true;
  }
};

}  // namespace

namespace {
thread_local JsonScanState* t_growing = nullptr;
}  // namespace

GrowingReply::GrowingReply(JsonScanState& scan) : outer_(t_growing) {
  t_growing = &scan;
}
GrowingReply::~GrowingReply() {
  t_growing = outer_;
}

JsonEnd value_end(std::string_view s, size_t pos) {
  if (t_growing) return json_value_end(s, pos, kMaxReplyNesting, *t_growing);
  return json_value_end(s, pos, kMaxReplyNesting);
}

bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && is_ws(s.front())) s.remove_prefix(1);
  return s;
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

std::string decode_string(std::string_view quoted) {
  try {
    const json j = json::parse(quoted);
    if (j.is_string()) return j.get<std::string>();
  } catch (const std::exception&) {
  }
  return "";
}

std::string quote(std::string_view s) {
  return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

size_t skip_ws(std::string_view s, size_t pos) {
  while (pos < s.size() && is_ws(s[pos])) ++pos;
  return pos;
}

bool may_become(std::string_view s, size_t pos, std::string_view m) {
  const std::string_view rest = s.substr(std::min(pos, s.size()));
  return rest.size() < m.size() && m.starts_with(rest);
}

size_t marker_tail(std::string_view s, const std::vector<std::string>& markers) {
  size_t best = 0;
  for (const std::string& m : markers)
    for (size_t n = std::min(s.size(), m.size() - 1); n > best; --n)
      if (s.substr(s.size() - n) == std::string_view(m).substr(0, n)) {
        best = n;
        break;
      }
  return best;
}

namespace {

// A harmony header's value after `key` (a channel name, a recipient), up to a space or a marker.
std::string header_word(std::string_view h, std::string_view key) {
  const size_t k = h.find(key);
  if (k == h.npos) return "";
  size_t e = k + key.size();
  while (e < h.size() && h[e] != ' ' && h[e] != '<') ++e;
  return std::string(h.substr(k + key.size(), e - k - key.size()));
}

}  // namespace

namespace {

const std::vector<std::string> kHarmonyEnds = {"<|end|>", "<|call|>", "<|return|>", "<|start|>"};
constexpr std::string_view kStart = "<|start|>", kMessage = "<|message|>", kChannel = "<|channel|>",
                           kFunctions = "functions.";
// Resume states of read_harmony: between messages, or inside a message's text.
enum HarmonyState { kBetween = 0, kInAnalysis = 1, kInText = 2 };

// A message's text from pos to its end marker, to reasoning (analysis) or content. Returns where
// the next message starts, or npos where the text runs on (a resume point is marked inside it).
size_t harmony_text(std::string_view s, size_t pos, bool partial, int state, Reply& out,
                    ReplyResume& resume) {
  size_t e = s.npos, len = 0;
  for (const std::string& end : kHarmonyEnds)
    if (const size_t f = s.find(end, pos); f < e) e = f, len = end == kStart ? 0 : end.size();
  std::string_view text = s.substr(pos, e == s.npos ? s.npos : e - pos);
  if (e == s.npos && partial) text.remove_suffix(marker_tail(text, kHarmonyEnds));
  (state == kInAnalysis ? out.reasoning : out.content) += text;
  if (e == s.npos) {
    mark(resume, pos + text.size(), false, state, out);
    return s.npos;
  }
  mark(resume, e + len, false, kBetween, out);
  return e + len;
}

}  // namespace

void read_harmony(std::string_view s, const ReplyResume& from, bool partial, bool calls, Reply& out,
                  ReplyResume& resume) {
  size_t i = from.pos;
  if (from.state != kBetween) i = harmony_text(s, i, partial, from.state, out, resume);
  while (i < s.size()) {
    // Text outside any message (a model that writes no channels) is content.
    if (!s.substr(i).starts_with(kStart) && !s.substr(i).starts_with(kChannel) &&
        !(partial && (may_become(s, i, kStart) || may_become(s, i, kChannel)))) {
      size_t e = std::min(s.find(kStart, i), s.find(kChannel, i));
      std::string_view text = s.substr(i, e == s.npos ? s.npos : e - i);
      if (e == s.npos && partial)
        text.remove_suffix(marker_tail(text, {std::string(kStart), std::string(kChannel)}));
      out.content += text;
      i = e == s.npos ? i + text.size() : e;
      mark(resume, i, false, kBetween, out);
      if (e == s.npos) return;
      continue;
    }
    const size_t m = s.find(kMessage, i);
    if (m == s.npos) return;  // the header is not whole yet (or never was)
    const std::string_view header = s.substr(i, m - i);
    const size_t body = m + kMessage.size();
    const std::string to = header_word(header, "to=");
    if (calls && to.starts_with(kFunctions)) {
      // The arguments are the JSON value (which may hold a marker's text); the call's end
      // (<|call|>) ends generation, so a whole reply closes it.
      const size_t a = skip_ws(s, body);
      const JsonEnd v = value_end(s, a);
      const bool whole = v.state == Span::Complete || (!partial && v.state == Span::Incomplete);
      out.calls.push_back(
          {to.substr(kFunctions.size()), std::string(s.substr(body, v.end - body)), whole});
      if (v.state != Span::Complete) return;
      i = v.end;
      for (const std::string& end : kHarmonyEnds)
        if (end != kStart && s.substr(i).starts_with(end)) i += end.size();
      mark(resume, i, false, kBetween, out);
      continue;
    }
    const int state = header_word(header, kChannel) == "analysis" ? kInAnalysis : kInText;
    i = harmony_text(s, body, partial, state, out, resume);
  }
}

Section read_list(std::string_view s, size_t pos, const std::function<Section(size_t)>& read_item) {
  size_t i = skip_ws(s, pos);
  if (i >= s.size() || s[i] != '[') return {i, false};
  ++i;
  while (true) {
    i = skip_ws(s, i);
    if (i >= s.size()) return {i, false};
    if (s[i] == ']') return {i + 1, true};
    if (s[i] == ',') {
      ++i;
      continue;
    }
    const Section c = read_item(i);
    if (!c.complete) return c;
    i = c.end;
  }
}

Section read_call_object(std::string_view s, size_t pos, bool partial, const CallKeys& keys,
                         std::vector<ToolCallText>& out) {
  PendingCall call(out);
  bool args_seen = false;
  size_t i = skip_ws(s, pos);
  if (i >= s.size() || s[i] != '{') return {i, false};
  ++i;
  while (true) {
    i = skip_ws(s, i);
    if (i >= s.size()) break;
    if (s[i] == '}') {
      call.close();
      return {i + 1, true};
    }
    if (s[i] == ',') {
      ++i;
      continue;
    }
    const JsonEnd k = value_end(s, i);
    if (k.state != Span::Complete || s[i] != '"') break;
    const std::string key = decode_string(s.substr(i, k.end - i));
    i = skip_ws(s, k.end);
    if (i >= s.size() || s[i] != ':') break;
    i = skip_ws(s, i + 1);
    if (i >= s.size()) break;
    JsonEnd v = value_end(s, i);
    // A scalar at the very end is whole once nothing more can come.
    if (v.state == Span::Incomplete && !partial && s[i] != '"' && s[i] != '{' && s[i] != '[')
      v.state = Span::Complete;
    // The first name and the first arguments count; a repeated key is skipped like any other.
    if (one_of(key, keys.name) && !call.name) {
      if (v.state != Span::Complete || s[i] != '"') break;
      call.name = decode_string(s.substr(i, v.end - i));
      call.sync();
    } else if (one_of(key, keys.args) && !args_seen) {
      args_seen = true;
      if (s[i] == '"') {  // arguments as a JSON string of JSON
        if (v.state != Span::Complete) break;
        call.args = decode_string(s.substr(i, v.end - i));
      } else {
        call.args = std::string(s.substr(i, v.end - i));
      }
      call.sync();
      if (v.state != Span::Complete) break;
    } else if (v.state != Span::Complete) {
      break;
    }
    i = v.end;
  }
  call.sync();
  return {i, false};
}

Section closed_by(std::string_view s, Section c, std::string_view marker) {
  if (!c.complete) return c;
  const size_t e = skip_ws(s, c.end);
  if (!s.substr(e).starts_with(marker)) return {e, false};
  return {e + marker.size(), true};
}

Section read_call_array(std::string_view s, size_t pos, bool partial, const CallKeys& keys,
                        std::vector<ToolCallText>& out) {
  return read_list(s, pos, [&](size_t i) { return read_call_object(s, i, partial, keys, out); });
}

size_t add_content(Reply& out, std::string_view whole, bool after_marker, bool before_marker,
                   bool partial_end, const std::vector<std::string>& markers) {
  std::string_view piece = after_marker ? trim_left(whole) : whole;
  if (partial_end) {
    piece.remove_suffix(marker_tail(piece, markers));
    piece = trim_right(piece);
  } else if (before_marker) {
    piece = trim_right(piece);
  }
  out.content += piece;
  return piece.empty() ? 0 : static_cast<size_t>(piece.data() - whole.data()) + piece.size();
}

void mark(ReplyResume& resume, size_t pos, bool after_marker, int state, const Reply& out) {
  resume.part = ReplyResume::Part::Body;
  resume.pos = pos;
  resume.after_marker = after_marker;
  resume.state = state;
  resume.reasoning = out.reasoning.size();
  resume.content = out.content.size();
  resume.calls = out.calls.size();
}

// Once content has been added, what follows it reads on from its end (the leading whitespace is
// behind): splitting a piece there gives the same content, and no marker can start before it,
// since one that did would be whole in the text (and found) or its beginning held back.
void content_to_end(std::string_view s, size_t pos, bool after_marker, bool partial,
                    const std::vector<std::string>& markers, int state, Reply& out,
                    ReplyResume& resume) {
  const size_t end = add_content(out, s.substr(pos), after_marker, false, partial, markers);
  if (end > 0)
    mark(resume, pos + end, false, state, out);
  else
    mark(resume, pos, after_marker, state, out);
}

Decided first_key_is(std::string_view s, size_t q, bool partial,
                     const std::vector<std::string_view>& keys, size_t* value_at) {
  if (q >= s.size()) return partial ? Decided::Undecided : Decided::Content;
  if (s[q] != '{') return Decided::Content;
  const size_t k = skip_ws(s, q + 1);
  const JsonEnd e = value_end(s, k);
  if (k >= s.size() || e.state == Span::Incomplete)
    return partial ? Decided::Undecided : Decided::Content;
  if (e.state != Span::Complete || s[k] != '"') return Decided::Content;
  std::string key;
  try {
    key = json::parse(s.substr(k, e.end - k)).get<std::string>();
  } catch (const json::exception&) {
    return Decided::Content;  // not a valid JSON string (ill-formed UTF-8, a bad escape)
  }
  if (!one_of(key, keys)) return Decided::Content;
  if (value_at) {
    const size_t c = skip_ws(s, e.end);
    *value_at = c < s.size() && s[c] == ':' ? skip_ws(s, c + 1) : s.size();
  }
  return Decided::Calls;
}

void read_opening_calls(std::string_view s, const ReplyResume& from, bool partial,
                        std::string_view tag, const std::function<Decided(size_t)>& opens,
                        const std::function<Section(size_t)>& read, Reply& out,
                        ReplyResume& resume) {
  // State 1: the calls (or the decision that there are none) are behind; content to the end.
  const size_t pos = from.pos;
  const bool after = from.after_marker;
  if (from.state == 1) return content_to_end(s, pos, after, partial, {}, 1, out, resume);
  size_t q = skip_ws(s, pos);
  if (!tag.empty() && s.substr(q).starts_with(tag))
    q = skip_ws(s, q + tag.size());
  else if (!tag.empty() && partial && q < s.size() && may_become(s, q, tag))
    return;
  const Decided d = opens(q);
  if (d == Decided::Undecided) return;
  if (d == Decided::Content) return content_to_end(s, pos, after, partial, {}, 1, out, resume);
  const Section c = read(q);
  if (!c.complete) return;
  // Content after the calls is decided once some is added (whitespace alone may still lead to
  // more calls, as Llama 3's ';' does).
  const size_t rest = skip_ws(s, c.end);
  if (const size_t end = add_content(out, s.substr(rest), true, false, partial, {}); end > 0)
    mark(resume, rest + end, false, 1, out);
}

}  // namespace brisk::tool_layouts
