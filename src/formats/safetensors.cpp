#include "formats/safetensors.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/hf_tokenizer.h"
#include "formats/json_file.h"
#include "formats/rope_factors.h"

namespace brisk {

using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::optional<DType> st_dtype(const std::string& s) {
  if (s == "F32") return DType::F32;
  if (s == "F16") return DType::F16;
  if (s == "BF16") return DType::BF16;
  if (s == "I32") return DType::I32;
  if (s == "I8") return DType::I8;
  if (s == "I16") return DType::I16;
  if (s == "I64") return DType::I64;
  if (s == "F64") return DType::F64;
  return std::nullopt;
}

const char* st_name(DType t) {
  switch (t) {
    case DType::F32:
      return "F32";
    case DType::F16:
      return "F16";
    case DType::BF16:
      return "BF16";
    default:
      fail("safetensors: cannot store tensor type {}", dtype_name(t));
  }
}

}  // namespace

int64_t hf_row_for_gguf_row(int64_t r, int64_t hd) {
  const int64_t h = r / hd, w = r % hd;
  return h * hd + (w % 2) * (hd / 2) + w / 2;
}

ModelFile load_safetensors(const std::string& path) {
  auto file = MappedFile::open(path);
  const uint64_t size = file->size();
  if (size < 8) fail("{}: too small for a safetensors file", path);
  uint64_t hlen;
  std::memcpy(&hlen, file->data(), 8);
  if (hlen > size - 8 || hlen > (uint64_t{100} << 20))
    fail("{}: header length {} is invalid", path, hlen);
  json h;
  try {
    h = json::parse(file->data() + 8, file->data() + 8 + hlen);
  } catch (const json::exception& e) {
    fail("{}: invalid header JSON: {}", path, e.what());
  }
  if (!h.is_object()) fail("{}: header is not a JSON object", path);
  ModelFile mf;
  mf.path = path;
  mf.format = "safetensors";
  mf.file_bytes = size;
  const uint64_t data_start = 8 + hlen, data_size = size - data_start;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (auto it = h.begin(); it != h.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const json& e = it.value();
    Tensor t;
    t.name = it.key();
    try {
      const std::string dt = e.at("dtype").get<std::string>();
      auto d = st_dtype(dt);
      if (!d) fail("{}: tensor '{}' has unsupported dtype {}", path, t.name, dt);
      t.type = *d;
      const auto& shape = e.at("shape");
      if (!shape.is_array() || shape.size() > 4)
        fail("{}: tensor '{}' has an invalid shape", path, t.name);
      t.n_dims = std::max<int>(1, static_cast<int>(shape.size()));
      uint64_t elems = 1;
      for (size_t d2 = 0; d2 < shape.size(); ++d2) {
        const int64_t ne =
            json_int(shape[shape.size() - 1 - d2], path + ": tensor '" + t.name + "' dimension", 1,
                     int64_t{1} << 40);
        t.ne[d2] = ne;
        elems =
            checked_mul(elems, static_cast<uint64_t>(ne), path + ": tensor '" + t.name + "' size");
      }
      t.nbytes = checked_mul(elems, dtype_info(t.type).block_bytes,
                             path + ": tensor '" + t.name + "' size");
      const auto& off = e.at("data_offsets");
      const std::string what = path + ": tensor '" + t.name + "' data offset";
      const uint64_t b = static_cast<uint64_t>(json_int(off.at(0), what, 0, INT64_MAX)),
                     en = static_cast<uint64_t>(json_int(off.at(1), what, 0, INT64_MAX));
      if (b > en || en > data_size || en - b != t.nbytes)
        fail("{}: tensor '{}' data offsets [{}, {}] do not match its shape or the file size", path,
             t.name, b, en);
      t.data = file->data() + data_start + b;
      ranges.push_back({b, en});
    } catch (const json::exception& ex) {
      fail("{}: tensor '{}': malformed entry: {}", path, t.name, ex.what());
    }
    mf.tensors.push_back(std::move(t));
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second) fail("{}: tensors overlap", path);
  mf.storage.push_back(file);
  return mf;
}

