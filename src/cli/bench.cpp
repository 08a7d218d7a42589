// brisk bench: prompt processing and generation speed (like llama-bench), quoted against this
// machine's memory bandwidth and compute peaks measured in the same run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <span>
#include <sstream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/options.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/memory_stats.h"
#include "engine/engine.h"
#include "ops/cpu.h"
#include "ops/roofline.h"
#include "quant/quant.h"

namespace brisk::cli {
namespace {

struct BenchArgs {
  Options opt;
  int n_prompt = 512, n_gen = 128, reps = 3;
  int n_depth = 0;  // tokens in the cache before the generation runs' first token
  std::string threads = "1,2";
  bool no_peaks = false;
};

std::vector<int> parse_thread_list(const std::string& list) {
  std::vector<int> threads;
  std::stringstream ss(list);
  for (std::string t; std::getline(ss, t, ',');) {
    const int n = std::atoi(t.c_str());
    if (n < 1 || n > 1024) fail("-t: '{}' is not a thread count", t);
    threads.push_back(n);
  }
  return threads;
}

// What the runs are quoted against, from the model: its weight type and bytes, the operations a
// prompt token costs, and the weight matrices as generation reads them.
struct Workload {
  std::string wtype;
  uint64_t weight_bytes = 0;
  bool int8 = false;
  double pp_flops_per_token = 0;
  std::vector<std::span<const uint8_t>> spans;
};

Workload workload(const Model& m, int n_prompt) {
  Workload w;
  const auto& hp = m.hp;
  w.wtype = dtype_name(m.w.layers.empty() ? m.w.output.type : m.w.layers[0].wq.type);
  w.weight_bytes = m.w.matrix_bytes();
  w.int8 = dtype_is_quantized(m.w.layers[0].wq.type);
  // Operations per prompt token: 2 per weight (matmuls) plus attention over the average causal
  // length.
  const double attn_flops = 4.0 * static_cast<double>(hp.n_layer) * hp.q_dim() * (n_prompt / 2.0);
  w.pp_flops_per_token = 2.0 * static_cast<double>(m.w.matrix_elements()) + attn_flops;
  // Their own memory's read rate is quoted too, because on virtual machines it differs from a
  // fresh buffer's (page sizes, placement).
  auto add_span = [&](const Tensor& t) {
    if (t.data) w.spans.emplace_back(static_cast<const uint8_t*>(t.data), t.nbytes);
  };
  add_span(m.w.output);
  for (const auto& L : m.w.layers) {
    for (const Tensor* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.ffn_gate, &L.ffn_up, &L.ffn_down})
      add_span(*t);
    // A token reads n_used experts per layer: as many as that, the router's first ones.
    add_span(L.ffn_gate_inp);
    for (size_t e = 0; e < L.experts.size() && e < static_cast<size_t>(hp.experts.n_used); ++e)
      for (const Tensor* t : {&L.experts[e].gate, &L.experts[e].up, &L.experts[e].down})
        add_span(*t);
  }
  return w;
}

// One thread count's runs: tokens/s with, per run, the peak or bandwidth measured just before it
// and the run's fraction of that.
struct Runs {
  std::vector<double> rate, roof, ratio, weights_read, read_ratio;
  std::vector<double> collective;  // split over ranks: fraction of the run in collectives
};

// Rank 0's seconds in collectives so far (0 in one process).
double collective_seconds(const Model& m) {
  return m.split.active() ? m.split.comm->collective_seconds() : 0.0;
}

// Both tests run through the engine, as every command does: the prompt as one batch, then one
// sequence decoding token by token from an empty context.
struct Bench {
  const BenchArgs& a;
  const Workload& w;
  ThreadPool& pool;
  Engine& engine;
  std::mt19937& rng;

  Request request(int n_prompt, int n_out) {
    std::uniform_int_distribution<int32_t> tok(3,
                                               static_cast<int32_t>(engine.model().hp.n_vocab - 1));
    Request r;
    for (int i = 0; i < n_prompt; ++i) r.prompt.push_back(tok(rng));
    r.sampling.temperature = 0;
    r.max_tokens = n_out;
    r.ignore_eos = true;
    return r;
  }

  // The compute peak the prompt runs are quoted against; 0 where this tier has no loop for it.
  double measure_peak() {
    if (a.no_peaks) return 0.0;
    if (w.int8) return measure_int8_dot_peak(pool);
    const double bf16 = w.wtype == "BF16" ? measure_bf16_dot_peak(pool) : 0;
    return bf16 > 0 ? bf16 : measure_fma_peak(pool);
  }

