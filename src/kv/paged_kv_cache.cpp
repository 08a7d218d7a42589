#include "kv/paged_kv_cache.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace brisk {

uint64_t KvGeometry::bytes_per_block() const {
  uint64_t per_layer =
      static_cast<uint64_t>(block_size) * static_cast<uint64_t>(kv_dim()) * kv_elem_bytes(type);
  if (type == KvType::Q8)
    per_layer += static_cast<uint64_t>(block_size) * static_cast<uint64_t>(n_head_kv) * 4;
  return 2 * per_layer * static_cast<uint64_t>(n_layer);
}

PagedKvCache::PagedKvCache(const KvGeometry& g, const BlockManager& tables)
    : g_(g), tables_(tables), n_blocks_(tables.pool().n_blocks()) {
  if (g.block_size != tables.block_size())
    fail("KV cache block size {} differs from the block tables' {}", g.block_size,
         tables.block_size());
  row_bytes_ = static_cast<size_t>(g.kv_dim()) * kv_elem_bytes(g.type);
  bytes_ = checked_mul(g.bytes_per_block(), static_cast<uint64_t>(n_blocks_), "KV cache size");
  const uint64_t n = checked_mul(
      checked_mul(static_cast<uint64_t>(g.n_layer), static_cast<uint64_t>(n_blocks_), "KV cache"),
      static_cast<uint64_t>(g.block_size) * row_bytes_, "KV cache");
  k_.reset(new uint8_t[n]);
  v_.reset(new uint8_t[n]);
  if (g.type == KvType::Q8) {
    const size_t ns = static_cast<size_t>(g.n_layer) * static_cast<size_t>(n_blocks_) *
                      static_cast<size_t>(g.block_size) * static_cast<size_t>(g.n_head_kv);
    k_scale_.reset(new float[ns]());
    v_scale_.reset(new float[ns]());
  }
}

uint8_t* PagedKvCache::row(const std::unique_ptr<uint8_t[]>& a, int layer, BlockId b,
                           int64_t r) const {
  const size_t idx =
      (static_cast<size_t>(layer) * static_cast<size_t>(n_blocks_) + static_cast<size_t>(b)) *
          static_cast<size_t>(g_.block_size) +
      static_cast<size_t>(r);
  return a.get() + idx * row_bytes_;
}

float* PagedKvCache::scales(const std::unique_ptr<float[]>& a, int layer, BlockId b,
                            int64_t r) const {
  const size_t idx =
      (static_cast<size_t>(layer) * static_cast<size_t>(n_blocks_) + static_cast<size_t>(b)) *
          static_cast<size_t>(g_.block_size) +
      static_cast<size_t>(r);
  return a.get() + idx * static_cast<size_t>(g_.n_head_kv);
}

void PagedKvCache::store(int layer, int32_t seq, int64_t pos, const float* k, const float* v) {
  const auto& t = tables_.table(seq);
  const BlockId b = t[static_cast<size_t>(pos / g_.block_size)];
  const int64_t r = pos % g_.block_size;
  const bool q8 = g_.type == KvType::Q8;
  store_kv_row(g_.type, k, row(k_, layer, b, r), g_.n_head_kv, g_.head_dim,
               q8 ? scales(k_scale_, layer, b, r) : nullptr);
  store_kv_row(g_.type, v, row(v_, layer, b, r), g_.n_head_kv, g_.head_dim,
               q8 ? scales(v_scale_, layer, b, r) : nullptr);
}

void PagedKvCache::spans(int layer, int32_t seq, int64_t n, std::vector<KvSpan>& out) const {
  const auto& t = tables_.table(seq);
  const int64_t bs = g_.block_size;
  for (int64_t p0 = 0, i = 0; p0 < n; p0 += bs, ++i) {
    const BlockId b = t[static_cast<size_t>(i)];
    KvSpan s{row(k_, layer, b, 0), row(v_, layer, b, 0), p0, std::min(bs, n - p0)};
    if (g_.type == KvType::Q8) {
      s.k_scale = scales(k_scale_, layer, b, 0);
      s.v_scale = scales(v_scale_, layer, b, 0);
    }
    out.push_back(s);
  }
}

void PagedKvCache::reserve(int32_t seq, int64_t n) {
  const int64_t have = static_cast<int64_t>(tables_.table(seq).size()) * g_.block_size;
  if (n > have) fail("KV: sequence {} needs {} positions but its blocks hold {}", seq, n, have);
}

void PagedKvCache::copy_block(BlockId src, BlockId dst) {
  const size_t block_bytes = row_bytes_ * static_cast<size_t>(g_.block_size);
  for (int l = 0; l < g_.n_layer; ++l) {
    std::memcpy(row(k_, l, dst, 0), row(k_, l, src, 0), block_bytes);
    std::memcpy(row(v_, l, dst, 0), row(v_, l, src, 0), block_bytes);
    if (g_.type == KvType::Q8) {
      const size_t n = static_cast<size_t>(g_.block_size) * static_cast<size_t>(g_.n_head_kv);
      std::memcpy(scales(k_scale_, l, dst, 0), scales(k_scale_, l, src, 0), n * sizeof(float));
      std::memcpy(scales(v_scale_, l, dst, 0), scales(v_scale_, l, src, 0), n * sizeof(float));
    }
  }
}

}  // namespace brisk