void write_safetensors(const std::string& path, const std::vector<Tensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  json h = json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  uint64_t off = 0;
  for (const auto& t : tensors) {
    std::vector<int64_t> shape;
    for (int d = t.n_dims - 1; d >= 0; --d) shape.push_back(t.ne[d]);
    h[t.name] = {
        {"dtype", st_name(t.type)}, {"shape", shape}, {"data_offsets", {off, off + t.nbytes}}};
    off += t.nbytes;
  }
  std::string hs = h.dump();
  while ((hs.size() + 8) % 8) hs += ' ';
  std::ofstream f(path, std::ios::binary);
  if (!f) fail("{}: cannot create", path);
  const uint64_t n = hs.size();
  f.write(reinterpret_cast<const char*>(&n), 8);
  f.write(hs.data(), static_cast<std::streamsize>(hs.size()));
  for (const auto& t : tensors)
    f.write(static_cast<const char*>(t.data), static_cast<std::streamsize>(t.nbytes));
  if (!f) fail("{}: write failed", path);
}

namespace {

void add_config(ModelFile& mf, const json& c, const std::string& path, std::string& arch) {
  std::string mt = c.value("model_type", "");
  if (mt == "llama" || mt == "mistral")
    arch = "llama";
  else if (mt == "qwen2")
    arch = "qwen2";
  else if (mt == "qwen3")
    arch = "qwen3";
  else
    fail("{}: model_type '{}' is not supported (llama, mistral, qwen2, qwen3)", path, mt);
  auto& m = mf.meta;
  const std::string a = arch + ".";
  // GGUF stores these as uint32 (the spec's type; other readers check it).
  auto geti = [&](const char* k) -> int64_t {
    if (!c.contains(k) || !c[k].is_number_integer())
      fail("{}: '{}' is missing or not an integer", path, k);
    const int64_t v = c[k].get<int64_t>();
    if (v <= 0 || v > 0x7fffffff) fail("{}: '{}' = {} is out of range", path, k, v);
    return v;
  };
  auto u32 = [](int64_t v) { return Value::of_u32(static_cast<uint32_t>(v)); };
  m["general.architecture"] = Value::of_str(arch);
  m["general.name"] = Value::of_str(fs::path(mf.path).filename().string());
  m[a + "embedding_length"] = u32(geti("hidden_size"));
  m[a + "feed_forward_length"] = u32(geti("intermediate_size"));
  m[a + "block_count"] = u32(geti("num_hidden_layers"));
  const int64_t nh = geti("num_attention_heads");
  m[a + "attention.head_count"] = u32(nh);
  const int64_t nkv = c.contains("num_key_value_heads") && !c["num_key_value_heads"].is_null()
                          ? geti("num_key_value_heads")
                          : nh;
  m[a + "attention.head_count_kv"] = u32(nkv);
  if (c.contains("head_dim") && !c["head_dim"].is_null())
    m[a + "attention.key_length"] = u32(geti("head_dim"));
  if (c.contains("max_position_embeddings"))
    m[a + "context_length"] = u32(geti("max_position_embeddings"));
  if (c.contains("rms_norm_eps"))
    m[a + "attention.layer_norm_rms_epsilon"] =
        Value::of_f32(json_float(c["rms_norm_eps"], path + ": rms_norm_eps"));
  if (c.contains("rope_theta"))
    m[a + "rope.freq_base"] = Value::of_f32(json_float(c["rope_theta"], path + ": rope_theta"));
  if (c.contains("rope_scaling") && c["rope_scaling"].is_object()) {
    const json& rs = c["rope_scaling"];
    const std::string type = rs.value("rope_type", rs.value("type", ""));
    m[a + "rope.scaling.type"] = Value::of_str(type);
    if (rs.contains("factor"))
      m[a + "rope.scaling.factor"] =
          Value::of_f32(json_float(rs["factor"], path + ": rope_scaling.factor"));
    if (type == "llama3") {
      auto num = [&](const char* k, float dflt) {
        return rs.contains(k) ? json_float(rs[k], path + ": rope_scaling." + k) : dflt;
      };
      m[a + "rope.scaling.low_freq_factor"] = Value::of_f32(num("low_freq_factor", 1.0f));
      m[a + "rope.scaling.high_freq_factor"] = Value::of_f32(num("high_freq_factor", 4.0f));
      const char* k = "original_max_position_embeddings";
      m[a + "rope.scaling.original_context_length"] =
          u32(rs.contains(k) ? json_int(rs[k], path + ": rope_scaling." + k, 1, 0x7fffffff) : 8192);
    }
  }
}

// Llama 3.1's rope scaling becomes the rope_freqs tensor that llama.cpp's converter writes, so a
// GGUF quantized from this directory reads everywhere (see formats/rope_factors.h).
void store_llama3_rope(ModelFile& mf, const std::string& arch, int64_t rope_dim) {
  const std::string a = arch + ".rope.scaling.";
  Llama3Rope r;
  r.factor = mf.get_float(a + "factor").value_or(r.factor);
  r.low_freq_factor = mf.get_float(a + "low_freq_factor").value_or(r.low_freq_factor);
  r.high_freq_factor = mf.get_float(a + "high_freq_factor").value_or(r.high_freq_factor);
  r.original_context = static_cast<double>(
      mf.get_int(a + "original_context_length").value_or(static_cast<int64_t>(r.original_context)));
  if (!(r.factor >= 1 && r.high_freq_factor > r.low_freq_factor && r.low_freq_factor > 0 &&
        r.original_context > 0 && rope_dim > 0 && rope_dim % 2 == 0))
    fail("{}: config.json: invalid llama3 rope_scaling", mf.path);
  const double theta = mf.get_float(arch + ".rope.freq_base").value_or(10000.0);
  auto f = std::make_shared<std::vector<float>>(llama3_rope_factors(rope_dim, theta, r));
  Tensor t;
  t.name = "rope_freqs.weight";
  t.type = DType::F32;
  t.n_dims = 1;
  t.ne[0] = rope_dim / 2;
  t.data = f->data();
  t.nbytes = f->size() * sizeof(float);
  mf.tensors.push_back(std::move(t));
  mf.storage.push_back(f);
  for (const char* k :
       {"type", "factor", "low_freq_factor", "high_freq_factor", "original_context_length"})
    mf.meta.erase(a + k);
}

// GGUF name for a Hugging Face tensor name; "" for tensors brisk does not use.
// Hugging Face name of each per-layer tensor beside its GGUF name (after "model.layers.N." and
// "blk.N." respectively), and the global ones.
constexpr std::pair<const char*, const char*> kLayerNames[] = {
    {"input_layernorm.weight", "attn_norm.weight"},
    {"post_attention_layernorm.weight", "ffn_norm.weight"},
    {"self_attn.q_proj.weight", "attn_q.weight"},
    {"self_attn.k_proj.weight", "attn_k.weight"},
    {"self_attn.v_proj.weight", "attn_v.weight"},
    {"self_attn.o_proj.weight", "attn_output.weight"},
    {"self_attn.q_proj.bias", "attn_q.bias"},
    {"self_attn.k_proj.bias", "attn_k.bias"},
    {"self_attn.v_proj.bias", "attn_v.bias"},
    {"self_attn.q_norm.weight", "attn_q_norm.weight"},
    {"self_attn.k_norm.weight", "attn_k_norm.weight"},
    {"mlp.gate_proj.weight", "ffn_gate.weight"},
    {"mlp.up_proj.weight", "ffn_up.weight"},
    {"mlp.down_proj.weight", "ffn_down.weight"},
};
constexpr std::pair<const char*, const char*> kGlobalNames[] = {
    {"model.embed_tokens.weight", "token_embd.weight"},
    {"model.norm.weight", "output_norm.weight"},
    {"lm_head.weight", "output.weight"},
};

// Maps "<from_prefix>N.<rest>" to "<to_prefix>N.<rest'>" through one column pair of the table.
std::string rename(const std::string& n, bool to_gguf) {
  for (const auto& [hf, gg] : kGlobalNames)
    if (n == (to_gguf ? hf : gg)) return to_gguf ? gg : hf;
  const std::string from = to_gguf ? "model.layers." : "blk.",
                    to = to_gguf ? "blk." : "model.layers.";
  if (n.rfind(from, 0) != 0) return "";
  const size_t dot = n.find('.', from.size());
  if (dot == std::string::npos) return "";
  const std::string idx = n.substr(from.size(), dot - from.size()), rest = n.substr(dot + 1);
  if (idx.empty() || idx.size() > 4 || !std::all_of(idx.begin(), idx.end(), ::isdigit)) return "";
  for (const auto& [hf, gg] : kLayerNames)
    if (rest == (to_gguf ? hf : gg)) return to + idx + "." + (to_gguf ? gg : hf);
  return "";
}

std::string gguf_name(const std::string& n) {
  return rename(n, true);
}

}  // namespace

