// The chat front door: how a prompt's text or a conversation becomes the model's token ids, for
// every command and the server alike (the engine streams ids back out as text itself). A
// conversation is checked (chat/messages.h) and rendered by the model's chat template, or by the
// one the user gave, or by ChatML when the model has none.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace brisk {

class PromptFormat {
 public:
  // template_source: a Jinja chat template to use instead of the model's own ("": the model's,
  // or ChatML, as llama.cpp falls back to, when the model has none).
  explicit PromptFormat(const Tokenizer& tok, const std::string& template_source = "");
  // A template alone, for rendering without a model (brisk template): no BOS/EOS texts and
  // nothing to encode with.
  static PromptFormat without_model(const std::string& template_source);

  // Plain text; add_special adds BOS (and EOS) as the vocabulary asks.
  std::vector<int32_t> encode_text(std::string_view text, bool add_special = true) const;

  // messages in OpenAI's shape (an InvalidMessages error names what is wrong); extra: more
  // template variables (tools, enable_thinking, ...).
  std::string render_chat(
      const nlohmann::ordered_json& messages, bool add_generation_prompt,
      const nlohmann::ordered_json& extra = nlohmann::ordered_json::object()) const;
  // The template with exactly the variables given (an object; BOS/EOS texts filled in if absent).
  std::string render_context(const nlohmann::ordered_json& context) const;
  // A rendered conversation to ids: the special-token texts the template wrote are parsed as
  // such, and BOS is added only where the model wants one and the text does not begin with it.
  std::vector<int32_t> encode_chat(const std::string& rendered) const;

  bool uses_fallback_template() const { return fallback_; }
  const ChatTemplate& chat_template() const { return *tmpl_; }
  const Tokenizer& tokenizer() const;

 private:
  PromptFormat() = default;
  const Tokenizer* tok_ = nullptr;
  std::unique_ptr<ChatTemplate> tmpl_;
  bool fallback_ = false;
};

}  // namespace brisk
