#include "kv/kv_cache.h"

#include <atomic>

#include "core/error.h"

namespace brisk {
namespace {

std::atomic<uint64_t> g_next_uid{1};
std::atomic<void (*)(uint64_t)> g_destroy_hook{nullptr};

}  // namespace

KvCache::KvCache() : uid_(g_next_uid++) {}

KvCache::~KvCache() {
  if (auto hook = g_destroy_hook.load()) hook(uid_);
}

void KvCache::set_destroy_hook(void (*hook)(uint64_t)) {
  g_destroy_hook = hook;
}

KvCacheShape ContiguousKvCache::shape() const {
  KvCacheShape s;
  s.n_layer = n_layer_;
  s.n_head_kv = n_head_kv_;
  s.head_dim = head_dim_;
  s.type = static_cast<int32_t>(type_);
  s.n_seq = n_seq_;
  s.n_ctx = n_ctx_;
  return s;
}

ContiguousKvCache::ContiguousKvCache(int n_layer, int n_head_kv, int head_dim, int64_t n_ctx,
                                     int n_seq, KvType type)
    : n_layer_(n_layer),
      n_seq_(n_seq),
      n_head_kv_(n_head_kv),
      head_dim_(head_dim),
      kv_dim_(static_cast<int64_t>(n_head_kv) * head_dim),
      n_ctx_(n_ctx),
      type_(type),
      row_bytes_(static_cast<size_t>(kv_dim_) * kv_elem_bytes(type)) {
  const uint64_t rows = checked_mul(checked_mul(n_layer, n_seq, "KV cache"), n_ctx, "KV cache");
  const uint64_t n = checked_mul(rows, row_bytes_, "KV cache");
  if (n * 2 > (uint64_t{64} << 30))
    fail("KV cache of {} positions would need {} GiB", n_ctx, n * 2 >> 30);
  k_.assign(n, 0);
  v_.assign(n, 0);
  if (type == KvType::Q8) {
    k_scale_.assign(rows * static_cast<uint64_t>(n_head_kv), 0.0f);
    v_scale_.assign(k_scale_.size(), 0.0f);
  }
}

void ContiguousKvCache::store(int layer, int32_t seq, int64_t pos, const float* k, const float* v) {
  const size_t r = row_index(layer, seq, pos);
  const bool q8 = type_ == KvType::Q8;
  const size_t si = r * static_cast<size_t>(n_head_kv_);
  store_kv_row(type_, k, k_.data() + r * row_bytes_, n_head_kv_, head_dim_,
               q8 ? k_scale_.data() + si : nullptr);
  store_kv_row(type_, v, v_.data() + r * row_bytes_, n_head_kv_, head_dim_,
               q8 ? v_scale_.data() + si : nullptr);
}

void ContiguousKvCache::spans(int layer, int32_t seq, int64_t n, std::vector<KvSpan>& out) const {
  const size_t r = row_index(layer, seq, 0);
  KvSpan s{k_.data() + r * row_bytes_, v_.data() + r * row_bytes_, 0, n};
  if (type_ == KvType::Q8) {
    s.k_scale = k_scale_.data() + r * static_cast<size_t>(n_head_kv_);
    s.v_scale = v_scale_.data() + r * static_cast<size_t>(n_head_kv_);
  }
  out.push_back(s);
}

void ContiguousKvCache::reserve(int32_t seq, int64_t n) {
  if (seq < 0 || seq >= n_seq_) fail("sequence id {} is outside the cache's {} slots", seq, n_seq_);
  if (n > n_ctx_)
    fail("context is full: {} positions needed, the context size is {} (raise -c)", n, n_ctx_);
}

}  // namespace brisk
