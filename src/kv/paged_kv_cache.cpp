#include "kv/paged_kv_cache.h"

#include <algorithm>
#include <climits>
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
    : geometry_(g), tables_(&tables), n_blocks_(tables.pool().n_blocks()) {
  if (g.block_size != tables.block_size())
    fail("KV cache block size {} differs from the block tables' {}", g.block_size,
         tables.block_size());
  allocate();
}

PagedKvCache::PagedKvCache(const KvGeometry& g, int32_t n_blocks)
    : geometry_(g), tables_(nullptr), n_blocks_(n_blocks) {
  if (n_blocks < 1 || g.block_size < 1 || g.n_layer < 1 || g.n_head_kv < 1 || g.head_dim < 1)
    fail("KV mirror: bad shape ({} blocks of {}, {} layers, {} heads of {})", n_blocks,
         g.block_size, g.n_layer, g.n_head_kv, g.head_dim);
  allocate();
}

void PagedKvCache::allocate() {
  const KvGeometry& g = geometry_;
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
          static_cast<size_t>(geometry_.block_size) +
      static_cast<size_t>(r);
  return a.get() + idx * row_bytes_;
}

float* PagedKvCache::scales(const std::unique_ptr<float[]>& a, int layer, BlockId b,
                            int64_t r) const {
  const size_t idx =
      (static_cast<size_t>(layer) * static_cast<size_t>(n_blocks_) + static_cast<size_t>(b)) *
          static_cast<size_t>(geometry_.block_size) +
      static_cast<size_t>(r);
  return a.get() + idx * static_cast<size_t>(geometry_.n_head_kv);
}

const std::vector<BlockId>& PagedKvCache::table(int32_t seq) const {
  if (tables_) return tables_->table(seq);
  auto it = mirror_tables_.find(seq);
  if (it == mirror_tables_.end()) fail("KV mirror: sequence {} has no imported block table", seq);
  return it->second;
}

void PagedKvCache::store(int layer, int32_t seq, int64_t pos, const float* k, const float* v) {
  const auto& t = table(seq);
  const BlockId b = t[static_cast<size_t>(pos / geometry_.block_size)];
  const int64_t r = pos % geometry_.block_size;
  const bool q8 = geometry_.type == KvType::Q8;
  store_kv_row(geometry_.type, k, row(k_, layer, b, r), geometry_.n_head_kv, geometry_.head_dim,
               q8 ? scales(k_scale_, layer, b, r) : nullptr);
  store_kv_row(geometry_.type, v, row(v_, layer, b, r), geometry_.n_head_kv, geometry_.head_dim,
               q8 ? scales(v_scale_, layer, b, r) : nullptr);
}

void PagedKvCache::spans(int layer, int32_t seq, int64_t n, std::vector<KvSpan>& out) const {
  const auto& t = table(seq);
  const int64_t bs = geometry_.block_size;
  for (int64_t p0 = 0, i = 0; p0 < n; p0 += bs, ++i) {
    const BlockId b = t[static_cast<size_t>(i)];
    KvSpan s{row(k_, layer, b, 0), row(v_, layer, b, 0), p0, std::min(bs, n - p0)};
    if (geometry_.type == KvType::Q8) {
      s.k_scale = scales(k_scale_, layer, b, 0);
      s.v_scale = scales(v_scale_, layer, b, 0);
    }
    out.push_back(s);
  }
}

void PagedKvCache::reserve(int32_t seq, int64_t n) {
  const int64_t have = static_cast<int64_t>(table(seq).size()) * geometry_.block_size;
  if (n > have) fail("KV: sequence {} needs {} positions but its blocks hold {}", seq, n, have);
}

