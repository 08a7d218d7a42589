// The pool of KV blocks: ids, reference counts and the automatic prefix cache. It knows nothing of
// tensors: a block is an id whose storage lives in the paged cache.
//
// A block is free (no content worth keeping), in use (ref count > 0), or cached (ref count 0 but
// it holds a full block of a known token prefix, so a later request with that prefix can take it
// back). Cached blocks are evicted least-recently-released first, only when a new block is needed
// and no free one is left.
#pragma once

#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace brisk {

using BlockId = int32_t;

// Identifies a full block's content: its parent block's hash, its tokens and a salt for
// everything else that shapes the KV (the model). Lookups also compare the tokens and the parent,
// so a hash collision can never hand out the wrong block.
uint64_t block_hash(uint64_t parent, std::span<const int32_t> tokens, uint64_t salt);

class BlockPool {
 public:
  BlockPool(int32_t n_blocks, int block_size);

  int32_t n_blocks() const { return static_cast<int32_t>(ref_.size()); }
  int block_size() const { return block_size_; }

  // A block for new content with one reference: a free block, else the least recently released
  // cached one (forgotten by the cache). -1 if every block is in use.
  BlockId allocate();
  void ref(BlockId b);
  // Drops one reference; a block nobody uses stays cached if it holds a published prefix.
  void release(BlockId b);
  int32_t ref_count(BlockId b) const { return ref_[static_cast<size_t>(b)]; }
  // Bumped whenever b is handed out for new content: a cache that fills blocks on its own schedule
  // (a draft model's) tells its rows of a block's current content from a former tenant's by it.
  uint32_t generation(BlockId b) const { return gen_[static_cast<size_t>(b)]; }

  // The cached block with this content, with a reference taken; -1 if none.
  BlockId lookup(uint64_t hash, uint64_t parent, std::span<const int32_t> tokens);
  // Makes full block b findable by lookup(). If another block already holds this content, b is
  // left unpublished (the first one stays the cached copy).
  void publish(BlockId b, uint64_t hash, uint64_t parent, std::span<const int32_t> tokens);
  // Forgets every cached prefix (cached blocks become free).
  void clear_cache();

  int32_t n_free() const { return static_cast<int32_t>(free_.size()); }
  int32_t n_cached() const { return static_cast<int32_t>(lru_.size()); }
  int32_t n_in_use() const { return n_blocks() - n_free() - n_cached(); }
  int32_t n_available() const { return n_free() + n_cached(); }  // what allocate() can hand out
  int32_t peak_in_use() const { return peak_in_use_; }

  // Throws if the bookkeeping is inconsistent: counts that do not add up, a block both free and
  // cached, a cached block with references, a published block missing from the index.
  void check() const;

 private:
  struct Meta {
    bool published = false;
    uint64_t hash = 0, parent = 0;
    std::vector<int32_t> tokens;
    std::list<BlockId>::iterator lru_pos;
    bool in_lru = false;
  };
  void unpublish(BlockId b);

  int block_size_;
  std::vector<int32_t> ref_;
  std::vector<uint32_t> gen_;
  std::vector<Meta> meta_;
  std::vector<BlockId> free_;
  std::list<BlockId> lru_;  // cached blocks, least recently released first
  std::unordered_multimap<uint64_t, BlockId> index_;
  int32_t peak_in_use_ = 0;
};

}  // namespace brisk
