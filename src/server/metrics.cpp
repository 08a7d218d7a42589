#include "server/metrics.h"

#include <fmt/format.h>

namespace brisk::server {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double v) {
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += v;
  ++count_;
}

std::string Histogram::render(const std::string& name, const std::string& labels) const {
  std::string out;
  uint64_t cum = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cum += counts_[i];
    out += fmt::format("{}_bucket{{{},le=\"{}\"}} {}\n", name, labels, bounds_[i], cum);
  }
  out += fmt::format("{}_bucket{{{},le=\"+Inf\"}} {}\n", name, labels, count_);
  out += fmt::format("{}_sum{{{}}} {}\n", name, labels, sum_);
  out += fmt::format("{}_count{{{}}} {}\n", name, labels, count_);
  return out;
}

namespace {
// vLLM's bucket bounds, with finer ones below 10 ms for inter-token latency: a CPU serving a
// small model gives tokens a few milliseconds apart, and percentiles read from the buckets (the
// dashboard's, Grafana's) would otherwise all sit inside the first one.
std::vector<double> latency_buckets() {
  return {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
          30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
}
std::vector<double> ttft_buckets() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
          1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
}
std::vector<double> itl_buckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1,  0.15, 0.2, 0.3,
          0.4,    0.5,   0.75,   1.0,   2.5,  5.0,   7.5,  10.0,  20.0, 40.0, 80.0};
}
std::vector<double> token_buckets() {
  return {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000};
}
}  // namespace

Metrics::Metrics()
    : ttft(ttft_buckets()),
      itl(itl_buckets()),
      e2e(latency_buckets()),
      queue(latency_buckets()),
      prompt_len(token_buckets()),
      generation_len(token_buckets()) {}

std::string Metrics::render(const std::string& model, const EngineStats& st) const {
  const std::string l = fmt::format("model_name=\"{}\"", model);
  std::string o;
  // Counters are named with _total throughout, as Prometheus' Python client (and so vLLM)
  // writes them in the text format.
  auto metric = [&](const char* name, const char* type, const char* help, auto value) {
    const std::string n = std::string(name) + (std::string(type) == "counter" ? "_total" : "");
    o += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}{{{}}} {}\n", n, help, n, type, n, l, value);
  };
  metric("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.",
         st.running);
  metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
         st.waiting);
  metric("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.",
         st.blocks_total ? static_cast<double>(st.blocks_in_use) / st.blocks_total : 0.0);
  metric("vllm:prefix_cache_queries", "counter",
         "Prefix cache queries, in terms of number of queried tokens.", st.cache_queries);
  metric("vllm:prefix_cache_hits", "counter",
         "Prefix cache hits, in terms of number of cached tokens.", st.cache_hits);
  metric("vllm:num_preemptions", "counter", "Cumulative number of preemptions from the engine.",
         st.preemptions);
  metric("vllm:prompt_tokens", "counter", "Number of prefill tokens processed.", prompt_tokens);
  metric("vllm:generation_tokens", "counter", "Number of generation tokens processed.",
         generation_tokens);
  o += "# HELP vllm:request_success_total Count of successfully processed requests.\n"
       "# TYPE vllm:request_success_total counter\n";
  for (const char* reason : {"stop", "length", "abort"}) {
    auto it = finished.find(reason);
    o += fmt::format("vllm:request_success_total{{{},finished_reason=\"{}\"}} {}\n", l, reason,
                     it == finished.end() ? 0 : it->second);
  }
  auto hist = [&](const char* name, const char* help, const Histogram& h) {
    o += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
    o += h.render(name, l);
  };
  hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttft);
  hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", itl);
  hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", e2e);
  hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
       queue);
  hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", prompt_len);
  hist("vllm:request_generation_tokens", "Number of generation tokens processed.", generation_len);
  // Speculative decoding, as vLLM (v1) names it: verifications, tokens proposed and accepted, and
  // acceptances of the draft's i-th token.
  metric("vllm:spec_decode_num_drafts", "counter", "Number of spec decoding drafts.",
         st.spec_drafts);
  metric("vllm:spec_decode_num_draft_tokens", "counter", "Number of draft tokens.",
         st.spec_draft_tokens);
  metric("vllm:spec_decode_num_accepted_tokens", "counter", "Number of accepted tokens.",
         st.spec_accepted_tokens);
  o += "# HELP vllm:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens per draft "
       "position.\n# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter\n";
  for (size_t i = 0; i < st.spec_accepted_per_pos.size(); ++i)
    o +=
        fmt::format("vllm:spec_decode_num_accepted_tokens_per_pos_total{{{},position=\"{}\"}} {}\n",
                    l, i, st.spec_accepted_per_pos[i]);
  // brisk's own: the KV pool in blocks (the accounting check must hold whenever the engine idles).
  metric("brisk:kv_blocks_total", "gauge", "KV cache blocks in the pool.", st.blocks_total);
  metric("brisk:kv_blocks_in_use", "gauge", "KV cache blocks held by sequences.", st.blocks_in_use);
  metric("brisk:kv_blocks_cached", "gauge", "KV cache blocks held only by the prefix cache.",
         st.blocks_cached);
  // Where a step's time goes; split over ranks (mpirun), the part spent gathering rows.
  metric("brisk:engine_steps", "counter", "Engine steps (batches) run.", st.steps);
  metric("brisk:constraints_compiled", "counter",
         "Output constraints (JSON schemas, grammars, tool sets) compiled; one found compiled is "
         "not counted.",
         st.constraints_compiled);
  metric("brisk:forward_seconds", "counter", "Seconds in the model's forward passes.",
         st.forward_seconds);
  metric("brisk:ranks", "gauge", "Ranks the model is split over (1: one process).", st.ranks);
  metric("brisk:collective_seconds", "counter",
         "Seconds of the forward passes rank 0 spent in collectives with the other ranks, waiting "
         "for the slowest included.",
         st.collective_seconds);
  return o;
}

}  // namespace brisk::server
