// A loaded model: its file, hyper-parameters, bound weights and tokenizer. Immutable once loaded,
// so many sequences (and threads) can share it.
#pragma once

#include <memory>
#include <string>

#include "core/metadata.h"
#include "model/hparams.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"

namespace brisk {

struct Model {
  ModelFile file;
  HParams hp;
  Weights w;
  std::unique_ptr<Tokenizer> tokenizer;
  std::vector<float> rope_inv_freq;

  // repack: Q4_0/Q8_0 matrices are regrouped for the int8 kernels where the CPU has them (see
  // ops/repack.h); tools that read the weights themselves (AWQ) keep the file's layout.
  static std::unique_ptr<Model> load(const std::string& path,
                                     const std::string& tokenizer_path = "", bool repack = true);
  static std::unique_ptr<Model> from_file(ModelFile mf, bool repack = true);
  double repack_seconds = 0;  // time spent repacking at load
};

}  // namespace brisk
