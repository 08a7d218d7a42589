#include "kv/block_pool.h"

#include <algorithm>

#include "core/error.h"

namespace brisk {

uint64_t block_hash(uint64_t parent, std::span<const int32_t> tokens, uint64_t salt) {
  // 64-bit FNV-1a over the parent, the salt and the tokens, then a final avalanche (splitmix64).
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  };
  mix(parent);
  mix(salt);
  for (int32_t t : tokens) mix(static_cast<uint32_t>(t));
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

BlockPool::BlockPool(int32_t n_blocks, int block_size)
    : block_size_(block_size),
      ref_(static_cast<size_t>(n_blocks), 0),
      gen_(static_cast<size_t>(n_blocks), 0),
      meta_(static_cast<size_t>(n_blocks)) {
  if (n_blocks <= 0 || block_size <= 0)
    fail("KV block pool needs at least one block of at least one token");
  // Handed out from the back: block 0 first.
  for (BlockId b = n_blocks - 1; b >= 0; --b) free_.push_back(b);
}

BlockId BlockPool::allocate() {
  BlockId b;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else if (!lru_.empty()) {
    b = lru_.front();
    lru_.pop_front();
    meta_[static_cast<size_t>(b)].in_lru = false;
    unpublish(b);
  } else {
    return -1;
  }
  ref_[static_cast<size_t>(b)] = 1;
  ++gen_[static_cast<size_t>(b)];
  peak_in_use_ = std::max(peak_in_use_, n_in_use());
  return b;
}

void BlockPool::ref(BlockId b) {
  if (ref_[static_cast<size_t>(b)] <= 0) fail("KV block {} referenced while not in use", b);
  ++ref_[static_cast<size_t>(b)];
}

void BlockPool::release(BlockId b) {
  int32_t& r = ref_[static_cast<size_t>(b)];
  if (r <= 0) fail("KV block {} released more often than taken", b);
  if (--r > 0) return;
  Meta& m = meta_[static_cast<size_t>(b)];
  if (m.published) {
    m.lru_pos = lru_.insert(lru_.end(), b);
    m.in_lru = true;
  } else {
    free_.push_back(b);
  }
}

BlockId BlockPool::lookup(uint64_t hash, uint64_t parent, std::span<const int32_t> tokens) {
  auto [lo, hi] = index_.equal_range(hash);
  for (auto it = lo; it != hi; ++it) {
    const BlockId b = it->second;
    Meta& m = meta_[static_cast<size_t>(b)];
    if (m.parent != parent ||
        !std::equal(tokens.begin(), tokens.end(), m.tokens.begin(), m.tokens.end()))
      continue;
    if (m.in_lru) {
      lru_.erase(m.lru_pos);
      m.in_lru = false;
    }
    ++ref_[static_cast<size_t>(b)];
    peak_in_use_ = std::max(peak_in_use_, n_in_use());
    return b;
  }
  return -1;
}

void BlockPool::publish(BlockId b, uint64_t hash, uint64_t parent,
                        std::span<const int32_t> tokens) {
  Meta& m = meta_[static_cast<size_t>(b)];
  if (m.published) return;
  auto [lo, hi] = index_.equal_range(hash);
  for (auto it = lo; it != hi; ++it) {
    const Meta& o = meta_[static_cast<size_t>(it->second)];
    if (o.parent == parent &&
        std::equal(tokens.begin(), tokens.end(), o.tokens.begin(), o.tokens.end()))
      return;
  }
  m.published = true;
  m.hash = hash;
  m.parent = parent;
  m.tokens.assign(tokens.begin(), tokens.end());
  index_.emplace(hash, b);
}

void BlockPool::unpublish(BlockId b) {
  Meta& m = meta_[static_cast<size_t>(b)];
  if (!m.published) return;
  auto [lo, hi] = index_.equal_range(m.hash);
  for (auto it = lo; it != hi; ++it)
    if (it->second == b) {
      index_.erase(it);
      break;
    }
  m.published = false;
  m.tokens.clear();
}

void BlockPool::clear_cache() {
  while (!lru_.empty()) {
    const BlockId b = lru_.front();
    lru_.pop_front();
    meta_[static_cast<size_t>(b)].in_lru = false;
    unpublish(b);
    free_.push_back(b);
  }
  for (BlockId b = 0; b < n_blocks(); ++b) unpublish(b);
}

void BlockPool::check() const {
  std::vector<uint8_t> state(ref_.size(), 0);  // 1 free, 2 cached
  for (BlockId b : free_) {
    if (b < 0 || b >= n_blocks() || state[static_cast<size_t>(b)])
      fail("KV pool: block {} listed twice", b);
    state[static_cast<size_t>(b)] = 1;
  }
  for (BlockId b : lru_) {
    if (state[static_cast<size_t>(b)]) fail("KV pool: block {} both free and cached", b);
    state[static_cast<size_t>(b)] = 2;
  }
  size_t published = 0;
  for (BlockId b = 0; b < n_blocks(); ++b) {
    const int32_t r = ref_[static_cast<size_t>(b)];
    const Meta& m = meta_[static_cast<size_t>(b)];
    const uint8_t s = state[static_cast<size_t>(b)];
    if (r < 0) fail("KV pool: block {} has ref count {}", b, r);
    if (s != 0 && r != 0) fail("KV pool: block {} is free or cached with {} references", b, r);
    if (s == 0 && r == 0) fail("KV pool: block {} leaked (no references, not free)", b);
    if (s == 2 && !m.published) fail("KV pool: cached block {} holds no published prefix", b);
    if (s == 1 && m.published) fail("KV pool: free block {} is still published", b);
    if ((s == 2) != m.in_lru) fail("KV pool: block {} LRU flag out of date", b);
    if (m.published) {
      ++published;
      bool found = false;
      auto [lo, hi] = index_.equal_range(m.hash);
      for (auto it = lo; it != hi; ++it) found |= it->second == b;
      if (!found) fail("KV pool: published block {} missing from the index", b);
    }
  }
  if (published != index_.size()) fail("KV pool: index holds unpublished blocks");
  if (n_free() + n_cached() + n_in_use() != n_blocks()) fail("KV pool: counts do not add up");
}

}  // namespace brisk
