#include "engine/scheduler.h"

#include <algorithm>

#include "core/error.h"

namespace brisk {

int64_t StepPlan::n_tokens() const {
  int64_t n = 0;
  for (const auto& c : chunks) n += c.count;
  return n;
}

Scheduler::Scheduler(const SchedulerConfig& c, BlockManager& bm) : config_(c), blocks_(bm) {
  if (c.max_batched_tokens < 1) fail("max batched tokens must be at least 1");
  if (c.max_seqs < 1) fail("max sequences must be at least 1");
}

void Scheduler::add(SchedSeq* s) {
  waiting_.push_back(s);
}

void Scheduler::add_forked(SchedSeq* child, const SchedSeq* parent) {
  auto it = std::find(running_.begin(), running_.end(), parent);
  if (it == running_.end()) fail("scheduler: forked from a sequence that is not running");
  running_.insert(it + 1, child);
}

void Scheduler::remove(SchedSeq* s) {
  running_.erase(std::remove(running_.begin(), running_.end(), s), running_.end());
  waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), s), waiting_.end());
  blocks_.free(s->id);
}

void Scheduler::preempt(SchedSeq* s, StepPlan& plan) {
  running_.erase(std::remove(running_.begin(), running_.end(), s), running_.end());
  blocks_.free(s->id);
  s->n_computed = 0;
  ++s->n_preempted;
  ++n_preemptions_;
  waiting_.push_front(s);
  plan.preempted.push_back(s);
}

StepPlan Scheduler::schedule() {
  StepPlan plan;
  int64_t budget = config_.max_batched_tokens;
  auto left = [](const SchedSeq* s) {
    return static_cast<int64_t>(s->tokens.size()) - s->n_computed;
  };
  auto planned = [&](const SchedSeq* s) {
    return std::any_of(plan.chunks.begin(), plan.chunks.end(),
                       [s](const ScheduledChunk& c) { return c.seq == s; });
  };
  // Grows s by `count` tokens, preempting the newest sequences not yet in this step while the pool
  // is short; false if s itself had to go, or nothing else could.
  auto grow = [&](SchedSeq* s, int64_t count) {
    while (!blocks_.grow(s->id, s->n_computed, s->n_computed + count, plan.copies)) {
      auto victim = std::find_if(running_.rbegin(), running_.rend(),
                                 [&](const SchedSeq* v) { return !planned(v); });
      if (victim == running_.rend()) return false;
      SchedSeq* v = *victim;
      preempt(v, plan);
      if (v == s) return false;
    }
    return true;
  };
  auto running = [&](const SchedSeq* s) {
    return std::find(running_.begin(), running_.end(), s) != running_.end();
  };

  // Decode tokens first, oldest sequences first; the newest give up their blocks when the pool
  // runs dry.
  const std::vector<SchedSeq*> order = running_;
  int64_t n_decode = 0;
  for (SchedSeq* s : order) {
    if (budget == 0) break;
    if (!running(s) || left(s) != 1) continue;
    // A draft rides along only where the budget and the free blocks allow: it never preempts.
    int64_t count = 1;
    s->draft.resize(std::min<size_t>(s->draft.size(), static_cast<size_t>(budget - 1)));
    if (!s->draft.empty()) {
      const auto n = static_cast<int64_t>(s->draft.size());
      if (blocks_.grow(s->id, s->n_computed, s->n_computed + 1 + n, plan.copies))
        count = 1 + n;
      else
        s->draft.clear();
    }
    if (count == 1 && !grow(s, 1)) continue;
    plan.chunks.push_back({s, s->n_computed, count, true, count - 1});
    budget -= count;
    ++n_decode;
  }

  // Then prompts: those being prefilled, then admissions, under what the decodes leave.
  int64_t prefill = budget;
  if (n_decode > 0 && config_.prefill_while_decoding != 0)
    prefill = std::min(budget, config_.prefill_while_decoding > 0
                                   ? config_.prefill_while_decoding
                                   : std::max(n_decode, kMinPrefillWhileDecoding));
  for (SchedSeq* s : order) {
    if (prefill == 0) break;
    if (!running(s) || left(s) <= 1) continue;
    const int64_t count = std::min(left(s), prefill);
    if (!grow(s, count)) continue;
    s->draft.clear();
    plan.chunks.push_back(
        {s, s->n_computed, count, s->n_computed + count == static_cast<int64_t>(s->tokens.size())});
    prefill -= count;
  }

  // Admission, unless this step already had to preempt (the pool is short).
  while (plan.preempted.empty() && prefill > 0 && !waiting_.empty() &&
         static_cast<int>(running_.size()) < config_.max_seqs) {
    SchedSeq* s = waiting_.front();
    const int64_t n = static_cast<int64_t>(s->tokens.size());
    const int64_t cached = blocks_.begin(s->id, s->tokens);
    const int64_t count = std::min(n - cached, prefill);
    if (!blocks_.grow(s->id, cached, cached + count, plan.copies)) {
      blocks_.free(s->id);
      break;
    }
    blocks_.record_lookup(n, cached);
    waiting_.pop_front();
    running_.push_back(s);
    s->draft.clear();
    s->n_computed = cached;
    if (s->n_cached < 0) s->n_cached = cached;
    plan.chunks.push_back({s, cached, count, cached + count == n});
    prefill -= count;
  }
  return plan;
}

void Scheduler::computed(const StepPlan& plan) {
  for (const auto& c : plan.chunks) {
    c.seq->n_computed = c.start + c.count - c.n_draft;
    blocks_.computed(c.seq->id, c.seq->tokens, c.seq->n_computed);
  }
}

void Scheduler::accept_draft(SchedSeq* s, int64_t accepted) {
  s->n_computed += accepted;
  if (s->n_computed >= static_cast<int64_t>(s->tokens.size()))
    fail("scheduler: sequence {} accepted draft tokens it does not hold", s->id);
  blocks_.computed(s->id, s->tokens, s->n_computed);
  blocks_.truncate(s->id, s->n_computed);
}

}  // namespace brisk
