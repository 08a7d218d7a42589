#include "support/hf_export.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "formats/safetensors.h"

namespace brisk::test {

using json = nlohmann::json;

void export_hf(const Model& m, const std::string& dir, DType type) {
  const HParams& h = m.hp;
  json cfg = {{"architectures", {"LlamaForCausalLM"}},
              {"model_type", "llama"},
              {"hidden_size", h.n_embd},
              {"intermediate_size", h.n_ff},
              {"num_hidden_layers", h.n_layer},
              {"num_attention_heads", h.n_head},
              {"num_key_value_heads", h.n_head_kv},
              {"max_position_embeddings", h.n_ctx_train},
              {"rms_norm_eps", h.rms_eps},
              {"rope_theta", h.rope_theta},
              {"tie_word_embeddings", h.tied_output},
              {"vocab_size", h.n_vocab},
              {"torch_dtype", "float32"}};
  std::ofstream(dir + "/config.json") << cfg.dump(2);

  std::vector<std::shared_ptr<std::vector<uint8_t>>> keep;
  std::vector<Tensor> shard[2];
  json weight_map = json::object();
  for (const Tensor& src : m.file.tensors) {
    const std::string name = hf_tensor_name(src.name);
    if (name.empty()) continue;
    Tensor t = src;
    t.name = name;
    t.type = src.n_dims == 1 ? DType::F32 : type;
    t.nbytes = static_cast<uint64_t>(t.elements()) * dtype_info(t.type).block_bytes;
    auto buf = std::make_shared<std::vector<uint8_t>>(t.nbytes);
    const bool is_q = src.name.ends_with("attn_q.weight"),
               is_k = src.name.ends_with("attn_k.weight");
    std::vector<float> row(static_cast<size_t>(src.cols()));
    const uint64_t rb = t.nbytes / static_cast<uint64_t>(t.rows());
    for (int64_t r = 0; r < src.rows(); ++r) {
      convert_row_to_f32(src.type, src.row(r), row.data(), src.cols());
      // GGUF rows are interleaved-rope order; Hugging Face's are rotate-half order.
      const int64_t dst = (is_q || is_k) ? hf_row_for_gguf_row(r, h.head_dim) : r;
      uint8_t* out = buf->data() + dst * rb;
      for (int64_t j = 0; j < src.cols(); ++j) {
        if (t.type == DType::F32)
          std::memcpy(out + j * 4, &row[j], 4);
        else {
          const uint16_t v = t.type == DType::F16 ? f32_to_f16(row[j]) : f32_to_bf16(row[j]);
          std::memcpy(out + j * 2, &v, 2);
        }
      }
    }
    t.data = buf->data();
    keep.push_back(buf);
    const bool second =
        src.name.rfind("blk.", 0) == 0 && std::stoi(src.name.substr(4)) >= h.n_layer / 2;
    shard[second].push_back(t);
    weight_map[name] =
        second ? "model-00002-of-00002.safetensors" : "model-00001-of-00002.safetensors";
  }
  write_safetensors(dir + "/model-00001-of-00002.safetensors", shard[0], {{"format", "pt"}});
  write_safetensors(dir + "/model-00002-of-00002.safetensors", shard[1], {{"format", "pt"}});
  std::ofstream(dir + "/model.safetensors.index.json")
      << json{{"metadata", json::object()}, {"weight_map", weight_map}}.dump(2);

  // tokenizer.json: a BPE model with byte fallback whose merges rank pairs as the SentencePiece
  // scores do (higher score, earlier merge), the way Hugging Face converts Llama tokenizers.
  const Vocab& v = m.tokenizer->vocab();
  json vocab = json::object();
  for (int32_t i = 0; i < v.size(); ++i) vocab[v.tokens[i]] = i;
  std::vector<std::tuple<float, int32_t, std::string, std::string>> merges;
  for (int32_t i = 0; i < v.size(); ++i) {
    if (v.types[i] != TokenType::Normal) continue;
    const std::string& t = v.tokens[i];
    for (size_t cut = 1; cut < t.size(); ++cut) {
      const std::string a = t.substr(0, cut), b = t.substr(cut);
      if (v.find(a) >= 0 && v.find(b) >= 0) merges.emplace_back(-v.scores[i], i, a, b);
    }
  }
  std::sort(merges.begin(), merges.end());
  json jm = json::array();
  for (const auto& [s, i, a, b] : merges) jm.push_back(a + " " + b);
  json added = json::array();
  for (int32_t i = 0; i < v.size(); ++i)
    if (v.types[i] == TokenType::Control || v.types[i] == TokenType::Unknown)
      added.push_back({{"id", i}, {"content", v.tokens[i]}, {"special", true}});
  json tok = {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers",
         {{{"type", "Prepend"}, {"prepend", "\xe2\x96\x81"}}, {{"type", "Replace"}}}}}},
      {"model", {{"type", "BPE"}, {"byte_fallback", true}, {"vocab", vocab}, {"merges", jm}}}};
  std::ofstream(dir + "/tokenizer.json") << tok.dump();
  json tc = {{"bos_token", v.tokens[v.bos]},
             {"eos_token", v.tokens[v.eos]},
             {"unk_token", v.tokens[v.unk]},
             {"add_bos_token", true},
             {"add_eos_token", false}};
  std::ofstream(dir + "/tokenizer_config.json") << tc.dump(2);
}

}  // namespace brisk::test
