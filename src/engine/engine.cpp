#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "core/clock.h"
#include "core/error.h"
#include "engine/sequence.h"
#include "engine/spec/speculator.h"
#include "engine/structured_output.h"

namespace brisk {

namespace {
// What, besides the tokens, decides a block's keys and values: the model and the KV format.
uint64_t model_salt(const Model& m, const KvGeometry& g) {
  const std::string key = m.file.path + "|" + std::to_string(m.hp.n_layer) + "|" +
                          std::to_string(m.hp.n_embd) + "|" + std::to_string(m.hp.n_vocab) + "|" +
                          kv_type_name(g.type);
  std::vector<int32_t> bytes(key.begin(), key.end());
  return block_hash(0x5eed, bytes, 0);
}
}  // namespace

KvGeometry kv_geometry_for(const Model& m, const EngineConfig& c) {
  KvGeometry g;
  g.n_layer = static_cast<int>(m.hp.n_layer);
  g.n_head_kv = m.split.n_head_kv;  // this rank's heads on a split model
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
    : model_(m), pool_(pool), config_(c), forward_(m, pool) {
  if (c.block_size < 1 || c.block_size > 1024)
    fail("block size {} is not in 1..1024", c.block_size);
  const Model* draft = c.spec.method == SpecMethod::DraftModel ? c.spec.draft_model : nullptr;
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
  blocks_ = std::make_unique<BlockManager>(n_blocks_, c.block_size, model_salt(m, geom_),
                                           c.prefix_caching);
  cache_ = std::make_unique<PagedKvCache>(geom_, *blocks_);
  spec_ = std::make_unique<Speculator>(m, c.spec, forward_, *cache_, pool, *blocks_, draft_geom_);
  grammars_ = std::make_unique<GrammarCache>(*m.tokenizer);
  sched_ = std::make_unique<Scheduler>(
      SchedulerConfig{c.max_batched_tokens, c.max_seqs, c.prefill_while_decoding}, *blocks_);
}

Engine::~Engine() = default;

RequestId Engine::submit(Request r, OutputFn fn) {
  check(r);
  auto req = std::make_unique<Req>();
  req->id = next_id_++;
  req->request = std::move(r);
  req->fn = std::move(fn);
  // A request may lower the engine's draft length or turn speculation off, not raise it.
  req->request.draft_max = req->request.draft_max < 0
                               ? config_.spec.draft_max
                               : std::min(req->request.draft_max, config_.spec.draft_max);
  if (req->request.compiled_constraint)
    req->compiled_grammar = req->request.compiled_constraint;
  else if (req->request.constraint)
    req->compiled_grammar = grammars_->get(*req->request.constraint);
  const RequestId id = req->id;
  {
    std::lock_guard lk(inbox_mu_);
    inbox_.push_back(std::move(req));
  }
  inbox_cv_.notify_all();
  return id;
}

void Engine::check(const Request& r) const {
  check_request(r, r.prompt, bounds());
  if (r.proposer && *r.proposer != SpecMethod::None && *r.proposer != SpecMethod::Ngram &&
      *r.proposer != config_.spec.method)
    throw RequestError("speculative_decoding",
                       "the request asks for a proposer (draft model or layer skip) this engine "
                       "does not run");
}

std::shared_ptr<const grammar::CompiledGrammar> Engine::compile(const grammar::Constraint& c) {
  return grammars_->get(c);
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
    Req& req = *rq;
    reqs_.emplace(req.id, std::move(rq));
    sched_->add(&add_seq(req, 0, req.request.sampling, req.request.prompt));
  }
  for (RequestId id : ab) {
    auto it = reqs_.find(id);
    if (it == reqs_.end() || it->second->aborted) continue;
    it->second->aborted = true;
    for (auto& s : it->second->seqs)
      if (!s->done) finish(*s, FinishReason::Abort, "", -1);
  }
}

// A new completion of req over `tokens` (the prompt, or a parent's tokens when forked).
Seq& Engine::add_seq(Req& req, int index, const SamplingParams& sp,
                     const std::vector<int32_t>& tokens) {
  auto s = std::make_unique<Seq>(&req, index, *model_.tokenizer, sp);
  s->id = free_ids_.empty() ? next_seq_id_++ : free_ids_.back();
  if (!free_ids_.empty()) free_ids_.pop_back();
  s->tokens = tokens;
  s->n_prompt = static_cast<int64_t>(req.request.prompt.size());
  s->stop = StopMatcher(req.request.stop);
  if (req.compiled_grammar) s->matcher.emplace(req.compiled_grammar, model_.hp.n_vocab);
  for (int32_t t : s->tokens) s->sampler.accept(t);
  // After a lone BOS the first word's leading space is dropped, as when decoding the whole.
  if (s->tokens.back() == model_.tokenizer->vocab().bos) (void)s->dec.push(s->tokens.back());
  req.seqs.push_back(std::move(s));
  return *req.seqs.back();
}

// The other n - 1 completions of an n > 1 request, once its prompt is computed: they share its
// blocks and each samples its first token from the same logits with a seed of its own.
void Engine::fork_children(Seq& parent, const float* logits) {
  parent.forked = true;
  Req& req = *parent.req;
  const SchedSeq* after = &parent;
  for (int i = 1; i < req.request.n; ++i) {
    SamplingParams sp = req.request.sampling;
    sp.seed += static_cast<uint64_t>(i);
    Seq& c = add_seq(req, i, sp, parent.tokens);
    c.n_computed = parent.n_computed;
    c.n_cached = parent.n_cached;
    c.n_draft_computed = parent.n_draft_computed;
    c.scheduled_at = parent.scheduled_at;
    c.forked = true;
    if (parent.matcher) c.matcher.emplace(*parent.matcher);
    blocks_->fork(parent.id, c.id);
    sched_->add_forked(&c, after);
    after = &c;
    sample_and_emit(c, logits);
  }
}

// A token drawn from a row of logits (under the sequence's constraint, if any), then emitted; a
// constraint that allows no token ends the sequence.
void Engine::sample_and_emit(Seq& s, const float* logits) {
  const int32_t tok =
      s.sampler.sample(logits, model_.hp.n_vocab, s.matcher ? &*s.matcher : nullptr);
  if (tok < 0) return finish_flushed(s, -1);
  s.sampler.accept(tok);
  emit_token(s, tok, logits);
}

// A step: schedule (speculation proposes first, since a draft's length decides its chunk), run
// the batch, then process the outputs (sample or verify, stop, detokenize, stream).
bool Engine::step() {
  take_inbox();
  if (sched_->idle()) return false;
  const double t_step = now_seconds();
  spec_->propose(decoding_seqs(), steps_, max_len_);
  const StepPlan plan = sched_->schedule();
  peak_running_ = std::max(peak_running_, sched_->n_running());
  for (const auto& [src, dst] : plan.copies) {
    cache_->copy_block(src, dst);
    spec_->copy_block(src, dst);
  }
  spec_->draft(plan);
  if (!plan.chunks.empty()) {
    process_outputs(plan, run(plan));
    spec_->step_done(plan, batch_.size(), now_seconds() - t_step);
  }
  ++steps_;
  for (auto it = reqs_.begin(); it != reqs_.end();)
    it = it->second->all_done() ? reqs_.erase(it) : std::next(it);
  return true;
}

// The sequences whose next step decodes one token (after at least one generated), with every
// sequence's draft of the last step cleared.
std::vector<Seq*> Engine::decoding_seqs() {
  std::vector<Seq*> decoding;
  for (auto& [id, r] : reqs_)
    for (auto& sp : r->seqs) {
      Seq& s = *sp;
      s.draft.clear();
      if (!s.done && s.n_generated > 0 && static_cast<int64_t>(s.tokens.size()) - s.n_computed == 1)
        decoding.push_back(&s);
    }
  return decoding;
}

// The plan's tokens as one ragged batch through the model; logits for each chunk that samples
// (one row, or one per drafted position and one more).
const float* Engine::run(const StepPlan& plan) {
  batch_.clear();
  const double t_plan = now_seconds();
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
  const double t0 = now_seconds();
  const float* logits = forward_.run(batch_, *cache_);
  forward_seconds_ += now_seconds() - t0;
  sched_->computed(plan);
  return logits;
}

void Engine::process_outputs(const StepPlan& plan, const float* logits) {
  const int64_t V = model_.hp.n_vocab;
  int64_t row = 0;
  for (const auto& ch : plan.chunks) {
    if (!ch.logits) continue;
    Seq& s = static_cast<Seq&>(*ch.seq);
    const float* lg = logits + row * V;
    row += 1 + ch.n_draft;
    if (ch.n_draft > 0) {
      // Verification stops where jump-forward applies, so that forced text is the same tokens
      // with speculation or without.
      const int64_t k =
          spec_->verify(s, ch.n_draft, lg, V, [this](Seq& q, int32_t t, const float* r) {
            if (t < 0) {
              finish_flushed(q, -1);
              return false;
            }
            emit_token(q, t, r);
            return q.done || !jumps_forward(q) ||
                   q.matcher->forced_tokens(*model_.tokenizer).empty();
          });
      if (s.done) continue;
      // Stopped at an accepted draft token (jump-forward): its KV is recomputed with the forced
      // tokens, since the last token is always the one the next step computes.
      sched_->accept_draft(
          &s, std::min<int64_t>(k, static_cast<int64_t>(s.tokens.size()) - 1 - s.n_computed));
      s.n_draft_computed = std::min(s.n_draft_computed, s.n_computed);  // the rest guessed wrong
    } else {
      if (s.req->request.n > 1 && !s.forked) fork_children(s, lg);
      sample_and_emit(s, lg);
    }
    if (!s.done && jumps_forward(s)) jump_forward(s);
  }
}

bool Engine::jumps_forward(const Seq& s) const {
  return s.matcher && config_.jump_forward && s.req->request.logprobs < 0;
}

// The tokens the constraint forces next, emitted as if sampled; the next step computes them with
// the sequence's last token, as a chunk of a prompt is.
void Engine::jump_forward(Seq& s) {
  const std::vector<int32_t> forced = s.matcher->forced_tokens(*model_.tokenizer);  // emit moves on
  for (int32_t tok : forced) {
    s.sampler.accept(tok);
    ++forced_;
    emit_token(s, tok, nullptr);
    if (s.done) return;
  }
}

Output Engine::output(const Seq& s, int32_t tok, std::string text, FinishReason r) const {
  Output o{s.req->id, s.index, tok, std::move(text), r};
  o.prompt_tokens = s.n_prompt;
  o.cached_tokens = std::max<int64_t>(s.n_cached, 0);
  o.scheduled_at = s.scheduled_at;
  if (s.req->request.logprobs >= 0 && tok >= 0) o.logprobs = &s.logprobs;
  return o;
}

// tok: the token of the final event (-1: none, an event that only finishes).
void Engine::finish(Seq& s, FinishReason r, std::string text, int32_t tok) {
  s.done = true;
  sched_->remove(&s);
  free_ids_.push_back(s.id);
  s.req->fn(output(s, tok, std::move(text), r));
}

// Ends at the end of generation: what the detokenizer and the stop matcher still hold goes out.
void Engine::finish_flushed(Seq& s, int32_t tok) {
  bool stopped = false;
  std::string text = s.stop.push(s.dec.flush(), stopped);
  finish(s, FinishReason::Stop, stopped ? text : text + s.stop.flush(), tok);
}

// A sampled (or forced) token: its log-probabilities if asked, then the end of generation (or of
// the constraint), stop strings and the length limit; the text it releases goes to the request's
// callback.
void Engine::emit_token(Seq& s, int32_t tok, const float* logits) {
  const Request& r = s.req->request;
  if (r.logprobs >= 0 && logits)
    s.logprobs = token_logprobs(logits, model_.hp.n_vocab, tok, r.logprobs,
                                s.matcher ? s.matcher->mask() : nullptr);
  if (s.matcher) s.matcher->accept(tok);
  s.tokens.push_back(tok);
  ++s.n_generated;
  ++generated_;
  const bool eog =
      (!r.ignore_eos && model_.tokenizer->vocab().is_eog(tok)) ||
      std::find(r.stop_token_ids.begin(), r.stop_token_ids.end(), tok) != r.stop_token_ids.end() ||
      (s.matcher && s.matcher->ended());
  if (eog) return finish_flushed(s, tok);
  bool stopped = false;
  std::string text = s.stop.push(s.dec.push(tok), stopped);
  if (stopped) return finish(s, FinishReason::Stop, std::move(text), tok);
  const bool length = (r.max_tokens > 0 && s.n_generated >= r.max_tokens) ||
                      static_cast<int64_t>(s.tokens.size()) >= max_len_;
  // A constraint that nothing may follow ends here, without a step to sample its end.
  const bool complete = s.matcher && s.matcher->done();
  if (length || complete) {
    text += s.stop.push(s.dec.flush(), stopped);
    if (stopped) return finish(s, FinishReason::Stop, std::move(text), tok);
    return finish(s, complete ? FinishReason::Stop : FinishReason::Length, text + s.stop.flush(),
                  tok);
  }
  s.req->fn(output(s, tok, std::move(text), FinishReason::None));
}

void Engine::run_until_idle() {
  while (step()) {
  }
}

void Engine::clear_prefix_cache() {
  blocks_->pool().clear_cache();
}

EngineStats Engine::stats() const {
  EngineStats st;
  st.prompt_tokens = prompt_tokens_;
  st.generated_tokens = generated_;
  st.forced_tokens = forced_;
  st.constraints_compiled = grammars_->n_compiled();
  st.steps = steps_;
  st.preemptions = sched_->n_preemptions();
  st.cache_queries = blocks_->cache_queries();
  st.cache_hits = blocks_->cache_hits();
  const BlockPool& p = blocks_->pool();
  st.blocks_total = p.n_blocks();
  st.blocks_in_use = p.n_in_use();
  st.blocks_cached = p.n_cached();
  st.peak_blocks_in_use = p.peak_in_use();
  st.running = sched_->n_running();
  st.waiting = sched_->n_waiting();
  st.peak_running = peak_running_;
  st.forward_seconds = forward_seconds_ + spec_->drafter_seconds();  // a draft model's passes too
  if (model_.split.active()) {
    st.ranks = model_.split.size;
    st.collective_seconds = model_.split.comm->collective_seconds();
  }
  const SpecStats& sp = spec_->stats();
  st.spec_drafts = sp.drafts;
  st.spec_draft_tokens = sp.draft_tokens;
  st.spec_accepted_tokens = sp.accepted_tokens;
  st.spec_accepted_per_pos = sp.accepted_per_pos;
  return st;
}

uint64_t Engine::kv_bytes() const {
  return cache_->bytes() + spec_->own_cache_bytes();
}

void Engine::check() const {
  blocks_->check();
}

}  // namespace brisk
