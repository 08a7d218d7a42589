// The text in front of the engine, shared by the command line and the server: a prompt's text or
// a chat conversation becomes token ids here (the engine streams ids back out as text itself).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace brisk {

class PromptFormat {
 public:
  // template_source: a Jinja chat template to use instead of the model's own ("": the model's,
  // or ChatML, as llama.cpp falls back to, when the model has none).
  explicit PromptFormat(const Tokenizer& tok, const std::string& template_source = "");

  // Plain text; add_special adds BOS (and EOS) as the vocabulary asks.
  std::vector<int32_t> encode_text(std::string_view text, bool add_special = true) const;

  // messages in OpenAI's shape; extra: more template variables (tools, enable_thinking, ...).
  std::string render_chat(
      const nlohmann::ordered_json& messages, bool add_generation_prompt,
      const nlohmann::ordered_json& extra = nlohmann::ordered_json::object()) const;
  // A rendered conversation to ids: the special-token texts the template wrote are parsed as
  // such, and BOS is added only where the model wants one and the text does not begin with it.
  std::vector<int32_t> encode_chat(const std::string& rendered) const;

  bool uses_fallback_template() const { return fallback_; }
  const ChatTemplate& chat_template() const { return *tmpl_; }
  const Tokenizer& tokenizer() const { return tok_; }

 private:
  const Tokenizer& tok_;
  std::unique_ptr<ChatTemplate> tmpl_;
  bool fallback_ = false;
};

}  // namespace brisk