  // Each prompt run is paired with a peak measured just before it, as each generation run is with
  // a bandwidth: other tenants take the cores for seconds at a time, so a peak measured once moved
  // the quoted fraction by up to 12 points between runs of the same build.
  Runs prompt_runs() {
    Runs out;
    for (int r = 0; r < a.reps + 1; ++r) {
      const double peak_now = measure_peak();
      double t_tok = 0, c_tok = 0;
      const double t0 = now_seconds(), c0 = collective_seconds(engine.model());
      engine.submit(request(a.n_prompt, 1), [&](const Output&) {
        t_tok = now_seconds();
        c_tok = collective_seconds(engine.model());
      });
      engine.run_until_idle();
      if (r == 0) continue;  // the first run warms up
      out.rate.push_back(a.n_prompt / (t_tok - t0));
      out.collective.push_back((c_tok - c0) / (t_tok - t0));
      if (peak_now <= 0) continue;
      out.roof.push_back(peak_now);
      out.ratio.push_back(out.rate.back() * w.pp_flops_per_token / peak_now);
    }
    return out;
  }

  // Generation. The machine's bandwidth drifts (other tenants), so each run is paired with a
  // bandwidth measurement taken just before it. Timed from the first token (the prompt's: one
  // token, or n_depth + 1 with a depth) to the last: n_gen forward passes of one token each, each
  // attending over the depth's positions too.
  Runs generation_runs(double bw) {
    Runs out;
    for (int r = 0; r < a.reps + 1; ++r) {
      const double bw_now = measure_read_bandwidth(pool, size_t{512} << 20, 3);
      const double wbw_now = measure_span_bandwidth(pool, w.spans);
      double t_first = 0, t_last = 0, c_first = 0, c_last = 0;
      int got = 0;
      engine.submit(request(a.n_depth + 1, a.n_gen + 1), [&](const Output&) {
        t_last = now_seconds();
        c_last = collective_seconds(engine.model());
        if (got++ == 0) t_first = t_last, c_first = c_last;
      });
      engine.run_until_idle();
      const double tps = a.n_gen / (t_last - t_first);
      if (r == 0) continue;  // warm-up
      out.rate.push_back(tps);
      out.collective.push_back((c_last - c_first) / (t_last - t_first));
      out.roof.push_back(std::max(bw, bw_now));
      out.weights_read.push_back(wbw_now);
      out.read_ratio.push_back(tps * static_cast<double>(w.weight_bytes) / wbw_now);
      out.ratio.push_back(tps * static_cast<double>(w.weight_bytes) / std::max(bw, bw_now));
    }
    return out;
  }
};

void print_rows(const BenchArgs& a, const Workload& w, int nt, const Runs& pp, const Runs& tg) {
  const double pps = median(pp.rate), tgs = median(tg.rate);
  const std::string rate =
      fmt::format("{:6.1f} G{}/s", pps * w.pp_flops_per_token / 1e9, w.int8 ? "OP" : "FLOP");
  if (pp.roof.empty())  // no peak loop for this tier (generic), or --no-peaks
    std::printf("| %7d | pp%-3d | %8.2f | %-23s | %11s |                 |        |\n", nt,
                a.n_prompt, pps, rate.c_str(), "-");
  else
    std::printf("| %7d | pp%-3d | %8.2f | %s of %4.0f  | %10.1f%% |                 |        |\n",
                nt, a.n_prompt, pps, rate.c_str(), median(pp.roof) / 1e9, 100.0 * median(pp.ratio));
  std::printf(
      "| %7d | tg%-3d | %8.2f | %6.1f GB/s of %5.1f     | %10.1f%% | %10.1f GB/s | %5.1f%% |\n", nt,
      a.n_gen, tgs, tgs * static_cast<double>(w.weight_bytes) / 1e9, median(tg.roof) / 1e9,
      100.0 * median(tg.ratio), median(tg.weights_read) / 1e9, 100.0 * median(tg.read_ratio));
  if (median(tg.collective) > 0)
    std::printf(
        "|         | ranks' collectives: pp%d %.1f%% of the time (%.2f ms per prompt), tg%d "
        "%.1f%% (%.3f ms per token); the rest is compute |\n",
        a.n_prompt, 100 * median(pp.collective), 1e3 * median(pp.collective) * a.n_prompt / pps,
        a.n_gen, 100 * median(tg.collective), 1e3 * median(tg.collective) / tgs);
  std::fflush(stdout);
}

int bench(BenchArgs& a) {
  double load_s = 0;
  auto m = load_model(a.opt.model, &load_s);
  const std::vector<int> threads = parse_thread_list(a.threads);
  const Workload w = workload(*m, a.n_prompt);
  std::printf("model: %s (%s, %s weights, %.1f MiB of matrices), kernels: %s\n",
              m->file.path.c_str(), m->hp.arch.c_str(), w.wtype.c_str(), w.weight_bytes / 1048576.0,
              isa_name(best_isa()));
  std::printf("load: %.0f ms%s, resident %.1f MiB (peak %.1f MiB)\n", load_s * 1e3,
              repack_summary(*m).c_str(), resident_bytes() / 1048576.0,
              peak_resident_bytes() / 1048576.0);
  if (m->split.active())
    std::printf(
        "split over %d ranks: the table is rank 0's (its %.1f MiB of matrices, its threads, "
        "its bandwidth)\n",
        m->split.size, w.weight_bytes / 1048576.0);
  std::printf(
      "| threads | test  | tokens/s | machine                 | vs roofline | weights read at | "
      "vs it  |\n");
  std::printf(
      "|--------:|-------|---------:|-------------------------|------------:|----------------:|"
      "-------:|\n");
  std::mt19937 rng(1);
  for (int nt : threads) {
    ThreadPool pool(nt);
    const double bw = measure_read_bandwidth(pool);
    EngineConfig ec;
    ec.max_seqs = 1;
    ec.max_batched_tokens = a.n_prompt;
    ec.max_model_len = std::max(a.n_prompt, a.n_depth + a.n_gen) + 2;
    ec.prefix_caching = false;
    Engine engine(*m, pool, ec);
    Bench b{a, w, pool, engine, rng};
    const Runs pp = b.prompt_runs();
    const Runs tg = b.generation_runs(bw);
    print_rows(a, w, nt, pp, tg);
  }
  std::printf(
      "pp: against the %s peak measured in-process before each run. tg: against the bandwidth "
      "roofline (read bandwidth, measured before each run, / %.1f MiB of weights per token); "
      "'weights read at': a plain read of the weight matrices themselves (their own memory, "
      "matrix by matrix as the forward pass reads them), measured next to it; 'vs it': tg's "
      "rate of reading them against that. Medians of %d runs.\n",
      w.int8                                               ? "int8 dot-product"
      : w.wtype == "BF16" && best_isa() == Isa::Avx512Bf16 ? "BF16 dot-product"
                                                           : "FP32 FMA",
      w.weight_bytes / 1048576.0, a.reps);
  if (a.n_depth > 0)
    std::printf(
        "tg%d ran at depth %d: each token also read the cache's keys and values (not counted in "
        "the roofline's bytes).\n",
        a.n_gen, a.n_depth);
  return 0;
}

}  // namespace

