// A loaded model: its file, hyper-parameters, bound weights and tokenizer. Immutable once loaded,
// so many sequences (and threads) can share it.
#pragma once

#include <memory>
#include <string>

#include "core/metadata.h"
#include "model/hparams.h"
#include "model/split.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"

namespace brisk {

struct Model {
  ModelFile file;
  HParams hp;
  Weights w;
  std::unique_ptr<Tokenizer> tokenizer;
  std::vector<float> rope_inv_freq;
  Split split;  // this rank's share of the model (the whole model in one process)

  // repack: Q4_0/Q8_0 matrices are regrouped for the int8 kernels where the CPU has them (see
  // ops/repack.h); tools that read the weights themselves (AWQ) keep the file's layout.
  // comm: the ranks to split the model over (null: one process holds it all).
  static std::unique_ptr<Model> load(const std::string& path,
                                     const std::string& tokenizer_path = "", bool repack = true,
                                     Communicator* comm = nullptr);
  static std::unique_ptr<Model> from_file(ModelFile mf, bool repack = true,
                                          Communicator* comm = nullptr);
  double repack_seconds = 0;  // time spent repacking at load
};

}  // namespace brisk
