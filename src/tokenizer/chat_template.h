// Chat templates: a model's Jinja template (GGUF tokenizer.chat_template, tokenizer_config.json
// chat_template) applied to a conversation the way transformers' apply_chat_template does.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tokenizer/jinja/parser.h"

namespace brisk {

struct Vocab;

class ChatTemplate {
 public:
  // Parses once; a syntax error names the line and column.
  explicit ChatTemplate(std::string source, std::string bos_token = "", std::string eos_token = "");
  // The model's own template with its BOS/EOS texts; fails if the model has none.
  static ChatTemplate for_vocab(const Vocab& v);

  // messages: [{"role": ..., "content": ..., "tool_calls": [...]}, ...] (OpenAI's shape);
  // extra: more template variables (tools, documents, date_string, enable_thinking, ...).
  std::string apply(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                    const nlohmann::ordered_json& extra = nlohmann::ordered_json::object()) const;

  const std::string& source() const { return source_; }

 private:
  std::string source_, bos_, eos_;
  jinja::Program program_;
};

}  // namespace brisk
