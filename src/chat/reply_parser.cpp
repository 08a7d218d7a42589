#include "chat/reply_parser.h"

#include <algorithm>
#include <utility>

#include "chat/tool_layouts.h"

namespace brisk {

namespace {

using namespace tool_layouts;

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

// Content between calls: whitespace next to a call (or to the reasoning block) is the layout's,
// not the reply's; at the end of a partial text, trailing whitespace and a marker's beginning wait.
void add_content(Reply& out, std::string_view piece, bool after_marker, bool before_marker,
                 bool partial_end, const std::vector<std::string>& markers) {
  if (after_marker) piece = trim_left(piece);
  if (partial_end) {
    piece.remove_suffix(marker_tail(piece, markers));
    piece = trim_right(piece);
  } else if (before_marker) {
    piece = trim_right(piece);
  }
  out.content += piece;
}

// The markers that open a call section in each family with one.
std::vector<std::string> openers(ToolFamily f) {
  switch (f) {
    case ToolFamily::FireFunction:
      return {"functools["};
    case ToolFamily::Llama3Json:
    case ToolFamily::Pythonic:
    case ToolFamily::GenericJson:
    case ToolFamily::None:
      return {};
    default:
      return {tool_call_trigger(f)};
  }
}

// One call section after its opener (at pos).
Section read_section(ToolFamily f, std::string_view s, size_t pos, bool partial,
                     const nlohmann::ordered_json& tools, std::vector<ToolCallText>& calls) {
  switch (f) {
    case ToolFamily::Hermes:
    case ToolFamily::Qwen3Coder: {
      const size_t p = skip_ws(s, pos);
      const bool xml = s.substr(p).starts_with("<function=");
      if (!xml && (p >= s.size() || may_become(s, p, "<function="))) return {p, false};
      const Section c = xml ? read_xml_function(s, p, partial, tools, calls)
                            : read_call_object(s, p, partial, {}, calls);
      if (!c.complete) return c;
      const size_t e = skip_ws(s, c.end);
      if (!s.substr(e).starts_with("</tool_call>")) return {e, false};
      return {e + 12, true};
    }
    case ToolFamily::MistralV3:
    case ToolFamily::Granite:
      return read_call_array(s, pos, partial, {}, calls);
    case ToolFamily::FireFunction:
      return read_call_array(s, pos - 1, partial, {}, calls);  // the opener's '[' starts it
    case ToolFamily::MistralV11:
      return read_name_args(s, pos, partial, calls);
    case ToolFamily::DeepSeekV3:
      return read_deepseek(s, pos, partial, calls);
    case ToolFamily::CommandR7B: {
      const Section c = read_call_array(s, pos, partial, {{"tool_name"}, {"parameters"}}, calls);
      if (!c.complete) return c;
      const size_t e = skip_ws(s, c.end);
      if (!s.substr(e).starts_with("<|END_ACTION|>")) return {e, false};
      return {e + 14, true};
    }
    default:
      return {pos, false};
  }
}

// The JSON string at pos decoded as far as it is written (an escape cut off waits); closed: the
// string ended.
std::string decode_prefix(std::string_view s, size_t pos, bool& closed) {
  std::string out;
  closed = false;
  for (size_t i = pos + 1; i < s.size(); ++i) {
    if (s[i] == '"') {
      closed = true;
      return out;
    }
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    const size_t len = i + 1 < s.size() && s[i + 1] == 'u' ? 6 : 2;
    if (i + len > s.size()) break;
    try {
      out += nlohmann::json::parse("\"" + std::string(s.substr(i, len)) + "\"").get<std::string>();
    } catch (const std::exception&) {
    }
    i += len - 1;
  }
  return out;
}

enum class Decided { Calls, Content, Undecided };

// Whether the JSON object at q is a call (its first key names a call's part), as soon as known.
Decided first_key_is(std::string_view s, size_t q, bool partial,
                     const std::vector<std::string_view>& keys, size_t* value_at = nullptr) {
  if (q >= s.size()) return partial ? Decided::Undecided : Decided::Content;
  if (s[q] != '{') return Decided::Content;
  const size_t k = skip_ws(s, q + 1);
  const JsonEnd e = json_value_end(s, k, kMaxReplyNesting);
  if (k >= s.size() || e.state == Span::Incomplete)
    return partial ? Decided::Undecided : Decided::Content;
  if (e.state != Span::Complete || s[k] != '"') return Decided::Content;
  std::string key;
  try {
    key = nlohmann::json::parse(s.substr(k, e.end - k)).get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return Decided::Content;  // not a valid JSON string (ill-formed UTF-8, a bad escape)
  }
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) return Decided::Content;
  if (value_at) {
    const size_t c = skip_ws(s, e.end);
    *value_at = c < s.size() && s[c] == ':' ? skip_ws(s, c + 1) : s.size();
  }
  return Decided::Calls;
}

// Whether the text at q opens a pythonic call list: '[' then a name and '('.
Decided pythonic_list(std::string_view s, size_t q, bool partial) {
  if (q >= s.size()) return partial ? Decided::Undecided : Decided::Content;
  if (s[q] != '[') return Decided::Content;
  size_t j = skip_ws(s, q + 1);
  const size_t start = j;
  while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' ||
                          s[j] == '.' || s[j] == '-'))
    ++j;
  if (j >= s.size()) return partial ? Decided::Undecided : Decided::Content;
  return j > start && s[j] == '(' ? Decided::Calls : Decided::Content;
}

}  // namespace

