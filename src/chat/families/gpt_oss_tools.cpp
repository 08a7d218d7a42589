// gpt-oss (OpenAI's harmony format): a call is a commentary message to functions.NAME,
// <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>, and the
// reasoning is the analysis channel, so this layout reads the whole reply.
#include "chat/tool_grammar_builder.h"

namespace brisk {

namespace {

using namespace tool_layouts;

constexpr std::string_view kChannel = "<|channel|>", kRecipient = "to=functions.",
                           kMessage = "<|message|>";

class GptOss final : public ToolFamily {
 public:
  std::string_view name() const override { return "openai"; }
  bool taught_by(std::string_view t) const override { return contains(t, kChannel); }
  std::string trigger() const override { return std::string(kRecipient); }
  bool carries_reasoning() const override { return true; }

  void read_reply(std::string_view s, const ReplyResume& from, bool partial, const json&,
                  Reply& out, ReplyResume& resume) const override {
    read_harmony(s, from, partial, true, out, resume);
  }

  CallGrammar call_grammar(ToolGrammarBuilder& b) const override {
    // The header after the recipient, as gpt-oss writes it in either order.
    const int32_t header = b.rule("header", {b.lit(" <|constrain|>json"),
                                             b.lit("<|constrain|>json"),
                                             b.lit("<|channel|>commentary <|constrain|>json"),
                                             b.lit("<|channel|>commentary json"),
                                             b.lit("<|channel|>commentary"),
                                             {}});
    return {trigger(), b.one_of("call", [&](size_t i) {
              auto s = b.lit(b.tool_name(i));
              s.push_back(b.ref(header));
              s = b.cat(s, b.lit(kMessage));
              s.push_back(b.ref(b.args(i)));
              return s;
            })};
  }

  // A call ends the turn (<|call|>): with tool_choice auto no text follows one; when calls are
  // required, an analysis message may come first.
  int32_t body_grammar(ToolGrammarBuilder& b, const CallGrammar& calls) const override {
    if (!b.calls_required()) return b.free_body(calls, false);
    const int32_t call = b.rule(
        "call", {b.cat(b.lit(std::string(kChannel) + "commentary " + std::string(kRecipient)),
                       {b.ref(calls.rule)})});
    const int32_t next = b.rule("next", {b.cat(b.lit("<|start|>assistant"), {b.ref(call)})});
    return b.rule("body", {b.cat(b.lit(std::string(kChannel) + "analysis" + std::string(kMessage)),
                                 {b.ref(b.text_until("<|end|>", next, false))}),
                           {b.ref(call)}});
  }
};

}  // namespace

namespace families {
const ToolFamily& gpt_oss() {
  static const GptOss f;
  return f;
}
}  // namespace families

}  // namespace brisk
