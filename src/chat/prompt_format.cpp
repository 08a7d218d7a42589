#include "chat/prompt_format.h"

#include "core/error.h"

namespace brisk {

namespace {
const char* kChatMl =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ "
    "'<|im_start|>assistant\\n' }}{% endif %}";
}  // namespace

PromptFormat::PromptFormat(const Tokenizer& tok, const std::string& template_source) : tok_(&tok) {
  const Vocab& v = tok.vocab();
  auto text = [&](int32_t id) { return id >= 0 && id < v.size() ? v.tokens[id] : std::string(); };
  if (!template_source.empty()) {
    tmpl_ = std::make_unique<ChatTemplate>(template_source, text(v.bos), text(v.eos));
  } else if (!v.chat_template.empty()) {
    tmpl_ = std::make_unique<ChatTemplate>(ChatTemplate::for_vocab(v));
  } else {
    tmpl_ = std::make_unique<ChatTemplate>(kChatMl, text(v.bos), text(v.eos));
    fallback_ = true;
  }
}

PromptFormat PromptFormat::without_model(const std::string& template_source) {
  PromptFormat f;
  f.tmpl_ = std::make_unique<ChatTemplate>(template_source);
  return f;
}

const Tokenizer& PromptFormat::tokenizer() const {
  if (!tok_) fail("this prompt format has a template but no model to encode with");
  return *tok_;
}

std::vector<int32_t> PromptFormat::encode_text(std::string_view text, bool add_special) const {
  return tokenizer().encode(text, add_special);
}

std::string PromptFormat::render_chat(const nlohmann::ordered_json& messages,
                                      bool add_generation_prompt,
                                      const nlohmann::ordered_json& extra) const {
  return tmpl_->apply(messages, add_generation_prompt, extra);
}

std::string PromptFormat::render_context(const nlohmann::ordered_json& context) const {
  return tmpl_->render(context);
}

std::vector<int32_t> PromptFormat::encode_chat(const std::string& rendered) const {
  const Vocab& v = tokenizer().vocab();
  const std::string bos_text = v.bos >= 0 && v.bos < v.size() ? v.tokens[v.bos] : std::string();
  const bool bos = v.add_bos && v.bos >= 0 && rendered.rfind(bos_text, 0) != 0;
  std::vector<int32_t> ids = tok_->encode(rendered, false, true);
  if (bos) ids.insert(ids.begin(), v.bos);
  return ids;
}

}  // namespace brisk
