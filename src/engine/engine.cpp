#include "engine/engine.h"

#include <algorithm>
#include <chrono>

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
  fail("speculative method '{}' is unknown (none, ngram, layer-skip)", name);
}

struct Engine::Seq : SchedSeq {
  Seq(Req* r, int idx, const Tokenizer& tok, const SamplingParams& sp)
      : req(r), index(idx), sampler(sp), dec(tok), stop() {}
  Req* req;
  int index;
  int64_t n_prompt = 0, n_generated = 0;
  Sampler sampler;
  StreamDecoder dec;
  StopMatcher stop;
  bool done = false;
  bool forked = false;  // children of an n > 1 request were created from it
  double scheduled_at = 0;
  TokenLogprobs logprobs;
  // Speculation: draft length now (adapts to acceptance), verifications in a row that accepted
  // nothing, and the step before which this sequence proposes nothing (backing off).
  int gamma = -1;
  int misses = 0;
  int64_t pause_until = 0;
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
  return kv_geometry_for(m, c).bytes_per_block() *
         static_cast<uint64_t>((tokens + c.block_size - 1) / c.block_size);
}

Engine::Engine(const Model& m, ThreadPool& pool, const EngineConfig& c)
    : m_(m), pool_(pool), c_(c), forward_(m, pool) {
  if (c.spec.draft_max < 0 || c.spec.draft_max > 64)
    fail("speculative draft max {} is not in 0..64", c.spec.draft_max);
  if (c.spec.draft_min < 1 || c.spec.draft_min > std::max(c.spec.draft_max, 1))
    fail("speculative draft min {} is not in 1..{}", c.spec.draft_min, c.spec.draft_max);
  if (c.spec.ngram.n_min < 1 || c.spec.ngram.n_max < c.spec.ngram.n_min || c.spec.ngram.n_max > 64)
    fail("prompt lookup n-gram sizes {}..{} are invalid (1 <= min <= max <= 64)",
         c.spec.ngram.n_min, c.spec.ngram.n_max);
  if (c.spec.method == SpecMethod::LayerSkip) {
    if (m.hp.n_layer < 2) fail("layer skipping needs a model of two layers or more");
    if (c.spec.draft_layers < 0 || c.spec.draft_layers >= m.hp.n_layer)
      fail("layer skipping: {} draft layers of {} (the draft must skip at least one)",
           c.spec.draft_layers, m.hp.n_layer);
    draft_layers_ = c.spec.draft_layers > 0
                        ? c.spec.draft_layers
                        : static_cast<int>(std::max<int64_t>(1, m.hp.n_layer / 2));
  }
  spec_accepted_per_pos_.assign(static_cast<size_t>(c.spec.draft_max), 0);
  if (c.block_size < 1 || c.block_size > 1024)
    fail("block size {} is not in 1..1024", c.block_size);
  geom_ = kv_geometry_for(m, c);
  int64_t model_len =
      c.max_model_len > 0 ? c.max_model_len : (m.hp.n_ctx_train > 0 ? m.hp.n_ctx_train : 4096);
  uint64_t budget = c.kv_cache_bytes;
  if (budget == 0)
    budget = std::min<uint64_t>(
        kv_bytes_for_tokens(m, c, model_len) * static_cast<uint64_t>(std::max(c.max_seqs, 1)),
        uint64_t{2} << 30);
  n_blocks_ = geom_.blocks_for(budget);
  if (n_blocks_ < 1)
    fail("a KV cache of {} bytes holds no block ({} bytes each)", budget, geom_.bytes_per_block());
  max_len_ = std::min<int64_t>(model_len, capacity_tokens());
  bm_ = std::make_unique<BlockManager>(n_blocks_, c.block_size, model_salt(m, geom_),
                                       c.prefix_caching);
  cache_ = std::make_unique<PagedKvCache>(geom_, *bm_);
  sched_ = std::make_unique<Scheduler>(
      SchedulerConfig{c.max_batched_tokens, c.max_seqs, c.prefill_while_decoding}, *bm_);
}

Engine::~Engine() = default;

