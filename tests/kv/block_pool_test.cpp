// Block pool and block tables: reference counts, the prefix cache (hash chain, LRU eviction,
// collision safety) and copy-on-write, with the accounting checked after every operation.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/error.h"
#include "kv/block_manager.h"
#include "kv/block_pool.h"

namespace brisk {
namespace {

std::vector<int32_t> iota_tokens(int n, int start = 0) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + i;
  return v;
}

TEST(BlockPool, AllocatesUntilEmptyAndFreesBack) {
  BlockPool p(4, 16);
  std::vector<BlockId> got;
  for (int i = 0; i < 4; ++i) got.push_back(p.allocate());
  EXPECT_EQ(p.allocate(), -1);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<BlockId>{0, 1, 2, 3}));
  EXPECT_EQ(p.n_in_use(), 4);
  p.ref(got[1]);
  p.release(got[1]);
  EXPECT_EQ(p.n_in_use(), 4);
  for (BlockId b : got) p.release(b);
  EXPECT_EQ(p.n_free(), 4);
  EXPECT_EQ(p.peak_in_use(), 4);
  p.check();
  EXPECT_THROW(p.release(0), Error);  // double free is caught, not silently corrupting
}

TEST(BlockPool, CachedBlocksAreFoundAndEvictedLeastRecentlyReleasedFirst) {
  BlockPool p(3, 2);
  const std::vector<int32_t> ta{1, 2}, tb{3, 4};
  const BlockId a = p.allocate(), b = p.allocate();
  p.publish(a, block_hash(0, ta, 7), 0, ta);
  p.publish(b, block_hash(0, tb, 7), 0, tb);
  p.release(a);  // released first: evicted first
  p.release(b);
  EXPECT_EQ(p.n_cached(), 2);
  p.check();
  // Found again with a reference, leaving the LRU.
  EXPECT_EQ(p.lookup(block_hash(0, tb, 7), 0, tb), b);
  EXPECT_EQ(p.n_cached(), 1);
  p.release(b);
  // Pressure: the free block first, then the oldest cached (a), then b.
  const BlockId c = p.allocate();
  EXPECT_NE(c, a);
  EXPECT_NE(c, b);
  EXPECT_EQ(p.allocate(), a);
  EXPECT_EQ(p.lookup(block_hash(0, ta, 7), 0, ta), -1);  // a was evicted and forgotten
  EXPECT_EQ(p.lookup(block_hash(0, tb, 7), 0, tb), b);
  p.check();
}

TEST(BlockPool, LookupComparesContentNotJustTheHash) {
  BlockPool p(2, 2);
  const std::vector<int32_t> t{5, 6}, other{5, 7};
  const BlockId a = p.allocate();
  p.publish(a, 42, 0, t);                 // a forced hash
  EXPECT_EQ(p.lookup(42, 0, other), -1);  // same hash, other tokens: a collision, not a hit
  EXPECT_EQ(p.lookup(42, 1, t), -1);      // other parent
  EXPECT_EQ(p.lookup(42, 0, t), a);
  EXPECT_EQ(p.ref_count(a), 2);
  // Publishing the same content twice keeps the first block as the cached copy.
  const BlockId b = p.allocate();
  p.publish(b, 42, 0, t);
  p.release(b);
  EXPECT_EQ(p.n_free(), 1);  // b held nothing findable, so it went back to free
  p.check();
}

TEST(BlockManager, PromptsReuseCachedFullBlocksButNeverTheLastToken) {
  BlockManager bm(16, 4, 99, true);
  std::vector<BlockCopy> copies;
  const auto prompt = iota_tokens(10);  // blocks [0,4) [4,8) [8,10)
  EXPECT_EQ(bm.begin(1, prompt), 0);
  ASSERT_TRUE(bm.grow(1, 0, 10, copies));
  EXPECT_EQ(bm.table(1).size(), 3u);
  bm.computed(1, prompt, 10);
  bm.check();

  // Same first 9 tokens: two full blocks are shared.
  auto p2 = prompt;
  p2.back() = 500;
  EXPECT_EQ(bm.begin(2, p2), 8);
  EXPECT_EQ(bm.table(2)[0], bm.table(1)[0]);
  EXPECT_EQ(bm.table(2)[1], bm.table(1)[1]);
  EXPECT_EQ(bm.pool().ref_count(bm.table(1)[0]), 2);
  ASSERT_TRUE(bm.grow(2, 8, 10, copies));
  EXPECT_TRUE(copies.empty());
  bm.check();

  // A prompt of exactly 8 tokens reuses only the first block: its last token is recomputed.
  EXPECT_EQ(bm.begin(3, iota_tokens(8)), 4);
  // A different first block shares nothing even if later tokens match (the hash chains).
  auto p4 = prompt;
  p4[0] = 77;
  EXPECT_EQ(bm.begin(4, p4), 0);

  bm.free(1);
  bm.free(2);
  bm.free(3);
  bm.free(4);
  bm.check();
  // Freed full blocks stay cached and serve a later request.
  EXPECT_EQ(bm.pool().n_cached(), 2);
  EXPECT_EQ(bm.begin(5, prompt), 8);
  bm.free(5);
  bm.check();
}

TEST(BlockManager, PrefixCachingOffSharesNothing) {
  BlockManager bm(8, 4, 1, false);
  std::vector<BlockCopy> copies;
  const auto prompt = iota_tokens(9);
  EXPECT_EQ(bm.begin(1, prompt), 0);
  ASSERT_TRUE(bm.grow(1, 0, 9, copies));
  bm.computed(1, prompt, 9);
  bm.free(1);
  EXPECT_EQ(bm.pool().n_cached(), 0);
  EXPECT_EQ(bm.begin(2, prompt), 0);
  bm.free(2);
  bm.check();
}

