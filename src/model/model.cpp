#include "model/model.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "core/mapped_file.h"
#include "core/thread_pool.h"
#include "formats/loader.h"
#include "ops/repack.h"

namespace brisk {

namespace {

// Regroups the rows of t into dst (row groups split across threads: this is most of the load time
// of a Q4_0 model, all of it memory traffic).
void repack(Tensor& t, uint8_t* dst, ThreadPool& pool) {
  const uint64_t rb = t.row_bytes();
  const auto* src = static_cast<const uint8_t*>(t.data);
  const DType type = t.type;
  const int64_t k = t.cols();
  pool.parallel_for(t.rows() / kInterleave, 4, [&](int64_t g0, int64_t g1) {
    for (int64_t g = g0; g < g1; ++g)
      repack_group(type, src + g * kInterleave * rb, rb, dst + g * kInterleave * rb, k);
  });
  release_file_pages(src, t.nbytes);  // the kernels read the copy: hold the weights once
  t.data = dst;
  t.interleaved = true;
}

}  // namespace

std::unique_ptr<Model> Model::from_file(ModelFile mf, bool repack_weights, Communicator* comm) {
  auto m = std::make_unique<Model>();
  m->file = std::move(mf);
  m->hp = HParams::from_model(m->file);
  m->w = Weights::bind(m->file, m->hp);
  // Which matrices to repack is decided on the whole matrices, so a rank's share is read by the
  // same kernels as in one process.
  std::vector<Tensor*> todo;
  if (repack_weights) {
    for (auto& L : m->w.layers)
      for (Tensor* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.ffn_gate, &L.ffn_up, &L.ffn_down})
        if (repackable(*t) && repack_pays_off(t->type)) todo.push_back(t);
    // A classifier tied to the embeddings stays as it is: the embedding lookup reads it too.
    if (m->w.output.data != m->w.token_embd.data && repackable(m->w.output) &&
        repack_pays_off(m->w.output.type))
      todo.push_back(&m->w.output);
  }
  m->split = comm ? Split::make(m->hp, *comm) : Split::whole(m->hp);
  m->w.take_share(m->split);
  for (const Tensor* t : todo)  // shares are whole row groups (model/split.h)
    if (!repackable(*t))
      fail("{}: this rank's rows of {} cannot be interleaved", m->file.path, t->name);
  {
    const auto t0 = std::chrono::steady_clock::now();
    // One buffer for all, each matrix on a cache-line boundary.
    uint64_t total = 0;
    for (const Tensor* t : todo) total += (t->nbytes + 63) / 64 * 64;
    if (!todo.empty()) {
      auto buf = allocate_large(total, m->file.path + ": repacked weights");
      // The ranks on this machine share its cores.
      ThreadPool pool(std::max(1, ThreadPool::default_threads() / (comm ? comm->local_size() : 1)));
      uint64_t off = 0;
      for (Tensor* t : todo) {
        const uint64_t n = t->nbytes;
        repack(*t, buf.get() + off, pool);
        off += (n + 63) / 64 * 64;
      }
      m->file.storage.push_back(std::shared_ptr<const void>(buf, buf.get()));
    }
    if (!todo.empty())
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
                                   bool repack_weights, Communicator* comm) {
  return from_file(load_model_file(path, tokenizer_path), repack_weights, comm);
}

}  // namespace brisk
