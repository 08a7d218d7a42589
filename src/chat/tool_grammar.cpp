#include "chat/tool_grammar.h"

#include <fmt/format.h>

#include <algorithm>

#include "chat/tool_grammar_builder.h"
#include "core/clock.h"
#include "core/error.h"
#include "grammar/json_schema.h"
#include "tokenizer/unicode.h"

namespace brisk {

using grammar::CharRange;
using grammar::Grammar;
using json = nlohmann::ordered_json;

namespace {

std::string quoted(const std::string& s) {
  return json(s).dump();
}

}  // namespace

ToolGrammarBuilder::ToolGrammarBuilder(const ReplyFormat& format, const json& tools,
                                       const ToolChoice& choice)
    : format_(format), tools_(tools), choice_(choice), deadline_(now_seconds() + kMaxSeconds) {}

ToolGrammarBuilder::Sequence ToolGrammarBuilder::lit(std::string_view s) const {
  Sequence out;
  for (uint32_t cp : utf8_to_cpts(s)) out.push_back(Symbol::one(cp));
  return out;
}

ToolGrammarBuilder::Sequence ToolGrammarBuilder::cat(Sequence a, const Sequence& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

int32_t ToolGrammarBuilder::rule(const std::string& name, std::vector<Sequence> alts) {
  const int32_t r = grammar_.add_rule(name);
  for (Sequence& a : alts) grammar_.add_alt(r, std::move(a));
  return r;
}

int32_t ToolGrammarBuilder::ws(uint32_t max) {
  return grammar_.add_repeat("ws", {Symbol::chars({{'\t', '\n'}, {' ', ' '}})}, 0, max);
}

// The rules are the states of a string matcher (Knuth-Morris-Pratt) over the marker's code points.
int32_t ToolGrammarBuilder::text_until(const std::string& marker, int32_t then, bool may_end) {
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
  for (size_t i = 0; i < n; ++i) state[i] = grammar_.add_rule("text");
  for (size_t i = 0; i < n; ++i) {
    for (uint32_t c : distinct) {
      size_t k = i;
      while (k > 0 && c != m[k]) k = fail[k - 1];
      if (c == m[k]) ++k;
      grammar_.add_alt(state[i], {Symbol::one(c), ref(k == n ? then : state[k])});
    }
    if (!others.empty()) grammar_.add_alt(state[i], {Symbol::chars(others), ref(state[0])});
    if (may_end) grammar_.add_alt(state[i], {});
  }
  return state[0];
}

ToolGrammarBuilder::Sequence ToolGrammarBuilder::text_not_opening_with(char c) {
  const int32_t any =
      grammar_.add_repeat("any", {Symbol::chars({{0, 0x10FFFF}})}, 0, Grammar::kUnbounded);
  const auto cp = static_cast<uint32_t>(static_cast<unsigned char>(c));
  return {Symbol::chars(grammar::complement({{cp, cp}})), ref(any)};
}

std::vector<size_t> ToolGrammarBuilder::allowed() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < tools_.size(); ++i)
    if (choice_.mode != ToolChoice::Mode::Function ||
        tools_[i]["function"]["name"] == choice_.function)
      out.push_back(i);
  return out;
}

std::string ToolGrammarBuilder::tool_name(size_t i) const {
  return tools_[i]["function"]["name"].get<std::string>();
}

// Arguments as models write them: a space after ':' and ',' (two whitespace characters at most
// between tokens, so a small model cannot pad them).
int32_t ToolGrammarBuilder::schema_rule(const json& schema, const std::string& where, bool strict) {
  grammar::SchemaOptions o;
  o.style.max_whitespace = 2;
  const double left = deadline_ - now_seconds();
  if (left <= 0) fail("tools: their schemas took longer than {} s to compile", kMaxSeconds);
  o.max_seconds = std::min(o.max_seconds, left);
  try {
    return grammar_.add_grammar(grammar::json_schema_grammar(schema, o));
  } catch (const Error& e) {
    if (strict) fail("{}: {}", where, e.what());
    return grammar_.add_grammar(grammar::json_schema_grammar(json{{"type", "object"}}, o));
  }
}

int32_t ToolGrammarBuilder::args(size_t i) {
  const json& f = tools_[i]["function"];
  const json schema = f.contains("parameters") ? f["parameters"] : json{{"type", "object"}};
  return schema_rule(schema, fmt::format("tools[{}].function.parameters", i),
                     f.value("strict", false));
}

int32_t ToolGrammarBuilder::one_of(const std::string& name,
                                   const std::function<Sequence(size_t)>& per_tool) {
  std::vector<Sequence> alts;
  for (size_t i : allowed()) alts.push_back(per_tool(i));
  return rule(name, std::move(alts));
}