TEST(BlockManager, ForkedSequencesCopyASharedBlockBeforeWriting) {
  BlockManager bm(8, 4, 1, true);
  std::vector<BlockCopy> copies;
  const auto prompt = iota_tokens(6);  // one full block, one partial
  bm.begin(1, prompt);
  ASSERT_TRUE(bm.grow(1, 0, 6, copies));
  bm.computed(1, prompt, 6);
  bm.fork(1, 2);
  bm.fork(1, 3);
  const BlockId partial = bm.table(1)[1];
  EXPECT_EQ(bm.pool().ref_count(partial), 3);
  EXPECT_EQ(bm.blocks_needed(2, 6, 7), 1);
  ASSERT_TRUE(bm.grow(2, 6, 7, copies));  // child 2 writes position 6: copies the block
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].first, partial);
  EXPECT_NE(bm.table(2)[1], partial);
  EXPECT_EQ(bm.table(2)[0], bm.table(1)[0]);  // the full block stays shared
  ASSERT_TRUE(bm.grow(3, 6, 7, copies));
  EXPECT_EQ(copies.size(), 2u);
  ASSERT_TRUE(bm.grow(1, 6, 7, copies));  // the last holder writes in place
  EXPECT_EQ(copies.size(), 2u);
  EXPECT_EQ(bm.table(1)[1], partial);
  bm.check();
  for (int s : {1, 2, 3}) bm.free(s);
  bm.check();
  EXPECT_EQ(bm.pool().n_in_use(), 0);
}

TEST(BlockManager, GrowFailsWithoutChangingAnything) {
  BlockManager bm(3, 4, 1, true);
  std::vector<BlockCopy> copies;
  bm.begin(1, iota_tokens(5));
  ASSERT_TRUE(bm.grow(1, 0, 8, copies));
  bm.begin(2, iota_tokens(5, 100));
  EXPECT_FALSE(bm.grow(2, 0, 5, copies));  // needs 2, one left
  EXPECT_TRUE(bm.table(2).empty());
  ASSERT_TRUE(bm.grow(2, 0, 4, copies));
  bm.check();
}

// Speculative tokens that were rejected give their positions' blocks back; verified full blocks
// stay published and cannot be truncated away.
TEST(BlockManager, TruncateReturnsTheBlocksOfRejectedPositions) {
  BlockManager bm(8, 4, 1, true);
  std::vector<BlockCopy> copies;
  const auto toks = iota_tokens(6);
  bm.begin(1, toks);
  ASSERT_TRUE(bm.grow(1, 0, 14, copies));  // 6 tokens and a draft of 8: 4 blocks
  EXPECT_EQ(bm.table(1).size(), 4u);
  bm.computed(1, toks, 5);  // one full block published
  bm.truncate(1, 5);
  EXPECT_EQ(bm.table(1).size(), 2u);
  EXPECT_EQ(bm.pool().n_in_use(), 2);
  bm.check();
  EXPECT_THROW(bm.truncate(1, 3), Error);
  bm.truncate(1, 8);  // nothing past the table to drop
  EXPECT_EQ(bm.table(1).size(), 2u);
  bm.free(1);
  bm.check();
}

// Random operations (begin with shared prefixes, grow, compute, fork, free) with the accounting
// checked after each: no leaked or double-freed block, free + in use + cached = total.
TEST(BlockManager, RandomOperationsKeepExactAccounting) {
  std::mt19937 rng(5);
  for (bool caching : {true, false}) {
    BlockManager bm(40, 4, 3, caching);
    struct S {
      std::vector<int32_t> toks;
      int64_t computed;
    };
    std::unordered_map<int32_t, S> live;
    int32_t next = 0;
    std::vector<BlockCopy> copies;
    for (int it = 0; it < 3000; ++it) {
      const int op = static_cast<int>(rng() % 5);
      if (op == 0 || live.empty()) {
        S s;
        const int n = 1 + static_cast<int>(rng() % 20);
        const int family = static_cast<int>(rng() % 3);  // prompts in three prefix families
        for (int i = 0; i < n; ++i)
          s.toks.push_back(i < 10 ? family * 1000 + i : static_cast<int32_t>(rng() % 50));
        const int32_t id = next++;
        s.computed = bm.begin(id, s.toks);
        if (bm.grow(id, s.computed, static_cast<int64_t>(s.toks.size()), copies)) {
          s.computed = static_cast<int64_t>(s.toks.size());
          bm.computed(id, s.toks, s.computed);
          live[id] = s;
        } else {
          bm.free(id);
        }
      } else {
        auto itr = live.begin();
        std::advance(itr, static_cast<long>(rng() % live.size()));
        const int32_t id = itr->first;
        S& s = itr->second;
        if (op == 1) {
          bm.free(id);
          live.erase(itr);
        } else if (op == 2) {
          const int32_t c = next++;
          bm.fork(id, c);
          live[c] = live[id];
        } else {
          s.toks.push_back(static_cast<int32_t>(rng() % 50));
          const int64_t n = static_cast<int64_t>(s.toks.size());
          if (bm.grow(id, s.computed, n, copies)) {
            s.computed = n;
            bm.computed(id, s.toks, n);
          } else {
            s.toks.pop_back();
          }
        }
      }
      bm.check();
    }
    for (auto& [id, s] : live) bm.free(id);
    bm.check();
    EXPECT_EQ(bm.pool().n_in_use(), 0);
  }
}

}  // namespace
}  // namespace brisk
