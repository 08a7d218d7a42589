// brisk bench throughput: offline serving throughput (like vLLM's benchmark_throughput): N
// requests of random tokens, all submitted at once, run through the engine to the end; with a
// constraint (--json-schema, ...), the same requests free and constrained, and the ratio.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/options.h"
#include "cli/svg_plot.h"
#include "core/clock.h"
#include "core/error.h"
#include "ops/cpu.h"

namespace brisk::cli {
namespace {

struct ThroughputArgs {
  Options opt;
  int num_prompts = 64;
  int input_len = 128, output_len = 128, shared_prefix_len = 0;
  bool prime_prefix = false;
  uint64_t seed = 1;
  float temp = 0;
  std::string plot;
};

// One measured round: every request submitted at once, run to the end.
struct Round {
  struct Timing {
    double first = 0, last = 0;
    int64_t n = 0;
  };
  std::vector<Timing> tm;
  double elapsed = 0;
  EngineStats before, after;
  double out_tokens() const {
    return static_cast<double>(after.generated_tokens - before.generated_tokens);
  }
  int64_t finished_early = 0;  // by a constraint's end
};

using MakeRequest = std::function<Request(int input_len, int output_len)>;

Round run_round(Engine& e, const ThroughputArgs& a, const MakeRequest& make,
                const std::optional<grammar::Constraint>& constraint) {
  Round r;
  r.tm.resize(static_cast<size_t>(a.num_prompts));
  r.before = e.stats();
  const double t0 = now_seconds();
  for (int i = 0; i < a.num_prompts; ++i) {
    Request q = make(a.input_len, a.output_len);
    q.constraint = constraint;
    e.submit(std::move(q), [&r, i, t0](const Output& o) {
      Round::Timing& t = r.tm[static_cast<size_t>(i)];
      const double tn = now_seconds() - t0;
      if (t.n++ == 0) t.first = tn;
      t.last = tn;
      if (o.finish == FinishReason::Stop) ++r.finished_early;
    });
  }
  e.run_until_idle();
  r.elapsed = now_seconds() - t0;
  r.after = e.stats();
  return r;
}

// A round's latencies: each request's time to first token and time per output token after it.
struct Latencies {
  std::vector<double> ttft, tpot;
  explicit Latencies(const Round& r) {
    for (const auto& t : r.tm) {
      ttft.push_back(t.first);
      if (t.n > 1) tpot.push_back((t.last - t.first) / static_cast<double>(t.n - 1));
    }
  }
};

void print_report(const Engine& e, const Model& m, const ThroughputArgs& a, const Round& r,
                  int threads, double load_s) {
  const EngineStats& st = r.after;
  const EngineStats& before = r.before;
  const Latencies lat(r);
  const std::vector<double>& ttft = lat.ttft;
  const std::vector<double>& tpot = lat.tpot;
  const int64_t prompt_len = a.shared_prefix_len + a.input_len;
  const double in_tokens = static_cast<double>(prompt_len) * a.num_prompts;
  const double out_tokens = r.out_tokens(), elapsed = r.elapsed;
  const int64_t queries = st.cache_queries - before.cache_queries;
  const int64_t hits = st.cache_hits - before.cache_hits;
  const auto& g = e.kv_geometry();
  const double block_mib = static_cast<double>(g.bytes_per_block()) / 1048576;
  const double per_seq_paged =
      st.peak_running ? st.peak_blocks_in_use * block_mib / static_cast<double>(st.peak_running)
                      : 0;
  const double per_seq_contig = static_cast<double>(e.max_model_len()) * block_mib / g.block_size;

  std::printf("model: %s, %d threads, kernels: %s, load %.0f ms\n", m.file.path.c_str(), threads,
              isa_name(best_isa()), load_s * 1e3);
  std::printf("requests: %d x (%lld prompt tokens%s, %d output tokens, %s), max %d running\n",
              a.num_prompts, static_cast<long long>(prompt_len),
              a.shared_prefix_len ? fmt::format(", {} shared", a.shared_prefix_len).c_str() : "",
              a.output_len,
              a.temp > 0 ? fmt::format("sampled at temperature {}", a.temp).c_str() : "greedy",
              a.opt.engine.max_seqs);
  // The share of the time outside the model's forward pass: scheduling, batch assembly, sampling,
  // detokenizing and the callbacks (the engine's fixed costs per step and per sequence).
  const double fwd = st.forward_seconds - before.forward_seconds;
  std::printf(
      "elapsed: %.2f s in %lld steps, %.1f%% of it in the forward pass (%.2f ms per step "
      "outside it)\n",
      elapsed, static_cast<long long>(st.steps - before.steps),
      elapsed > 0 ? 100.0 * fwd / elapsed : 0.0,
      st.steps > before.steps ? 1e3 * (elapsed - fwd) / static_cast<double>(st.steps - before.steps)
                              : 0.0);
  std::printf("throughput: %.2f requests/s, %.1f total tokens/s, %.1f output tokens/s\n",
              a.num_prompts / elapsed, (in_tokens + out_tokens) / elapsed, out_tokens / elapsed);
  std::printf(
      "latency: time to first token median %.1f ms (max %.1f), time per output token "
      "median %.1f ms\n",
      median(ttft) * 1e3, ttft.empty() ? 0 : *std::max_element(ttft.begin(), ttft.end()) * 1e3,
      median(tpot) * 1e3);
  std::printf(
      "KV: peak %d of %d blocks in use (%.1f MiB), peak %zu sequences running, %lld "
      "preemptions\n",
      st.peak_blocks_in_use, st.blocks_total, st.peak_blocks_in_use * block_mib, st.peak_running,
      static_cast<long long>(st.preemptions - before.preemptions));
  std::printf(
      "KV per sequence: %.2f MiB paged at peak vs %.2f MiB for a contiguous %lld-token "
      "allocation\n",
      per_seq_paged, per_seq_contig, static_cast<long long>(e.max_model_len()));
  std::printf("prefix cache: %lld of %lld prompt tokens hit (%.1f%%)\n",
              static_cast<long long>(hits), static_cast<long long>(queries),
              queries ? 100.0 * static_cast<double>(hits) / static_cast<double>(queries) : 0.0);
  const std::string spec = describe_spec(st);
  if (!spec.empty()) std::printf("%s\n", spec.c_str());
}

// Under a constraint the same requests run free and constrained, alternating, three times each
// after an untimed free round (the machine's speed drifts): the ratio of output tokens per second
// is the constraint's cost.
void print_constrained(const std::vector<Round>& free_rounds, const std::vector<Round>& constrained,
                       int num_prompts) {
  auto rate = [](const std::vector<Round>& rs) {
    double tokens = 0, seconds = 0;
    for (const Round& r : rs) tokens += r.out_tokens(), seconds += r.elapsed;
    return seconds > 0 ? tokens / seconds : 0.0;
  };
  const double f = rate(free_rounds), c = rate(constrained);
  const Round& last = constrained.back();
  std::string rounds;
  for (size_t i = 0; i < free_rounds.size(); ++i)
    rounds += fmt::format("{}{:.1f} / {:.1f}", i ? ", " : "", rate({free_rounds[i]}),
                          rate({constrained[i]}));
  std::printf(
      "structured output: %.1f output tokens/s constrained vs %.1f free (%.3fx; free / "
      "constrained by round: %s); %lld of %d requests ended with the constraint, %lld tokens "
      "forced (jump-forward)\n",
      c, f, f > 0 ? c / f : 0.0, rounds.c_str(), static_cast<long long>(last.finished_early),
      num_prompts, static_cast<long long>(last.after.forced_tokens - last.before.forced_tokens));
}

// --plot of a --max-seqs sweep: output tokens/s, and the median latencies, against it.
void plot_sweep(const std::string& path, const std::vector<int>& sweep,
                const std::vector<Round>& rounds) {
  PlotSeries rate{"output tokens/s", {}}, ttft{"time to first token (median)", {}},
      tpot{"time per output token (median)", {}};
  for (size_t i = 0; i < rounds.size(); ++i) {
    const double x = sweep[i];
    const Latencies lat(rounds[i]);
    rate.points.emplace_back(x, rounds[i].out_tokens() / rounds[i].elapsed);
    ttft.points.emplace_back(x, median(lat.ttft) * 1e3);
    tpot.points.emplace_back(x, median(lat.tpot) * 1e3);
  }
  write_svg(path, {{"Throughput against concurrency",
                    "--max-seqs (sequences running at once)",
                    "output tokens/s",
                    {rate},
                    false},
                   {"Latency against concurrency",
                    "--max-seqs (sequences running at once)",
                    "milliseconds",
                    {ttft, tpot},
                    false}});
}

// Runs the requests on one engine and reports; the round reported is returned.
Round measure(Engine& e, const Model& model, const ThroughputArgs& a,
              const std::optional<grammar::Constraint>& constraint, int threads, double load_s) {
  const Model* m = &model;

  std::mt19937_64 rng(a.seed);
  // Ids from 3 up: clear of the usual BOS/EOS/UNK ids, so no request ends early.
  std::uniform_int_distribution<int32_t> tok(3, static_cast<int32_t>(m->hp.n_vocab - 1));
  std::vector<int32_t> prefix(static_cast<size_t>(a.shared_prefix_len));
  for (auto& t : prefix) t = tok(rng);
  uint64_t made = 0;
  const MakeRequest make = [&](int input_len, int output_len) {
    Request r;
    r.prompt = prefix;
    for (int i = 0; i < input_len; ++i) r.prompt.push_back(tok(rng));
    // Greedy, or the OpenAI API's defaults at a temperature (no top-k, top-p or min-p cut), as
    // vLLM's benchmark_throughput samples (temperature 1).
    r.sampling.temperature = a.temp;
    r.sampling.top_k = 0, r.sampling.top_p = 1.0f, r.sampling.min_p = 0.0f;
    r.sampling.seed = a.seed + made++;
    r.max_tokens = output_len;
    r.ignore_eos = true;
    return r;
  };
  if (a.prime_prefix && a.shared_prefix_len == 0) fail("--prime-prefix needs --shared-prefix-len");
  // Warm-up (weights paged in, buffers grown): one short request, with the shared prefix only if
  // it is to be cached before timing starts.
  {
    Request w = make(1, 1);
    if (!a.prime_prefix) w.prompt.erase(w.prompt.begin(), w.prompt.begin() + a.shared_prefix_len);
    e.submit(std::move(w), [](const Output&) {});
    e.run_until_idle();
  }
  Round reported;
  if (!constraint) {
    reported = run_round(e, a, make, std::nullopt);
    print_report(e, *m, a, reported, threads, load_s);
  } else {
    // One untimed free round first: the first round of a workload runs slower (buffers grow).
    const uint64_t warm_seeds = made;
    run_round(e, a, make, std::nullopt);
    made = warm_seeds;
    std::vector<Round> free_rounds, constrained;
    for (int i = 0; i < 3; ++i) {
      const uint64_t first = made;
      free_rounds.push_back(run_round(e, a, make, std::nullopt));
      made = first;  // the same sampling seeds constrained
      constrained.push_back(run_round(e, a, make, constraint));
    }
    reported = constrained.back();
    print_report(e, *m, a, reported, threads, load_s);
    print_constrained(free_rounds, constrained, a.num_prompts);
  }
  e.check();
  return reported;
}

int throughput(ThroughputArgs& a) {
  double load_s = 0;
  auto m = load_model(a.opt.model, &load_s);
  const auto constraint = a.opt.output_constraint(m->tokenizer->vocab().chat_template);
  const std::vector<int> sweep = a.opt.engine.max_seqs_sweep;
  if (sweep.size() > 1 && constraint)
    fail("--max-seqs: give one value with a constraint (the run compares free and constrained)");
  const int threads = a.opt.thread_count();
  ThreadPool pool(threads);
  std::vector<Round> rounds;
  for (int max_seqs : sweep) {
    a.opt.engine.max_seqs = max_seqs;
    Engine e(*m, pool, engine_config(a.opt.engine, *m));
    std::fprintf(stderr, "%s\n", describe_kv(e).c_str());
    if (constraint) (void)e.compile(*constraint);  // compiled once, outside the timed rounds
    rounds.push_back(measure(e, *m, a, constraint, threads, load_s));
  }
  if (!a.plot.empty()) plot_sweep(a.plot, sweep, rounds);
  return 0;
}

}  // namespace

void register_bench_throughput(CLI::App& bench, Commands& c) {
  auto a = std::make_shared<ThroughputArgs>();
  CLI::App* s = bench.add_subcommand(
      "throughput",
      "Offline serving throughput: many random-token requests through the batching engine");
  s->option_defaults()->always_capture_default();
  add_options(*s, a->opt, kModel | kThreads);
  s->add_option("--num-prompts", a->num_prompts, "Requests to run")->check(CLI::Range(1, 100000));
  s->add_option("--input-len", a->input_len,
                "Random prompt tokens per request (after the shared prefix)")
      ->check(CLI::Range(1, 1 << 20));
  s->add_option("--output-len", a->output_len, "Tokens generated per request (EOS ignored)")
      ->check(CLI::Range(1, 1 << 20));
  s->add_option("--shared-prefix-len", a->shared_prefix_len,
                "Tokens every prompt starts with (a common system prompt)")
      ->check(CLI::Range(0, 1 << 20));
  s->add_flag("--prime-prefix", a->prime_prefix,
              "Run one request with the shared prefix first, so timing starts with it cached");
  s->add_option("-s,--seed", a->seed, "Seed of the random prompts (and of each request's sampler)");
  s->add_option("--temp", a->temp,
                "Sampling temperature, with no top-k, top-p or min-p (the OpenAI API's defaults; "
                "vLLM's benchmark_throughput uses 1); 0: greedy")
      ->check(CLI::Range(0.0f, 100.0f));
  add_options(*s, a->opt, kEngine | kConcurrencySweep | kSpeculation | kConstraint);
  s->add_option("--plot", a->plot,
                "Also draw output tokens/s and the median latencies against --max-seqs (give "
                "several, e.g. 1,4,16) as an SVG file here");
  s->callback([a, &c] { c.selected = [a] { return throughput(*a); }; });
}

}  // namespace brisk::cli
