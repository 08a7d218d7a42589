// Qwen3-Coder: Hermes' <tool_call> section holding XML,
// <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>,
// a string parameter written raw; a JSON call object in the section is read too.
#include "chat/tool_grammar_builder.h"

namespace brisk {

namespace {

using namespace tool_layouts;
using json = nlohmann::ordered_json;

constexpr std::string_view kOpen = "<tool_call>", kClose = "</tool_call>",
                           kFn = "<function=", kFnEnd = "</function>",
                           kParam = "<parameter=", kParamEnd = "</parameter>";

// The JSON a parameter's text stands for: a string, unless the tool's schema gives the parameter
// another type and the text parses as JSON.
std::string xml_value(const json& tools, const std::string& fn, const std::string& key,
                      std::string_view text) {
  bool string_typed = true;
  for (const json& t : tools) {
    if (!t.is_object() || !t.contains("function") || !t["function"].is_object()) continue;
    const json& f = t["function"];
    if (f.value("name", "") != fn || !f.contains("parameters")) continue;
    const json& p = f["parameters"];
    if (p.is_object() && p.contains("properties") && p["properties"].is_object() &&
        p["properties"].contains(key) && p["properties"][key].is_object()) {
      const json& ty = p["properties"][key].value("type", json("string"));
      string_typed = ty == "string";
    }
  }
  if (!string_typed) {
    try {
      return json::parse(text).dump();
    } catch (const std::exception&) {
    }
  }
  return quote(text);
}

std::string_view trim_one_newline(std::string_view v) {
  if (v.starts_with('\n')) v.remove_prefix(1);
  if (v.ends_with('\n')) v.remove_suffix(1);
  return v;
}

// <function=NAME><parameter=KEY>VALUE</parameter>...</function>; a value becomes a JSON string
// unless its parameter's schema says otherwise and it parses as JSON.
Section read_xml_function(std::string_view s, size_t pos, const json& tools,
                          std::vector<ToolCallText>& out) {
  size_t i = skip_ws(s, pos);
  if (!s.substr(i).starts_with(kFn)) return {i, false};
  const size_t gt = s.find('>', i + kFn.size());
  if (gt == s.npos) return {i, false};
  ToolCallText call{std::string(s.substr(i + kFn.size(), gt - i - kFn.size())), "{", false};
  i = gt + 1;
  bool first = true;
  while (true) {
    i = skip_ws(s, i);
    if (s.substr(i).starts_with(kFnEnd)) {
      call.arguments += "}";
      call.complete = true;
      out.push_back(std::move(call));
      return {i + kFnEnd.size(), true};
    }
    if (!s.substr(i).starts_with(kParam)) break;
    const size_t kgt = s.find('>', i + kParam.size());
    if (kgt == s.npos) break;
    const size_t vend = s.find(kParamEnd, kgt + 1);
    if (vend == s.npos) break;
    const std::string key(s.substr(i + kParam.size(), kgt - i - kParam.size()));
    const std::string_view value = trim_one_newline(s.substr(kgt + 1, vend - kgt - 1));
    call.arguments +=
        (first ? "" : ", ") + quote(key) + ": " + xml_value(tools, call.name, key, value);
    first = false;
    i = vend + kParamEnd.size();
  }
  out.push_back(std::move(call));
  return {i, false};
}

// A parameter's value and its closing tag: a string is raw text (its enum, or at most maxLength
// characters other than '<' when it has one, else any text without the closing tag); other types
// are JSON.
int32_t value_rule(ToolGrammarBuilder& b, const json& schema, const std::string& where) {
  const std::string close = "\n" + std::string(kParamEnd) + "\n";
  const int32_t end = b.rule("close", {b.lit(close)});
  if (!schema.is_object() || schema.value("type", json()) != "string")
    return b.rule("value", {{b.ref(b.schema_rule(schema, where, false)), b.ref(end)}});
  if (schema.contains("enum") && schema["enum"].is_array()) {
    std::vector<grammar::Sequence> alts;
    for (const json& e : schema["enum"])
      if (e.is_string()) alts.push_back(b.cat(b.lit(e.get<std::string>()), {b.ref(end)}));
    if (!alts.empty()) return b.rule("value", std::move(alts));
  }
  if (schema.contains("maxLength") && schema["maxLength"].is_number_unsigned()) {
    const auto max = std::min<uint32_t>(schema["maxLength"].get<uint32_t>(), 4096);
    const auto min = std::min<uint32_t>(schema.value("minLength", 0u), max);
    const int32_t chars = b.grammar().add_repeat(
        "chars", {grammar::Symbol::chars(grammar::complement({{'<', '<'}}))}, min, max);
    return b.rule("value", {{b.ref(chars), b.ref(end)}});
  }
  return b.text_until(close, b.rule("end", {{}}), false);
}

class Qwen3Coder final : public ToolFamily {
 public:
  std::string_view name() const override { return "qwen3_coder"; }
  bool taught_by(std::string_view t) const override {
    return contains(t, kFn) && contains(t, kParam);
  }
  std::string trigger() const override { return std::string(kOpen); }

  CallGrammar call_grammar(ToolGrammarBuilder& b) const override {
    const auto param = [&b](const std::string& key, const json& schema, const std::string& where) {
      return b.cat(b.lit(std::string(kParam) + key + ">\n"), {b.ref(value_rule(b, schema, where))});
    };
    return {trigger(), b.one_of("call", [&](size_t i) {
              return b.cat(b.cat(b.lit("\n" + std::string(kFn) + b.tool_name(i) + ">\n"),
                                 {b.ref(b.params(i, "", param))}),
                           b.lit(std::string(kFnEnd) + "\n" + std::string(kClose)));
            })};
  }

 protected:
  Section read_section(std::string_view s, size_t pos, bool partial, const json& tools,
                       std::vector<ToolCallText>& calls) const override {
    const size_t p = skip_ws(s, pos);
    const bool xml = s.substr(p).starts_with(kFn);
    if (!xml && (p >= s.size() || may_become(s, p, kFn))) return {p, false};
    return closed_by(
        s, xml ? read_xml_function(s, p, tools, calls) : read_call_object(s, p, partial, {}, calls),
        kClose);
  }
  bool section_per_call() const override { return true; }
};

}  // namespace

namespace families {
const ToolFamily& qwen3_coder() {
  static const Qwen3Coder f;
  return f;
}
}  // namespace families

}  // namespace brisk
