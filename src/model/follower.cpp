#include "model/follower.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/hash.h"
#include "core/thread_pool.h"
#include "model/forward.h"
#include "model/model.h"

namespace brisk {
namespace {

enum Kind : uint32_t { kRun = 0x4e555250, kStop = 0x504f5453 };

// Fixed size, so a rank waiting for work receives it in one broadcast; the variable part follows.
struct PlanHeader {
  uint32_t kind = kStop;
  int32_t threads = 1, n_layers = -1, n_freed = 0;
  int64_t n_tokens = 0, layout_ints = 0;
  uint64_t cache = 0;
  KvCacheShape shape;
};

constexpr int64_t kMaxTokens = int64_t{1} << 24, kMaxLayoutInts = int64_t{1} << 28;

// Caches destroyed on rank 0 (any thread), sent with the next plan; the caches followers mirror.
std::mutex g_freed_mu;
std::vector<uint64_t> g_freed;
std::unordered_set<uint64_t> g_mirrored;
std::atomic<bool> g_plans_ended{false};

void on_cache_destroyed(uint64_t uid) {
  std::lock_guard lock(g_freed_mu);
  g_freed.push_back(uid);
}

template <class T>
void put(std::vector<uint8_t>& out, const T* p, size_t n) {
  if (n == 0) return;  // p may be null
  const auto* b = reinterpret_cast<const uint8_t*>(p);
  out.insert(out.end(), b, b + n * sizeof(T));
}

template <class T>
void take(const std::vector<uint8_t>& in, size_t& at, T* p, size_t n) {
  if (n == 0) return;  // p may be null
  std::memcpy(p, in.data() + at, n * sizeof(T));
  at += n * sizeof(T);
}

size_t payload_bytes(const PlanHeader& h) {
  return static_cast<size_t>(h.n_freed) * 8 + static_cast<size_t>(h.n_tokens) * (4 + 8 + 4 + 1) +
         static_cast<size_t>(h.layout_ints) * 4;
}

}  // namespace

void send_plan(Communicator& comm, const Batch& b, KvCache& cache, int n_layers, int threads) {
  static std::once_flag hooked;
  std::call_once(hooked, [] { KvCache::set_destroy_hook(on_cache_destroyed); });
  std::vector<uint64_t> freed;
  {
    std::lock_guard lock(g_freed_mu);
    for (uint64_t uid : g_freed)
      if (g_mirrored.erase(uid)) freed.push_back(uid);
    g_freed.clear();
  }
  g_mirrored.insert(cache.uid());
  std::vector<int32_t> seqs;
  for (int32_t s : b.seq)
    if (std::find(seqs.begin(), seqs.end(), s) == seqs.end()) seqs.push_back(s);
  std::vector<int32_t> layout;
  cache.export_layout(seqs, layout);

  PlanHeader h;
  h.kind = kRun;
  h.threads = threads;
  h.n_layers = n_layers;
  h.n_freed = static_cast<int32_t>(freed.size());
  h.n_tokens = b.size();
  h.layout_ints = static_cast<int64_t>(layout.size());
  h.cache = cache.uid();
  h.shape = cache.shape();
  std::vector<uint8_t> payload;
  payload.reserve(payload_bytes(h));
  const auto n = static_cast<size_t>(b.size());
  put(payload, freed.data(), freed.size());
  put(payload, b.token.data(), n);
  put(payload, b.pos.data(), n);
  put(payload, b.seq.data(), n);
  put(payload, b.logits.data(), n);
  put(payload, layout.data(), layout.size());
  comm.broadcast(&h, sizeof h);
  comm.broadcast(payload.data(), payload.size());
}

void follow_plans(const Model& m) {
  Communicator& comm = *m.split.comm;
  std::unordered_map<uint64_t, std::unique_ptr<KvCache>> caches;
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<Forward> fwd;
  Batch b;
  std::vector<uint8_t> payload;
  std::vector<int32_t> layout;
  std::vector<uint64_t> freed;
  for (;;) {
    PlanHeader h;
    comm.broadcast(&h, sizeof h, /*idle=*/true);
    if (h.kind == kStop) break;
    if (h.kind != kRun || h.n_tokens < 1 || h.n_tokens > kMaxTokens || h.layout_ints < 0 ||
        h.layout_ints > kMaxLayoutInts || h.n_freed < 0 || h.threads < 1 || h.threads > 4096)
      comm.abort("the plan from rank 0 is malformed (are all ranks the same brisk?)");
    payload.resize(payload_bytes(h));
    comm.broadcast(payload.data(), payload.size());
    const auto n = static_cast<size_t>(h.n_tokens);
    b.token.resize(n), b.pos.resize(n), b.seq.resize(n), b.logits.resize(n);
    freed.resize(static_cast<size_t>(h.n_freed));
    layout.resize(static_cast<size_t>(h.layout_ints));
    size_t at = 0;
    take(payload, at, freed.data(), freed.size());
    take(payload, at, b.token.data(), n);
    take(payload, at, b.pos.data(), n);
    take(payload, at, b.seq.data(), n);
    take(payload, at, b.logits.data(), n);
    take(payload, at, layout.data(), layout.size());
    for (uint64_t uid : freed) caches.erase(uid);
    if (!pool || pool->size() != h.threads) {
      fwd.reset();
      pool = std::make_unique<ThreadPool>(h.threads);
      fwd = std::make_unique<Forward>(m, *pool);
    }
    auto& cache = caches[h.cache];
    if (!cache) cache = make_kv_mirror(h.shape);
    cache->import_layout(layout);
    fwd->run(b, *cache, h.n_layers);
  }
  g_plans_ended = true;
}

void end_plans(Communicator& comm) {
  if (comm.size() == 1) return;
  PlanHeader h;
  if (comm.rank() == 0) {
    comm.broadcast(&h, sizeof h);
    return;
  }
  if (g_plans_ended) return;
  comm.broadcast(&h, sizeof h, /*idle=*/true);
  if (h.kind != kStop) comm.abort("rank 0 sent work this rank was not ready for");
  g_plans_ended = true;
}

void check_same_model(const Model& m) {
  const Split& s = m.split;
  if (!s.active()) return;
  Digest d;
  d.add(m.file.file_bytes);
  d.add(std::string_view(m.hp.arch));
  for (int64_t v : {m.hp.n_vocab, m.hp.n_embd, m.hp.n_layer, m.hp.n_ff}) d.add(v);
  for (int v : {m.hp.n_head, m.hp.n_head_kv, m.hp.head_dim}) d.add(v);
  for (const Tensor& t : m.file.tensors) {
    d.add(std::string_view(t.name));
    d.add(t.type);
    d.add(t.ne);
  }
  // Whether a matrix is repacked decides which kernel computes it (--no-repack on one rank only
  // would change the bits).
  for (const auto& L : m.w.layers)
    for (const Tensor* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.ffn_gate, &L.ffn_up, &L.ffn_down})
      d.add(t->interleaved);
  d.add(m.w.output.interleaved);
  uint64_t root = d.h;
  s.comm->broadcast(&root, sizeof root);
  if (root != d.h)
    s.comm->abort(
        fmt::format("{} is not the model rank 0 loaded (a different file, or different "
                    "--no-repack): every rank must load the same file",
                    m.file.path));
}

}  // namespace brisk
