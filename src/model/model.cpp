#include "model/model.h"

#include <chrono>

#include "core/thread_pool.h"
#include "formats/loader.h"
#include "ops/repack.h"

namespace brisk {

namespace {

// Regroups the rows of t into an owned buffer (rows split across threads: this is most of the
// load time of a Q4_0 model, all of it memory traffic).
void repack(Tensor& t, ModelFile& file, ThreadPool& pool) {
  const uint64_t rb = t.row_bytes();
  auto buf = std::shared_ptr<uint8_t[]>(new uint8_t[t.nbytes]);
  const auto* src = static_cast<const uint8_t*>(t.data);
  uint8_t* dst = buf.get();
  const DType type = t.type;
  const int64_t k = t.cols();
  pool.parallel_for(t.rows(), 64, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) repack_row(type, src + r * rb, dst + r * rb, k);
  });
  t.data = buf.get();
  t.pairs = true;
  file.storage.push_back(std::shared_ptr<const void>(buf, buf.get()));
}

}  // namespace

std::unique_ptr<Model> Model::from_file(ModelFile mf, bool repack_weights) {
  auto m = std::make_unique<Model>();
  m->file = std::move(mf);
  m->hp = HParams::from_model(m->file);
  m->w = Weights::bind(m->file, m->hp);
  if (repack_weights && repack_pays_off()) {
    const auto t0 = std::chrono::steady_clock::now();
    ThreadPool pool(ThreadPool::default_threads());
    for (auto& L : m->w.layers)
      for (Tensor* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.ffn_gate, &L.ffn_up, &L.ffn_down})
        if (repackable(*t)) repack(*t, m->file, pool);
    // A classifier tied to the embeddings stays as it is: the embedding lookup reads it too.
    if (m->w.output.data != m->w.token_embd.data && repackable(m->w.output))
      repack(m->w.output, m->file, pool);
    m->repack_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  m->tokenizer = Tokenizer::create(m->file);
  m->rope_inv_freq =
      brisk::rope_inv_freq(m->hp.rope_dim, m->hp.rope_theta, m->hp.rope_scaling,
                           m->w.rope_freqs.empty() ? nullptr : m->w.rope_freqs.data());
  return m;
}

std::unique_ptr<Model> Model::load(const std::string& path, const std::string& tokenizer_path,
                                   bool repack_weights) {
  return from_file(load_model_file(path, tokenizer_path), repack_weights);
}

}  // namespace brisk
