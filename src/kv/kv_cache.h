// The interface the forward pass uses to store and read keys and values. The contiguous cache here
// serves single sequences; the paged cache implements the same calls over a shared block pool.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/attention.h"

namespace brisk {

class KvCache {
 public:
  virtual ~KvCache() = default;
  // Writable K and V rows (all KV heads, kv_dim floats) of a sequence's position in a layer.
  virtual float* k_row(int layer, int32_t seq, int64_t pos) = 0;
  virtual float* v_row(int layer, int32_t seq, int64_t pos) = 0;
  // Appends spans that cover positions [0, n) of the sequence in the layer, in position order.
  virtual void spans(int layer, int32_t seq, int64_t n, std::vector<KvSpan>& out) const = 0;
  virtual int64_t row_stride() const = 0;  // floats between consecutive positions inside a span
  // Positions [0, n) of seq must be storable; throws if the cache cannot hold them.
  virtual void reserve(int32_t seq, int64_t n) = 0;
};

// One [n_ctx x kv_dim] K and V array per layer and sequence slot, allocated up front.
class ContiguousKvCache : public KvCache {
 public:
  ContiguousKvCache(int n_layer, int64_t kv_dim, int64_t n_ctx, int n_seq = 1);
  float* k_row(int layer, int32_t seq, int64_t pos) override { return at(k_, layer, seq, pos); }
  float* v_row(int layer, int32_t seq, int64_t pos) override { return at(v_, layer, seq, pos); }
  void spans(int layer, int32_t seq, int64_t n, std::vector<KvSpan>& out) const override;
  int64_t row_stride() const override { return kv_dim_; }
  void reserve(int32_t seq, int64_t n) override;
  int64_t n_ctx() const { return n_ctx_; }
  uint64_t bytes() const { return (k_.size() + v_.size()) * sizeof(float); }

 private:
  float* at(std::vector<float>& a, int layer, int32_t seq, int64_t pos) {
    return a.data() + ((static_cast<int64_t>(layer) * n_seq_ + seq) * n_ctx_ + pos) * kv_dim_;
  }
  int n_layer_, n_seq_;
  int64_t kv_dim_, n_ctx_;
  std::vector<float> k_, v_;
};

}  // namespace brisk
