// FireFunction v2: functools[{"name": "f", "arguments": {...}}, ...].
#include "chat/tool_grammar_builder.h"

namespace brisk {

namespace {

using namespace tool_layouts;

constexpr std::string_view kOpen = "functools";

class FireFunctionV2 final : public ToolFamily {
 public:
  std::string_view name() const override { return "firefunction_v2"; }
  bool taught_by(std::string_view t) const override { return contains(t, "functools["); }
  std::string trigger() const override { return std::string(kOpen); }

  CallGrammar call_grammar(ToolGrammarBuilder& b) const override {
    return {trigger(), b.call_array(b.call_object("", "name", "arguments"), "")};
  }

 protected:
  // "functools" alone is a word in prose; with its '[' it opens the calls.
  std::string section_opener() const override { return std::string(kOpen) + "["; }
  Section read_section(std::string_view s, size_t pos, bool partial, const json&,
                       std::vector<ToolCallText>& calls) const override {
    return read_call_array(s, pos - 1, partial, {}, calls);  // the opener's '[' starts the list
  }
};

}  // namespace

namespace families {
const ToolFamily& firefunction_v2() {
  static const FireFunctionV2 f;
  return f;
}
}  // namespace families

}  // namespace brisk
