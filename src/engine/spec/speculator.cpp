#include "engine/spec/speculator.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "core/clock.h"
#include "core/error.h"
#include "engine/limits.h"
#include "model/model.h"

namespace brisk {

namespace {
constexpr std::pair<SpecMethod, const char*> kSpecNames[] = {{SpecMethod::None, "none"},
                                                             {SpecMethod::Ngram, "ngram"},
                                                             {SpecMethod::LayerSkip, "layer-skip"},
                                                             {SpecMethod::DraftModel, "draft"}};
}  // namespace

SpecMethod parse_spec_method(const std::string& name) {
  for (const auto& [m, n] : kSpecNames)
    if (name == n) return m;
  fail("speculative method '{}' is unknown (none, ngram, layer-skip, draft)", name);
}

const char* spec_method_name(SpecMethod m) {
  for (const auto& [k, n] : kSpecNames)
    if (k == m) return n;
  return "none";
}

void check_draft_vocab(const Model& target, const Model& draft) {
  const Vocab& a = target.tokenizer->vocab();
  const Vocab& b = draft.tokenizer->vocab();
  const std::string& name = draft.file.path;
  if (a.model != b.model)
    fail("draft model {}: its tokenizer is '{}' but the target's is '{}'", name, b.model, a.model);
  const int64_t na = std::min<int64_t>(a.size(), target.hp.n_vocab);
  const int64_t nb = std::min<int64_t>(b.size(), draft.hp.n_vocab);
  if (std::abs(na - nb) > 128)
    fail(
        "draft model {}: its vocabulary has {} tokens and the target's {}; they must be the same "
        "vocabulary (at most 128 padding ids apart)",
        name, nb, na);
  if (a.bos != b.bos || a.eos != b.eos)
    fail("draft model {}: BOS/EOS are {}/{} there but {}/{} in the target", name, b.bos, b.eos,
         a.bos, a.eos);
  for (int64_t i = 0; i < std::min(na, nb); ++i)
    if (a.tokens[static_cast<size_t>(i)] != b.tokens[static_cast<size_t>(i)])
      fail("draft model {}: token {} is '{}' there but '{}' in the target", name, i,
           b.tokens[static_cast<size_t>(i)], a.tokens[static_cast<size_t>(i)]);
}

namespace {

// Cuts a draft at the first token its constraint refuses: a proposer never offers one.
void keep_allowed(SeqGrammar& g, std::vector<int32_t>& draft) {
  size_t n = 0;
  while (n < draft.size() && !g.ended() && g.allows(draft[n])) g.accept(draft[n++]);
  g.rollback(n);
  draft.resize(n);
}

void check_config(const Model& m, const SpecConfig& c) {
  if (c.draft_max < 0 || c.draft_max > kMaxDraftTokens)
    fail("speculative draft max {} is not in 0..{}", c.draft_max, kMaxDraftTokens);
  if (c.draft_min < 1 || c.draft_min > std::max(c.draft_max, 1))
    fail("speculative draft min {} is not in 1..{}", c.draft_min, c.draft_max);
  if (c.ngram.n_min < 1 || c.ngram.n_max < c.ngram.n_min || c.ngram.n_max > kMaxNgram)
    fail("prompt lookup n-gram sizes {}..{} are invalid (1 <= min <= max <= {})", c.ngram.n_min,
         c.ngram.n_max, kMaxNgram);
  if (c.method == SpecMethod::LayerSkip) {
    if (m.hp.n_layer < 2) fail("layer skipping needs a model of two layers or more");
    if (c.draft_layers < 0 || c.draft_layers >= m.hp.n_layer)
      fail("layer skipping: {} draft layers of {} (the draft must skip at least one)",
           c.draft_layers, m.hp.n_layer);
  }
  if (c.method == SpecMethod::DraftModel) {
    if (!c.draft_model) fail("speculative decoding with a draft model needs the draft model");
    check_draft_vocab(m, *c.draft_model);
  }
}

}  // namespace

Speculator::Speculator(const Model& m, const SpecConfig& c, Forward& forward, KvCache& cache,
                       ThreadPool& pool, const BlockManager& tables,
                       const std::optional<KvGeometry>& draft_geom)
    : model_(m), config_(c) {
  check_config(m, c);
  stats_.accepted_per_pos.assign(static_cast<size_t>(c.draft_max), 0);
  // Each proposer's drafted token costs, before it is timed, the share of the weights it reads.
  if (c.method == SpecMethod::LayerSkip) {
    const int layers = c.draft_layers > 0
                           ? c.draft_layers
                           : static_cast<int>(std::max<int64_t>(1, m.hp.n_layer / 2));
    drafter_ = std::make_unique<ModelDrafter>(forward, cache, layers, m.hp.n_vocab);
    model_policy_.set_draft_cost_prior(layers / static_cast<double>(m.hp.n_layer));
  }
  if (c.method == SpecMethod::DraftModel) {
    const Model& draft = *c.draft_model;
    drafter_ = std::make_unique<ModelDrafter>(draft, std::min(m.hp.n_vocab, draft.hp.n_vocab), pool,
                                              *draft_geom, tables);
    own_draft_cache_ = true;
    model_policy_.set_draft_cost_prior(
        static_cast<double>(draft.w.matrix_bytes()) /
        static_cast<double>(std::max<uint64_t>(m.w.matrix_bytes(), 1)));
  }
}

Speculator::~Speculator() = default;

SpecMethod Speculator::proposer(const Seq& s) const {
  return s.req->request.proposer.value_or(config_.method);
}

void Speculator::propose(const std::vector<Seq*>& decoding, int64_t step, int64_t max_len) {
  proposer_seconds_ = 0;
  for (Seq* s : decoding) s->draft.clear();
  if (config_.disable_batch_size > 0 &&
      decoding.size() > static_cast<size_t>(config_.disable_batch_size))
    return;
  double ngram_seconds = 0;
  int64_t ngram_tokens = 0;
  for (Seq* sp : decoding) {
    Seq& s = *sp;
    const Request& r = s.req->request;
    const SpecMethod method = proposer(s);
    if (method == SpecMethod::None) continue;
    const bool model = method != SpecMethod::Ngram;
    // A draft model must first compute the KV of the tokens it has not seen.
    const int64_t lag =
        model && own_draft_cache_ ? s.n_computed - std::max<int64_t>(s.n_draft_computed, 0) : 0;
    int64_t g = config_.adaptive ? (model ? model_policy_ : ngram_policy_)
                                       .choose(s.spec, r.draft_max,
                                               static_cast<int64_t>(decoding.size()), step, lag)
                                 : r.draft_max;
    // Positions past the model length, or tokens past max_tokens, would only be thrown away.
    g = std::min<int64_t>(g, max_len - static_cast<int64_t>(s.tokens.size()));
    if (r.max_tokens > 0) g = std::min(g, r.max_tokens - s.n_generated - 1);
    if (g < config_.draft_min) continue;
    s.draft_q.clear();
    if (model) {
      // Placeholders: the scheduler only needs the length; the tokens are drafted after it ran.
      s.draft.assign(static_cast<size_t>(g), s.tokens.back());
    } else {
      const double t0 = now_seconds();
      s.draft = ngram_propose(s.tokens, config_.ngram, static_cast<int>(g));
      if (s.matcher) keep_allowed(*s.matcher, s.draft);
      ngram_seconds += now_seconds() - t0;
      if (static_cast<int>(s.draft.size()) < config_.draft_min) s.draft.clear();
      ngram_tokens += static_cast<int64_t>(s.draft.size());
    }
  }
  ngram_policy_.drafted(ngram_tokens, ngram_seconds);
  proposer_seconds_ += ngram_seconds;
}

void Speculator::draft(const StepPlan& plan) {
  if (!drafter_) return;
  for (SchedSeq* p : plan.preempted) static_cast<Seq*>(p)->n_draft_computed = -1;
  tasks_.clear();
  for (const auto& ch : plan.chunks) {
    Seq& s = static_cast<Seq&>(*ch.seq);
    if (ch.n_draft == 0 || proposer(s) == SpecMethod::Ngram) continue;
    s.draft_sampler.follow(s.sampler);
    tasks_.push_back(
        {&s, &s.draft_sampler, &s.draft_q, &s.n_draft_computed, s.matcher ? &*s.matcher : nullptr});
  }
  if (tasks_.empty()) return;
  const double t0 = drafter_->seconds();
  drafter_->run(tasks_);
  const double dt = drafter_->seconds() - t0;
  drafter_seconds_ += dt;
  proposer_seconds_ += dt;
  int64_t drafted = 0;
  for (const DraftTask& t : tasks_) drafted += static_cast<int64_t>(t.seq->draft.size());
  model_policy_.drafted(drafted, dt);
  if (own_draft_cache_)
    model_policy_.first_pass(drafter_->first_pass_rows(), drafter_->first_pass_seconds());
}

// Each position in order, as plain decoding would sample it, stopping at the first token that
// differs from the draft (it replaces the draft's token) or after the last draft token (one more
// token, from the last row).
int64_t Speculator::verify(Seq& s, int64_t n_draft, const float* logits, int64_t n_vocab,
                           const EmitFn& emit) {
  const std::vector<int32_t> draft(s.draft.begin(), s.draft.begin() + n_draft);
  s.draft.clear();
  int64_t k = 0;
  for (int64_t i = 0; i <= n_draft; ++i) {
    const float* row = logits + i * n_vocab;
    static const Distribution kOneHot;  // a deterministic proposer's
    const auto at = static_cast<size_t>(i);
    // Under a constraint p is the masked distribution; the emitted token advances its matcher.
    TokenFilter* f = s.matcher ? &*s.matcher : nullptr;
    const int32_t tok =
        i < n_draft ? s.sampler.sample_verified(row, n_vocab, draft[at],
                                                at < s.draft_q.size() ? s.draft_q[at] : kOneHot, f)
                    : s.sampler.sample(row, n_vocab, f);
    if (tok < 0) {  // the constraint allows nothing: emit ends the sequence
      emit(s, tok, row);
      break;
    }
    s.sampler.accept(tok);
    const bool hit = i < n_draft && tok == draft[at];
    if (hit) ++stats_.accepted_per_pos[at];
    k += hit;
    const bool more = emit(s, tok, row);
    if (s.done || !hit || !more) break;
  }
  ++stats_.drafts;
  stats_.draft_tokens += n_draft;
  stats_.accepted_tokens += k;
  if (!s.done)
    (proposer(s) == SpecMethod::Ngram ? ngram_policy_ : model_policy_)
        .verified(s.spec, static_cast<int>(n_draft), static_cast<int>(k));
  return k;
}

void Speculator::step_done(const StepPlan& plan, int64_t tokens, double seconds) {
  // Decode-only steps teach the draft policies what a step of so many tokens costs: all of it
  // but the proposer's time (scheduling, sampling and verifying included; on a small model they
  // are a good part of a step).
  const double dt = seconds - proposer_seconds_;
  if (std::all_of(plan.chunks.begin(), plan.chunks.end(), [](const ScheduledChunk& ch) {
        return ch.logits && ch.count == 1 + ch.n_draft;
      })) {
    ngram_policy_.decode_step(tokens, dt);
    model_policy_.decode_step(tokens, dt);
  } else {
    ngram_policy_.prompt_step(tokens, dt);
    model_policy_.prompt_step(tokens, dt);
  }
}

void Speculator::copy_block(int32_t src, int32_t dst) {
  if (drafter_ && drafter_->own_cache()) drafter_->own_cache()->copy_block(src, dst);
}

uint64_t Speculator::own_cache_bytes() const {
  return drafter_ && drafter_->own_cache() ? drafter_->own_cache()->bytes() : 0;
}

}  // namespace brisk
