// The forward pass over a ragged batch: embed → each layer as its architecture composes it from
// the shared blocks (model/blocks.h: attention, feed-forward) → final norm → classifier. Every
// weight is applied to all the batch's tokens in one matrix product; attention runs per token
// over its own sequence's cache. A block's residual add is done with the next block's input norm,
// in one pass over the batch.
// On a model split over ranks (model/split.h) each product computes this rank's rows and the
// ranks gather them; rank 0's run() first sends the batch to the other ranks, which run it from
// follow_plans (model/follower.h).
#pragma once

#include <functional>
#include <vector>

#include "core/thread_pool.h"
#include "kv/kv_cache.h"
#include "model/batch.h"
#include "model/blocks.h"
#include "model/model.h"
#include "ops/attention.h"

namespace brisk {

class Forward : private LayerBlocks {
 public:
  Forward(const Model& m, ThreadPool& pool) : m_(m), pool_(pool), s_(m.split) {}

  // The inputs of the linear layers, for calibration (AWQ): the attention block's normed input
  // (q/k/v), the attention output (o), the FFN's normed input (gate/up), the SwiGLU product (down).
  // Where activations are observed: each linear layer's input (Output: the classifier's, with
  // layer = n_layer, for the rows whose logits are computed).
  enum class Site { AttnIn, AttnOut, FfnIn, DownIn, Output };
  using Observer =
      std::function<void(int layer, Site site, const float* x, int64_t n_tokens, int64_t dim)>;
  // One process only: a rank sees only its rows of some of these.
  void set_observer(Observer o);
  // The most memory a mixture of experts' slots may take at once (tokens beyond it go through in
  // further runs); tests make it small to take that path.
  void set_expert_run_bytes(int64_t bytes) { expert_run_bytes_ = bytes; }

  // Runs the batch, storing its keys and values in `cache`. Returns n_out rows of n_vocab logits
  // (the tokens marked in batch.logits, in batch order; none marked: only the cache is filled);
  // valid until the next call.
  // n_layers < n_layer runs only the first n_layers blocks before the final norm and classifier:
  // the model's own cheap draft (self-speculation by layer skipping).
  // On a split model every rank calls this for the same batch, rank 0 first sending it to the
  // others (follow_plans receives it there); only rank 0 receives logits (the others get null).
  const float* run(const Batch& batch, KvCache& cache, int n_layers = -1);

 private:
  // The forward pass itself, on a batch run() has checked.
  const float* compute(const Batch& batch, KvCache& cache, int n_layers);
  // Every rank's rows of a product (`local`: n tokens x this rank's share.count) as n tokens x
  // all rows, in `full`; in one process, `local` itself. !to_all: only rank 0 receives them (the
  // others get null).
  float* gather(std::vector<float>& local, int64_t n, const RowShare& share,
                std::vector<float>& full, bool to_all = true);
  // Finds the batch's sequences and groups its tokens by them (seqs_, tok_seq_, by_seq_).
  void index_batch(const Batch& b);
  // Throws unless every token, position and cache row of the batch is valid.
  void check(const Batch& b, KvCache& cache) const;
  // The blocks (model/blocks.h), over the batch compute() runs.
  void attention(int layer) override;
  void feed_forward(int layer) override;
  void mixture_of_experts(int layer) override;
  // The experts for tokens [t0, t0 + n) of the batch, into their rows of moe_out_.
  void run_experts(int layer, int64_t t0, int64_t n);
  // Routes those tokens (moe_chosen_, moe_weight_) and groups their (token, expert) slots by
  // expert (moe_first_, moe_token_ counted from t0, moe_slot_); returns the slot count.
  int64_t route(int layer, int64_t t0, int64_t n);
  // xn = norm(x), after adding the last block's output (residual_) to x.
  void block_input(const std::vector<float>& norm);
  // A block's output rows normed in place by its post-norm (Gemma's sandwich norms; none: as
  // they are).
  float* post_norm(float* rows, int64_t n, const std::vector<float>& norm);
  // Each token's attention over its sequence's cache (q_ to att_).
  void attend(int layer, const Batch& b, KvCache& cache);
  // x += add (if given), then xn = rmsnorm(x) with weights `norm` (if given), token by token in
  // one pass: one hand-off to the pool where a block's residual meets the next block's norm.
  void residual_norm(int64_t n, const float* add, const float* norm);
  void ensure(int64_t n);

  void observe(int layer, Site s, const std::vector<float>& x, int64_t n, int64_t dim) const {
    if (observer_) observer_(layer, s, x.data(), n, dim);
  }

  const Model& m_;
  ThreadPool& pool_;
  Observer observer_;
  int64_t cap_ = 0;
  const Split& s_;
  const Batch* batch_ = nullptr;  // what compute() runs
  KvCache* cache_ = nullptr;
  const float* residual_ = nullptr;  // the last block's output, not yet added to x_
  int64_t expert_run_bytes_ = int64_t{256} << 20;
  // q_, k_, v_, att_, tmp_, gate_, up_ hold this rank's rows; the *_all_ buffers every rank's
  // (split models only), gathered_ the rank-major rows as they arrive.
  std::vector<float> x_, xn_, q_, k_, v_, att_, tmp_, gate_, up_, logits_;
  std::vector<float> att_all_, tmp_all_, gate_all_, logits_all_, gathered_;
  std::vector<int64_t> gather_counts_;  // floats per rank of the current gather
  // The batch's sequences (id, positions they attend over) and each token's index into them,
  // found once per run; spans_ holds each sequence's KV spans for the current layer.
  std::vector<std::pair<int32_t, int64_t>> seqs_;
  std::vector<int32_t> tok_seq_, seq_first_;
  std::vector<int64_t> by_seq_;
  std::vector<KvSpan> spans_;
  std::vector<std::pair<size_t, size_t>> seq_spans_;
  // Attention work: tokens by_seq_[first, first + count) of sequence seq, summing `cost` keys.
  struct Group {
    int64_t cost;
    int32_t seq, first, count;
  };
  std::vector<Group> groups_;
  std::vector<AttnQuery> queries_;  // in by_seq_ order
  // Mixture of experts: the router's scores, each token's experts and weights (n x n_used), the
  // slots grouped by expert (expert e's are [moe_first_[e], moe_first_[e + 1]), their tokens in
  // moe_token_; moe_slot_[i * n_used + j]: where token i's j-th expert's slot is), and the slots'
  // inputs, SwiGLU products and outputs.
  std::vector<float> moe_scores_, moe_weight_, moe_x_, moe_gate_, moe_up_, moe_y_, moe_out_;
  std::vector<float> moe_gate_all_, moe_y_all_;
  std::vector<int32_t> moe_chosen_;
  std::vector<int64_t> moe_first_, moe_token_, moe_slot_;
};

}  // namespace brisk
