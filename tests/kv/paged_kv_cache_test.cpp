// Paged attention: rows stored through the paged cache in randomly placed blocks, read back by the
// FlashAttention kernel through the block table, against a naive attention over a contiguous f32
// cache, for every KV type and every instruction set; and bit-identical results across block
// placements and block sizes within each instruction set.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "kv/paged_kv_cache.h"
#include "ops/attention.h"
#include "ops/ref/ref_ops.h"
#include "support/test_util.h"

namespace brisk {
namespace {

// Attention output of all heads for one query over n_keys positions of a paged sequence whose
// blocks were taken from the pool in a shuffled order.
std::vector<float> paged_attention(KvType type, int n_head, int n_kv, int hd, int block_size,
                                   int64_t n_keys, const std::vector<float>& k,
                                   const std::vector<float>& v, const std::vector<float>& q,
                                   uint32_t placement_seed, Isa isa = best_isa()) {
  const int64_t kvd = static_cast<int64_t>(n_kv) * hd;
  const int32_t n_blocks = static_cast<int32_t>((n_keys + block_size - 1) / block_size) + 8;
  BlockManager bm(n_blocks, block_size, 1, false);
  KvGeometry g{2, n_kv, hd, block_size, type};
  PagedKvCache cache(g, bm);
  // Take a random set of blocks first so the sequence's blocks land scattered and out of order.
  std::mt19937 rng(placement_seed);
  std::vector<BlockCopy> copies;
  bm.begin(0, {});
  const int32_t filler = static_cast<int32_t>(rng() % 8);
  bm.begin(1, {});
  EXPECT_TRUE(bm.grow(1, 0, static_cast<int64_t>(filler) * block_size, copies));
  EXPECT_TRUE(bm.grow(0, 0, n_keys, copies));
  for (int64_t p = 0; p < n_keys; ++p) {
    // Layer 1 holds the data; layer 0 gets other values, which must not leak into layer 1.
    std::vector<float> junk(static_cast<size_t>(kvd), 100.0f);
    cache.store(0, 0, p, junk.data(), junk.data());
    cache.store(1, 0, p, &k[static_cast<size_t>(p * kvd)], &v[static_cast<size_t>(p * kvd)]);
  }
  std::vector<KvSpan> spans;
  cache.spans(1, 0, n_keys, spans);
  const AttnShape shape{n_head, n_kv, hd, cache.row_stride(), 1.0f / std::sqrt(float(hd)), type};
  std::vector<float> out(static_cast<size_t>(n_head * hd));
  for (int g2 = 0; g2 < n_kv; ++g2) {
    const AttnQuery one{q.data(), out.data(), n_keys};
    attention_group_isa(isa, shape, g2, &one, 1, spans.data(), spans.size());
  }
  bm.check();
  return out;
}

TEST(PagedAttention, MatchesNaiveAttentionForEveryKvTypeAndPlacement) {
  for (KvType type : {KvType::F32, KvType::F16, KvType::BF16, KvType::Q8}) {
    // Error of the stored K/V relative to the values' scale: rounding of each type.
    const float tol = type == KvType::F32    ? 1e-5f
                      : type == KvType::F16  ? 2e-3f
                      : type == KvType::BF16 ? 1.5e-2f
                                             : 2.5e-2f;
    for (auto [n_head, n_kv, hd] :
         {std::tuple{4, 4, 8}, {8, 2, 64}, {6, 3, 40}, {4, 1, 128}, {4, 2, 16}}) {
      for (int64_t n_keys : {1, 16, 33, 200}) {
        const int64_t kvd = static_cast<int64_t>(n_kv) * hd;
        const auto k = test::random_floats(static_cast<size_t>(n_keys * kvd), 11);
        const auto v = test::random_floats(static_cast<size_t>(n_keys * kvd), 12);
        auto q = test::random_floats(static_cast<size_t>(n_head * hd), 13);
        for (auto& x : q) x *= 3;
        std::vector<float> expect(static_cast<size_t>(n_head * hd));
        const int grp = n_head / n_kv;
        for (int h = 0; h < n_head; ++h)
          ref::attention_head(&q[static_cast<size_t>(h * hd)], k.data() + (h / grp) * hd,
                              v.data() + (h / grp) * hd, kvd, n_keys, hd,
                              1.0f / std::sqrt(float(hd)), &expect[static_cast<size_t>(h * hd)]);
        std::map<Isa, std::vector<float>> first;
        for (Isa isa : test::available_isas()) {
          for (int block_size : {16, 7, 32}) {
            for (uint32_t seed : {1u, 2u}) {
              const auto out =
                  paged_attention(type, n_head, n_kv, hd, block_size, n_keys, k, v, q, seed, isa);
              for (size_t i = 0; i < out.size(); ++i)
                ASSERT_NEAR(out[i], expect[i], tol)
                    << kv_type_name(type) << " n_keys " << n_keys << " hd " << hd << " block "
                    << block_size << " " << isa_name(isa);
              // Neither placement nor block size changes a bit.
              auto& f = first[isa];
              if (f.empty())
                f = out;
              else
                ASSERT_EQ(std::memcmp(f.data(), out.data(), out.size() * 4), 0)
                    << kv_type_name(type) << " layout changed the bits";
            }
          }
        }
      }
    }
  }
}

// The same rows in a contiguous cache of the same type give bit-identical attention.
TEST(PagedAttention, EqualsContiguousCacheBitForBit) {
  for (KvType type : {KvType::F32, KvType::F16, KvType::BF16, KvType::Q8}) {
    const int n_head = 8, n_kv = 2, hd = 64;
    const int64_t n_keys = 77, kvd = n_kv * hd;
    const auto k = test::random_floats(static_cast<size_t>(n_keys * kvd), 21);
    const auto v = test::random_floats(static_cast<size_t>(n_keys * kvd), 22);
    const auto q = test::random_floats(static_cast<size_t>(n_head * hd), 23);
    ContiguousKvCache cc(2, n_kv, hd, 128, 1, type);
    for (int64_t p = 0; p < n_keys; ++p)
      cc.store(1, 0, p, &k[static_cast<size_t>(p * kvd)], &v[static_cast<size_t>(p * kvd)]);
    std::vector<KvSpan> spans;
    cc.spans(1, 0, n_keys, spans);
    const AttnShape shape{n_head, n_kv, hd, cc.row_stride(), 1.0f / std::sqrt(float(hd)), type};
    std::vector<float> expect(static_cast<size_t>(n_head * hd));
    for (int g = 0; g < n_kv; ++g)
      attention_group(shape, g, q.data(), n_keys, spans.data(), spans.size(), expect.data());
    const auto out = paged_attention(type, n_head, n_kv, hd, 16, n_keys, k, v, q, 3);
    ASSERT_EQ(std::memcmp(out.data(), expect.data(), out.size() * 4), 0) << kv_type_name(type);
  }
}

// 8-bit rows: each position and head has its own scale (its largest magnitude over 127), so a
// stored value is within half a step of the original; copy_block carries the scales along.
TEST(PagedKvCache, Q8RowsKeepTheirOwnScalesAndCopyWithThem) {
  const int hd = 16, n_kv = 2;
  BlockManager bm(4, 8, 1, false);
  PagedKvCache cache(KvGeometry{1, n_kv, hd, 8, KvType::Q8}, bm);
  std::vector<BlockCopy> copies;
  bm.begin(0, {});
  ASSERT_TRUE(bm.grow(0, 0, 6, copies));
  std::vector<std::vector<float>> rows;
  for (int p = 0; p < 6; ++p) {
    auto r = test::random_floats(n_kv * hd, static_cast<uint64_t>(p + 40));
    for (auto& x : r) x *= static_cast<float>(1 << p);  // each row twice as large as the last
    cache.store(0, 0, p, r.data(), r.data());
    rows.push_back(r);
  }
  std::vector<KvSpan> spans;
  cache.spans(0, 0, 6, spans);
  ASSERT_EQ(spans.size(), 1u);
  for (int p = 0; p < 6; ++p)
    for (int h = 0; h < n_kv; ++h) {
      const float scale = spans[0].k_scale[p * n_kv + h];
      float amax = 0;
      for (int d = 0; d < hd; ++d)
        amax = std::max(amax,
                        std::fabs(rows[static_cast<size_t>(p)][static_cast<size_t>(h * hd + d)]));
      EXPECT_FLOAT_EQ(scale, amax / 127.0f);
      for (int d = 0; d < hd; ++d) {
        const int i = p * n_kv * hd + h * hd + d;
        EXPECT_NEAR(scale * static_cast<float>(static_cast<const int8_t*>(spans[0].k)[i]),
                    rows[static_cast<size_t>(p)][static_cast<size_t>(h * hd + d)], scale * 0.5001f);
      }
    }
  const BlockId src = bm.table(0)[0];
  bm.fork(0, 1);
  ASSERT_TRUE(bm.grow(1, 6, 7, copies));
  ASSERT_EQ(copies.size(), 1u);
  cache.copy_block(copies[0].first, copies[0].second);
  std::vector<KvSpan> s2;
  cache.spans(0, 1, 6, s2);
  EXPECT_NE(bm.table(1)[0], src);
  EXPECT_EQ(std::memcmp(s2[0].k_scale, spans[0].k_scale, 6 * n_kv * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(s2[0].k, spans[0].k, 6 * n_kv * hd), 0);
  EXPECT_EQ(std::memcmp(s2[0].v, spans[0].v, 6 * n_kv * hd), 0);
}

}  // namespace
}  // namespace brisk