void register_bench(CLI::App& app, Commands& c) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* s = app.add_subcommand(
      "bench", "Measure prompt and generation speed against this machine's roofline");
  s->option_defaults()->always_capture_default();  // --help shows each default
  add_options(*s, a->opt, kModel);
  s->add_option("-p,--n-prompt", a->n_prompt, "Prompt length for the prompt-processing test")
      ->check(CLI::Range(1, 65536));
  s->add_option("-n,--n-gen", a->n_gen, "Tokens for the generation test")
      ->check(CLI::Range(1, 65536));
  s->add_option("-d,--n-depth", a->n_depth,
                "Tokens already in the KV cache when the generation test starts (its prompt, "
                "processed before the timing; the prompt test runs at depth 0)")
      ->check(CLI::Range(0, 1 << 20));
  s->add_option("-t,--threads", a->threads, "Comma-separated thread counts to test");
  s->add_option("-r,--repetitions", a->reps, "Runs per test (the median is reported)")
      ->check(CLI::Range(1, 100));
  s->add_flag("--no-peaks", a->no_peaks, "Skip measuring the compute peaks");
  register_bench_throughput(*s, c);
  register_bench_spec(*s, c);
  register_bench_serve(*s, c);
  s->require_subcommand(0, 1);
  s->callback([a, s, &c] {
    if (s->got_subcommand("throughput") || s->got_subcommand("spec") || s->got_subcommand("serve"))
      return;  // its own callback chose the action
    c.selected = [a] { return bench(*a); };
  });
}

}  // namespace brisk::cli
