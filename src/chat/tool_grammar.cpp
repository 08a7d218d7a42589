#include "chat/tool_grammar.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "core/clock.h"
#include "core/error.h"
#include "grammar/json_schema.h"
#include "tokenizer/unicode.h"

namespace brisk {

namespace {

using grammar::CharRange;
using grammar::Grammar;
using grammar::Sequence;
using grammar::Symbol;
using json = nlohmann::ordered_json;

std::string quoted(const std::string& s) {
  return json(s).dump();
}

class Builder {
 public:
  Builder(const ReplyFormat& rf, const json& tools, const ToolChoice& c)
      : rf_(rf), tools_(tools), choice_(c), deadline_(now_seconds() + kMaxSeconds) {}
  // All the tools' schemas together compile within this (each within its own budget too).
  static constexpr double kMaxSeconds = 5.0;

  Grammar build(bool in_reasoning);

 private:
  Sequence lit(std::string_view s) const {
    Sequence out;
    for (uint32_t cp : utf8_to_cpts(s)) out.push_back(Symbol::one(cp));
    return out;
  }
  static Sequence cat(Sequence a, const Sequence& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
  int32_t rule(const std::string& name, std::vector<Sequence> alts) {
    const int32_t r = g_.add_rule(name);
    for (Sequence& a : alts) g_.add_alt(r, std::move(a));
    return r;
  }
  static Symbol ref(int32_t r) { return Symbol::ref(r); }

  int32_t ws(uint32_t max) {
    return g_.add_repeat("ws", {Symbol::chars({{'\t', '\n'}, {' ', ' '}})}, 0, max);
  }
  int32_t text_until(const std::string& marker, int32_t then, bool may_end);
  int32_t schema_rule(const json& schema, const std::string& where, bool strict);
  int32_t args(size_t i);
  std::vector<size_t> allowed() const;
  int32_t one_of(const std::string& name, const std::function<Sequence(size_t)>& per_tool);
  int32_t list(int32_t item, const std::string& sep);
  int32_t params(size_t i, bool xml);
  int32_t xml_value(const json& schema, const std::string& where);
  std::pair<std::string, int32_t> section();  // the trigger and what follows it

  const ReplyFormat& rf_;
  const json& tools_;
  const ToolChoice& choice_;
  const double deadline_;
  Grammar g_;
};

// Any text without `marker`; where the marker completes, `then` follows. The rules are the
// states of a string matcher (Knuth-Morris-Pratt) over the marker's code points.
int32_t Builder::text_until(const std::string& marker, int32_t then, bool may_end) {
  const std::vector<uint32_t> m = utf8_to_cpts(marker);
  const size_t n = m.size();
  std::vector<size_t> fail(n, 0);
  for (size_t i = 1, k = 0; i < n; ++i) {
    while (k > 0 && m[i] != m[k]) k = fail[k - 1];
    if (m[i] == m[k]) ++k;
    fail[i] = k;
  }
  std::vector<uint32_t> distinct = m;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<CharRange> in;
  for (uint32_t c : distinct) in.push_back({c, c});
  const std::vector<CharRange> others = grammar::complement(in);
  std::vector<int32_t> state(n);
  for (size_t i = 0; i < n; ++i) state[i] = g_.add_rule("text");
  for (size_t i = 0; i < n; ++i) {
    for (uint32_t c : distinct) {
      size_t k = i;
      while (k > 0 && c != m[k]) k = fail[k - 1];
      if (c == m[k]) ++k;
      g_.add_alt(state[i], {Symbol::one(c), ref(k == n ? then : state[k])});
    }
    if (!others.empty()) g_.add_alt(state[i], {Symbol::chars(others), ref(state[0])});
    if (may_end) g_.add_alt(state[i], {});
  }
  return state[0];
}

// Arguments as models write them: a space after ':' and ',' (two whitespace characters at most
// between tokens, so a small model cannot pad them).
int32_t Builder::schema_rule(const json& schema, const std::string& where, bool strict) {
  grammar::SchemaOptions o;
  o.style.max_whitespace = 2;
  const double left = deadline_ - now_seconds();
  if (left <= 0) fail("tools: their schemas took longer than {} s to compile", kMaxSeconds);
  o.max_seconds = std::min(o.max_seconds, left);
  try {
    return g_.add_grammar(grammar::json_schema_grammar(schema, o));
  } catch (const Error& e) {
    if (strict) fail("{}: {}", where, e.what());
    return g_.add_grammar(grammar::json_schema_grammar(json{{"type", "object"}}, o));
  }
}

int32_t Builder::args(size_t i) {
  const json& f = tools_[i]["function"];
  const json schema = f.contains("parameters") ? f["parameters"] : json{{"type", "object"}};
  return schema_rule(schema, fmt::format("tools[{}].function.parameters", i),
                     f.value("strict", false));
}

std::vector<size_t> Builder::allowed() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < tools_.size(); ++i)
    if (choice_.mode != ToolChoice::Mode::Function ||
        tools_[i]["function"]["name"] == choice_.function)
      out.push_back(i);
  return out;
}

int32_t Builder::one_of(const std::string& name, const std::function<Sequence(size_t)>& per_tool) {
  std::vector<Sequence> alts;
  for (size_t i : allowed()) alts.push_back(per_tool(i));
  return rule(name, std::move(alts));
}

// item (sep item)* when parallel calls are allowed, else item.
int32_t Builder::list(int32_t item, const std::string& sep) {
  if (!choice_.parallel) return item;
  const int32_t more = g_.add_repeat("more", cat(lit(sep), {ref(item)}), 0, Grammar::kUnbounded);
  return rule("list", {{ref(item), ref(more)}});
}

// A Qwen3-Coder parameter's value and its closing tag: a string is raw text (its enum, or at most
// maxLength characters other than '<' when it has one, else any text without the closing tag);
// other types are JSON.
int32_t Builder::xml_value(const json& schema, const std::string& where) {
  const std::string close = "\n</parameter>\n";
  const int32_t end = rule("close", {lit(close)});
  if (!schema.is_object() || schema.value("type", json()) != "string")
    return rule("value", {{ref(schema_rule(schema, where, false)), ref(end)}});
  if (schema.contains("enum") && schema["enum"].is_array()) {
    std::vector<Sequence> alts;
    for (const json& e : schema["enum"])
      if (e.is_string()) alts.push_back(cat(lit(e.get<std::string>()), {ref(end)}));
    if (!alts.empty()) return rule("value", std::move(alts));
  }
  if (schema.contains("maxLength") && schema["maxLength"].is_number_unsigned()) {
    const auto max = std::min<uint32_t>(schema["maxLength"].get<uint32_t>(), 4096);
    const auto min = std::min<uint32_t>(schema.value("minLength", 0u), max);
    const int32_t chars =
        g_.add_repeat("chars", {Symbol::chars(grammar::complement({{'<', '<'}}))}, min, max);
    return rule("value", {{ref(chars), ref(end)}});
  }
  return text_until(close, rule("end", {{}}), false);
}

// A function's arguments one parameter at a time, in the schema's order, the required ones
// always: Python keyword arguments, or Qwen3-Coder's <parameter=...> blocks.
int32_t Builder::params(size_t i, bool xml) {
  const json& f = tools_[i]["function"];
  const json p = f.contains("parameters") ? f["parameters"] : json::object();
  const json props =
      p.contains("properties") && p["properties"].is_object() ? p["properties"] : json::object();
  const json req =
      p.contains("required") && p["required"].is_array() ? p["required"] : json::array();
  // rest[k][first]: the parameters from k on, `first` when none was written yet.
  int32_t rest[2] = {rule("end", {{}}), rule("end", {{}})};
  std::vector<std::pair<std::string, const json*>> list;
  for (auto it = props.begin(); it != props.end(); ++it) list.emplace_back(it.key(), &*it);
  for (size_t k = list.size(); k-- > 0;) {
    const auto& [key, schema] = list[k];
    const bool required = std::find(req.begin(), req.end(), key) != req.end();
    const std::string where = fmt::format("tools[{}].function.parameters.properties.{}", i, key);
    Sequence body;
    if (xml) {
      body = cat(lit("<parameter=" + key + ">\n"), {ref(xml_value(*schema, where))});
    } else {
      body = cat(lit(key + "="), {ref(schema_rule(*schema, where, false))});
    }
    int32_t next[2];
    for (int first = 0; first < 2; ++first) {
      Sequence take = cat(first || xml ? Sequence{} : lit(", "), body);
      take.push_back(ref(rest[0]));
      std::vector<Sequence> alts = {take};
      if (!required) alts.push_back({ref(rest[first])});
      next[first] = rule("param", std::move(alts));
    }
    rest[0] = next[0];
    rest[1] = next[1];
  }
  return rest[1];
}

std::pair<std::string, int32_t> Builder::section() {
  auto name_of = [&](size_t i) { return tools_[i]["function"]["name"].get<std::string>(); };
  auto object = [&](const std::string& pre, const std::string& name_key,
                    const std::string& args_key) {
    return one_of("call", [&, pre, name_key, args_key](size_t i) {
      Sequence s = lit("{" + pre + "\"" + name_key + "\": " + quoted(name_of(i)) + ", \"" +
                       args_key + "\": ");
      s.push_back(ref(args(i)));
      return cat(s, lit("}"));
    });
  };
  auto array = [&](int32_t item, const std::string& close) {
    return rule("calls", {cat(cat(lit("["), {ref(list(item, ", "))}), lit("]" + close))});
  };
  const std::string dsb = "<\uff5ctool\u2581calls\u2581begin\uff5c>";
  switch (rf_.tools) {
    case ToolFamily::Hermes:
      return {"<tool_call>",
              rule("call", {cat(cat(lit("\n"), {ref(object("", "name", "arguments"))}),
                                lit("\n</tool_call>"))})};
    case ToolFamily::Qwen3Coder:
      return {"<tool_call>", one_of("call", [&](size_t i) {
                return cat(cat(lit("\n<function=" + name_of(i) + ">\n"), {ref(params(i, true))}),
                           lit("</function>\n</tool_call>"));
              })};
    case ToolFamily::MistralV11:
      return {"[TOOL_CALLS]", one_of("call", [&](size_t i) {
                return cat(lit(name_of(i) + "[ARGS]"), {ref(args(i))});
              })};
    case ToolFamily::DeepSeekV3: {
      const int32_t block = one_of("call", [&](size_t i) {
        Sequence s =
            lit("<\uff5ctool\u2581call\u2581begin\uff5c>function<\uff5ctool\u2581sep\uff5c>" +
                name_of(i) + "\n```json\n");
        s.push_back(ref(args(i)));
        return cat(s, lit("\n```<\uff5ctool\u2581call\u2581end\uff5c>"));
      });
      return {dsb, rule("calls", {cat({ref(list(block, "\n"))},
                                      lit("<\uff5ctool\u2581calls\u2581end\uff5c>"))})};
    }
    case ToolFamily::MistralV3:
      return {"[TOOL_CALLS]", array(object("", "name", "arguments"), "")};
    case ToolFamily::Granite:
      return {"<|tool_call|>", array(object("", "name", "arguments"), "")};
    case ToolFamily::FireFunction:
      return {"functools", array(object("", "name", "arguments"), "")};
    case ToolFamily::CommandR7B:
      return {
          "<|START_ACTION|>",
          array(object("\"tool_call_id\": \"0\", ", "tool_name", "parameters"), "<|END_ACTION|>")};
    case ToolFamily::Llama3Json:
      return {"", list(object("", "name", "parameters"), "; ")};
    case ToolFamily::Pythonic:
      return {"", array(one_of("call",
                               [&](size_t i) {
                                 return cat(cat(lit(name_of(i) + "("), {ref(params(i, false))}),
                                            lit(")"));
                               }),
                        "")};
    case ToolFamily::GptOss: {
      // The header after the recipient, as gpt-oss writes it in either order.
      const int32_t header = rule("header", {lit(" <|constrain|>json"),
                                             lit("<|constrain|>json"),
                                             lit("<|channel|>commentary <|constrain|>json"),
                                             lit("<|channel|>commentary json"),
                                             lit("<|channel|>commentary"),
                                             {}});
      return {"to=functions.", one_of("call", [&, header](size_t i) {
                Sequence s = lit(name_of(i));
                s.push_back(ref(header));
                s = cat(s, lit("<|message|>"));
                s.push_back(ref(args(i)));
                return s;
              })};
    }
    case ToolFamily::GenericJson:
      return {"", rule("calls", {cat(cat(lit("{\"tool_calls\": "),
                                         {ref(array(object("", "name", "arguments"), ""))}),
                                     lit("}"))})};
    case ToolFamily::None:
      break;
  }
  fail("tool calls: the model family writes none");
}

Grammar Builder::build(bool in_reasoning) {
  const auto [trigger, rest] = section();
  const int32_t end_ws = ws(8);
  int32_t body;
  if (choice_.mode != ToolChoice::Mode::Auto) {
    // Required: calls only (per-call sections repeat when parallel calls are allowed).
    const bool per_call = rf_.tools == ToolFamily::Hermes || rf_.tools == ToolFamily::Qwen3Coder ||
                          rf_.tools == ToolFamily::MistralV11;
    if (rf_.tools != ToolFamily::GptOss) {
      const int32_t one = rule("section", {cat(lit(trigger), {ref(rest)})});
      body = rule("body", {{ref(ws(4)), ref(per_call ? list(one, "\n") : one), ref(end_ws)}});
    } else {
      // An analysis message may come first; the call ends the turn (<|call|>).
      const int32_t call =
          rule("call", {cat(lit("<|channel|>commentary to=functions."), {ref(rest)})});
      const int32_t next = rule("next", {cat(lit("<|start|>assistant"), {ref(call)})});
      body = rule("body", {cat(lit("<|channel|>analysis<|message|>"),
                               {ref(text_until("<|end|>", next, false))}),
                           {ref(call)}});
    }
  } else if (!trigger.empty()) {
    // A call may start anywhere in the text; once its trigger is written it must be whole.
    const int32_t free = g_.add_rule("free");
    const int32_t after = choice_.parallel && rf_.tools != ToolFamily::GptOss ? free : end_ws;
    const int32_t then = rule("call", {{ref(rest), ref(after)}});
    g_.add_alt(free, {ref(text_until(trigger, then, true))});
    body = free;
  } else {
    // Calls can only open the reply: a reply that starts like one is one.
    const std::string opener = rf_.tools == ToolFamily::Pythonic ? "[" : "{";
    const int32_t any =
        g_.add_repeat("any", {Symbol::chars({{0, 0x10FFFF}})}, 0, Grammar::kUnbounded);
    std::vector<Sequence> alts = {{ref(rest), ref(end_ws)}};
    if (rf_.tools == ToolFamily::GenericJson)
      alts.push_back(cat(cat(lit("{\"response\": "),
                             {ref(schema_rule(json{{"type", "string"}}, "response", true))}),
                         lit("}")));
    else
      alts.push_back(
          {Symbol::chars(grammar::complement({{uint32_t(opener[0]), uint32_t(opener[0])}})),
           ref(any)});
    alts.push_back({});
    body = rule("body", std::move(alts));
  }
  const ReasoningMarkers m = reasoning_markers(rf_.reasoning);
  int32_t root = body;
  if (!m.start.empty()) {
    const int32_t after = rule("after", {{ref(ws(8)), ref(body)}});
    const int32_t think = text_until(m.end, after, false);
    root = in_reasoning ? think : rule("root", {cat(lit(m.start), {ref(think)}), {ref(body)}});
  }
  g_.set_root(root);
  g_.check();
  return std::move(g_);
}

}  // namespace

const char* ToolChoice::name(Mode m) {
  switch (m) {
    case Mode::None:
      return "none";
    case Mode::Auto:
      return "auto";
    case Mode::Required:
      return "required";
    case Mode::Function:
      return "function";
  }
  return "auto";
}

std::optional<grammar::Constraint> tool_constraint(const ReplyFormat& rf, bool in_reasoning,
                                                   const json& tools, const ToolChoice& choice) {
  if (rf.tools == ToolFamily::None || choice.mode == ToolChoice::Mode::None || tools.empty())
    return std::nullopt;
  grammar::Constraint c;
  c.kind = grammar::Constraint::Kind::Built;
  // Everything the grammar depends on, as its key; it is built when compiled.
  c.text = fmt::format("tools {} {} {} {} {} {}\n", tool_family_name(rf.tools),
                       reasoning_family_name(rf.reasoning), in_reasoning,
                       ToolChoice::name(choice.mode), choice.parallel, quoted(choice.function)) +
           tools.dump();
  c.builder = [rf, in_reasoning, tools, choice] {
    Builder b(rf, tools, choice);
    return b.build(in_reasoning);
  };
  c.special_text = true;
  return c;
}

}  // namespace brisk
