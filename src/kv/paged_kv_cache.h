// KV storage in fixed-size blocks shared by all sequences (PagedAttention). A sequence's rows are
// found through its block table in the BlockManager; attention reads one span per block.
//
// Layout per layer: K and V arrays of [n_blocks][block_size][kv_dim] elements. The 8-bit type
// keeps one scale per position and KV head ([n_blocks][block_size][n_head_kv] floats): a scale
// shared by a whole block would make a stored row depend on the rows written after it, so a
// token's attention would change with how its sequence was batched.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv/block_manager.h"
#include "kv/kv_cache.h"

namespace brisk {

struct KvGeometry {
  int n_layer = 0, n_head_kv = 0, head_dim = 0;
  int block_size = 16;
  KvType type = KvType::F16;
  int64_t kv_dim() const { return static_cast<int64_t>(n_head_kv) * head_dim; }
  // Bytes one block takes over all layers, K and V (and scales).
  uint64_t bytes_per_block() const;
};

class PagedKvCache : public KvCache {
 public:
  PagedKvCache(const KvGeometry& g, const BlockManager& tables);
  // A mirror: n_blocks blocks whose tables come from import_layout (another rank's export).
  PagedKvCache(const KvGeometry& g, int32_t n_blocks);

  void store(int layer, int32_t seq, int64_t pos, const float* k, const float* v) override;
  void spans(int layer, int32_t seq, int64_t n, std::vector<KvSpan>& out) const override;
  int64_t row_stride() const override { return geometry_.kv_dim(); }
  KvType type() const override { return geometry_.type; }
  void reserve(int32_t seq, int64_t n) override;
  KvCacheShape shape() const override;
  void export_layout(std::span<const int32_t> seqs, std::vector<int32_t>& out) override;
  void import_layout(std::span<const int32_t> in) override;

  // Copies block src's rows (every layer, K and V, scales) into dst.
  void copy_block(BlockId src, BlockId dst);
  uint64_t bytes() const { return bytes_; }

 private:
  uint8_t* row(const std::unique_ptr<uint8_t[]>& a, int layer, BlockId b, int64_t r) const;
  float* scales(const std::unique_ptr<float[]>& a, int layer, BlockId b, int64_t r) const;
  void allocate();
  const std::vector<BlockId>& table(int32_t seq) const;

  KvGeometry geometry_;
  const BlockManager* tables_;  // null in a mirror
  int32_t n_blocks_;
  // Exporting (once export_layout was called): copies not yet exported, and each sequence's table
  // as last exported. Mirroring: the tables imported.
  bool exported_ = false;
  std::vector<BlockCopy> pending_copies_;
  std::unordered_map<int32_t, std::vector<BlockId>> sent_, mirror_tables_;
  uint64_t bytes_;
  size_t row_bytes_;
  // Left uninitialized: a row is written before it is ever read, and a large pool is only
  // touched as it fills.
  std::unique_ptr<uint8_t[]> k_, v_;
  std::unique_ptr<float[]> k_scale_, v_scale_;
};

}  // namespace brisk