void PagedKvCache::copy_block(BlockId src, BlockId dst) {
  if (exported_) pending_copies_.push_back({src, dst});
  const size_t block_bytes = row_bytes_ * static_cast<size_t>(geometry_.block_size);
  for (int l = 0; l < geometry_.n_layer; ++l) {
    std::memcpy(row(k_, l, dst, 0), row(k_, l, src, 0), block_bytes);
    std::memcpy(row(v_, l, dst, 0), row(v_, l, src, 0), block_bytes);
    if (geometry_.type == KvType::Q8) {
      const size_t n =
          static_cast<size_t>(geometry_.block_size) * static_cast<size_t>(geometry_.n_head_kv);
      std::memcpy(scales(k_scale_, l, dst, 0), scales(k_scale_, l, src, 0), n * sizeof(float));
      std::memcpy(scales(v_scale_, l, dst, 0), scales(v_scale_, l, src, 0), n * sizeof(float));
    }
  }
}

KvCacheShape PagedKvCache::shape() const {
  KvCacheShape s;
  s.paged = 1;
  s.n_layer = geometry_.n_layer;
  s.n_head_kv = geometry_.n_head_kv;
  s.head_dim = geometry_.head_dim;
  s.type = static_cast<int32_t>(geometry_.type);
  s.block_size = geometry_.block_size;
  s.n_ctx = n_blocks_;
  return s;
}

// [copies, (src, dst)...] [sequences, (seq, blocks kept, new blocks, ids...)...]: a sequence's
// table usually differs from its last export by a block at the end, so that is all that is sent.
void PagedKvCache::export_layout(std::span<const int32_t> seqs, std::vector<int32_t>& out) {
  exported_ = true;
  out.push_back(static_cast<int32_t>(pending_copies_.size()));
  for (const auto& [src, dst] : pending_copies_) out.push_back(src), out.push_back(dst);
  pending_copies_.clear();
  out.push_back(static_cast<int32_t>(seqs.size()));
  for (int32_t seq : seqs) {
    const auto& t = table(seq);
    auto& sent = sent_[seq];
    size_t keep = 0;
    while (keep < sent.size() && keep < t.size() && sent[keep] == t[keep]) ++keep;
    out.push_back(seq);
    out.push_back(static_cast<int32_t>(keep));
    out.push_back(static_cast<int32_t>(t.size() - keep));
    const auto changed = t.begin() + static_cast<std::ptrdiff_t>(keep);
    out.insert(out.end(), changed, t.end());
    sent.resize(keep);
    sent.insert(sent.end(), changed, t.end());
  }
}

void PagedKvCache::import_layout(std::span<const int32_t> in) {
  size_t i = 0;
  auto next = [&]() -> int32_t {
    if (i >= in.size()) fail("KV mirror: layout message ends early");
    return in[i++];
  };
  auto block = [&]() {
    const int32_t b = next();
    if (b < 0 || b >= n_blocks_)
      fail("KV mirror: block {} is outside the pool of {}", b, n_blocks_);
    return b;
  };
  for (int32_t c = next(); c > 0; --c) {
    const BlockId src = block();
    copy_block(src, block());
  }
  for (int32_t n = next(); n > 0; --n) {
    auto& t = mirror_tables_[next()];
    const int32_t keep = next(), added = next();
    if (keep < 0 || static_cast<size_t>(keep) > t.size() || added < 0)
      fail("KV mirror: bad table change (keep {} of {}, add {})", keep, t.size(), added);
    t.resize(static_cast<size_t>(keep));
    for (int32_t j = 0; j < added; ++j) t.push_back(block());
  }
}

std::unique_ptr<KvCache> make_kv_mirror(const KvCacheShape& s) {
  if (s.type < 0 || s.type > static_cast<int32_t>(KvType::Q8))
    fail("KV mirror: element type {} is unknown", s.type);
  const auto type = static_cast<KvType>(s.type);
  if (!s.paged)
    return std::make_unique<ContiguousKvCache>(s.n_layer, s.n_head_kv, s.head_dim, s.n_ctx, s.n_seq,
                                               type);
  if (s.n_ctx > INT32_MAX) fail("KV mirror: {} blocks is too many", s.n_ctx);
  KvGeometry g;
  g.n_layer = s.n_layer;
  g.n_head_kv = s.n_head_kv;
  g.head_dim = s.head_dim;
  g.block_size = s.block_size;
  g.type = type;
  return std::make_unique<PagedKvCache>(g, static_cast<int32_t>(s.n_ctx));
}

}  // namespace brisk
