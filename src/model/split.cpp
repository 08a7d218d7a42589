#include "model/split.h"

#include <algorithm>

#include "core/error.h"

namespace brisk {
namespace {

constexpr int64_t kRowUnit = 16;  // ops/repack.h's row group

RowShare whole_rows(int64_t m) {
  return {0, m, {m}};
}

// Whole row groups, as even as they go: rank r takes groups [r*g/N, (r+1)*g/N).
RowShare share_rows(int64_t m, int rank, int n) {
  const int64_t groups = (m + kRowUnit - 1) / kRowUnit;
  auto first = [&](int r) { return std::min(m, r * groups / n * kRowUnit); };
  RowShare s;
  for (int r = 0; r < n; ++r) s.counts.push_back(first(r + 1) - first(r));
  s.first = first(rank);
  s.count = s.counts[static_cast<size_t>(rank)];
  return s;
}

// Rows [first, first + count) of a matrix of m rows, widened to whole row groups.
HeadRows head_rows(int64_t first, int64_t count, int64_t m) {
  const int64_t g0 = first / kRowUnit * kRowUnit;
  const int64_t g1 = std::min(m, (first + count + kRowUnit - 1) / kRowUnit * kRowUnit);
  return {g0, g1 - g0, first - g0};
}

}  // namespace

Split Split::whole(const HParams& h) {
  Split s;
  s.n_head = h.n_head;
  s.n_head_kv = h.n_head_kv;
  s.q = whole_rows(h.q_dim());
  s.embd = whole_rows(h.n_embd);
  s.ff = whole_rows(h.n_ff);
  s.ff_exp = whole_rows(h.n_ff_exp);
  s.vocab = whole_rows(h.n_vocab);
  s.q_rows = {0, h.q_dim(), 0};
  s.kv_rows = {0, h.kv_dim(), 0};
  return s;
}

Split Split::make(const HParams& h, Communicator& comm) {
  Split s = whole(h);
  s.comm = &comm;
  s.rank = comm.rank();
  s.size = comm.size();
  const int n = s.size, r = s.rank;
  if (n == 1) return s;
  if (h.n_head % n != 0)
    fail(
        "the model has {} query heads, which {} ranks cannot share evenly: run a number of ranks "
        "that divides head_count",
        h.n_head, n);
  s.n_head = h.n_head / n;
  s.head0 = r * s.n_head;
  if (h.n_head_kv % n == 0) {
    s.n_head_kv = h.n_head_kv / n;
    s.kv_head0 = r * s.n_head_kv;
  } else if (n % h.n_head_kv == 0) {
    // Fewer KV heads than ranks: each rank keeps the one KV head its query heads read (vLLM's
    // replication), so the KV cache grows only head_count_kv-fold.
    s.n_head_kv = 1;
    s.kv_head0 = s.head0 / (h.n_head / h.n_head_kv);
  } else {
    fail("the model has {} KV heads and {} ranks: one must divide the other", h.n_head_kv, n);
  }
  const int64_t q_rows = static_cast<int64_t>(s.n_head) * h.head_dim;
  s.q = {r * q_rows, q_rows, std::vector<int64_t>(static_cast<size_t>(n), q_rows)};
  s.q_rows = head_rows(s.q.first, q_rows, h.q_dim());
  s.kv_rows = head_rows(static_cast<int64_t>(s.kv_head0) * h.head_dim,
                        static_cast<int64_t>(s.n_head_kv) * h.head_dim, h.kv_dim());
  s.embd = share_rows(h.n_embd, r, n);
  s.ff = share_rows(h.n_ff, r, n);
  s.ff_exp = share_rows(h.n_ff_exp, r, n);
  s.vocab = share_rows(h.n_vocab, r, n);
  return s;
}

}  // namespace brisk
