// Hermes 2 Pro, Qwen 2.5 and 3, and their fine-tunes: one section per call,
// <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>.
#include "chat/tool_grammar_builder.h"

namespace brisk {

namespace {

using namespace tool_layouts;

constexpr std::string_view kOpen = "<tool_call>", kClose = "</tool_call>";

class Hermes final : public ToolFamily {
 public:
  std::string_view name() const override { return "hermes"; }
  bool taught_by(std::string_view t) const override { return contains(t, kOpen); }
  std::string trigger() const override { return std::string(kOpen); }

  CallGrammar call_grammar(ToolGrammarBuilder& b) const override {
    const int32_t object = b.call_object("", "name", "arguments");
    return {trigger(), b.rule("call", {b.cat(b.cat(b.lit("\n"), {b.ref(object)}),
                                             b.lit("\n" + std::string(kClose)))})};
  }

 protected:
  Section read_section(std::string_view s, size_t pos, bool partial, const json&,
                       std::vector<ToolCallText>& calls) const override {
    return closed_by(s, read_call_object(s, skip_ws(s, pos), partial, {}, calls), kClose);
  }
  bool section_per_call() const override { return true; }
};

}  // namespace

namespace families {
const ToolFamily& hermes() {
  static const Hermes f;
  return f;
}
}  // namespace families

}  // namespace brisk
