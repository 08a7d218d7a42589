// Cohere's Command R7B: <|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters":
// {...}}, ...]<|END_ACTION|>, the answer itself between <|START_RESPONSE|> and <|END_RESPONSE|>
// (its reasoning block is reasoning_family.h's command_r7b).
#include "chat/tool_grammar_builder.h"

namespace brisk {

namespace {

using namespace tool_layouts;

constexpr std::string_view kOpen = "<|START_ACTION|>", kClose = "<|END_ACTION|>";

class CommandR7B final : public ToolFamily {
 public:
  std::string_view name() const override { return "command_r7b"; }
  bool taught_by(std::string_view t) const override { return contains(t, kOpen); }
  std::string trigger() const override { return std::string(kOpen); }

  CallGrammar call_grammar(ToolGrammarBuilder& b) const override {
    const int32_t call = b.call_object("\"tool_call_id\": \"0\", ", "tool_name", "parameters");
    return {trigger(), b.call_array(call, std::string(kClose))};
  }

 protected:
  Section read_section(std::string_view s, size_t pos, bool partial, const json&,
                       std::vector<ToolCallText>& calls) const override {
    return closed_by(s, read_call_array(s, pos, partial, {{"tool_name"}, {"parameters"}}, calls),
                     kClose);
  }
  std::vector<std::string> answer_markers() const override {
    return {"<|START_RESPONSE|>", "<|END_RESPONSE|>"};
  }
};

}  // namespace

namespace families {
const ToolFamily& command_r7b() {
  static const CommandR7B f;
  return f;
}
}  // namespace families

}  // namespace brisk
