#include "engine/sequence.h"

namespace brisk {

namespace {
// A draft's sampler has the target's settings and a random stream of its own: drawing proposals
// and judging them from one stream would correlate them.
SamplingParams draft_sampling(SamplingParams p) {
  p.seed = p.seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  return p;
}
}  // namespace

Seq::Seq(Req* r, int idx, const Tokenizer& tok, const SamplingParams& sp)
    : req(r),
      index(idx),
      sampler(sp),
      dec(tok, !r->request.skip_special_tokens),
      draft_sampler(draft_sampling(sp)) {}

bool Req::all_done() const {
  for (const auto& s : seqs)
    if (!s->done) return false;
  return static_cast<int>(seqs.size()) == request.n || aborted;
}

}  // namespace brisk
