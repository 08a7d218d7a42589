#include "tokenizer/chat_template.h"

#include "core/error.h"
#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/vocab.h"

namespace brisk {

ChatTemplate::ChatTemplate(std::string source, std::string bos_token, std::string eos_token)
    : source_(std::move(source)),
      bos_(std::move(bos_token)),
      eos_(std::move(eos_token)),
      program_(jinja::parse(source_)) {}

ChatTemplate ChatTemplate::for_vocab(const Vocab& v) {
  if (v.chat_template.empty())
    fail("the model has no chat template (tokenizer.chat_template); pass one with --chat-template");
  auto text = [&](int32_t id) { return id >= 0 && id < v.size() ? v.tokens[id] : std::string(); };
  return ChatTemplate(v.chat_template, text(v.bos), text(v.eos));
}

std::string ChatTemplate::apply(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                const nlohmann::ordered_json& extra) const {
  if (!messages.is_array()) fail("chat template: messages must be an array");
  jinja::Object ctx;
  ctx.set("messages", jinja::Value::from_json(messages));
  ctx.set("add_generation_prompt", jinja::Value::boolean(add_generation_prompt));
  ctx.set("bos_token", jinja::Value::string(bos_));
  ctx.set("eos_token", jinja::Value::string(eos_));
  if (extra.is_object())
    for (auto it = extra.begin(); it != extra.end(); ++it)
      ctx.set(it.key(), jinja::Value::from_json(*it));
  return jinja::render(program_, jinja::Value::object(std::move(ctx)));
}

}  // namespace brisk
