// How a model is divided among the ranks of a job (tensor parallelism). Every matrix is split by
// output rows only: rank r computes its rows with the same kernel one process uses, over the whole
// input, so each value is the same sum in the same order; the ranks then gather the rows. Nothing
// is ever summed across ranks, which is what keeps a token's logits bit-identical for any number
// of ranks (at the price of gathering every product rather than all-reducing half of them; see
// docs/parallel.md).
//
//   q, k, v          by heads (a rank's query heads and the KV heads they read)
//   attention        local: each rank's heads over its own share of the KV cache
//   attn_output      by rows of n_embd, after gathering every head's output
//   ffn_gate, up     by rows of n_ff
//   ffn_down         by rows of n_embd, after gathering the SwiGLU product
//   experts          each expert as the FFN (gate and up by rows of its width, down by rows of
//                    n_embd); the router whole on every rank, so all choose the same experts
//   output           by rows of the vocabulary, gathered on rank 0 only
//
// Row ranges are whole groups of 16 rows, the interleaved layout's unit, so a rank's rows are
// the same row groups one process reads (heads: see HeadRows).
#pragma once

#include <cstdint>
#include <vector>

#include "model/hparams.h"
#include "parallel/communicator.h"

namespace brisk {

struct RowShare {
  int64_t first = 0, count = 0;  // this rank's rows
  std::vector<int64_t> counts;   // every rank's count, in rank order
};

// The rows of wq (or wk, wv) a rank computes: the whole row groups around its heads' rows, so they
// go through the same kernel as in one process even when a head has fewer than 16 rows (a group
// then spans ranks and each computes it); its own heads start `offset` rows in.
struct HeadRows {
  int64_t first = 0, count = 0, offset = 0;
};

struct Split {
  Communicator* comm = nullptr;  // null: one process
  int rank = 0, size = 1;
  int head0 = 0, n_head = 0;        // this rank's query heads
  int kv_head0 = 0, n_head_kv = 0;  // the KV heads they read (shared by ranks when there are
                                    // fewer KV heads than ranks)
  RowShare q, embd, ff, vocab;      // q: rows of q (n_head * head_dim) per rank
  RowShare ff_exp;                  // rows of each expert's FFN (n_ff_exp)
  HeadRows q_rows, kv_rows;

  bool active() const { return size > 1; }
  // The whole model on one rank.
  static Split whole(const HParams& h);
  // Rank comm.rank() of comm.size(); throws naming the rule when the heads do not divide.
  static Split make(const HParams& h, Communicator& comm);
};

}  // namespace brisk
