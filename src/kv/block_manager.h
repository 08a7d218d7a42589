// Per-sequence block tables over one BlockPool: which block holds each run of block_size
// positions of a sequence. Prompts take matching cached blocks (prefix caching); sequences forked
// from one prompt share its blocks and copy a shared block before writing into it (copy-on-write).
// No tensors here: copies are returned as (source, destination) pairs for the cache to perform.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kv/block_pool.h"

namespace brisk {

using BlockCopy = std::pair<BlockId, BlockId>;

class BlockManager {
 public:
  // salt: identifies what else the KV depends on (the model), mixed into every block hash.
  BlockManager(int32_t n_blocks, int block_size, uint64_t salt, bool prefix_caching);

  // Starts the table of a new sequence whose known tokens are `tokens`, taking every cached full
  // block of their prefix (never the block holding the last token, whose logits are needed).
  // Returns how many leading positions already hold their KV.
  int64_t begin(int32_t seq, std::span<const int32_t> tokens);
  // Makes positions [from, to) writable: adds blocks and copies a shared block that `from`
  // falls in (appending the copy to `copies`). On failure (pool exhausted) changes nothing and
  // returns false.
  bool grow(int32_t seq, int64_t from, int64_t to, std::vector<BlockCopy>& copies);
  // Blocks grow() would take from the pool for these positions.
  int32_t blocks_needed(int32_t seq, int64_t from, int64_t to) const;
  // Positions [0, n) of the sequence now hold KV for tokens[0, n): newly full blocks are published
  // to the prefix cache.
  void computed(int32_t seq, std::span<const int32_t> tokens, int64_t n);
  // Keeps only the blocks that hold positions [0, n), returning the rest to the pool: the positions
  // of rejected speculative tokens. Published blocks always stay (they are full of verified KV).
  void truncate(int32_t seq, int64_t n);
  // A new sequence sharing every block of `parent` (its tokens so far).
  void fork(int32_t parent, int32_t child);
  void free(int32_t seq);

  bool has(int32_t seq) const { return seqs_.count(seq) != 0; }
  const std::vector<BlockId>& table(int32_t seq) const;
  BlockPool& pool() { return pool_; }
  const BlockPool& pool() const { return pool_; }
  int block_size() const { return pool_.block_size(); }
  bool prefix_caching() const { return caching_; }

  // Counts a lookup that begin() made for an admitted sequence (failed admissions are retried
  // and not counted).
  void record_lookup(int64_t queried, int64_t hit) {
    if (caching_) queries_ += queried, hits_ += hit;
  }
  // Prefix-cache counters, in tokens: prompt tokens looked up, and those found cached.
  int64_t cache_queries() const { return queries_; }
  int64_t cache_hits() const { return hits_; }

  // Throws unless every block's ref count equals the number of tables holding it, and the pool's
  // own bookkeeping is sound.
  void check() const;

 private:
  struct Table {
    std::vector<BlockId> blocks;
    std::vector<uint64_t> hashes;  // of the leading full blocks already published (a hash chain)
  };
  Table& get(int32_t seq);
  const Table& get(int32_t seq) const;

  BlockPool pool_;
  uint64_t salt_;
  bool caching_;
  std::unordered_map<int32_t, Table> seqs_;
  int64_t queries_ = 0, hits_ = 0;
};

}  // namespace brisk
