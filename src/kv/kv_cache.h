// The interface the forward pass uses to store and read keys and values. The contiguous cache here
// serves a single conversation; the paged cache implements the same calls over a shared block pool.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/kv_types.h"

namespace brisk {

// What another rank needs to build a cache of the same shape (tensor parallelism: each rank keeps
// the KV of its own heads in a cache with the same positions and block numbering).
struct KvCacheShape {
  int32_t paged = 0;  // 1: PagedKvCache (n_ctx counts blocks), 0: ContiguousKvCache
  int32_t n_layer = 0, n_head_kv = 0, head_dim = 0;
  int32_t type = 0;  // KvType
  int32_t block_size = 0, n_seq = 0;
  int64_t n_ctx = 0;
};

class KvCache {
 public:
  KvCache();
  virtual ~KvCache();
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;
  // Stores the K and V rows (kv_dim floats each, all KV heads) of a sequence's position in a
  // layer. A sequence's positions are stored in increasing order, one thread per sequence.
  virtual void store(int layer, int32_t seq, int64_t pos, const float* k, const float* v) = 0;
  // Appends spans that cover positions [0, n) of the sequence in the layer, in position order.
  virtual void spans(int layer, int32_t seq, int64_t n, std::vector<KvSpan>& out) const = 0;
  virtual int64_t row_stride() const = 0;  // elements between consecutive positions in a span
  virtual KvType type() const = 0;
  // Positions [0, n) of seq must be storable; throws if the cache cannot hold them.
  virtual void reserve(int32_t seq, int64_t n) = 0;

  // Mirrors on other ranks. uid: unique in this process, so a mirror is found by it.
  uint64_t uid() const { return uid_; }
  virtual KvCacheShape shape() const = 0;
  // Appends what a mirror needs before a batch over `seqs` runs: the block copies since the last
  // export and the sequences' block tables (as changes since the last export); import_layout
  // applies it to the mirror. The contiguous cache has no layout.
  virtual void export_layout(std::span<const int32_t> seqs, std::vector<int32_t>& out) {
    (void)seqs, (void)out;
  }
  virtual void import_layout(std::span<const int32_t> in) { (void)in; }
  // Runs with each cache's uid as it is destroyed (one hook per process; null: none), so mirrors
  // can be freed too.
  static void set_destroy_hook(void (*hook)(uint64_t uid));

 private:
  uint64_t uid_;
};

// An empty cache of the given shape, for a rank that mirrors another's (its paged tables come
// from import_layout). Throws on a shape no cache could have.
std::unique_ptr<KvCache> make_kv_mirror(const KvCacheShape& s);

// One [n_ctx x kv_dim] K and V array per layer and sequence slot, allocated up front.
class ContiguousKvCache : public KvCache {
 public:
  ContiguousKvCache(int n_layer, int n_head_kv, int head_dim, int64_t n_ctx, int n_seq = 1,
                    KvType type = KvType::F32);
  void store(int layer, int32_t seq, int64_t pos, const float* k, const float* v) override;
  void spans(int layer, int32_t seq, int64_t n, std::vector<KvSpan>& out) const override;
  int64_t row_stride() const override { return kv_dim_; }
  KvType type() const override { return type_; }
  void reserve(int32_t seq, int64_t n) override;
  KvCacheShape shape() const override;
  int64_t n_ctx() const { return n_ctx_; }
  uint64_t bytes() const {
    return k_.size() + v_.size() + (k_scale_.size() + v_scale_.size()) * sizeof(float);
  }

 private:
  // Index of a position's row among all rows.
  size_t row_index(int layer, int32_t seq, int64_t pos) const {
    return static_cast<size_t>((static_cast<int64_t>(layer) * n_seq_ + seq) * n_ctx_ + pos);
  }
  int n_layer_, n_seq_, n_head_kv_, head_dim_;
  int64_t kv_dim_, n_ctx_;
  KvType type_;
  size_t row_bytes_;
  std::vector<uint8_t> k_, v_;
  std::vector<float> k_scale_, v_scale_;  // Q8: n_head_kv per row
};

}  // namespace brisk
