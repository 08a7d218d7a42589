// A chat template and a context from anywhere (template, then a JSON context, separated by a
// "-----" line; without a valid context, a fixed conversation). Parse and render under the
// default limits: every failure must be a brisk::Error, within bounded time and memory.
#include <exception>
#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "core/error.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace brisk;
  using json = nlohmann::ordered_json;
  const auto parts = fuzz::split_parts(data, size, 2);
  json ctx = json::parse(parts[1], nullptr, false);
  if (!ctx.is_object())
    ctx = json::parse(R"({"messages": [{"role": "system", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
      {"role": "assistant", "content": "", "tool_calls": [{"type": "function",
        "function": {"name": "f", "arguments": {"x": 1}}}]}],
      "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
      "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"})");
  try {
    const ChatTemplate t(parts[0]);
    (void)t.render(ctx);
    if (ctx.contains("messages")) (void)t.apply(ctx["messages"], true);
  } catch (const Error&) {
  }
  return 0;
}
