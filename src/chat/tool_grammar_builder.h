// The parts a family's call grammar is built from (tool_family.h's call_grammar and
// body_grammar): literal text, rules, a tool's arguments under its parameters schema, lists of
// calls, text up to a marker, and the bodies most families share. One builder makes one grammar
// for one request's tools and tool_choice.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chat/tool_family.h"
#include "chat/tool_grammar.h"
#include "grammar/grammar.h"

namespace brisk {

class ToolGrammarBuilder {
 public:
  using json = nlohmann::ordered_json;
  using Sequence = grammar::Sequence;
  using Symbol = grammar::Symbol;

  ToolGrammarBuilder(const ReplyFormat& format, const json& tools, const ToolChoice& choice);
  // All the tools' schemas together compile within this (each within its own budget too).
  static constexpr double kMaxSeconds = 5.0;

  grammar::Grammar build(bool in_reasoning);

  const ToolChoice& choice() const { return choice_; }
  // Whether the reply must be calls (tool_choice required or a named function).
  bool calls_required() const { return choice_.mode != ToolChoice::Mode::Auto; }
  grammar::Grammar& grammar() { return grammar_; }

  // Text and rules.
  Sequence lit(std::string_view s) const;
  static Sequence cat(Sequence a, const Sequence& b);
  static Symbol ref(int32_t rule) { return Symbol::ref(rule); }
  int32_t rule(const std::string& name, std::vector<Sequence> alts);
  int32_t ws(uint32_t max);  // up to max whitespace characters
  // Any text without `marker`; where the marker completes, `then` follows (may_end: the text may
  // also end the reply).
  int32_t text_until(const std::string& marker, int32_t then, bool may_end);
  // Any character but `c`, then any text: a reply that does not open with c.
  Sequence text_not_opening_with(char c);

  // The tools. The indices of those tool_choice allows, and a tool's name.
  std::vector<size_t> allowed() const;
  std::string tool_name(size_t i) const;
  // A JSON value under `schema` (strict: an error names `where` rather than taking any object).
  int32_t schema_rule(const json& schema, const std::string& where, bool strict);
  // Tool i's arguments: a JSON object under its parameters schema.
  int32_t args(size_t i);
  // One alternative per allowed tool.
  int32_t one_of(const std::string& name, const std::function<Sequence(size_t)>& per_tool);
  // item (sep item)* when parallel calls are allowed, else item.
  int32_t list(int32_t item, const std::string& sep);
  // {PRE"name_key": "NAME", "args_key": ARGS} for each allowed tool.
  int32_t call_object(const std::string& pre, const std::string& name_key,
                      const std::string& args_key);
  // '[' list(item, ", ") ']' close.
  int32_t call_array(int32_t item, const std::string& close);
  // Tool i's arguments one parameter at a time, in the schema's order, the required ones always:
  // param(key, schema, where) writes one, `separator` goes between two.
  using Param =
      std::function<Sequence(const std::string& key, const json& schema, const std::string& where)>;
  int32_t params(size_t i, const std::string& separator, const Param& param);

  // Bodies. Calls only: a section, or one per call repeated when parallel calls are allowed.
  int32_t required_body(const CallGrammar& calls, bool section_per_call);
  // Free text in which a call, once its trigger is written, must be whole; after_call: free
  // text may follow a call (else only whitespace).
  int32_t free_body(const CallGrammar& calls, bool after_call);
  // Calls that can only open the reply: the calls, `otherwise`, or nothing.
  int32_t opening_body(const CallGrammar& calls, Sequence otherwise);

 private:
  const ReplyFormat& format_;
  const json& tools_;
  const ToolChoice& choice_;
  const double deadline_;
  grammar::Grammar grammar_;
};

}  // namespace brisk
