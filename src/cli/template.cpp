// brisk template: the exact text a chat template makes of a conversation, for debugging a model's
// prompt format (and for feeding tests and the fuzz corpus).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "chat/prompt_format.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/options.h"
#include "core/error.h"
#include "formats/loader.h"
#include "tokenizer/tokenizer.h"

namespace brisk::cli {
namespace {

using json = nlohmann::ordered_json;

struct TemplateArgs {
  Options opt;
  std::string context_file, messages_file, tools_file;
  bool add_generation_prompt = false;
};

json read_json(const std::string& path, const char* what) {
  const std::string text = read_text_file(path, what);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    fail("{} {}: not valid JSON: {}", what, path, e.what());
  }
}

int run_template(TemplateArgs& a) {
  const bool with_model = !a.opt.model.path.empty() || !a.opt.model.hf.empty();
  if (!with_model && a.opt.chat_template.empty())
    fail("template: give a model (-m) or a template (--chat-template FILE)");
  if (a.context_file.empty() == a.messages_file.empty())
    fail("template: give exactly one of --context FILE.json and --messages FILE.json");
  if (!a.context_file.empty() && (!a.tools_file.empty() || a.add_generation_prompt))
    fail(
        "template: --tools and --add-generation-prompt go with --messages (a --context file "
        "holds every variable itself)");

  const std::string source = a.opt.chat_template_source();
  std::unique_ptr<Tokenizer> tok;
  std::unique_ptr<PromptFormat> prompt_format;
  if (with_model) {
    tok = Tokenizer::create(load_model_file(resolve_model(a.opt.model), a.opt.model.tokenizer));
    prompt_format = std::make_unique<PromptFormat>(*tok, source);
    if (prompt_format->uses_fallback_template())
      std::fprintf(stderr,
                   "note: the model has no chat template; showing ChatML, which chat and "
                   "serve use for it (--chat-template FILE to choose one)\n");
  } else {
    prompt_format = std::make_unique<PromptFormat>(PromptFormat::without_model(source));
  }

  std::string out;
  if (!a.context_file.empty()) {
    const json ctx = read_json(a.context_file, "context file");
    if (!ctx.is_object()) fail("context file {}: must hold a JSON object", a.context_file);
    out = prompt_format->render_context(ctx);
  } else {
    json messages = read_json(a.messages_file, "messages file");
    if (messages.is_object() && messages.contains("messages")) messages = messages["messages"];
    if (!messages.is_array())
      fail("messages file {}: must hold a list of messages (or an object with \"messages\")",
           a.messages_file);
    json extra = json::object();
    if (!a.tools_file.empty()) {
      json tools = read_json(a.tools_file, "tools file");
      if (tools.is_object() && tools.contains("tools")) tools = tools["tools"];
      if (!tools.is_array()) fail("tools file {}: must hold a list of tools", a.tools_file);
      extra["tools"] = std::move(tools);
    }
    out = prompt_format->render_chat(messages, a.add_generation_prompt, extra);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace

void register_template(CLI::App& app, Commands& c) {
  auto a = std::make_shared<TemplateArgs>();
  CLI::App* s = app.add_subcommand(
      "template",
      "Print the exact prompt text a chat template makes of a conversation (no newline added)");
  add_options(*s, a->opt, kModel | kChatTemplate);
  s->add_option("--context", a->context_file,
                "JSON object whose keys are the template's variables exactly as given (messages, "
                "tools, add_generation_prompt, bos_token, date_string, ...); the model fills in "
                "bos_token/eos_token if absent");
  s->add_option("--messages", a->messages_file,
                "JSON list of messages in OpenAI's shape (or an object with \"messages\"); text "
                "parts are joined or kept as the template's content format asks");
  s->add_option("--tools", a->tools_file,
                "JSON list of tools in OpenAI's shape, passed as `tools` (with --messages)");
  s->add_flag("--add-generation-prompt", a->add_generation_prompt,
              "End with the assistant's turn opener, as a request for a reply does (with "
              "--messages)");
  s->callback([a, &c] { c.selected = [a] { return run_template(*a); }; });
}

}  // namespace brisk::cli
