#include "model/model.h"

#include "formats/loader.h"

namespace brisk {

std::unique_ptr<Model> Model::from_file(ModelFile mf) {
  auto m = std::make_unique<Model>();
  m->file = std::move(mf);
  m->hp = HParams::from_model(m->file);
  m->w = Weights::bind(m->file, m->hp);
  m->tokenizer = Tokenizer::create(m->file);
  m->rope_inv_freq =
      brisk::rope_inv_freq(m->hp.rope_dim, m->hp.rope_theta, m->hp.rope_scaling,
                           m->w.rope_freqs.empty() ? nullptr : m->w.rope_freqs.data());
  return m;
}

std::unique_ptr<Model> Model::load(const std::string& path, const std::string& tokenizer_path) {
  return from_file(load_model_file(path, tokenizer_path));
}

}  // namespace brisk
