#include "model/architecture.h"

#include "model/blocks.h"
#include "model/hparams.h"
#include "model/tensor_binding.h"
#include "model/weights.h"

namespace brisk {

namespace archs {
const Architecture& gemma2();
const Architecture& gemma3();
const Architecture& gpt_oss();
const Architecture& llama();
const Architecture& phi3();
const Architecture& qwen2();
const Architecture& qwen3();
const Architecture& qwen3moe();
}  // namespace archs

namespace {

// The registry: one line per architecture (its file is model/archs/NAME.cpp).
const std::vector<const Architecture*>& registry() {
  static const std::vector<const Architecture*> all = {
      &archs::llama(),   &archs::qwen2(), &archs::qwen3(),  &archs::qwen3moe(),
      &archs::gpt_oss(), &archs::phi3(),  &archs::gemma2(), &archs::gemma3(),
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

void PreNormDecoder::bind(const ModelFile& mf, const HParams& h, int l, LayerWeights& L) const {
  bind_attention(mf, h, l, L);
  if (h.has_experts())
    bind_mixture_of_experts(mf, h, l, L);
  else
    bind_feed_forward(mf, h, l, L);
}

void PreNormDecoder::layer(const HParams& h, LayerBlocks& b, int l) const {
  b.attention(l);
  if (h.has_experts())
    b.mixture_of_experts(l);
  else
    b.feed_forward(l);
}

}  // namespace brisk
