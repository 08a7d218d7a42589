// A template that teaches no tool calls: the tools and the reply's two shapes are described in
// the system message (tool_instructions), and the model replies with JSON, either
// {"tool_calls": [{"name": "f", "arguments": {...}}, ...]} or {"response": "the answer"}.
#include "chat/tool_grammar_builder.h"

namespace brisk {

namespace {

using namespace tool_layouts;
using json = nlohmann::ordered_json;

// The JSON string at pos decoded as far as it is written (an escape cut off waits).
std::string decode_prefix(std::string_view s, size_t pos) {
  std::string out;
  for (size_t i = pos + 1; i < s.size() && s[i] != '"'; ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    const size_t len = i + 1 < s.size() && s[i + 1] == 'u' ? 6 : 2;
    if (i + len > s.size()) break;
    out += decode_string("\"" + std::string(s.substr(i, len)) + "\"");
    i += len - 1;
  }
  return out;
}

class GenericJson final : public ToolFamily {
 public:
  std::string_view name() const override { return "generic"; }
  bool taught_by(std::string_view) const override { return true; }
  std::string trigger() const override { return ""; }

  std::string tool_instructions(const json& tools) const override {
    std::string text =
        "You can call the following tools to answer the user. Each is a JSON Schema of its "
        "arguments:\n";
    for (const json& t : tools) text += t.dump() + "\n";
    text +=
        "\nReply with JSON only. To call tools: {\"tool_calls\": [{\"name\": \"tool_name\", "
        "\"arguments\": {...}}]}. To answer directly: {\"response\": \"your answer\"}.";
    return text;
  }

  // State 1: the calls (or the decision that there are none) are behind; content to the end.
  void read_reply(std::string_view s, const ReplyResume& from, bool partial, const json&,
                  Reply& out, ReplyResume& resume) const override {
    const size_t pos = from.pos;
    if (from.state == 1)
      return content_to_end(s, pos, from.after_marker, partial, {}, 1, out, resume);
    const size_t q = skip_ws(s, pos);
    size_t value = 0;
    const Decided d = first_key_is(s, q, partial, {"tool_calls", "tool_call", "response"}, &value);
    if (d == Decided::Undecided) return;
    if (d == Decided::Content)
      return content_to_end(s, pos, from.after_marker, partial, {}, 1, out, resume);
    if (value >= s.size()) return;
    if (s[value] == '"') {  // {"response": "..."}
      out.content += decode_prefix(s, value);
      return;
    }
    const Section c = s[value] == '[' ? read_call_array(s, value, partial, {}, out.calls)
                                      : read_call_object(s, value, partial, {}, out.calls);
    if (!c.complete) return;
    size_t rest = skip_ws(s, c.end);
    if (rest >= s.size()) return;
    if (s[rest] == '}') rest = skip_ws(s, rest + 1);  // the object around the calls
    content_to_end(s, rest, true, partial, {}, 1, out, resume);
  }

  CallGrammar call_grammar(ToolGrammarBuilder& b) const override {
    const int32_t calls = b.call_array(b.call_object("", "name", "arguments"), "");
    return {"", b.rule("calls",
                       {b.cat(b.cat(b.lit("{\"tool_calls\": "), {b.ref(calls)}), b.lit("}"))})};
  }
  int32_t body_grammar(ToolGrammarBuilder& b, const CallGrammar& calls) const override {
    if (b.calls_required()) return ToolFamily::body_grammar(b, calls);
    const int32_t answer = b.schema_rule(json{{"type", "string"}}, "response", true);
    return b.opening_body(calls,
                          b.cat(b.cat(b.lit("{\"response\": "), {b.ref(answer)}), b.lit("}")));
  }
};

}  // namespace

namespace families {
const ToolFamily& generic_json() {
  static const GenericJson f;
  return f;
}
}  // namespace families

}  // namespace brisk