RequestId Engine::submit(Request r, OutputFn fn) {
  if (r.prompt.empty()) fail("the prompt is empty");
  for (int32_t t : r.prompt)
    if (t < 0 || t >= m_.hp.n_vocab)
      fail("prompt token id {} is outside the vocabulary (0..{})", t, m_.hp.n_vocab - 1);
  if (r.n < 1 || r.n > 128) fail("n = {} completions: must be between 1 and 128", r.n);
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
  if (req->r.logprobs > 20) fail("logprobs = {}: at most 20 alternatives", req->r.logprobs);
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
  if (c_.spec.method != SpecMethod::None) propose();
  const StepPlan plan = sched_->schedule();
  peak_running_ = std::max(peak_running_, sched_->n_running());
  for (const auto& [src, dst] : plan.copies) cache_->copy_block(src, dst);
  if (c_.spec.method == SpecMethod::LayerSkip) draft_layer_skip(plan);
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
  }
  ++steps_;
  for (auto it = reqs_.begin(); it != reqs_.end();)
    it = it->second->all_done() ? reqs_.erase(it) : std::next(it);
  return true;
}

// Drafts for the sequences about to decode, unless so many decode that the step is compute-bound.
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
  for (Seq* sp : decoding) {
    Seq& s = *sp;
    const Request& r = s.req->r;
    const int max = r.draft_max;
    if (max == 0 || steps_ < s.pause_until) continue;
    if (s.gamma < 0) s.gamma = std::min(max, 3);  // grows while whole drafts are accepted
    // Positions past the model length, or tokens past max_tokens, would only be thrown away.
    int64_t g = std::min<int64_t>(s.gamma, max_len_ - static_cast<int64_t>(s.tokens.size()));
    if (r.max_tokens > 0) g = std::min(g, r.max_tokens - s.n_generated - 1);
    if (g < c_.spec.draft_min) continue;
    if (c_.spec.method == SpecMethod::LayerSkip)
      // Placeholders: the scheduler only needs the length; the tokens are drafted after it ran.
      s.draft.assign(static_cast<size_t>(g), s.tokens.back());
    else
      s.draft = ngram_propose(s.tokens, c_.spec.ngram, static_cast<int>(g));
    if (static_cast<int>(s.draft.size()) < c_.spec.draft_min) s.draft.clear();
  }
}

// Layer skipping: each draft token is the greedy choice of the model's first layers, one position
// at a time for all drafting sequences together. Their keys and values land where the verification
// pass writes the full model's before reading any, so only the tokens matter.
void Engine::draft_layer_skip(const StepPlan& plan) {
  std::vector<Seq*> ds;
  size_t longest = 0;
  for (const auto& ch : plan.chunks)
    if (ch.n_draft > 0) {
      ds.push_back(static_cast<Seq*>(ch.seq));
      longest = std::max(longest, ds.back()->draft.size());
    }
  const int64_t V = m_.hp.n_vocab;
  const double t0 = now();
  for (size_t j = 0; j < longest; ++j) {
    batch_.clear();
    for (Seq* s : ds)
      if (j < s->draft.size())
        batch_.add(j == 0 ? s->tokens.back() : s->draft[j - 1],
                   static_cast<int64_t>(s->tokens.size() - 1 + j), s->id, true);
    const float* lg = forward_.run(batch_, *cache_, draft_layers_);
    int64_t row = 0;
    for (Seq* s : ds)
      if (j < s->draft.size()) {
        const float* r = lg + row++ * V;
        s->draft[j] = static_cast<int32_t>(std::max_element(r, r + V) - r);
      }
  }
  forward_seconds_ += now() - t0;
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
    const int32_t tok = i < n_draft
                            ? s.sampler.sample_verified(row, V, draft[static_cast<size_t>(i)])
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
  const int max = s.req->r.draft_max;
  if (k == n_draft)
    s.gamma = std::min(max, s.gamma + 2);
  else
    s.gamma = std::max<int>(c_.spec.draft_min, static_cast<int>(k) + 1);
  // Guesses that keep missing back off exponentially to plain decoding (2, 4, ... 64 steps).
  s.misses = k == 0 ? s.misses + 1 : 0;
  if (s.misses > 0) s.pause_until = steps_ + (int64_t{1} << std::min(s.misses, 6));
  if (!s.done) sched_->accept_draft(&s, k);
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

void Engine::check() const {
  bm_->check();
}

}  // namespace brisk