std::string hf_tensor_name(const std::string& gguf) {
  return rename(gguf, false);
}

namespace {}  // namespace

ModelFile load_hf_directory(const std::string& dir) {
  ModelFile mf;
  mf.path = dir;
  mf.format = "safetensors";
  const fs::path cfg = fs::path(dir) / "config.json";
  if (!fs::exists(cfg))
    fail("{}: config.json is missing (not a Hugging Face model directory)", dir);
  const json c = read_json_file(cfg.string());
  std::string arch;
  try {
    add_config(mf, c, cfg.string(), arch);
  } catch (const json::exception& e) {
    fail("{}: malformed config: {}", cfg.string(), e.what());
  }
  const bool tied = c.value("tie_word_embeddings", false);

  std::vector<std::string> files;
  const fs::path index = fs::path(dir) / "model.safetensors.index.json";
  if (fs::exists(index)) {
    const json ix = read_json_file(index.string());
    std::set<std::string> s;
    try {
      for (auto it = ix.at("weight_map").begin(); it != ix.at("weight_map").end(); ++it) {
        const std::string f = it.value().get<std::string>();
        if (f.find('/') != std::string::npos || f.find("..") != std::string::npos)
          fail("{}: shard name '{}' is not a plain file name", index.string(), f);
        s.insert(f);
      }
    } catch (const json::exception& e) {
      fail("{}: malformed index: {}", index.string(), e.what());
    }
    for (const auto& f : s) files.push_back((fs::path(dir) / f).string());
  } else if (fs::exists(fs::path(dir) / "model.safetensors")) {
    files.push_back((fs::path(dir) / "model.safetensors").string());
  } else {
    fail("{}: no model.safetensors or model.safetensors.index.json", dir);
  }

  const int64_t nh = mf.find(arch + ".attention.head_count")->as_int().value();
  const int64_t nkv = mf.find(arch + ".attention.head_count_kv")->as_int().value();
  const int64_t E = mf.find(arch + ".embedding_length")->as_int().value();
  int64_t hd = nh > 0 ? E / nh : 0;
  if (auto* kl = mf.find(arch + ".attention.key_length")) hd = kl->as_int().value_or(hd);
  std::set<std::string> names;
  for (const auto& f : files) {
    ModelFile sf = load_safetensors(f);
    mf.file_bytes += sf.file_bytes;
    mf.storage.insert(mf.storage.end(), sf.storage.begin(), sf.storage.end());
    for (auto& t : sf.tensors) {
      std::string g = gguf_name(t.name);
      if (g.empty() || (tied && g == "output.weight")) continue;
      if (!names.insert(g).second) fail("{}: tensor '{}' appears twice", f, t.name);
      const bool is_q = g.size() > 13 && g.compare(g.size() - 13, 13, "attn_q.weight") == 0;
      const bool is_k = g.size() > 13 && g.compare(g.size() - 13, 13, "attn_k.weight") == 0;
      t.name = g;
      if (arch == "llama" && (is_q || is_k)) {
        // Hugging Face stores Q/K rows for rotate-half rope; GGUF llama expects interleaved pairs.
        if (hd <= 0 || hd % 2 || t.n_dims != 2 || t.ne[1] != (is_q ? nh : nkv) * hd)
          fail("{}: tensor '{}' has shape {}, inconsistent with the head layout", f, g,
               t.shape_string());
        auto buf = std::make_shared<std::vector<uint8_t>>(t.nbytes);
        const uint64_t rb = t.row_bytes();
        for (int64_t r = 0; r < t.ne[1]; ++r)
          std::memcpy(buf->data() + r * rb, t.row(hf_row_for_gguf_row(r, hd)), rb);
        t.data = buf->data();
        mf.storage.push_back(buf);
      }
      mf.tensors.push_back(std::move(t));
    }
  }
  if (mf.get_str(arch + ".rope.scaling.type") == "llama3") store_llama3_rope(mf, arch, hd);
  const fs::path tj = fs::path(dir) / "tokenizer.json";
  if (!fs::exists(tj)) fail("{}: tokenizer.json is missing", dir);
  add_hf_tokenizer(mf, tj.string());
  return mf;
}

}  // namespace brisk
