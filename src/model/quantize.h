// Writes a model's tensors in a quantized type mix as a standard GGUF (llama.cpp's names and
// layouts, so other GGUF readers load it). The mixes follow llama.cpp's presets: e.g. q4_k_m keeps
// the classifier and, in some layers, attn_v and ffn_down in Q6_K.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/metadata.h"
#include "core/thread_pool.h"

namespace brisk {

struct QuantTarget {
  std::string name;  // as given: q4_k_m, q8_0, f16, ...
  DType base;
  uint32_t file_type;  // GGUF general.file_type (llama.cpp's numbering)
};

// Throws an Error listing the valid names.
QuantTarget parse_quant_target(const std::string& name);
std::string quant_target_names();

struct TensorReport {
  std::string name;
  DType from, to;
  std::string shape;
  uint64_t bytes_in = 0, bytes_out = 0;
  std::string note;  // why the type differs from the mix's choice (a fallback)
};

struct QuantizeJob {
  const ModelFile* in = nullptr;
  std::string out_path;
  QuantTarget target;
  // Replacement f32 values for some tensors (AWQ's rescaled weights and norms), by name.
  const std::map<std::string, std::vector<float>>* overrides = nullptr;
  // Per-column importance of some matrices' rounding errors (one value per input channel).
  const std::map<std::string, std::vector<float>>* importance = nullptr;
  // Extra metadata to record (for example how the file was made).
  std::map<std::string, Value> extra_meta;
  bool progress = true;
};

// What the mixes look at besides a tensor's name.
struct MixContext {
  int64_t n_layer = 0;
  int64_t n_gqa = 1;             // query heads per KV head
  bool tied_embeddings = false;  // no output.weight: token_embd is also the classifier
  bool imatrix = false;          // an importance matrix is given
  int64_t n_expert = 0;          // a mixture of experts' count (0: none)
};

// The type a tensor gets under the target (after fallbacks for row lengths the type cannot hold;
// `note` says why).
DType choose_quant_type(const QuantTarget& t, const Tensor& tensor, const MixContext& m,
                        std::string* note);

struct QuantizeJob;
// The context of a job's model (from its metadata and tensors).
MixContext quant_mix_context(const QuantizeJob& job);

// Mixes that round to 1 or 2 bits, which llama-quantize (and so brisk) makes only with an
// importance matrix.
bool quant_target_needs_imatrix(const QuantTarget& t);

std::vector<TensorReport> quantize_model(const QuantizeJob& job, ThreadPool& pool);

}  // namespace brisk
