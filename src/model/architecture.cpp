#include "model/architecture.h"

namespace brisk {

namespace archs {
const Architecture& llama();
const Architecture& qwen2();
const Architecture& qwen3();
const Architecture& qwen3moe();
}  // namespace archs

namespace {

// The registry: one line per architecture (its file is model/archs/NAME.cpp).
const std::vector<const Architecture*>& registry() {
  static const std::vector<const Architecture*> all = {
      &archs::llama(),
      &archs::qwen2(),
      &archs::qwen3(),
      &archs::qwen3moe(),
  };
  return all;
}

}  // namespace

const Architecture* Architecture::find(std::string_view gguf_name) {
  for (const Architecture* a : registry())
    for (std::string_view n : a->names())
      if (n == gguf_name) return a;
  return nullptr;
}

std::string Architecture::supported_names() {
  std::string s;
  for (const Architecture* a : registry())
    for (std::string_view n : a->names()) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

}  // namespace brisk
