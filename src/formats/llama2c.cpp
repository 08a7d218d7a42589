#include "formats/llama2c.h"

#include <cstdint>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/mapped_file.h"

namespace brisk {
namespace {

constexpr uint32_t kMagicV1 = 0x616b3432;  // "ak42"

struct Config {
  int32_t dim, hidden, layers, heads, kv_heads, vocab, seq_len;
};

void validate(const std::string& path, Config& c) {
  auto bad = [&](const char* what, int64_t v) {
    fail("{}: llama2.c header has an invalid {} ({})", path, what, v);
  };
  if (c.dim <= 0 || c.dim > (1 << 16)) bad("dim", c.dim);
  if (c.hidden <= 0 || c.hidden > (1 << 18)) bad("hidden_dim", c.hidden);
  if (c.layers <= 0 || c.layers > 1024) bad("n_layers", c.layers);
  if (c.heads <= 0 || c.heads > c.dim || c.dim % c.heads != 0) bad("n_heads", c.heads);
  if (c.kv_heads <= 0 || c.kv_heads > c.heads || c.heads % c.kv_heads != 0)
    bad("n_kv_heads", c.kv_heads);
  if (c.vocab <= 0 || c.vocab > (1 << 22)) bad("vocab_size", c.vocab);
  if (c.seq_len <= 0 || c.seq_len > (1 << 24)) bad("seq_len", c.seq_len);
}

// The legacy header stores a negative vocabulary size when the classifier is not shared with the
// embedding. INT32_MIN has no positive counterpart: it stays negative and fails validation.
int32_t legacy_vocab(int32_t v) {
  return v < 0 && v != INT32_MIN ? -v : v;
}

Tensor make(const std::string& name, std::initializer_list<int64_t> ne, const float* data) {
  Tensor t;
  t.name = name;
  t.type = DType::F32;
  t.n_dims = static_cast<int>(ne.size());
  int d = 0;
  for (int64_t n : ne) t.ne[d++] = n;
  t.data = data;
  t.nbytes = static_cast<uint64_t>(t.elements()) * 4;
  return t;
}

void set_hparams(ModelFile& mf, const Config& c) {
  auto& m = mf.meta;
  m["general.architecture"] = Value::of_str("llama");
  m["general.name"] = Value::of_str(std::filesystem::path(mf.path).stem().string());
  m["llama.context_length"] = Value::of_u32(static_cast<uint32_t>(c.seq_len));
  m["llama.embedding_length"] = Value::of_u32(static_cast<uint32_t>(c.dim));
  m["llama.block_count"] = Value::of_u32(static_cast<uint32_t>(c.layers));
  m["llama.feed_forward_length"] = Value::of_u32(static_cast<uint32_t>(c.hidden));
  m["llama.attention.head_count"] = Value::of_u32(static_cast<uint32_t>(c.heads));
  m["llama.attention.head_count_kv"] = Value::of_u32(static_cast<uint32_t>(c.kv_heads));
  m["llama.rope.dimension_count"] = Value::of_u32(static_cast<uint32_t>(c.dim / c.heads));
  m["llama.rope.freq_base"] = Value::of_f32(10000.0f);
  m["llama.attention.layer_norm_rms_epsilon"] = Value::of_f32(1e-5f);
}

}  // namespace

bool is_llama2c_checkpoint(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  int32_t h[7] = {};
  const size_t n = std::fread(h, 4, 7, f);
  std::fclose(f);
  if (n != 7) return false;
  if (static_cast<uint32_t>(h[0]) == kMagicV1) return true;
  Config c{h[0], h[1], h[2], h[3], h[4], legacy_vocab(h[5]), h[6]};
  return c.dim > 0 && c.dim <= (1 << 16) && c.hidden > 0 && c.layers > 0 && c.layers <= 1024 &&
         c.heads > 0 && c.kv_heads > 0 && c.vocab > 0 && c.seq_len > 0 && c.dim % c.heads == 0;
}

ModelFile load_llama2c(const std::string& path, const std::string& tokenizer_path) {
  auto file = MappedFile::open(path);
  const uint8_t* p = file->data();
  const uint64_t size = file->size();
  if (size < 28) fail("{}: too small for a llama2.c checkpoint", path);
  ModelFile mf;
  mf.path = path;
  mf.file_bytes = size;
  Config c;
  bool shared;
  uint64_t off;
  bool v1 = false;
  uint32_t magic;
  std::memcpy(&magic, p, 4);
  if (magic == kMagicV1) {
    if (size < 256) fail("{}: truncated llama2.c header", path);
    int32_t version;
    std::memcpy(&version, p + 4, 4);
    if (version != 1)
      fail(
          "{}: llama2.c export version {} is not supported (only the fp32 version 1 and the legacy "
          "format)",
          path, version);
    std::memcpy(&c, p + 8, sizeof c);
    shared = p[8 + sizeof c] != 0;
    off = 256;
    v1 = true;
    mf.format = "llama2.c v1";
  } else {
    std::memcpy(&c, p, sizeof c);
    shared = c.vocab > 0;
    c.vocab = legacy_vocab(c.vocab);
    off = 28;
    mf.format = "llama2.c legacy";
  }
  validate(path, c);
  const int64_t dim = c.dim, hid = c.hidden, L = c.layers, V = c.vocab;
  const int64_t hs = dim / c.heads, kv = hs * c.kv_heads;

  // Element counts of every section, checked against the file size before any pointer is formed.
  uint64_t need = 0;
  const std::string what = path + ": weights size";
  auto add = [&](uint64_t n) { need = checked_add(need, checked_mul(n, 4, what), what); };
  add(V * dim);
  add(L * dim * 2 + dim);
  add(L * (dim * dim * 2 + dim * kv * 2));
  add(L * dim * hid * 3);
  if (!v1) add(static_cast<uint64_t>(c.seq_len) * hs);  // freq_cis real + imag, unused
  if (!shared) add(V * dim);
  if (checked_add(off, need, what) > size)
    fail("{}: truncated llama2.c checkpoint ({} bytes, {} needed for its header's shapes)", path,
         size, off + need);
  if (off % 4 != 0) fail("{}: misaligned weights", path);

  const float* w = reinterpret_cast<const float*>(p + off);
  auto take = [&](int64_t n) {
    const float* r = w;
    w += n;
    return r;
  };
  auto& T = mf.tensors;
  auto blk = [](int64_t l, const char* n) { return fmt::format("blk.{}.{}.weight", l, n); };
  if (v1) {
    for (int64_t l = 0; l < L; ++l) T.push_back(make(blk(l, "attn_norm"), {dim}, take(dim)));
    for (int64_t l = 0; l < L; ++l) T.push_back(make(blk(l, "ffn_norm"), {dim}, take(dim)));
    T.push_back(make("output_norm.weight", {dim}, take(dim)));
    T.push_back(make("token_embd.weight", {dim, V}, take(V * dim)));
    for (int64_t l = 0; l < L; ++l)
      T.push_back(make(blk(l, "attn_q"), {dim, dim}, take(dim * dim)));
    for (int64_t l = 0; l < L; ++l) T.push_back(make(blk(l, "attn_k"), {dim, kv}, take(dim * kv)));
    for (int64_t l = 0; l < L; ++l) T.push_back(make(blk(l, "attn_v"), {dim, kv}, take(dim * kv)));
    for (int64_t l = 0; l < L; ++l)
      T.push_back(make(blk(l, "attn_output"), {dim, dim}, take(dim * dim)));
    for (int64_t l = 0; l < L; ++l)
      T.push_back(make(blk(l, "ffn_gate"), {dim, hid}, take(dim * hid)));
    for (int64_t l = 0; l < L; ++l)
      T.push_back(make(blk(l, "ffn_down"), {hid, dim}, take(dim * hid)));
    for (int64_t l = 0; l < L; ++l)
      T.push_back(make(blk(l, "ffn_up"), {dim, hid}, take(dim * hid)));
  } else {
    T.push_back(make("token_embd.weight", {dim, V}, take(V * dim)));
    for (int64_t l = 0; l < L; ++l) T.push_back(make(blk(l, "attn_norm"), {dim}, take(dim)));
    for (int64_t l = 0; l < L; ++l)
      T.push_back(make(blk(l, "attn_q"), {dim, dim}, take(dim * dim)));
    for (int64_t l = 0; l < L; ++l) T.push_back(make(blk(l, "attn_k"), {dim, kv}, take(dim * kv)));
    for (int64_t l = 0; l < L; ++l) T.push_back(make(blk(l, "attn_v"), {dim, kv}, take(dim * kv)));
    for (int64_t l = 0; l < L; ++l)
      T.push_back(make(blk(l, "attn_output"), {dim, dim}, take(dim * dim)));
    for (int64_t l = 0; l < L; ++l) T.push_back(make(blk(l, "ffn_norm"), {dim}, take(dim)));
    for (int64_t l = 0; l < L; ++l)
      T.push_back(make(blk(l, "ffn_gate"), {dim, hid}, take(dim * hid)));
    for (int64_t l = 0; l < L; ++l)
      T.push_back(make(blk(l, "ffn_down"), {hid, dim}, take(dim * hid)));
    for (int64_t l = 0; l < L; ++l)
      T.push_back(make(blk(l, "ffn_up"), {dim, hid}, take(dim * hid)));
    T.push_back(make("output_norm.weight", {dim}, take(dim)));
    take(static_cast<int64_t>(c.seq_len) * hs);
  }
  if (!shared) T.push_back(make("output.weight", {dim, V}, take(V * dim)));
  mf.storage.push_back(file);
  set_hparams(mf, c);

  std::string tok = tokenizer_path;
  if (tok.empty()) {
    const auto dir = std::filesystem::path(path).parent_path();
    for (const auto& cand : {dir / fmt::format("tok{}.bin", V), dir / "tokenizer.bin"})
      if (std::filesystem::exists(cand)) {
        tok = cand.string();
        break;
      }
    if (tok.empty())
      fail(
          "{}: llama2.c checkpoints need a tokenizer file: pass -z/--tokenizer (no tokenizer.bin "
          "or tok{}.bin beside "
          "the model)",
          path, V);
  }
  add_llama2c_vocab(mf, tok, V);
  return mf;
}

void add_llama2c_vocab(ModelFile& mf, const std::string& tokenizer_path, int64_t vocab_size) {
  auto file = MappedFile::open(tokenizer_path);
  const uint8_t* p = file->data();
  const uint64_t size = file->size();
  uint64_t pos = 0;
  auto rd = [&](void* dst, uint64_t n, const char* what) {
    if (size - pos < n)
      fail("{}: truncated llama2.c tokenizer file while reading {}", tokenizer_path, what);
    std::memcpy(dst, p + pos, n);
    pos += n;
  };
  int32_t max_len;
  rd(&max_len, 4, "max_token_length");
  if (max_len <= 0 || max_len > 4096)
    fail("{}: invalid max_token_length {}", tokenizer_path, max_len);
  std::vector<Value> tokens, scores, types;
  tokens.reserve(vocab_size);
  for (int64_t i = 0; i < vocab_size; ++i) {
    float score;
    int32_t len;
    rd(&score, 4, "token score");
    rd(&len, 4, "token length");
    if (len < 0 || len > max_len)
      fail("{}: token {} has length {} (max_token_length is {})", tokenizer_path, i, len, max_len);
    std::string piece(static_cast<size_t>(len), '\0');
    rd(piece.data(), static_cast<uint64_t>(len), "token text");
    // llama2.c stores SentencePiece's U+2581 word marker as a plain space; restore it.
    std::string sp;
    for (char ch : piece) sp += ch == ' ' ? std::string("\xe2\x96\x81") : std::string(1, ch);
    int32_t type = 1;  // normal
    if (i == 0)
      type = 2;  // unknown
    else if (i == 1 || i == 2)
      type = 3;  // control: <s>, </s>
    else if (sp.size() == 6 && sp.rfind("<0x", 0) == 0 && sp[5] == '>')
      type = 6;  // byte
    tokens.push_back(Value::of_str(std::move(sp)));
    scores.push_back(Value::of_f32(score));
    types.push_back(Value::of_i32(type));
  }
  auto& m = mf.meta;
  m["tokenizer.ggml.model"] = Value::of_str("llama");
  m["tokenizer.ggml.tokens"] = Value::of_array(GgufType::STRING, std::move(tokens));
  m["tokenizer.ggml.scores"] = Value::of_array(GgufType::F32, std::move(scores));
  m["tokenizer.ggml.token_type"] = Value::of_array(GgufType::I32, std::move(types));
  m["tokenizer.ggml.unknown_token_id"] = Value::of_u32(0);
  m["tokenizer.ggml.bos_token_id"] = Value::of_u32(1);
  m["tokenizer.ggml.eos_token_id"] = Value::of_u32(2);
  m["tokenizer.ggml.add_bos_token"] = Value::of_bool(true);
  m["tokenizer.ggml.add_eos_token"] = Value::of_bool(false);
}

}  // namespace brisk
