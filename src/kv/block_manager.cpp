#include "kv/block_manager.h"

#include <algorithm>

#include "core/error.h"

namespace brisk {

BlockManager::BlockManager(int32_t n_blocks, int block_size, uint64_t salt, bool prefix_caching)
    : pool_(n_blocks, block_size), salt_(salt), caching_(prefix_caching) {}

BlockManager::Table& BlockManager::get(int32_t seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) fail("KV: sequence {} has no block table", seq);
  return it->second;
}

const BlockManager::Table& BlockManager::get(int32_t seq) const {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) fail("KV: sequence {} has no block table", seq);
  return it->second;
}

const std::vector<BlockId>& BlockManager::table(int32_t seq) const {
  return get(seq).blocks;
}

int64_t BlockManager::begin(int32_t seq, std::span<const int32_t> tokens) {
  if (seqs_.count(seq)) fail("KV: sequence {} already has a block table", seq);
  Table& t = seqs_[seq];
  if (!caching_ || tokens.empty()) return 0;
  const int64_t bs = block_size();
  const int64_t n = static_cast<int64_t>(tokens.size());
  uint64_t parent = 0;
  // Only blocks that end before the last token: it is always computed again for its logits.
  for (int64_t i = 0; (i + 1) * bs <= n - 1; ++i) {
    const auto blk = tokens.subspan(static_cast<size_t>(i * bs), static_cast<size_t>(bs));
    const uint64_t h = block_hash(parent, blk, salt_);
    const BlockId b = pool_.lookup(h, parent, blk);
    if (b < 0) break;
    t.blocks.push_back(b);
    t.hashes.push_back(h);
    parent = h;
  }
  return static_cast<int64_t>(t.blocks.size()) * bs;
}

int32_t BlockManager::blocks_needed(int32_t seq, int64_t from, int64_t to) const {
  const Table& t = get(seq);
  const int64_t bs = block_size();
  const int64_t have = static_cast<int64_t>(t.blocks.size());
  const int64_t need = (to + bs - 1) / bs;
  int32_t n = static_cast<int32_t>(std::max<int64_t>(0, need - have));
  const int64_t first = from / bs;
  if (from < to && first < have && pool_.ref_count(t.blocks[static_cast<size_t>(first)]) > 1) ++n;
  return n;
}

bool BlockManager::grow(int32_t seq, int64_t from, int64_t to, std::vector<BlockCopy>& copies) {
  Table& t = get(seq);
  if (from >= to) return true;
  if (blocks_needed(seq, from, to) > pool_.n_available()) return false;
  const int64_t bs = block_size();
  const size_t first = static_cast<size_t>(from / bs);
  if (first < t.blocks.size() && pool_.ref_count(t.blocks[first]) > 1) {
    // Copy-on-write: this sequence is about to write into a block others still read.
    const BlockId copy = pool_.allocate();
    copies.push_back({t.blocks[first], copy});
    pool_.release(t.blocks[first]);
    t.blocks[first] = copy;
  }
  while (static_cast<int64_t>(t.blocks.size()) * bs < to) t.blocks.push_back(pool_.allocate());
  return true;
}

void BlockManager::computed(int32_t seq, std::span<const int32_t> tokens, int64_t n) {
  if (!caching_) return;
  Table& t = get(seq);
  const int64_t bs = block_size();
  for (size_t i = t.hashes.size(); static_cast<int64_t>(i + 1) * bs <= n; ++i) {
    if (i >= t.blocks.size()) fail("KV: sequence {} computed past its blocks", seq);
    const uint64_t parent = i == 0 ? 0 : t.hashes[i - 1];
    const auto blk = tokens.subspan(i * static_cast<size_t>(bs), static_cast<size_t>(bs));
    const uint64_t h = block_hash(parent, blk, salt_);
    pool_.publish(t.blocks[i], h, parent, blk);
    t.hashes.push_back(h);
  }
}

void BlockManager::truncate(int32_t seq, int64_t n) {
  Table& t = get(seq);
  const int64_t bs = block_size();
  const auto keep = static_cast<size_t>((std::max<int64_t>(n, 0) + bs - 1) / bs);
  if (static_cast<int64_t>(t.hashes.size()) * bs > n)
    fail("KV: sequence {} truncated into its published blocks", seq);
  while (t.blocks.size() > keep) {
    pool_.release(t.blocks.back());
    t.blocks.pop_back();
  }
}

void BlockManager::fork(int32_t parent, int32_t child) {
  if (seqs_.count(child)) fail("KV: sequence {} already has a block table", child);
  const Table copy = get(parent);
  for (BlockId b : copy.blocks) pool_.ref(b);
  seqs_.emplace(child, copy);
}

void BlockManager::free(int32_t seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  // Released last block first, so a prompt's tail is evicted before its head: the head is the
  // part other requests are likeliest to share.
  for (auto b = it->second.blocks.rbegin(); b != it->second.blocks.rend(); ++b) pool_.release(*b);
  seqs_.erase(it);
}

void BlockManager::check() const {
  pool_.check();
  std::vector<int32_t> refs(static_cast<size_t>(pool_.n_blocks()), 0);
  for (const auto& [id, t] : seqs_)
    for (BlockId b : t.blocks) {
      if (b < 0 || b >= pool_.n_blocks()) fail("KV: sequence {} holds invalid block {}", id, b);
      ++refs[static_cast<size_t>(b)];
    }
  for (BlockId b = 0; b < pool_.n_blocks(); ++b)
    if (refs[static_cast<size_t>(b)] != pool_.ref_count(b))
      fail("KV: block {} has ref count {} but {} tables hold it", b, pool_.ref_count(b),
           refs[static_cast<size_t>(b)]);
}

}  // namespace brisk
