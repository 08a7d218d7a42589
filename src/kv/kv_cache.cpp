#include "kv/kv_cache.h"

#include "core/error.h"

namespace brisk {

ContiguousKvCache::ContiguousKvCache(int n_layer, int64_t kv_dim, int64_t n_ctx, int n_seq)
    : n_layer_(n_layer), n_seq_(n_seq), kv_dim_(kv_dim), n_ctx_(n_ctx) {
  const uint64_t n = checked_mul(
      checked_mul(checked_mul(n_layer, n_seq, "KV cache"), n_ctx, "KV cache"), kv_dim, "KV cache");
  if (n * 8 > (uint64_t{64} << 30))
    fail("KV cache of {} positions would need {} GiB", n_ctx, n * 8 >> 30);
  k_.assign(n, 0.0f);
  v_.assign(n, 0.0f);
}

void ContiguousKvCache::spans(int layer, int32_t seq, int64_t n, std::vector<KvSpan>& out) const {
  const int64_t base = (static_cast<int64_t>(layer) * n_seq_ + seq) * n_ctx_ * kv_dim_;
  out.push_back({k_.data() + base, v_.data() + base, 0, n});
}

void ContiguousKvCache::reserve(int32_t seq, int64_t n) {
  if (seq < 0 || seq >= n_seq_) fail("sequence id {} is outside the cache's {} slots", seq, n_seq_);
  if (n > n_ctx_)
    fail("context is full: {} positions needed, the context size is {} (raise -c)", n, n_ctx_);
}

}  // namespace brisk
