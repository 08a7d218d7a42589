#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "core/error.h"

namespace brisk {

namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// What, besides the tokens, decides a block's keys and values: the model and the KV format.
uint64_t model_salt(const Model& m, const KvGeometry& g) {
  const std::string key = m.file.path + "|" + std::to_string(m.hp.n_layer) + "|" +
                          std::to_string(m.hp.n_embd) + "|" + std::to_string(m.hp.n_vocab) + "|" +
                          kv_type_name(g.type);
  std::vector<int32_t> bytes(key.begin(), key.end());
  return block_hash(0x5eed, bytes, 0);
}
}  // namespace

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::None:
      return "";
    case FinishReason::Stop:
      return "stop";
    case FinishReason::Length:
      return "length";
    case FinishReason::Abort:
      return "abort";
  }
  return "";
}

SpecMethod parse_spec_method(const std::string& name) {
  if (name == "none") return SpecMethod::None;
  if (name == "ngram") return SpecMethod::Ngram;
  if (name == "layer-skip") return SpecMethod::LayerSkip;
  if (name == "draft") return SpecMethod::DraftModel;
  fail("speculative method '{}' is unknown (none, ngram, layer-skip, draft)", name);
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

// A draft's sampler has the target's settings and a random stream of its own: drawing proposals
// and judging them from one stream would correlate them.
SamplingParams draft_sampling(SamplingParams p) {
  p.seed = p.seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  return p;
}

struct Engine::Seq : SchedSeq {
  Seq(Req* r, int idx, const Tokenizer& tok, const SamplingParams& sp)
      : req(r), index(idx), sampler(sp), draft_sampler(draft_sampling(sp)), dec(tok), stop() {}
  Req* req;
  int index;
  int64_t n_prompt = 0, n_generated = 0;
  Sampler sampler;
  Sampler draft_sampler;              // draws a model drafter's proposals
  std::vector<Distribution> draft_q;  // and their distributions, for verification
  StreamDecoder dec;
  StopMatcher stop;
  bool done = false;
  bool forked = false;  // children of an n > 1 request were created from it
  double scheduled_at = 0;
  TokenLogprobs logprobs;
  DraftPolicy::Seq spec;          // its acceptance so far, for the draft length
  int64_t n_draft_computed = -1;  // a draft model's cache: see DraftTask
};

struct Engine::Req {
  RequestId id;
  Request r;
  OutputFn fn;
  std::vector<std::unique_ptr<Seq>> seqs;
  bool aborted = false;
  bool all_done() const {
    for (const auto& s : seqs)
      if (!s->done) return false;
    return static_cast<int>(seqs.size()) == r.n || aborted;
  }
};

KvGeometry kv_geometry_for(const Model& m, const EngineConfig& c) {
  KvGeometry g;
  g.n_layer = static_cast<int>(m.hp.n_layer);
  g.n_head_kv = m.hp.n_head_kv;
  g.head_dim = m.hp.head_dim;
  g.block_size = c.block_size;
  g.type = c.kv_type;
  return g;
}

uint64_t kv_bytes_for_tokens(const Model& m, const EngineConfig& c, int64_t tokens) {
  uint64_t block = kv_geometry_for(m, c).bytes_per_block();
  if (c.spec.method == SpecMethod::DraftModel && c.spec.draft_model)
    block += kv_geometry_for(*c.spec.draft_model, c).bytes_per_block();
  return block * static_cast<uint64_t>((tokens + c.block_size - 1) / c.block_size);
}

Engine::Engine(const Model& m, ThreadPool& pool, const EngineConfig& c)
    : m_(m), pool_(pool), c_(c), forward_(m, pool) {
  if (c.spec.draft_max < 0 || c.spec.draft_max > kMaxDraftTokens)
    fail("speculative draft max {} is not in 0..{}", c.spec.draft_max, kMaxDraftTokens);
  if (c.spec.draft_min < 1 || c.spec.draft_min > std::max(c.spec.draft_max, 1))
    fail("speculative draft min {} is not in 1..{}", c.spec.draft_min, c.spec.draft_max);
  if (c.spec.ngram.n_min < 1 || c.spec.ngram.n_max < c.spec.ngram.n_min ||
      c.spec.ngram.n_max > kMaxNgram)
    fail("prompt lookup n-gram sizes {}..{} are invalid (1 <= min <= max <= {})",
         c.spec.ngram.n_min, c.spec.ngram.n_max, kMaxNgram);
  if (c.spec.method == SpecMethod::LayerSkip) {
    if (m.hp.n_layer < 2) fail("layer skipping needs a model of two layers or more");
    if (c.spec.draft_layers < 0 || c.spec.draft_layers >= m.hp.n_layer)
      fail("layer skipping: {} draft layers of {} (the draft must skip at least one)",
           c.spec.draft_layers, m.hp.n_layer);
  }
  const Model* draft = c.spec.method == SpecMethod::DraftModel ? c.spec.draft_model : nullptr;
  if (c.spec.method == SpecMethod::DraftModel) {
    if (!draft) fail("speculative decoding with a draft model needs the draft model");
    check_draft_vocab(m, *draft);
  }
  spec_accepted_per_pos_.assign(static_cast<size_t>(c.spec.draft_max), 0);
  if (c.block_size < 1 || c.block_size > 1024)
    fail("block size {} is not in 1..1024", c.block_size);
  geom_ = kv_geometry_for(m, c);
  if (draft) draft_geom_ = kv_geometry_for(*draft, c);
  int64_t model_len =
      c.max_model_len > 0 ? c.max_model_len : (m.hp.n_ctx_train > 0 ? m.hp.n_ctx_train : 4096);
  uint64_t budget = c.kv_cache_bytes;
  if (budget == 0)
    budget = std::min<uint64_t>(
        kv_bytes_for_tokens(m, c, model_len) * static_cast<uint64_t>(std::max(c.max_seqs, 1)),
        uint64_t{2} << 30);
  // A block holds its positions in both caches.
  const uint64_t block_bytes =
      geom_.bytes_per_block() + (draft_geom_ ? draft_geom_->bytes_per_block() : 0);
  n_blocks_ = static_cast<int32_t>(std::min<uint64_t>(budget / block_bytes, INT32_MAX));
  if (n_blocks_ < 1)
    fail("a KV cache of {} bytes holds no block ({} bytes each)", budget, block_bytes);
  max_len_ = std::min<int64_t>(model_len, capacity_tokens());
  bm_ = std::make_unique<BlockManager>(n_blocks_, c.block_size, model_salt(m, geom_),
                                       c.prefix_caching);
  cache_ = std::make_unique<PagedKvCache>(geom_, *bm_);
  // Each proposer's drafted token costs, before it is timed, the share of the weights it reads.
  if (c.spec.method == SpecMethod::LayerSkip) {
    const int layers = c.spec.draft_layers > 0
                           ? c.spec.draft_layers
                           : static_cast<int>(std::max<int64_t>(1, m.hp.n_layer / 2));
    drafter_ = std::make_unique<ModelDrafter>(forward_, *cache_, layers, m.hp.n_vocab);
    model_policy_.set_draft_cost_prior(layers / static_cast<double>(m.hp.n_layer));
  }
  if (draft) {
    drafter_ = std::make_unique<ModelDrafter>(*draft, std::min(m.hp.n_vocab, draft->hp.n_vocab),
                                              pool, *draft_geom_, *bm_);
    model_policy_.set_draft_cost_prior(
        static_cast<double>(draft->w.matrix_bytes()) /
        static_cast<double>(std::max<uint64_t>(m.w.matrix_bytes(), 1)));
  }
  sched_ = std::make_unique<Scheduler>(
      SchedulerConfig{c.max_batched_tokens, c.max_seqs, c.prefill_while_decoding}, *bm_);
}

Engine::~Engine() = default;

RequestId Engine::submit(Request r, OutputFn fn) {
  if (r.prompt.empty()) fail("the prompt is empty");
  for (int32_t t : r.prompt)
    if (t < 0 || t >= m_.hp.n_vocab)
      fail("prompt token id {} is outside the vocabulary (0..{})", t, m_.hp.n_vocab - 1);
  if (r.n < 1 || r.n > kMaxCompletions)
    fail("n = {} completions: must be between 1 and {}", r.n, kMaxCompletions);
  const int64_t len = static_cast<int64_t>(r.prompt.size());
  if (len >= max_len_)
    fail(
        "the prompt has {} tokens but at most {} fit (the maximum model length leaves room for "
        "one generated token)",
        len, max_len_ - 1);
  if (r.max_tokens == 0) fail("max_tokens must be at least 1");
  if (r.max_tokens > 0 && len + r.max_tokens > max_len_)
    fail("prompt ({} tokens) + max_tokens ({}) exceeds the maximum model length {}", len,
         r.max_tokens, max_len_);
  for (int32_t t : r.stop_token_ids)
    if (t < 0 || t >= m_.hp.n_vocab) fail("stop token id {} is outside the vocabulary", t);
  auto req = std::make_unique<Req>();
  req->id = next_id_++;
  req->r = std::move(r);
  req->fn = std::move(fn);
  if (req->r.logprobs > kMaxLogprobs)
    fail("logprobs = {}: at most {} alternatives", req->r.logprobs, kMaxLogprobs);
  if (req->r.proposer && *req->r.proposer != SpecMethod::None &&
      *req->r.proposer != SpecMethod::Ngram && *req->r.proposer != c_.spec.method)
    fail("the request asks for a proposer (draft model or layer skip) this engine does not run");
  // A request may lower the engine's draft length or turn speculation off, not raise it.
  req->r.draft_max =
      req->r.draft_max < 0 ? c_.spec.draft_max : std::min(req->r.draft_max, c_.spec.draft_max);
  const RequestId id = req->id;
  {
    std::lock_guard lk(inbox_mu_);
    inbox_.push_back(std::move(req));
  }
  inbox_cv_.notify_all();
  return id;
}

void Engine::abort(RequestId id) {
  {
    std::lock_guard lk(inbox_mu_);
    aborts_.push_back(id);
  }
  inbox_cv_.notify_all();
}

void Engine::wait_for_work(double timeout_seconds) {
  std::unique_lock lk(inbox_mu_);
  inbox_cv_.wait_for(lk, std::chrono::duration<double>(timeout_seconds),
                     [&] { return !inbox_.empty() || !aborts_.empty(); });
}

bool Engine::idle() const {
  std::lock_guard lk(inbox_mu_);
  return inbox_.empty() && aborts_.empty() && sched_->idle();
}

void Engine::take_inbox() {
  std::vector<std::unique_ptr<Req>> in;
  std::vector<RequestId> ab;
  {
    std::lock_guard lk(inbox_mu_);
    in.swap(inbox_);
    ab.swap(aborts_);
  }
  for (auto& rq : in) {
    Req* r = rq.get();
    reqs_.emplace(r->id, std::move(rq));
    auto s = std::make_unique<Seq>(r, 0, *m_.tokenizer, r->r.sampling);
    s->id = free_ids_.empty() ? next_seq_id_++ : free_ids_.back();
    if (!free_ids_.empty()) free_ids_.pop_back();
    s->tokens = r->r.prompt;
    s->n_prompt = static_cast<int64_t>(s->tokens.size());
    s->stop = StopMatcher(r->r.stop);
    for (int32_t t : s->tokens) s->sampler.accept(t);
    // After a lone BOS the first word's leading space is dropped, as when decoding the whole.
    if (s->tokens.back() == m_.tokenizer->vocab().bos) (void)s->dec.push(s->tokens.back());
    sched_->add(s.get());
    r->seqs.push_back(std::move(s));
  }
  for (RequestId id : ab) {
    auto it = reqs_.find(id);
    if (it == reqs_.end() || it->second->aborted) continue;
    it->second->aborted = true;
    for (auto& s : it->second->seqs)
      if (!s->done) finish(*s, FinishReason::Abort, "");
  }
}

Output Engine::output(const Seq& s, int32_t tok, std::string text, FinishReason r) const {
  Output o{s.req->id, s.index, tok, std::move(text), r};
  o.prompt_tokens = s.n_prompt;
  o.cached_tokens = std::max<int64_t>(s.n_cached, 0);
  o.scheduled_at = s.scheduled_at;
  if (s.req->r.logprobs >= 0 && tok >= 0) o.logprobs = &s.logprobs;
  return o;
}

void Engine::finish(Seq& s, FinishReason r, std::string text) {
  s.done = true;
  sched_->remove(&s);
  free_ids_.push_back(s.id);
  s.req->fn(output(s, r == FinishReason::Abort ? -1 : s.tokens.back(), std::move(text), r));
}

void Engine::emit_token(Seq& s, int32_t tok, const float* logits) {
  if (s.req->r.logprobs >= 0)
    s.logprobs = token_logprobs(logits, m_.hp.n_vocab, tok, s.req->r.logprobs);
  s.tokens.push_back(tok);
  ++s.n_generated;
  ++generated_;
  const Request& r = s.req->r;
  const bool eog =
      (!r.ignore_eos && m_.tokenizer->vocab().is_eog(tok)) ||
      std::find(r.stop_token_ids.begin(), r.stop_token_ids.end(), tok) != r.stop_token_ids.end();
  if (eog) {
    bool stopped = false;
    std::string text = s.stop.push(s.dec.flush(), stopped);
    finish(s, FinishReason::Stop, stopped ? text : text + s.stop.flush());
    return;
  }
  bool stopped = false;
  std::string text = s.stop.push(s.dec.push(tok), stopped);
  if (stopped) return finish(s, FinishReason::Stop, std::move(text));
  const bool length = (r.max_tokens > 0 && s.n_generated >= r.max_tokens) ||
                      static_cast<int64_t>(s.tokens.size()) >= max_len_;
  if (length) {
    text += s.stop.push(s.dec.flush(), stopped);
    if (stopped) return finish(s, FinishReason::Stop, std::move(text));
    return finish(s, FinishReason::Length, text + s.stop.flush());
  }
  s.req->fn(output(s, tok, std::move(text), FinishReason::None));
}

void Engine::fork_children(Seq& parent, const float* logits) {
  parent.forked = true;
  Req* r = parent.req;
  const SchedSeq* after = &parent;
  for (int i = 1; i < r->r.n; ++i) {
    SamplingParams sp = r->r.sampling;
    sp.seed += static_cast<uint64_t>(i);
    auto c = std::make_unique<Seq>(r, i, *m_.tokenizer, sp);
    c->id = free_ids_.empty() ? next_seq_id_++ : free_ids_.back();
    if (!free_ids_.empty()) free_ids_.pop_back();
    c->tokens = parent.tokens;
    c->n_computed = parent.n_computed;
    c->n_prompt = parent.n_prompt;
    c->n_cached = parent.n_cached;
    c->n_draft_computed = parent.n_draft_computed;
    c->scheduled_at = parent.scheduled_at;
    c->forked = true;
    c->stop = StopMatcher(r->r.stop);
    for (int32_t t : c->tokens) c->sampler.accept(t);
    if (c->tokens.back() == m_.tokenizer->vocab().bos) (void)c->dec.push(c->tokens.back());
    bm_->fork(parent.id, c->id);
    sched_->add_forked(c.get(), after);
    after = c.get();
    Seq& ref = *c;
    r->seqs.push_back(std::move(c));
    const int32_t tok = ref.sampler.sample(logits, m_.hp.n_vocab);
    ref.sampler.accept(tok);
    emit_token(ref, tok, logits);
  }
}

bool Engine::step() {
  take_inbox();
  if (sched_->idle()) return false;
  const double t_step = now();
  proposer_seconds_ = 0;
  propose();
  const StepPlan plan = sched_->schedule();
  peak_running_ = std::max(peak_running_, sched_->n_running());
  for (const auto& [src, dst] : plan.copies) {
    cache_->copy_block(src, dst);
    if (drafter_ && drafter_->own_cache()) drafter_->own_cache()->copy_block(src, dst);
  }
  if (drafter_) draft(plan);
  if (!plan.chunks.empty()) {
    batch_.clear();
    const double t_plan = now();
    for (const auto& ch : plan.chunks) {
      Seq& s = static_cast<Seq&>(*ch.seq);
      if (s.scheduled_at == 0) s.scheduled_at = t_plan;
      const auto held = static_cast<int64_t>(s.tokens.size());
      for (int64_t p = ch.start; p < ch.start + ch.count; ++p)
        batch_.add(
            p < held ? s.tokens[static_cast<size_t>(p)] : s.draft[static_cast<size_t>(p - held)], p,
            s.id, ch.logits && p + 1 + ch.n_draft >= ch.start + ch.count);
      prompt_tokens_ += std::max<int64_t>(0, std::min(ch.start + ch.count, s.n_prompt) - ch.start);
    }
    const double t0 = now();
    const float* logits = forward_.run(batch_, *cache_);
    forward_seconds_ += now() - t0;
    sched_->computed(plan);
    int64_t row = 0;
    for (const auto& ch : plan.chunks) {
      if (!ch.logits) continue;
      Seq& s = static_cast<Seq&>(*ch.seq);
      const float* lg = logits + row * m_.hp.n_vocab;
      row += 1 + ch.n_draft;
      if (ch.n_draft > 0) {
        verify(s, ch.n_draft, lg);
        continue;
      }
      if (s.req->r.n > 1 && !s.forked) fork_children(s, lg);
      const int32_t tok = s.sampler.sample(lg, m_.hp.n_vocab);
      s.sampler.accept(tok);
      emit_token(s, tok, lg);
    }
    // Decode-only steps teach the draft policies what a step of so many tokens costs: all of it
    // but the proposer's time (scheduling, sampling and verifying included; on a small model
    // they are a good part of a step).
    const double dt = now() - t_step - proposer_seconds_;
    if (std::all_of(plan.chunks.begin(), plan.chunks.end(), [](const ScheduledChunk& ch) {
          return ch.logits && ch.count == 1 + ch.n_draft;
        })) {
      ngram_policy_.decode_step(batch_.size(), dt);
      model_policy_.decode_step(batch_.size(), dt);
    } else {
      ngram_policy_.prompt_step(batch_.size(), dt);
      model_policy_.prompt_step(batch_.size(), dt);
    }
  }
  ++steps_;
  for (auto it = reqs_.begin(); it != reqs_.end();)
    it = it->second->all_done() ? reqs_.erase(it) : std::next(it);
  return true;
}

SpecMethod Engine::proposer(const Seq& s) const {
  return s.req->r.proposer.value_or(c_.spec.method);
}

// Drafts for the sequences about to decode: as many tokens as the draft policy expects to pay.
void Engine::propose() {
  std::vector<Seq*> decoding;
  for (auto& [id, r] : reqs_)
    for (auto& sp : r->seqs) {
      Seq& s = *sp;
      s.draft.clear();
      if (!s.done && s.n_generated > 0 && static_cast<int64_t>(s.tokens.size()) - s.n_computed == 1)
        decoding.push_back(&s);
    }
  if (c_.spec.disable_batch_size > 0 &&
      decoding.size() > static_cast<size_t>(c_.spec.disable_batch_size))
    return;
  double ngram_seconds = 0;
  int64_t ngram_tokens = 0;
  for (Seq* sp : decoding) {
    Seq& s = *sp;
    const Request& r = s.req->r;
    const SpecMethod method = proposer(s);
    if (method == SpecMethod::None) continue;
    const bool model = method != SpecMethod::Ngram;
    // A draft model must first compute the KV of the tokens it has not seen.
    const int64_t lag =
        model && draft_geom_ ? s.n_computed - std::max<int64_t>(s.n_draft_computed, 0) : 0;
    int64_t g = c_.spec.adaptive ? (model ? model_policy_ : ngram_policy_)
                                       .choose(s.spec, r.draft_max,
                                               static_cast<int64_t>(decoding.size()), steps_, lag)
                                 : r.draft_max;
    // Positions past the model length, or tokens past max_tokens, would only be thrown away.
    g = std::min<int64_t>(g, max_len_ - static_cast<int64_t>(s.tokens.size()));
    if (r.max_tokens > 0) g = std::min(g, r.max_tokens - s.n_generated - 1);
    if (g < c_.spec.draft_min) continue;
    s.draft_q.clear();
    if (model) {
      // Placeholders: the scheduler only needs the length; the tokens are drafted after it ran.
      s.draft.assign(static_cast<size_t>(g), s.tokens.back());
    } else {
      const double t0 = now();
      s.draft = ngram_propose(s.tokens, c_.spec.ngram, static_cast<int>(g));
      ngram_seconds += now() - t0;
      if (static_cast<int>(s.draft.size()) < c_.spec.draft_min) s.draft.clear();
      ngram_tokens += static_cast<int64_t>(s.draft.size());
    }
  }
  ngram_policy_.drafted(ngram_tokens, ngram_seconds);
  proposer_seconds_ += ngram_seconds;
}

// A model drafter's round: the sequences given a draft in this step by it.
void Engine::draft(const StepPlan& plan) {
  for (SchedSeq* p : plan.preempted) static_cast<Seq*>(p)->n_draft_computed = -1;
  draft_tasks_.clear();
  for (const auto& ch : plan.chunks) {
    Seq& s = static_cast<Seq&>(*ch.seq);
    if (ch.n_draft == 0 || proposer(s) == SpecMethod::Ngram) continue;
    s.draft_sampler.follow(s.sampler);
    draft_tasks_.push_back({&s, &s.draft_sampler, &s.draft_q, &s.n_draft_computed});
  }
  if (draft_tasks_.empty()) return;
  const double t0 = drafter_->seconds();
  drafter_->run(draft_tasks_);
  const double dt = drafter_->seconds() - t0;
  forward_seconds_ += dt;
  proposer_seconds_ += dt;
  int64_t drafted = 0;
  for (const DraftTask& t : draft_tasks_) drafted += static_cast<int64_t>(t.seq->draft.size());
  model_policy_.drafted(drafted, dt);
  if (draft_geom_)
    model_policy_.first_pass(drafter_->first_pass_rows(), drafter_->first_pass_seconds());
}

// Samples each position of a decode chunk that carried a draft, in order, as plain decoding would,
// stopping at the first token that differs from the draft (it replaces the draft's token) or after
// the last draft token (one more token, from the last row).
void Engine::verify(Seq& s, int64_t n_draft, const float* logits) {
  const int64_t V = m_.hp.n_vocab;
  const std::vector<int32_t> draft(s.draft.begin(), s.draft.begin() + n_draft);
  s.draft.clear();
  int64_t k = 0;
  for (int64_t i = 0; i <= n_draft; ++i) {
    const float* row = logits + i * V;
    static const Distribution kOneHot;  // a deterministic proposer's
    const auto at = static_cast<size_t>(i);
    const int32_t tok =
        i < n_draft ? s.sampler.sample_verified(row, V, draft[at],
                                                at < s.draft_q.size() ? s.draft_q[at] : kOneHot)
                    : s.sampler.sample(row, V);
    s.sampler.accept(tok);
    const bool hit = i < n_draft && tok == draft[static_cast<size_t>(i)];
    if (hit) ++spec_accepted_per_pos_[static_cast<size_t>(i)];
    k += hit;
    emit_token(s, tok, row);
    if (s.done || !hit) break;
  }
  ++spec_drafts_;
  spec_draft_tokens_ += n_draft;
  spec_accepted_ += k;
  if (s.done) return;
  (proposer(s) == SpecMethod::Ngram ? ngram_policy_ : model_policy_)
      .verified(s.spec, static_cast<int>(n_draft), static_cast<int>(k));
  sched_->accept_draft(&s, k);
  s.n_draft_computed = std::min(s.n_draft_computed, s.n_computed);  // the rest guessed wrong
}

void Engine::run_until_idle() {
  while (step()) {
  }
}

void Engine::clear_prefix_cache() {
  bm_->pool().clear_cache();
}

EngineStats Engine::stats() const {
  EngineStats st;
  st.prompt_tokens = prompt_tokens_;
  st.generated_tokens = generated_;
  st.steps = steps_;
  st.preemptions = sched_->n_preemptions();
  st.cache_queries = bm_->cache_queries();
  st.cache_hits = bm_->cache_hits();
  const BlockPool& p = bm_->pool();
  st.blocks_total = p.n_blocks();
  st.blocks_in_use = p.n_in_use();
  st.blocks_cached = p.n_cached();
  st.peak_blocks_in_use = p.peak_in_use();
  st.running = sched_->n_running();
  st.waiting = sched_->n_waiting();
  st.peak_running = peak_running_;
  st.forward_seconds = forward_seconds_;
  st.spec_drafts = spec_drafts_;
  st.spec_draft_tokens = spec_draft_tokens_;
  st.spec_accepted_tokens = spec_accepted_;
  st.spec_accepted_per_pos = spec_accepted_per_pos_;
  return st;
}

uint64_t Engine::kv_bytes() const {
  return cache_->bytes() + (drafter_ && drafter_->own_cache() ? drafter_->own_cache()->bytes() : 0);
}

void Engine::check() const {
  bm_->check();
}

}  // namespace brisk