ReplyParser::ReplyParser(ToolFamily tools, ReasoningFamily reasoning, bool in_reasoning,
                         nlohmann::ordered_json tool_list)
    : tools_(tools),
      reasoning_(reasoning),
      in_reasoning_(in_reasoning && reasoning != ReasoningFamily::None),
      tool_list_(std::move(tool_list)) {}

bool ReplyParser::opens_reasoning(std::string_view prompt, ReasoningFamily f) {
  const ReasoningMarkers m = reasoning_markers(f);
  if (m.start.empty()) return false;
  const size_t open = prompt.rfind(m.start);
  if (open == prompt.npos) return false;
  return prompt.find(m.end, open) == prompt.npos &&
         trim_left(prompt.substr(open + m.start.size())).empty();
}

Reply ReplyParser::parse(std::string_view text, bool partial) const {
  Reply out;
  if (tools_ == ToolFamily::GptOss || reasoning_ == ReasoningFamily::Harmony) {
    read_harmony(text, partial, tools_ == ToolFamily::GptOss, out);
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
  parse_body(text, pos, partial, out);
  return out;
}

void ReplyParser::parse_body(std::string_view s, size_t pos, bool partial, Reply& out) const {
  const bool after = pos > 0;
  if (tools_ == ToolFamily::None) {
    add_content(out, s.substr(pos), after, false, partial, {});
    return;
  }
  std::vector<std::string> marks = openers(tools_);
  if (marks.empty()) return parse_bare(s, pos, partial, after, out);
  const size_t n_openers = marks.size();
  // Markers that only wrap the answer (Command R7B's response block) are left out of it.
  if (tools_ == ToolFamily::CommandR7B)
    marks.insert(marks.end(), {"<|START_RESPONSE|>", "<|END_RESPONSE|>"});
  bool after_call = after;
  while (true) {
    size_t at = s.npos, which = 0;
    for (size_t k = 0; k < marks.size(); ++k)
      if (const size_t f = s.find(marks[k], pos); f < at) at = f, which = k;
    if (at == s.npos) {
      add_content(out, s.substr(pos), after_call, false, partial, marks);
      return;
    }
    add_content(out, s.substr(pos, at - pos), after_call, true, false, marks);
    if (which >= n_openers) {
      pos = at + marks[which].size();
      after_call = true;
      continue;
    }
    const Section c =
        read_section(tools_, s, at + marks[which].size(), partial, tool_list_, out.calls);
    if (!c.complete) return;  // the rest is the call's, as far as it goes
    pos = c.end;
    after_call = true;
  }
}

void ReplyParser::parse_bare(std::string_view s, size_t pos, bool partial, bool after,
                             Reply& out) const {
  size_t q = skip_ws(s, pos);
  // An optional opening marker (a special token in some vocabularies).
  const std::string_view tag = tools_ == ToolFamily::Llama3Json ? "<|python_tag|>"
                               : tools_ == ToolFamily::Pythonic ? "<|python_start|>"
                                                                : "";
  if (!tag.empty() && s.substr(q).starts_with(tag))
    q = skip_ws(s, q + tag.size());
  else if (!tag.empty() && partial && q < s.size() && may_become(s, q, tag))
    return;
  size_t value = 0;
  const Decided d =
      tools_ == ToolFamily::Pythonic ? pythonic_list(s, q, partial)
      : tools_ == ToolFamily::Llama3Json
          ? first_key_is(s, q, partial, {"name", "parameters", "arguments"})
          : first_key_is(s, q, partial, {"tool_calls", "tool_call", "response"}, &value);
  if (d == Decided::Undecided) return;
  if (d == Decided::Content) return add_content(out, s.substr(pos), after, false, partial, {});
  Section c{q, false};
  if (tools_ == ToolFamily::Pythonic) {
    c = read_pythonic(s, q, out.calls);
  } else if (tools_ == ToolFamily::Llama3Json) {
    for (c = read_call_object(s, q, partial, {}, out.calls); c.complete;
         c = read_call_object(s, c.end, partial, {}, out.calls)) {
      const size_t e = skip_ws(s, c.end);
      if (e >= s.size() || s[e] != ';') break;
      c.end = e + 1;
    }
  } else if (value < s.size() && s[value] == '"') {  // {"response": "..."}
    bool closed = false;
    out.content += decode_prefix(s, value, closed);
    return;
  } else if (value < s.size()) {
    c = s[value] == '[' ? read_call_array(s, value, partial, {}, out.calls)
                        : read_call_object(s, value, partial, {}, out.calls);
  }
  if (!c.complete) return;
  size_t rest = skip_ws(s, c.end);
  if (tools_ == ToolFamily::GenericJson) {  // the object around the calls
    if (rest >= s.size()) return;
    if (s[rest] == '}') rest = skip_ws(s, rest + 1);
  }
  add_content(out, s.substr(rest), true, false, partial, {});
}

}  // namespace brisk
