// Mistral's v3 layout (Mistral 7B v0.3, Nemo): [TOOL_CALLS][{"name": "f", "arguments": {...}},
// ...], call ids of nine letters and digits.
#include "chat/tool_grammar_builder.h"

namespace brisk {

namespace {

using namespace tool_layouts;

constexpr std::string_view kOpen = "[TOOL_CALLS]";

class MistralV3 final : public ToolFamily {
 public:
  std::string_view name() const override { return "mistral"; }
  bool taught_by(std::string_view t) const override { return contains(t, kOpen); }
  std::string trigger() const override { return std::string(kOpen); }
  std::string new_call_id(std::mt19937_64& rng) const override { return random_id(rng, "", 9); }

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
const ToolFamily& mistral_v3() {
  static const MistralV3 f;
  return f;
}
}  // namespace families

}  // namespace brisk
