// IBM Granite 3: <|tool_call|>[{"name": "f", "arguments": {...}}, ...].
#include "chat/tool_grammar_builder.h"

namespace brisk {

namespace {

using namespace tool_layouts;

constexpr std::string_view kOpen = "<|tool_call|>";

class Granite final : public ToolFamily {
 public:
  std::string_view name() const override { return "granite"; }
  bool taught_by(std::string_view t) const override { return contains(t, kOpen); }
  std::string trigger() const override { return std::string(kOpen); }

  CallGrammar call_grammar(ToolGrammarBuilder& b) const override {
    return {trigger(), b.call_array(b.call_object("", "name", "arguments"), "")};
  }

 protected:
  Section read_section(std::string_view s, size_t pos, bool partial, const json&,
                       std::vector<ToolCallText>& calls) const override {
    return read_call_array(s, pos, partial, {}, calls);
  }
};

}  // namespace

namespace families {
const ToolFamily& granite() {
  static const Granite f;
  return f;
}
}  // namespace families

}  // namespace brisk
