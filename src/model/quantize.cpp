#include "model/quantize.h"

#include <cstring>

#include "core/error.h"
#include "core/progress.h"
#include "formats/gguf.h"
#include "quant/quant.h"

namespace brisk {
namespace {

struct TargetDef {
  const char* name;
  DType base;
  uint32_t file_type;
};

constexpr TargetDef kTargets[] = {
    {"f32", DType::F32, 0},
    {"f16", DType::F16, 1},
    {"bf16", DType::BF16, 32},
    {"q8_0", DType::Q8_0, 7},
    {"q4_0", DType::Q4_0, 2},
    {"q4_1", DType::Q4_1, 3},
    {"q5_0", DType::Q5_0, 8},
    {"q5_1", DType::Q5_1, 9},
    {"q2_k", DType::Q2_K, 10},
    {"q3_k_m", DType::Q3_K, 12},
    {"q4_k_m", DType::Q4_K, 15},
    {"q5_k_m", DType::Q5_K, 17},
    {"q6_k", DType::Q6_K, 18},
    {"iq4_nl", DType::IQ4_NL, 25},
    {"iq4_xs", DType::IQ4_XS, 30},
    // gpt-oss's release mix: the stacked experts in MXFP4, every other matrix in Q8_0.
    {"mxfp4_moe", DType::MXFP4, 38},
    // The i-quant mixes as llama-quantize names them: iq2_s is mostly IQ2_XS, iq2_m mostly IQ2_S,
    // iq3_m mostly IQ3_S with more bits in places.
    {"iq3_s", DType::IQ3_S, 26},
    {"iq3_m", DType::IQ3_S, 27},
    {"iq3_xxs", DType::IQ3_XXS, 23},
    {"iq2_m", DType::IQ2_S, 29},
    {"iq2_s", DType::IQ2_XS, 28},
    {"iq2_xs", DType::IQ2_XS, 20},
    {"iq2_xxs", DType::IQ2_XXS, 19},
    {"iq1_m", DType::IQ1_M, 31},
    {"iq1_s", DType::IQ1_S, 24},
    {"tq2_0", DType::TQ2_0, 37},
    {"tq1_0", DType::TQ1_0, 36},
};

bool is(const QuantTarget& t, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (t.name == n) return true;
  return false;
}

// The 1- and 2-bit mixes, which keep the tensors most sensitive to rounding in a few more bits.
bool lowest_bits(const QuantTarget& t) {
  return is(t, {"iq2_xxs", "iq2_xs", "iq2_s", "iq2_m", "iq1_s", "iq1_m"});
}

// The i-quant mixes' choices for a tensor of layer `layer` in role `role` (d if none applies).
DType iquant_mix(const QuantTarget& t, const MixContext& m, int64_t layer, const std::string& role,
                 DType d) {
  const bool wider = is(t, {"iq2_s", "iq2_m"});  // their second choice is IQ3_S, not Q2_K
  if (lowest_bits(t)) {
    if (role == "attn_v.weight")
      return m.n_gqa >= 4 || m.n_expert >= 4 ? DType::Q4_K : wider ? DType::IQ3_S : DType::Q2_K;
    if (role == "ffn_down.weight" && layer < m.n_layer / 8)
      return wider ? DType::IQ3_S : DType::Q2_K;
    if (role == "attn_output.weight")
      return is(t, {"iq1_s", "iq1_m"}) ? DType::IQ2_XXS : wider ? DType::IQ3_S : d;
  } else if (t.name == "iq3_xxs") {
    if (role == "attn_v.weight")
      return m.n_gqa >= 4 ? DType::Q4_K : m.imatrix ? DType::IQ3_XXS : DType::IQ3_S;
    if (role == "attn_k.weight" || role == "attn_q.weight") return DType::IQ2_S;
    if (role == "ffn_down.weight" && !m.imatrix)
      return layer < m.n_layer / 8 ? DType::Q4_K : DType::Q3_K;
    if (role == "attn_output.weight") return DType::IQ3_S;
  } else if (t.name == "iq3_s") {
    if (role == "attn_v.weight" && m.n_gqa >= 4) return DType::Q4_K;
  } else if (t.name == "iq3_m") {
    if (role == "attn_v.weight" || role == "attn_output.weight") return DType::Q4_K;
    if (role == "ffn_down.weight" && layer < m.n_layer / 8) return DType::Q4_K;
  }
  return d;
}

// The embedding table of the low-bit mixes (looked up, not multiplied: a few more bits cost
// little time).
DType embedding_type(const QuantTarget& t, DType d) {
  if (is(t, {"iq2_xxs", "iq2_xs", "iq1_s", "iq1_m"})) return DType::Q2_K;
  if (is(t, {"iq2_s", "iq2_m", "iq3_xxs"})) return DType::IQ3_S;
  if (is(t, {"tq1_0", "tq2_0"})) return DType::Q4_K;
  return d;
}

// Layers that get more bits in the _M mixes: the first and last eighth, and every third between.
bool more_bits(int64_t layer, int64_t n_layer) {
  return layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
}

// The nearest type whose blocks fit a row of `cols` values.
DType fallback(DType t, int64_t cols, std::string* note) {
  auto fits = [cols](DType d) { return cols % dtype_info(d).block_elems == 0; };
  if (fits(t)) return t;
  DType f = DType::F16;
  switch (t) {
    case DType::Q2_K:
    case DType::Q3_K:
      f = DType::Q4_0;
      break;
    case DType::Q4_K:
      f = DType::Q5_0;
      break;
    case DType::Q5_K:
      f = DType::Q5_1;
      break;
    case DType::Q6_K:
      f = DType::Q8_0;
      break;
    case DType::IQ4_XS:
    case DType::IQ3_S:
    case DType::IQ3_XXS:
    case DType::IQ2_S:
    case DType::IQ2_XS:
    case DType::IQ2_XXS:
    case DType::IQ1_M:
    case DType::IQ1_S:
      f = DType::IQ4_NL;
      break;
    case DType::TQ1_0:
    case DType::TQ2_0:
      f = DType::Q4_0;
      break;
    default:
      break;
  }
  if (!fits(f)) f = DType::F16;
  if (note)
    *note = fmt::format("rows of {} do not fill {}-value {} blocks: {}", cols,
                        dtype_info(t).block_elems, dtype_name(t), dtype_name(f));
  return f;
}

}  // namespace

QuantTarget parse_quant_target(const std::string& name) {
  std::string n;
  for (char c : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n == "q4_k") n = "q4_k_m";
  if (n == "q5_k") n = "q5_k_m";
  if (n == "q3_k") n = "q3_k_m";
  for (const auto& t : kTargets)
    if (n == t.name) return {t.name, t.base, t.file_type};
  fail("unknown quantization type '{}' (one of: {})", name, quant_target_names());
}

std::string quant_target_names() {
  std::string s;
  for (const auto& t : kTargets) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

DType choose_quant_type(const QuantTarget& t, const Tensor& tensor, const MixContext& m,
                        std::string* note) {
  const int64_t n_layer = m.n_layer;
  const std::string& name = tensor.name;
  // Norms and biases stay exact (experts' biases are 2-D: names say what is a weight matrix, as
  // llama-quantize reads them).
  if (tensor.n_dims < 2 || !name.ends_with("weight")) return DType::F32;
  DType d = t.base;
  const bool legacy_or_k = dtype_is_quantized(t.base);
  int64_t layer = -1;
  std::string role;
  if (name.rfind("blk.", 0) == 0) {  // blk.<layer>.<role>
    const size_t dot = name.find('.', 4);
    if (dot != std::string::npos && dot > 4 && dot - 4 <= 9 &&
        name.find_first_not_of("0123456789", 4) == dot) {
      layer = std::stoll(name.substr(4, dot - 4));
      role = name.substr(dot + 1);
    }
  }
  // The router stays exact, as llama-quantize keeps it: a rounded score can pick another expert.
  if (role == "ffn_gate_inp.weight") return DType::F32;
  // Stacked experts take the rules of the FFN matrix they are (ffn_down_exps as ffn_down).
  for (const char* f : {"ffn_gate", "ffn_up", "ffn_down"})
    if (role == std::string(f) + "_exps.weight") role = std::string(f) + ".weight";
  if (t.name == "mxfp4_moe") {
    d = tensor.n_dims == 3 && tensor.ne[2] > 1 ? DType::MXFP4 : DType::Q8_0;
  } else if (name == "output.weight" || (m.tied_embeddings && name == "token_embd.weight")) {
    // Rows that do not fill 256-value blocks keep the classifier in Q8_0, as llama-quantize does.
    if (legacy_or_k)
      d = t.base == DType::Q8_0 || tensor.ne[0] % 256 != 0 ? DType::Q8_0
          : lowest_bits(t) || t.name == "iq3_xxs"          ? DType::Q5_K
                                                           : DType::Q6_K;
  } else if (name == "token_embd.weight") {
    d = embedding_type(t, d);
  } else if (layer >= 0) {
    d = iquant_mix(t, m, layer, role, d);
    const bool more = more_bits(layer, n_layer);
    if (t.name == "q4_k_m" || t.name == "q5_k_m") {
      if ((role == "attn_v.weight" || role == "ffn_down.weight") && more) d = DType::Q6_K;
    } else if (t.name == "q3_k_m") {
      if (role == "attn_v.weight" || role == "attn_output.weight") d = DType::Q4_K;
      if (role == "ffn_down.weight") d = more ? DType::Q5_K : DType::Q4_K;
    } else if (t.name == "q2_k") {
      if (role == "attn_v.weight" || role == "ffn_down.weight") d = DType::Q3_K;
    }
    // A fused q/k/v matrix (Phi-3) one step up, as llama-quantize gives it.
    if (role == "attn_qkv.weight" && legacy_or_k) {
      if (t.name == "q3_k_m") d = DType::Q4_K;
      if (t.name == "q4_k_m") d = DType::Q5_K;
      if (t.name == "q5_k_m") d = DType::Q6_K;
    }
    // Eight experts (Mixtral): attention is a small share of the file, so llama-quantize gives
    // it more bits (k and v 8, or 4 in the lowest mixes; the output 5 in the 2-4-bit ones).
    if (m.n_expert == 8 && legacy_or_k) {
      if (role == "attn_v.weight" || role == "attn_k.weight")
        d = lowest_bits(t) ? DType::Q4_K : DType::Q8_0;
      if (role == "attn_output.weight" &&
          (lowest_bits(t) ||
           is(t, {"q2_k", "q3_k_m", "q4_k_m", "iq4_nl", "iq4_xs", "iq3_s", "iq3_m", "iq3_xxs"})))
        d = DType::Q5_K;
    }
  }
  return fallback(d, tensor.ne[0], note);
}

bool quant_target_needs_imatrix(const QuantTarget& t) {
  return is(t, {"iq2_xxs", "iq2_xs", "iq2_s", "iq1_s", "iq1_m"});
}

MixContext quant_mix_context(const QuantizeJob& job) {
  const ModelFile& mf = *job.in;
  MixContext m;
  int64_t heads = 0, kv_heads = 0;
  auto ends_with = [](const std::string& k, std::string_view tail) {
    return k.size() > tail.size() && k.compare(k.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const auto& [k, v] : mf.meta) {
    if (ends_with(k, ".block_count"))
      if (auto n = v.as_int()) m.n_layer = *n;
    if (ends_with(k, ".attention.head_count"))
      if (auto n = v.as_int()) heads = *n;
    if (ends_with(k, ".attention.head_count_kv"))
      if (auto n = v.as_int()) kv_heads = *n;
    if (ends_with(k, ".expert_count"))
      if (auto n = v.as_int()) m.n_expert = *n;
  }
  if (heads > 0 && kv_heads > 0) m.n_gqa = heads / kv_heads;
  m.tied_embeddings = mf.tensor("output.weight") == nullptr;
  m.imatrix = job.importance != nullptr;
  return m;
}

std::vector<TensorReport> quantize_model(const QuantizeJob& job, ThreadPool& pool) {
  const ModelFile& mf = *job.in;
  if (quant_target_needs_imatrix(job.target) && !job.importance)
    fail(
        "quantize: {} rounds to so few bits that it needs an importance matrix: pass --imatrix "
        "FILE "
        "(brisk imatrix -m MODEL -f TEXT -o FILE makes one)",
        job.target.name);
  const MixContext mix = quant_mix_context(job);

  std::map<std::string, Value> meta = mf.meta;
  meta["general.file_type"] = Value::of_u32(job.target.file_type);
  meta["general.quantization_version"] = Value::of_u32(2);
  for (const auto& [k, v] : job.extra_meta) meta[k] = v;

  std::vector<Tensor> out;
  std::vector<TensorReport> report;
  double total_elems = 0;
  for (const Tensor& t : mf.tensors) {
    TensorReport r;
    r.name = t.name;
    r.from = t.type;
    r.to = choose_quant_type(job.target, t, mix, &r.note);
    r.shape = t.shape_string();
    r.bytes_in = t.nbytes;
    Tensor o = t;
    o.type = r.to;
    o.nbytes = checked_mul(*dtype_row_bytes(r.to, static_cast<uint64_t>(t.ne[0])),
                           static_cast<uint64_t>(t.rows()), "tensor size");
    r.bytes_out = o.nbytes;
    out.push_back(o);
    report.push_back(r);
    total_elems += static_cast<double>(t.elements());
  }

  ProgressBar bar("quantizing", total_elems, job.progress);
  double done = 0;
  write_gguf_streaming(job.out_path, meta, out, [&](size_t i, uint8_t* dst) {
    const Tensor& src = mf.tensors[i];
    const Tensor& dstt = out[i];
    const float* over = nullptr;
    if (job.overrides) {
      auto it = job.overrides->find(src.name);
      if (it != job.overrides->end()) {
        if (static_cast<int64_t>(it->second.size()) != src.elements())
          fail("quantize: replacement for '{}' has {} values, the tensor {}", src.name,
               it->second.size(), src.elements());
        over = it->second.data();
      }
    }
    const float* imp = nullptr;
    if (job.importance) {
      auto it = job.importance->find(src.name);
      if (it != job.importance->end() && static_cast<int64_t>(it->second.size()) == src.ne[0])
        imp = it->second.data();
    }
    if (!over && src.type == dstt.type) {
      std::memcpy(dst, src.data, src.nbytes);
    } else {
      const int64_t cols = src.ne[0], rows = src.rows();
      const uint64_t out_rb = dstt.row_bytes();
      pool.parallel_chunks(rows, 16, [&](int64_t r0, int64_t r1) {
        std::vector<float> row(static_cast<size_t>(cols));
        for (int64_t r = r0; r < r1; ++r) {
          const float* x = over ? over + r * cols : row.data();
          if (!over) dequantize_row(src.type, src.row(r), row.data(), cols);
          quantize_row(dstt.type, x, dst + static_cast<uint64_t>(r) * out_rb, cols, imp);
        }
      });
    }
    done += static_cast<double>(src.elements());
    bar.update(done, src.name);
  });
  bar.finish();
  return report;
}

}  // namespace brisk
