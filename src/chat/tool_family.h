// A model family's tool-call syntax in one place: how its chat template is recognized, how a
// reply's calls are read (for whole replies and streams alike), the grammar that makes a call
// whole and valid, and what its prompt adds. Each family is a class in chat/families/, listed in
// the registry (tool_family.cpp) by the name --tool-call-parser takes; fine-tunes and variants of
// a family are recognized by what their templates contain, not by being a known file.
#pragma once

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "chat/reasoning_family.h"
#include "chat/reply.h"
#include "chat/tool_layouts.h"

namespace brisk {

class ToolGrammarBuilder;

// A call section's grammar: the text that opens it ("" where calls can only open the reply) and
// the rule that follows that text.
struct CallGrammar {
  std::string trigger;
  int32_t rule = -1;
};

class ToolFamily {
 public:
  using json = nlohmann::ordered_json;
  virtual ~ToolFamily() = default;

  // Its --tool-call-parser name (vLLM's where it has one).
  virtual std::string_view name() const = 0;
  // Whether a chat template teaches this layout (its markers or its instructions appear in the
  // source). Families are tried in the registry's order, the most specific first.
  virtual bool taught_by(std::string_view template_source) const = 0;
  // Whether it writes tool calls at all ("none" does not).
  virtual bool writes_calls() const { return true; }

  // The prompt. A description of the tools and of the reply's shape for a template with no place
  // for tools ("": the template renders them itself).
  virtual std::string tool_instructions(const json& tools) const;
  // A new call's id, as the family's templates expect it (OpenAI's "call_" and 24 characters).
  virtual std::string new_call_id(std::mt19937_64& rng) const;

  // Reading a reply. The text that starts a call anywhere in the reply: what a lazy grammar waits
  // for ("" where a call can only open the reply).
  virtual std::string trigger() const = 0;
  // The reply's body from `from` (after any reasoning block, or a point an earlier read marked)
  // into content and calls; on a text that may grow (partial) nothing is added that a
  // continuation could change. Marks in `resume` the last point a later read may start from
  // (tool_layouts::mark), with `out` as it stood there. By default each section opener is found
  // and read_section reads what follows; layouts whose calls can only open the reply read it
  // themselves.
  virtual void read_reply(std::string_view s, const ReplyResume& from, bool partial,
                          const json& tools, Reply& out, ReplyResume& resume) const;
  // Whether the layout carries the reasoning itself (harmony's channels): read_reply then reads
  // the whole reply.
  virtual bool carries_reasoning() const { return false; }

  // The grammar. The call section's trigger and its rule (ToolGrammarBuilder has the parts).
  virtual CallGrammar call_grammar(ToolGrammarBuilder& b) const = 0;
  // The reply for the request's tool_choice. By default: calls only when they are required
  // (each in its own section where section_per_call), else free text in which a call, once its
  // trigger is written, must be whole.
  virtual int32_t body_grammar(ToolGrammarBuilder& b, const CallGrammar& calls) const;

 protected:
  // `prefix` and then `length` random letters and digits.
  static std::string random_id(std::mt19937_64& rng, std::string prefix, int length);
  // For the default read_reply. The marker a section starts with in a reply (the trigger unless
  // the layout needs more text to tell a call from prose).
  virtual std::string section_opener() const { return trigger(); }
  // One call section after its opener (at pos), its calls appended.
  virtual tool_layouts::Section read_section(std::string_view s, size_t pos, bool partial,
                                             const json& tools,
                                             std::vector<ToolCallText>& calls) const;
  // Markers that only wrap the answer: left out of the content.
  virtual std::vector<std::string> answer_markers() const { return {}; }
  // With tool_choice required, whether each call is a section of its own (repeated when
  // parallel calls are allowed) rather than one section holding a list.
  virtual bool section_per_call() const { return false; }

 public:
  // The families, most specific first: a registered family, then the built-in ones, "generic"
  // (which every template teaches) and "none" last.
  static const std::vector<const ToolFamily*>& all();
  // Adds a family ahead of the built-in ones (at start-up, before any request): a plug-in, or a
  // test's. Its name must be new.
  static void add(const ToolFamily& f);
  static const ToolFamily* named(std::string_view name);  // nullptr: no such family
  static std::vector<std::string> names();
  // From a chat template's source. A template that never mentions tools gets "generic": the tools
  // are then described in a system message and the reply is JSON.
  static const ToolFamily& detect(std::string_view template_source);
  static const ToolFamily& none();
};

// Tool calls and reasoning, as a server or command applies them to every reply.
struct ReplyFormat {
  const ToolFamily* tools = &ToolFamily::none();
  ReasoningFamily reasoning = ReasoningFamily::None;
};
inline ReplyFormat detect_reply_format(std::string_view template_source) {
  return {&ToolFamily::detect(template_source), detect_reasoning_family(template_source)};
}

}  // namespace brisk
