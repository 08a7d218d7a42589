#include "chat/chat_template.h"

#include <fmt/format.h>

#include <set>

#include "chat/jinja/interpreter.h"
#include "chat/messages.h"
#include "core/error.h"
#include "tokenizer/vocab.h"

namespace brisk {

using json = nlohmann::ordered_json;

namespace {

using jinja::Node;

// `x.content`, `x['content']`, or either behind filters (`message['content'] | selectattr(...)`).
bool reads_content(const Node* n, const std::set<std::string>& aliases) {
  while (n && (n->kind == Node::Kind::Filter || n->kind == Node::Kind::Select)) n = n->a.get();
  if (!n) return false;
  if (n->kind == Node::Kind::Ident) return aliases.count(n->s) > 0;
  if (n->kind != Node::Kind::Member || !n->b) return false;
  const Node& prop = *n->b;
  return (!n->flag && prop.kind == Node::Kind::Ident && prop.s == "content") ||
         (n->flag && prop.kind == Node::Kind::Str && prop.s == "content");
}

template <class Pred>
bool any_node(const Node* n, const Pred& pred) {  // the parser bounds the tree's height
  if (!n) return false;
  if (pred(*n)) return true;
  for (const Node* c : {n->a.get(), n->b.get(), n->c.get()})
    if (any_node(c, pred)) return true;
  for (const jinja::Block* bl : {&n->list, &n->body, &n->alt})
    for (const jinja::NodeP& c : *bl)
      if (any_node(c.get(), pred)) return true;
  for (const auto& [k, v] : n->pairs)
    if (any_node(k.get(), pred) || any_node(v.get(), pred)) return true;
  return false;
}

bool part_key(const std::string& s) {
  return s == "type" || s == "text";
}

// A loop over a message's content that treats the items as content parts: it reads their `type`
// or `text` (`item['type'] == 'image'`), or filters the list by them (`selectattr('type', ...)`).
// Mistral's template also loops over `message.content`, but as tool calls: that is not this.
bool loops_over_parts(const Node& f, const std::set<std::string>& aliases) {
  if (!reads_content(f.b.get(), aliases)) return false;
  if (any_node(f.b.get(), [](const Node& n) { return n.kind == Node::Kind::Str && part_key(n.s); }))
    return true;
  if (!f.a || f.a->kind != Node::Kind::Ident) return false;
  const std::string& var = f.a->s;
  const auto field = [&](const Node& n) {
    return n.kind == Node::Kind::Member && n.a && n.a->kind == Node::Kind::Ident && n.a->s == var &&
           n.b && (n.b->kind == (n.flag ? Node::Kind::Str : Node::Kind::Ident)) && part_key(n.b->s);
  };
  for (const jinja::NodeP& c : f.body)
    if (any_node(c.get(), field)) return true;
  return false;
}

void scan(const jinja::Block& body, std::set<std::string>& aliases, bool& loops) {
  for (const jinja::NodeP& p : body) {
    if (!p) continue;
    const Node& n = *p;
    // {% set content = message['content'] %} makes `content` read the content too.
    if (n.kind == Node::Kind::Set && n.a && n.a->kind == Node::Kind::Ident && n.b &&
        reads_content(n.b.get(), aliases))
      aliases.insert(n.a->s);
    if (n.kind == Node::Kind::For && loops_over_parts(n, aliases)) loops = true;
    scan(n.body, aliases, loops);
    scan(n.alt, aliases, loops);
  }
}

}  // namespace

ContentFormat detect_content_format(const jinja::Program& p) {
  std::set<std::string> aliases;
  bool loops = false;
  scan(p.body, aliases, loops);
  return loops ? ContentFormat::OpenAI : ContentFormat::String;
}

json normalize_content(const json& messages, ContentFormat f) {
  json out = check_messages(messages);
  if (f == ContentFormat::OpenAI) return out;
  for (json& m : out) {
    if (!m["content"].is_array()) continue;
    std::string text;
    const json& parts = m["content"];
    for (size_t k = 0; k < parts.size(); ++k)
      text += (k ? "\n" : "") + parts[k]["text"].get<std::string>();
    m["content"] = text;
  }
  return out;
}

ChatTemplate::ChatTemplate(std::string source, std::string bos_token, std::string eos_token)
    : source_(std::move(source)),
      bos_(std::move(bos_token)),
      eos_(std::move(eos_token)),
      program_(jinja::parse(source_)),
      format_(detect_content_format(program_)),
      caps_(probe_caps()) {}

TemplateCaps ChatTemplate::probe_caps() const {
  // Whether the conversation renders with every marker text in the output.
  auto renders = [&](const json& messages, std::initializer_list<const char*> markers) {
    try {
      const std::string out = apply(messages, false);
      for (const char* m : markers)
        if (out.find(m) == std::string::npos) return false;
      return true;
    } catch (const std::exception&) {
      return false;
    }
  };
  const json user = {{"role", "user"}, {"content", "probe-user"}};
  const json call = {
      {"role", "assistant"},
      {"content", ""},
      {"tool_calls",
       {{{"id", "call_probe"},
         {"type", "function"},
         {"function", {{"name", "probe_function"}, {"arguments", "{\"probe\": 1}"}}}}}}};
  const json result = {{"role", "tool"},
                       {"tool_call_id", "call_probe"},
                       {"name", "probe_function"},
                       {"content", "probe-result"}};
  TemplateCaps c;
  c.system_role =
      renders({{{"role", "system"}, {"content", "probe-system"}}, user}, {"probe-system"});
  c.tool_calls = renders({user, call}, {"probe_function"});
  c.tool_role = renders({user, call, result}, {"probe-result"});
  json two = call;
  two["tool_calls"].push_back(call["tool_calls"][0]);
  two["tool_calls"][1]["id"] = "call_probe2";
  two["tool_calls"][1]["function"]["name"] = "probe_second";
  c.parallel_calls = !c.tool_calls || renders({user, two}, {"probe_function", "probe_second"});
  c.consecutive_users = renders({user, {{"role", "user"}, {"content", "probe-again"}}},
                                {"probe-user", "probe-again"});
  return c;
}

ChatTemplate ChatTemplate::for_vocab(const Vocab& v) {
  if (v.chat_template.empty())
    fail("the model has no chat template (tokenizer.chat_template); pass one with --chat-template");
  auto text = [&](int32_t id) { return id >= 0 && id < v.size() ? v.tokens[id] : std::string(); };
  return ChatTemplate(v.chat_template, text(v.bos), text(v.eos));
}

std::string ChatTemplate::render(const json& context) const {
  if (!context.is_object()) fail("chat template: the context must be a JSON object");
  jinja::Object ctx;
  for (auto it = context.begin(); it != context.end(); ++it)
    ctx.set(it.key(), jinja::Value::from_json(*it));
  if (!context.contains("bos_token")) ctx.set("bos_token", jinja::Value::string(bos_));
  if (!context.contains("eos_token")) ctx.set("eos_token", jinja::Value::string(eos_));
  return jinja::render(program_, jinja::Value::object(std::move(ctx)));
}

std::string ChatTemplate::apply(const json& messages, bool add_generation_prompt,
                                const json& extra) const {
  json ctx = json::object();
  ctx["messages"] = normalize_content(messages, format_);
  ctx["add_generation_prompt"] = add_generation_prompt;
  ctx["bos_token"] = bos_;
  ctx["eos_token"] = eos_;
  if (extra.is_object())
    for (auto it = extra.begin(); it != extra.end(); ++it) ctx[it.key()] = *it;
  return render(ctx);
}

}  // namespace brisk
