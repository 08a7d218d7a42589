// brisk-genmodel: writes a GGUF with random weights in the shape of a real model, for benchmarks.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "core/error.h"
#include "model_gen.h"

int main(int argc, char** argv) {
  CLI::App app{"Write a GGUF model with random weights in the shape of a real model"};
  std::string preset = "tinyllama-1.1b", out, type = "f16", expert_type;
  uint64_t seed = 1;
  int64_t layers = 0, vocab = 0;
  int experts = 0;
  std::string presets;
  for (const auto& p : brisk::tools::preset_names()) presets += (presets.empty() ? "" : ", ") + p;
  app.add_option("--preset", preset, "Model shape: " + presets);
  app.add_option("-o,--output", out, "Output GGUF path")->required();
  app.add_option("--type", type,
                 "Weight type of the matrices and embeddings: f32, f16, bf16, q4_0, q4_1, q5_0, "
                 "q5_1, q8_0, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl, iq4_xs, iq3_s, iq3_xxs, "
                 "iq2_s, iq2_xs, iq2_xxs, iq1_m, iq1_s, tq2_0, tq1_0, mxfp4");
  app.add_option("--expert-type", expert_type,
                 "Weight type of a mixture of experts' expert matrices (default: --type), e.g. "
                 "mxfp4 beside q8_0 for gpt-oss's release mix");
  app.add_option("--seed", seed, "Random seed");
  app.add_option("--layers", layers, "Override the number of layers (smaller test files)");
  app.add_option("--vocab", vocab,
                 "Override the vocabulary size (at least 300; smaller test files)");
  app.add_option("--experts", experts,
                 "Override a mixture of experts' expert count (at least the experts used per "
                 "token; smaller test files)");
  CLI11_PARSE(app, argc, argv);
  try {
    auto c = brisk::tools::preset(preset);
    auto t = brisk::dtype_from_name(type);
    if (!t) brisk::fail("unknown type '{}'", type);
    c.type = *t;
    c.embd_type = *t;
    c.seed = seed;
    if (!expert_type.empty()) {
      auto et = brisk::dtype_from_name(expert_type);
      if (!et) brisk::fail("unknown type '{}'", expert_type);
      c.expert_type = *et;
    }
    if (layers > 0) c.n_layer = layers;
    if (experts > 0) {
      if (c.n_expert == 0) brisk::fail("--experts: preset '{}' has no experts", preset);
      if (experts < c.n_expert_used)
        brisk::fail("--experts {}: the preset uses {} per token", experts, c.n_expert_used);
      c.n_expert = experts;
    }
    if (vocab > 0) {
      if (vocab < 300)
        brisk::fail("--vocab {}: the synthetic vocabulary needs at least 300", vocab);
      c.n_vocab = vocab;
    }
    brisk::tools::write_random_model(c, out);
    std::fprintf(stderr, "wrote %s (%s, %s)\n", out.c_str(), preset.c_str(),
                 brisk::dtype_name(c.type));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
