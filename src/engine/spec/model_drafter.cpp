#include "engine/spec/model_drafter.h"

#include <algorithm>
#include <chrono>

#include "core/clock.h"
#include "core/error.h"

namespace brisk {

ModelDrafter::ModelDrafter(Forward& target, KvCache& target_cache, int n_layers, int64_t n_vocab)
    : forward_(target),
      cache_(target_cache),
      n_layers_(n_layers),
      n_vocab_(n_vocab),
      row_stride_(n_vocab),
      embed_vocab_(n_vocab) {}

ModelDrafter::ModelDrafter(const Model& draft, int64_t n_vocab, ThreadPool& pool,
                           const KvGeometry& g, const BlockManager& tables)
    : own_forward_(std::make_unique<Forward>(draft, pool)),
      own_cache_(std::make_unique<PagedKvCache>(g, tables)),
      tables_(&tables),
      forward_(*own_forward_),
      cache_(*own_cache_),
      n_layers_(-1),
      n_vocab_(n_vocab),
      row_stride_(draft.hp.n_vocab),
      embed_vocab_(draft.hp.n_vocab),
      marks_(static_cast<size_t>(tables.pool().n_blocks()), 0) {}

// A token of the target's the draft has no embedding for (vocabularies may differ in their
// padding at the end) is read as token 0: it only makes the draft's guesses worse.
int32_t ModelDrafter::draft_token(int32_t t) const {
  return t < embed_vocab_ ? t : 0;
}

bool ModelDrafter::marked(BlockId b) const {
  return marks_[static_cast<size_t>(b)] == uint64_t{tables_->pool().generation(b)} + 1;
}

// Adds to the batch the verified positions the draft's cache lacks for the sequence, after
// skipping whole blocks already marked complete.
void ModelDrafter::catch_up(const DraftTask& t) {
  const SchedSeq& s = *t.seq;
  int64_t& have = *t.n_draft_computed;
  const int64_t bs = tables_->block_size();
  const auto& table = tables_->table(s.id);
  have = std::max<int64_t>(have, 0);
  while (have % bs == 0 && have + bs <= s.n_computed &&
         marked(table[static_cast<size_t>(have / bs)]))
    have += bs;
  for (int64_t p = have; p < s.n_computed; ++p) {
    const BlockId b = table[static_cast<size_t>(p / bs)];
    // A row of a block others share is computed once a round; the others read it, stored in the
    // same layer pass before any attention reads.
    if (tables_->pool().ref_count(b) > 1 && !claimed_.insert(int64_t{b} * bs + p % bs).second)
      continue;
    batch_.add(draft_token(s.tokens[static_cast<size_t>(p)]), p, s.id, false);
  }
  have = s.n_computed;
}

// Marks the sequence's full blocks of verified tokens, all of whose rows the draft now holds.
void ModelDrafter::mark(const DraftTask& t) {
  const SchedSeq& s = *t.seq;
  const int64_t bs = tables_->block_size();
  const auto& table = tables_->table(s.id);
  const int64_t full = std::min(*t.n_draft_computed, s.n_computed) / bs;
  for (int64_t i = full - 1; i >= 0; --i) {
    const BlockId b = table[static_cast<size_t>(i)];
    if (marked(b)) break;  // and so are the ones before it
    marks_[static_cast<size_t>(b)] = uint64_t{tables_->pool().generation(b)} + 1;
  }
}

// The draft token at position j of t, drawn under the sequence's constraint, which takes it
// (undone after the round). Once the constraint allows nothing (it ended), a placeholder the
// verification refuses: the target's own token replaces it there.
int32_t ModelDrafter::propose(DraftTask& t, size_t j, const float* logits) {
  Distribution& q = (*t.q)[j];
  const bool constrained = t.matcher && t.n_taken == j;  // it took every token before
  int32_t tok = -1;
  if (!t.matcher || constrained)
    tok = t.sampler->propose(logits, n_vocab_, q, constrained ? t.matcher : nullptr);
  if (tok < 0) {
    q.clear();
    return t.seq->tokens.back();
  }
  t.sampler->accept(tok);
  if (constrained) {
    t.matcher->accept(tok);
    ++t.n_taken;
  }
  return tok;
}

void ModelDrafter::run(std::span<DraftTask> tasks) {
  const double t0 = now_seconds();
  const bool own = own_cache_ != nullptr;
  // First pass: what each sequence's draft cache lacks, and its first draft position (its last
  // token).
  batch_.clear();
  claimed_.clear();
  size_t longest = 0;
  for (DraftTask& t : tasks) {
    SchedSeq& s = *t.seq;
    if (s.draft.empty()) continue;
    if (own) catch_up(t);
    batch_.add(draft_token(s.tokens.back()), static_cast<int64_t>(s.tokens.size()) - 1, s.id, true);
    t.q->resize(s.draft.size());
    longest = std::max(longest, s.draft.size());
  }
  first_rows_ = batch_.size();
  for (size_t j = 0; j < longest; ++j) {
    const double tj = now_seconds();
    const float* lg = forward_.run(batch_, cache_, n_layers_);
    if (j == 0) first_seconds_ = now_seconds() - tj;
    int64_t row = 0;
    for (DraftTask& t : tasks) {
      if (j >= t.seq->draft.size()) continue;
      const float* r = lg + row++ * row_stride_;
      t.seq->draft[j] = propose(t, j, r);
    }
    batch_.clear();
    for (DraftTask& t : tasks) {
      SchedSeq& s = *t.seq;
      if (j + 1 >= s.draft.size()) continue;
      batch_.add(draft_token(s.draft[j]), static_cast<int64_t>(s.tokens.size() + j), s.id, true);
    }
  }
  for (DraftTask& t : tasks)  // the drafted tokens were only guesses
    if (t.matcher) t.matcher->rollback(t.n_taken);
  if (own)
    for (DraftTask& t : tasks) {
      if (t.seq->draft.empty()) continue;
      mark(t);
      // The draft's KV now holds the last token and every draft token but the final one.
      *t.n_draft_computed = static_cast<int64_t>(t.seq->tokens.size() + t.seq->draft.size()) - 1;
    }
  seconds_ += now_seconds() - t0;
}

}  // namespace brisk
