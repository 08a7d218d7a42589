#include "chat/tool_family.h"

#include "chat/tool_grammar_builder.h"
#include "core/error.h"

namespace brisk {

using namespace tool_layouts;

// The built-in families, each in its own file under chat/families/.
namespace families {
const ToolFamily& command_r7b();
const ToolFamily& deepseek_v3();
const ToolFamily& firefunction_v2();
const ToolFamily& generic_json();
const ToolFamily& gpt_oss();
const ToolFamily& granite();
const ToolFamily& hermes();
const ToolFamily& llama3_json();
const ToolFamily& mistral_v11();
const ToolFamily& mistral_v3();
const ToolFamily& pythonic();
const ToolFamily& qwen3_coder();
}  // namespace families

namespace {

// Writes no calls: the whole reply is content.
class NoToolCalls final : public ToolFamily {
 public:
  std::string_view name() const override { return "none"; }
  bool taught_by(std::string_view) const override { return false; }
  bool writes_calls() const override { return false; }
  std::string trigger() const override { return ""; }
  CallGrammar call_grammar(ToolGrammarBuilder&) const override {
    fail("tool calls: the model family writes none");
  }
};

struct Registry {
  // Detection takes the first family whose template test passes: the most specific markers
  // first (Qwen3-Coder's XML sits inside Hermes' <tool_call>, and several families'
  // instructions quote JSON with "name" and "arguments"); generic matches every template.
  std::vector<const ToolFamily*> families = {
      &families::gpt_oss(),         &families::deepseek_v3(), &families::mistral_v11(),
      &families::mistral_v3(),      &families::command_r7b(), &families::granite(),
      &families::firefunction_v2(), &families::qwen3_coder(), &families::hermes(),
      &families::pythonic(),        &families::llama3_json(), &families::generic_json(),
      &ToolFamily::none(),
  };
  size_t added = 0;  // families added at start-up, ahead of the built-in ones
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

const ToolFamily& ToolFamily::none() {
  static const NoToolCalls f;
  return f;
}

const std::vector<const ToolFamily*>& ToolFamily::all() {
  return registry().families;
}

void ToolFamily::add(const ToolFamily& f) {
  Registry& r = registry();
  if (named(f.name())) fail("tool-call family '{}' is already registered", f.name());
  r.families.insert(r.families.begin() + static_cast<std::ptrdiff_t>(r.added++), &f);
}

const ToolFamily* ToolFamily::named(std::string_view name) {
  for (const ToolFamily* f : all())
    if (f->name() == name) return f;
  return nullptr;
}

std::vector<std::string> ToolFamily::names() {
  std::vector<std::string> out;
  for (const ToolFamily* f : all()) out.emplace_back(f->name());
  return out;
}

const ToolFamily& ToolFamily::detect(std::string_view template_source) {
  for (const ToolFamily* f : all())
    if (f->taught_by(template_source)) return *f;
  return families::generic_json();
}

std::string ToolFamily::tool_instructions(const json&) const {
  return "";
}

std::string ToolFamily::random_id(std::mt19937_64& rng, std::string prefix, int length) {
  static constexpr char kAlnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (int i = 0; i < length; ++i) prefix += kAlnum[rng() % 62];
  return prefix;
}

std::string ToolFamily::new_call_id(std::mt19937_64& rng) const {
  return random_id(rng, "call_", 24);
}

void ToolFamily::read_reply(std::string_view s, const ReplyResume& from, bool partial,
                            const json& tools, Reply& out, ReplyResume& resume) const {
  size_t pos = from.pos;
  bool after_call = from.after_marker;
  const std::string opener = section_opener();
  if (opener.empty()) return content_to_end(s, pos, after_call, partial, {}, 0, out, resume);
  // marks[0] opens a section; the others only wrap the answer and are dropped.
  std::vector<std::string> marks = {opener};
  for (std::string& m : answer_markers()) marks.push_back(std::move(m));
  while (true) {
    size_t at = s.npos, which = 0;
    for (size_t k = 0; k < marks.size(); ++k)
      if (const size_t f = s.find(marks[k], pos); f < at) at = f, which = k;
    if (at == s.npos) return content_to_end(s, pos, after_call, partial, marks, 0, out, resume);
    add_content(out, s.substr(pos, at - pos), after_call, true, false, marks);
    after_call = true;
    mark(resume, at, true, 0, out);  // the content before a marker is final
    if (which > 0) {
      pos = at + marks[which].size();
      continue;
    }
    const Section c = read_section(s, at + opener.size(), partial, tools, out.calls);
    if (!c.complete) return;  // the rest is the call's, as far as it goes
    pos = c.end;
    mark(resume, pos, true, 0, out);
  }
}

Section ToolFamily::read_section(std::string_view, size_t pos, bool, const json&,
                                 std::vector<ToolCallText>&) const {
  return {pos, false};
}

int32_t ToolFamily::body_grammar(ToolGrammarBuilder& b, const CallGrammar& calls) const {
  if (b.calls_required()) return b.required_body(calls, section_per_call());
  if (calls.trigger.empty())
    fail("tool calls: family '{}' gives no trigger for tool_choice auto", name());
  return b.free_body(calls, b.choice().parallel);
}

}  // namespace brisk