int32_t ToolGrammarBuilder::list(int32_t item, const std::string& sep) {
  if (!choice_.parallel) return item;
  const int32_t more =
      grammar_.add_repeat("more", cat(lit(sep), {ref(item)}), 0, Grammar::kUnbounded);
  return rule("list", {{ref(item), ref(more)}});
}

int32_t ToolGrammarBuilder::call_object(const std::string& pre, const std::string& name_key,
                                        const std::string& args_key) {
  return one_of("call", [&](size_t i) {
    Sequence s = lit("{" + pre + quoted(name_key) + ": " + quoted(tool_name(i)) + ", " +
                     quoted(args_key) + ": ");
    s.push_back(ref(args(i)));
    return cat(s, lit("}"));
  });
}

int32_t ToolGrammarBuilder::call_array(int32_t item, const std::string& close) {
  return rule("calls", {cat(cat(lit("["), {ref(list(item, ", "))}), lit("]" + close))});
}

int32_t ToolGrammarBuilder::params(size_t i, const std::string& separator, const Param& param) {
  const json& f = tools_[i]["function"];
  const json p = f.contains("parameters") ? f["parameters"] : json::object();
  const json props =
      p.contains("properties") && p["properties"].is_object() ? p["properties"] : json::object();
  const json req =
      p.contains("required") && p["required"].is_array() ? p["required"] : json::array();
  // rest[first]: the parameters from k on, `first` when none was written yet.
  int32_t rest[2] = {rule("end", {{}}), rule("end", {{}})};
  std::vector<std::pair<std::string, const json*>> list;
  for (auto it = props.begin(); it != props.end(); ++it) list.emplace_back(it.key(), &*it);
  for (size_t k = list.size(); k-- > 0;) {
    const auto& [key, schema] = list[k];
    const bool required = std::find(req.begin(), req.end(), key) != req.end();
    const Sequence body =
        param(key, *schema, fmt::format("tools[{}].function.parameters.properties.{}", i, key));
    int32_t next[2];
    for (int first = 0; first < 2; ++first) {
      Sequence take = cat(first ? Sequence{} : lit(separator), body);
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

int32_t ToolGrammarBuilder::required_body(const CallGrammar& calls, bool section_per_call) {
  const int32_t one = rule("section", {cat(lit(calls.trigger), {ref(calls.rule)})});
  return rule("body", {{ref(ws(4)), ref(section_per_call ? list(one, "\n") : one), ref(ws(8))}});
}

int32_t ToolGrammarBuilder::free_body(const CallGrammar& calls, bool after_call) {
  const int32_t free = grammar_.add_rule("free");
  const int32_t then = rule("call", {{ref(calls.rule), ref(after_call ? free : ws(8))}});
  grammar_.add_alt(free, {ref(text_until(calls.trigger, then, true))});
  return free;
}

int32_t ToolGrammarBuilder::opening_body(const CallGrammar& calls, Sequence otherwise) {
  return rule("body", {{ref(calls.rule), ref(ws(8))}, std::move(otherwise), {}});
}

Grammar ToolGrammarBuilder::build(bool in_reasoning) {
  const ToolFamily& family = *format_.tools;
  const int32_t body = family.body_grammar(*this, family.call_grammar(*this));
  const ReasoningMarkers m = reasoning_markers(format_.reasoning);
  int32_t root = body;
  if (!m.start.empty()) {
    const int32_t after = rule("after", {{ref(ws(8)), ref(body)}});
    const int32_t think = text_until(m.end, after, false);
    root = in_reasoning ? think : rule("root", {cat(lit(m.start), {ref(think)}), {ref(body)}});
  }
  grammar_.set_root(root);
  grammar_.check();
  return std::move(grammar_);
}

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

std::optional<grammar::Constraint> tool_constraint(const ReplyFormat& format, bool in_reasoning,
                                                   const json& tools, const ToolChoice& choice) {
  if (!format.tools->writes_calls() || choice.mode == ToolChoice::Mode::None || tools.empty())
    return std::nullopt;
  grammar::Constraint c;
  c.kind = grammar::Constraint::Kind::Built;
  // Everything the grammar depends on, as its key; it is built when compiled.
  c.text = fmt::format("tools {} {} {} {} {} {}\n", format.tools->name(),
                       reasoning_family_name(format.reasoning), in_reasoning,
                       ToolChoice::name(choice.mode), choice.parallel, quoted(choice.function)) +
           tools.dump();
  c.builder = [format, in_reasoning, tools, choice] {
    ToolGrammarBuilder b(format, tools, choice);
    return b.build(in_reasoning);
  };
  c.special_text = true;
  return c;
}

}  // namespace brisk
