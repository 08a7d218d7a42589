#include "tokenizer/vocab.h"

#include "core/error.h"

namespace brisk {

Vocab Vocab::from_model(const ModelFile& mf) {
  Vocab v;
  v.model = mf.get_str("tokenizer.ggml.model").value_or("");
  if (v.model.empty())
    fail("{}: the model has no tokenizer (tokenizer.ggml.model is missing)", mf.path);
  v.pre = mf.get_str("tokenizer.ggml.pre").value_or("default");
  const Value* toks = mf.find("tokenizer.ggml.tokens");
  if (!toks || toks->type != GgufType::ARRAY || toks->elem_type != GgufType::STRING)
    fail("{}: tokenizer.ggml.tokens is missing or not an array of strings", mf.path);
  const size_t n = toks->arr.size();
  if (n == 0 || n > (1u << 23)) fail("{}: tokenizer.ggml.tokens has {} entries", mf.path, n);
  v.tokens.reserve(n);
  for (const auto& t : toks->arr) v.tokens.push_back(t.s);

  v.scores.assign(n, 0.0f);
  if (const Value* s = mf.find("tokenizer.ggml.scores")) {
    if (s->type != GgufType::ARRAY || s->arr.size() != n)
      fail("{}: tokenizer.ggml.scores must be an array of {} numbers", mf.path, n);
    for (size_t i = 0; i < n; ++i) {
      auto f = s->arr[i].as_float();
      if (!f) fail("{}: tokenizer.ggml.scores[{}] is not a number", mf.path, i);
      v.scores[i] = static_cast<float>(*f);
    }
  }
  v.types.assign(n, TokenType::Normal);
  if (const Value* t = mf.find("tokenizer.ggml.token_type")) {
    if (t->type != GgufType::ARRAY || t->arr.size() != n)
      fail("{}: tokenizer.ggml.token_type must be an array of {} integers", mf.path, n);
    for (size_t i = 0; i < n; ++i) {
      auto k = t->arr[i].as_int();
      if (!k || *k < 0 || *k > 6) fail("{}: tokenizer.ggml.token_type[{}] is invalid", mf.path, i);
      v.types[i] = static_cast<TokenType>(*k);
    }
  }
  v.index.reserve(n);
  for (size_t i = 0; i < n; ++i) v.index.emplace(v.tokens[i], static_cast<int32_t>(i));

  auto id = [&](const char* key, int32_t def) -> int32_t {
    auto x = mf.get_int(key);
    if (!x) return def;
    if (*x < 0 || *x >= static_cast<int64_t>(n)) {
      // Some converters write -1 or 0xffffffff for "none".
      if (*x == -1 || *x == 0xffffffffLL) return -1;
      fail("{}: {} = {} is outside the vocabulary of {} tokens", mf.path, key, *x, n);
    }
    return static_cast<int32_t>(*x);
  };
  const bool spm = v.model == "llama";
  v.bos = id("tokenizer.ggml.bos_token_id", spm && n > 1 ? 1 : -1);
  v.eos = id("tokenizer.ggml.eos_token_id", spm && n > 2 ? 2 : -1);
  v.unk = id("tokenizer.ggml.unknown_token_id", spm ? 0 : -1);
  v.pad = id("tokenizer.ggml.padding_token_id", -1);
  v.eot = id("tokenizer.ggml.eot_token_id", -1);
  v.add_bos = mf.get_bool("tokenizer.ggml.add_bos_token").value_or(spm);
  v.add_eos = mf.get_bool("tokenizer.ggml.add_eos_token").value_or(false);
  v.add_space_prefix = mf.get_bool("tokenizer.ggml.add_space_prefix").value_or(spm);
  v.chat_template = mf.get_str("tokenizer.chat_template").value_or("");
  // Control tokens that end a turn in the chat formats of the common families.
  for (const char* t :
       {"<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
        "<|END_OF_TURN_TOKEN|>", "<｜end▁of▁sentence｜>", "<|return|>", "<|call|>"})
    if (const int32_t tid = v.find(t); tid >= 0 && v.types[tid] == TokenType::Control)
      v.eog.push_back(tid);
  auto strings = [&](const char* key, std::vector<std::string>& dst) {
    const Value* a = mf.find(key);
    if (!a) return;
    if (a->type != GgufType::ARRAY || a->elem_type != GgufType::STRING)
      fail("{}: {} must be an array of strings", mf.path, key);
    dst.reserve(a->arr.size());
    for (const auto& e : a->arr) dst.push_back(e.s);
  };
  strings("tokenizer.ggml.merges", v.merges);
  strings("tokenizer.brisk.pre_regex", v.pre_regex);
  v.ignore_merges = mf.get_bool("tokenizer.brisk.ignore_merges");
  v.normalizer = mf.get_str("tokenizer.brisk.normalizer").value_or("");
  return v;
}

}  // namespace brisk
