// DeepSeek V3 and V3.1: <｜tool▁calls▁begin｜>, then per call
// <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜> (V3.1
// writes NAME<｜tool▁sep｜>{...} without the fence), then <｜tool▁calls▁end｜>.
#include "chat/tool_grammar_builder.h"

namespace brisk {

namespace {

using namespace tool_layouts;

constexpr std::string_view kCallsBegin = "<\uff5ctool\u2581calls\u2581begin\uff5c>",
                           kCallsEnd = "<\uff5ctool\u2581calls\u2581end\uff5c>",
                           kBegin = "<\uff5ctool\u2581call\u2581begin\uff5c>",
                           kSep = "<\uff5ctool\u2581sep\uff5c>",
                           kEnd = "<\uff5ctool\u2581call\u2581end\uff5c>", kFence = "```json",
                           kFenceEnd = "```";

class DeepSeekV3 final : public ToolFamily {
 public:
  std::string_view name() const override { return "deepseek_v3"; }
  bool taught_by(std::string_view t) const override {
    return contains(t, "tool\u2581calls\u2581begin") || contains(t, "tool\u2581call\u2581begin");
  }
  std::string trigger() const override { return std::string(kCallsBegin); }

  CallGrammar call_grammar(ToolGrammarBuilder& b) const override {
    const int32_t block = b.one_of("call", [&](size_t i) {
      auto s = b.lit(std::string(kBegin) + "function" + std::string(kSep) + b.tool_name(i) + "\n" +
                     std::string(kFence) + "\n");
      s.push_back(b.ref(b.args(i)));
      return b.cat(s, b.lit("\n" + std::string(kFenceEnd) + std::string(kEnd)));
    });
    return {trigger(),
            b.rule("calls", {b.cat({b.ref(b.list(block, "\n"))}, b.lit(std::string(kCallsEnd)))})};
  }

 protected:
  Section read_section(std::string_view s, size_t pos, bool, const json&,
                       std::vector<ToolCallText>& out) const override {
    size_t i = pos;
    while (true) {
      i = skip_ws(s, i);
      if (s.substr(i).starts_with(kCallsEnd)) return {i + kCallsEnd.size(), true};
      if (!s.substr(i).starts_with(kBegin)) return {i, false};
      const size_t sep = s.find(kSep, i + kBegin.size());
      if (sep == s.npos) return {i, false};
      std::string name(s.substr(i + kBegin.size(), sep - i - kBegin.size()));
      size_t a = sep + kSep.size();
      bool fenced = false;
      if (name == "function") {  // V3: the name on its own line, the arguments in a json fence
        const size_t nl = s.find('\n', a);
        if (nl == s.npos) return {i, false};
        name = std::string(s.substr(a, nl - a));
        a = skip_ws(s, nl);
        if (s.substr(a).starts_with(kFence))
          a += kFence.size(), fenced = true;
        else if (may_become(s, a, kFence))
          return {i, false};
      }
      a = skip_ws(s, a);
      const JsonEnd v = value_end(s, a);
      out.push_back({name, std::string(s.substr(a, v.end - a)), false});
      if (v.state != Span::Complete) return {i, false};
      size_t e = skip_ws(s, v.end);
      if (fenced) {
        if (!s.substr(e).starts_with(kFenceEnd)) return {i, false};
        e = skip_ws(s, e + kFenceEnd.size());
      }
      if (!s.substr(e).starts_with(kEnd)) return {i, false};
      out.back().complete = true;
      i = e + kEnd.size();
    }
  }
};

}  // namespace

namespace families {
const ToolFamily& deepseek_v3() {
  static const DeepSeekV3 f;
  return f;
}
}  // namespace families

}  // namespace brisk
