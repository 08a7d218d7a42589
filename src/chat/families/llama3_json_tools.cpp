// Llama 3.1 to 3.3: the reply opens with {"name": "f", "parameters": {...}} (after <|python_tag|>
// or bare), calls separated by ';'. A call can only open the reply.
#include "chat/tool_grammar_builder.h"

namespace brisk {

namespace {

using namespace tool_layouts;

constexpr std::string_view kTag = "<|python_tag|>";

class Llama3Json final : public ToolFamily {
 public:
  std::string_view name() const override { return "llama3_json"; }
  bool taught_by(std::string_view t) const override {
    return contains(t, kTag) || (contains(t, "\"parameters\"") && contains(t, "\"name\""));
  }
  std::string trigger() const override { return ""; }

  void read_reply(std::string_view s, const ReplyResume& from, bool partial, const json&,
                  Reply& out, ReplyResume& resume) const override {
    const auto opens = [&](size_t q) {
      return first_key_is(s, q, partial, {"name", "parameters", "arguments"});
    };
    const auto read = [&](size_t q) {
      Section c = read_call_object(s, q, partial, {}, out.calls);
      for (; c.complete; c = read_call_object(s, c.end, partial, {}, out.calls)) {
        const size_t e = skip_ws(s, c.end);
        if (e >= s.size() || s[e] != ';') break;
        c.end = e + 1;
      }
      return c;
    };
    read_opening_calls(s, from, partial, kTag, opens, read, out, resume);
  }

  CallGrammar call_grammar(ToolGrammarBuilder& b) const override {
    return {"", b.list(b.call_object("", "name", "parameters"), "; ")};
  }
  int32_t body_grammar(ToolGrammarBuilder& b, const CallGrammar& calls) const override {
    if (b.calls_required()) return ToolFamily::body_grammar(b, calls);
    return b.opening_body(calls, b.text_not_opening_with('{'));
  }
};

}  // namespace

namespace families {
const ToolFamily& llama3_json() {
  static const Llama3Json f;
  return f;
}
}  // namespace families

}  // namespace brisk
