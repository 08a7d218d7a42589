#include "model/model.h"

#include <algorithm>
#include <chrono>
#include <cstring>

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

// The matrices to regroup, decided on the whole matrices, so that a rank's share is read by the
// same kernels as in one process.
std::vector<Tensor*> matrices_to_repack(Weights& w) {
  std::vector<Tensor*> todo;
  auto add = [&](Tensor* t) {
    if (t->data && repackable(*t) && repack_pays_off(t->type)) todo.push_back(t);
  };
  for (auto& L : w.layers) {
    for (Tensor* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.ffn_gate, &L.ffn_up, &L.ffn_down}) add(t);
    add(&L.ffn_gate_inp);
    for (LayerWeights::Expert& e : L.experts)  // each expert's rows are regrouped on their own
      for (Tensor* t : {&e.gate, &e.up, &e.down}) add(t);
  }
  // A classifier tied to the embeddings stays as it is: the embedding lookup reads it too.
  if (w.output.data != w.token_embd.data && repackable(w.output) && repack_pays_off(w.output.type))
    todo.push_back(&w.output);
  return todo;
}

// Regroups the matrices into one copy (each on a cache-line boundary), or reads the copy an
// earlier run kept.
void repack_all(Model& m, const std::vector<Tensor*>& todo, const LoadOptions& opt,
                Communicator* comm) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<uint64_t> offsets;
  uint64_t total = 0;
  for (const Tensor* t : todo) offsets.push_back(total), total += (t->nbytes + 63) / 64 * 64;
  const RepackCache cache(m.file, m.split, todo, offsets, total, opt.repack_cache);
  m.repack_cache = cache.path();
  // A kept copy is read into memory advised for 2 MiB pages rather than used through a mapping of
  // the file: its 4 KiB pages held a mixture of experts' 32-stream decode 20% below (217-226
  // against 277 total tokens/s on qwen3-30b-a3b's shape, 8 layers, Q4_K), where many short row
  // streams each start on a page walk.
  auto buf = allocate_large(total, m.file.path + ": repacked weights");
  // The ranks on this machine share its cores.
  ThreadPool pool(std::max(1, ThreadPool::default_threads() / (comm ? comm->local_size() : 1)));
  const bool kept = cache.read(buf.get(), pool);
  for (size_t i = 0; i < todo.size(); ++i) {
    if (!kept) {
      repack(*todo[i], buf.get() + offsets[i], pool);
      continue;
    }
    todo[i]->data = buf.get() + offsets[i];
    todo[i]->interleaved = true;
  }
  m.file.storage.push_back(std::shared_ptr<const void>(buf, buf.get()));
  m.repack_mapped = kept;
  if (!kept)
    if (auto writer = cache.write_in_background(buf, opt.repack_cache.on_error))
      m.file.storage.push_back(std::move(writer));
  m.repack_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::unique_ptr<Model> Model::from_file(ModelFile mf, const LoadOptions& opt, Communicator* comm) {
  auto m = std::make_unique<Model>();
  m->file = std::move(mf);
  m->hp = HParams::from_model(m->file);
  m->w = Weights::bind(m->file, m->hp);
  std::vector<Tensor*> todo;
  if (opt.repack) todo = matrices_to_repack(m->w);
  m->split = comm ? Split::make(m->hp, *comm) : Split::whole(m->hp);
  m->w.take_share(m->split);
  // A rank may hold no rows of a narrow matrix (an expert 48 rows wide over 4 ranks).
  std::erase_if(todo, [](const Tensor* t) { return t->rows() == 0; });
  for (const Tensor* t : todo)  // shares are whole row groups (model/split.h)
    if (!repackable(*t))
      fail("{}: this rank's rows of {} cannot be interleaved", m->file.path, t->name);
  if (!todo.empty()) repack_all(*m, todo, opt, comm);
  m->tokenizer = Tokenizer::create(m->file);
  const int64_t context = opt.context > 0 ? opt.context : m->hp.n_ctx_train;
  const std::vector<float>& factors =
      !m->w.rope_freqs_long.empty() && context > m->hp.rope_scaling.original_context
          ? m->w.rope_freqs_long
          : m->w.rope_freqs;
  m->rope_inv_freq = brisk::rope_inv_freq(m->hp.rope_dim, m->hp.rope_theta, m->hp.rope_scaling,
                                          factors.empty() ? nullptr : factors.data());
  m->rope_magnitude = brisk::rope_magnitude(m->hp.rope_scaling);
  if (m->hp.rope_theta_windowed > 0)  // unscaled, as llama.cpp rotates Gemma 3's local layers
    m->rope_inv_freq_windowed =
        brisk::rope_inv_freq(m->hp.rope_dim, m->hp.rope_theta_windowed, RopeScaling{}, nullptr);
  return m;
}

std::unique_ptr<Model> Model::load(const std::string& path, const std::string& tokenizer_path,
                                   const LoadOptions& opt, Communicator* comm) {
  return from_file(load_model_file(path, tokenizer_path), opt, comm);
}

}  // namespace brisk
