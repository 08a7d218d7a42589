// A loaded model: its file, hyper-parameters, bound weights and tokenizer. Immutable once loaded,
// so many sequences (and threads) can share it.
#pragma once

#include <memory>
#include <string>

#include "core/metadata.h"
#include "model/hparams.h"
#include "model/repack_cache.h"
#include "model/split.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"

namespace brisk {

struct LoadOptions {
  // Q4_0/Q8_0/k-quant/IQ4/BF16/F16 matrices are regrouped for the SIMD kernels where the CPU has
  // them (see ops/repack.h); tools that read the weights themselves (AWQ) keep the file's layout.
  bool repack = true;
  RepackCacheOptions repack_cache;  // where the regrouped copy is kept between runs (none: dir "")
  // The context the model will run with (0: the one it was trained for). LongRoPE models pick
  // their frequency factors by it, as llama.cpp does by its context size.
  int64_t context = 0;

  static LoadOptions as_stored() {  // the weights in the file's layout
    LoadOptions o;
    o.repack = false;
    return o;
  }
};

struct Model {
  ModelFile file;
  HParams hp;
  Weights w;
  std::unique_ptr<Tokenizer> tokenizer;
  std::vector<float> rope_inv_freq;
  std::vector<float> rope_inv_freq_windowed;  // hp.rope_theta_windowed's (empty: none)
  float rope_magnitude = 1.0f;                // YaRN's scale of rotated q and k (ops/rope.h)
  Split split;  // this rank's share of the model (the whole model in one process)

  // comm: the ranks to split the model over (null: one process holds it all).
  static std::unique_ptr<Model> load(const std::string& path,
                                     const std::string& tokenizer_path = "",
                                     const LoadOptions& opt = {}, Communicator* comm = nullptr);
  static std::unique_ptr<Model> from_file(ModelFile mf, const LoadOptions& opt = {},
                                          Communicator* comm = nullptr);
  // The rotary frequencies layer l rotates q and k by.
  const float* rope_table(int layer) const {
    return !rope_inv_freq_windowed.empty() && hp.is_windowed(layer) ? rope_inv_freq_windowed.data()
                                                                    : rope_inv_freq.data();
  }
  double repack_seconds = 0;   // time spent repacking (or reading the kept copy) at load
  std::string repack_cache;    // the file the regrouped matrices were mapped from, or written to
  bool repack_mapped = false;  // read from it (true), or repacked now
};

}  // namespace brisk
