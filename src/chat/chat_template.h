// Chat templates: a model's Jinja template (GGUF tokenizer.chat_template, tokenizer_config.json
// chat_template) applied to a conversation the way transformers' apply_chat_template does.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "chat/jinja/parser.h"

namespace brisk {

struct Vocab;

// How a template reads a message's content, as vLLM decides it: most templates concatenate
// `message['content']` as text, so a list of text parts (the shape OpenAI clients may send) is
// joined into one string first; a template that loops over the content (Gemma 3, Llama 3.2
// Vision, Mistral 3) gets the parts as they were sent.
enum class ContentFormat { String, OpenAI };

// What a template can render, found by rendering small probe conversations once (as llama.cpp's
// minja does): a template that raises on a role, or drops what it was given, lacks it.
struct TemplateCaps {
  bool system_role = true;        // a system message's text reaches the output
  bool tool_role = true;          // a `tool` message's text reaches the output
  bool tool_calls = true;         // an assistant's tool_calls (their names) reach the output
  bool parallel_calls = true;     // an assistant turn with two calls renders (Llama 3.2: one)
  bool consecutive_users = true;  // two user messages in a row render
};

class ChatTemplate {
 public:
  // Parses once; a syntax error names the line and column.
  explicit ChatTemplate(std::string source, std::string bos_token = "", std::string eos_token = "");
  // The model's own template with its BOS/EOS texts; fails if the model has none.
  static ChatTemplate for_vocab(const Vocab& v);

  // messages: [{"role": ..., "content": ..., "tool_calls": [...]}, ...] (OpenAI's shape; content
  // a string, null, or a list of {"type": "text", "text": ...} parts);
  // extra: more template variables (tools, documents, date_string, enable_thinking, ...).
  std::string apply(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                    const nlohmann::ordered_json& extra = nlohmann::ordered_json::object()) const;

  // The template with exactly the variables given (an object); bos_token and eos_token are
  // filled in from the model where the context lacks them. Messages are passed unchanged.
  std::string render(const nlohmann::ordered_json& context) const;

  const std::string& source() const { return source_; }
  ContentFormat content_format() const { return format_; }
  const TemplateCaps& caps() const { return caps_; }

 private:
  TemplateCaps probe_caps() const;

  std::string source_, bos_, eos_;
  jinja::Program program_;
  ContentFormat format_ = ContentFormat::String;
  TemplateCaps caps_;
};

// The template's content format, from its syntax tree.
ContentFormat detect_content_format(const jinja::Program& p);

// Messages as the template will see them: checked (chat/messages.h), then text parts joined by
// "\n" for the string format or kept for the OpenAI format.
nlohmann::ordered_json normalize_content(const nlohmann::ordered_json& messages, ContentFormat f);

}  // namespace brisk
