// A loaded model: its file, hyper-parameters, bound weights and tokenizer. Immutable once loaded,
// so many sequences (and threads) can share it.
#pragma once

#include <memory>
#include <string>

#include "formats/metadata.h"
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

  static std::unique_ptr<Model> load(const std::string& path,
                                     const std::string& tokenizer_path = "");
  static std::unique_ptr<Model> from_file(ModelFile mf);
};

}  // namespace brisk
