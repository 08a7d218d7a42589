// Mistral's v11 layout (Mistral Small 3.2, Magistral, Devstral): [TOOL_CALLS]NAME[ARGS]{...},
// once per call, call ids of nine letters and digits.
#include "chat/tool_grammar_builder.h"

namespace brisk {

namespace {

using namespace tool_layouts;

constexpr std::string_view kOpen = "[TOOL_CALLS]", kArgs = "[ARGS]";

class MistralV11 final : public ToolFamily {
 public:
  std::string_view name() const override { return "mistral_v11"; }
  bool taught_by(std::string_view t) const override {
    return contains(t, kOpen) && contains(t, kArgs);
  }
  std::string trigger() const override { return std::string(kOpen); }
  std::string new_call_id(std::mt19937_64& rng) const override { return random_id(rng, "", 9); }

  CallGrammar call_grammar(ToolGrammarBuilder& b) const override {
    return {trigger(), b.one_of("call", [&](size_t i) {
              return b.cat(b.lit(b.tool_name(i) + std::string(kArgs)), {b.ref(b.args(i))});
            })};
  }

 protected:
  // NAME[ARGS]{...}: the arguments are any JSON value.
  Section read_section(std::string_view s, size_t pos, bool partial, const json&,
                       std::vector<ToolCallText>& calls) const override {
    const size_t a = s.find(kArgs, pos);
    if (a == s.npos) return {pos, false};
    const std::string name(trim_right(s.substr(pos, a - pos)));
    const size_t start = skip_ws(s, a + kArgs.size());
    JsonEnd v = value_end(s, start);
    // A scalar at the very end is whole once nothing more can come.
    if (v.state == Span::Incomplete && !partial && start < s.size() && s[start] != '{' &&
        s[start] != '[')
      v.state = Span::Complete;
    calls.push_back({name, std::string(s.substr(start, v.end - start)), v.state == Span::Complete});
    return {v.end, v.state == Span::Complete};
  }
  bool section_per_call() const override { return true; }
};

}  // namespace

namespace families {
const ToolFamily& mistral_v11() {
  static const MistralV11 f;
  return f;
}
}  // namespace families

}  // namespace brisk
