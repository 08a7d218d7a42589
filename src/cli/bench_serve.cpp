// brisk bench serve: an online serving benchmark against any OpenAI-compatible server (like vLLM's
// `vllm bench serve`): requests arrive at a Poisson or fixed rate, or keep a fixed number in
// flight, each streamed; time to first token, time per output token, inter-token latency and
// end-to-end latency are reported with throughput, and can be written as JSON.
#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/svg_plot.h"
#include "core/error.h"
#include "core/progress.h"

namespace brisk::cli {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct ServeBenchArgs {
  std::string base_url = "http://127.0.0.1:8080", model, dataset, result_file, api_key, plot;
  int num_prompts = 100, max_concurrency = 0, input_len = 128, output_len = 128;
  int random_vocab = 500;
  double request_rate = std::numeric_limits<double>::infinity();
  bool fixed_rate = false;
  uint64_t seed = 1;
};

struct Result {
  bool ok = false;
  std::string error;
  int64_t prompt_tokens = 0, output_tokens = 0;
  double ttft = 0, e2e = 0;
  std::vector<double> itl;
  double sent = 0;  // seconds from the benchmark's start
};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// One streamed completion: Server-Sent Events are parsed as bytes arrive, and every event that
// carries text is a token arrival.
struct Stream {
  Clock::time_point start, last;
  std::string buf, body_head;
  Result* r = nullptr;
  bool got_first = false, done = false;

  void feed(const char* p, size_t n) {
    if (body_head.size() < 512) body_head.append(p, std::min(n, 512 - body_head.size()));
    buf.append(p, n);
    size_t i;
    while ((i = buf.find("\n\n")) != std::string::npos) {
      const std::string ev = buf.substr(0, i);
      buf.erase(0, i + 2);
      if (ev.rfind("data: ", 0) != 0) continue;
      const std::string data = ev.substr(6);
      if (data == "[DONE]") {
        done = true;
        continue;
      }
      const json j = json::parse(data, nullptr, false);
      if (j.is_discarded()) continue;
      if (j.contains("usage") && j["usage"].is_object()) {
        r->prompt_tokens = j["usage"].value("prompt_tokens", int64_t{0});
        r->output_tokens = j["usage"].value("completion_tokens", int64_t{0});
      }
      if (j.contains("error")) r->error = j["error"].dump();
      if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) continue;
      const json& c = j["choices"][0];
      const std::string text = c.contains("text") && c["text"].is_string()
                                   ? c["text"].get<std::string>()
                                   : std::string();
      if (text.empty()) continue;
      const auto now = Clock::now();
      if (!got_first) {
        r->ttft = std::chrono::duration<double>(now - start).count();
        got_first = true;
      } else {
        r->itl.push_back(std::chrono::duration<double>(now - last).count());
      }
      last = now;
    }
  }
};

size_t on_data(char* p, size_t size, size_t n, void* user) {
  static_cast<Stream*>(user)->feed(p, size * n);
  return size * n;
}

Result send(const std::string& url, const std::string& api_key, const json& body) {
  Result r;
  Stream s;
  s.r = &r;
  CURL* c = curl_easy_init();
  if (!c) {
    r.error = "curl_easy_init failed";
    return r;
  }
  const std::string payload = body.dump();
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  if (!api_key.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + api_key).c_str());
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  s.start = s.last = Clock::now();
  const CURLcode rc = curl_easy_perform(c);
  r.e2e = seconds_since(s.start);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK)
    r.error = curl_easy_strerror(rc);
  else if (status != 200)
    r.error = fmt::format("HTTP {}: {}", status, s.body_head);
  else if (!s.done)
    r.error = "the stream ended without [DONE]";
  if (r.error.empty() && r.output_tokens == 0)
    r.output_tokens = s.got_first ? static_cast<int64_t>(r.itl.size()) + 1 : 0;
  r.ok = r.error.empty();
  return r;
}

json get_json(const std::string& url, const std::string& api_key) {
  CURL* c = curl_easy_init();
  std::string out;
  curl_slist* headers = nullptr;
  if (!api_key.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + api_key).c_str());
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
  curl_easy_setopt(
      c, CURLOPT_WRITEFUNCTION, +[](char* p, size_t size, size_t n, void* user) {
        static_cast<std::string*>(user)->append(p, size * n);
        return size * n;
      });
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
  const CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK) fail("{}: {}", url, curl_easy_strerror(rc));
  json j = json::parse(out, nullptr, false);
  if (j.is_discarded()) fail("{}: the answer is not JSON", url);
  return j;
}

struct Stats {
  double mean = 0, median = 0, p99 = 0;
};
Stats stats_of(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  s.median = median(v);
  s.p99 = percentile(v, 0.99);
  return s;
}

// The prompts: random token ids (exactly input_len tokens in any vocabulary of at least
// --random-vocab ids), or the lines of a dataset file (plain text, or JSON objects with "prompt").
std::vector<json> make_prompts(const ServeBenchArgs& a, std::mt19937_64& rng) {
  std::vector<json> prompts;
  if (!a.dataset.empty()) {
    const std::string text = read_text_file(a.dataset, "dataset");
    std::vector<json> lines;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      const std::string line = text.substr(pos, end - pos);
      pos = end + 1;
      if (line.empty()) continue;
      const json j = json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.is_object() && j.contains("prompt"))
        lines.push_back(j["prompt"]);
      else
        lines.emplace_back(line);
    }
    if (lines.empty()) fail("{}: the dataset has no prompts", a.dataset);
    for (int i = 0; i < a.num_prompts; ++i)
      prompts.push_back(lines[static_cast<size_t>(i) % lines.size()]);
    return prompts;
  }
  std::uniform_int_distribution<int> tok(3, a.random_vocab - 1);
  for (int i = 0; i < a.num_prompts; ++i) {
    json ids = json::array();
    for (int k = 0; k < a.input_len; ++k) ids.push_back(tok(rng));
    prompts.push_back(std::move(ids));
  }
  return prompts;
}

// The server's root (without /v1) and the model to request (the first it lists, unless named).
std::string server_root(ServeBenchArgs& a) {
  std::string base = a.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.size() > 3 && base.compare(base.size() - 3, 3, "/v1") == 0) base.resize(base.size() - 3);
  if (a.model.empty()) {
    const json models = get_json(base + "/v1/models", a.api_key);
    if (!models.contains("data") || !models["data"].is_array() || models["data"].empty() ||
        !models["data"][0].contains("id"))
      fail("{}/v1/models lists no model: name one with --model", base);
    a.model = models["data"][0]["id"].get<std::string>();
  }
  return base;
}

// Arrival times: all at once (infinite rate), or gaps drawn from an exponential distribution
// (Poisson arrivals) or fixed at 1/rate.
std::vector<double> arrival_times(const ServeBenchArgs& a, std::mt19937_64& rng) {
  std::vector<double> arrival(static_cast<size_t>(a.num_prompts), 0.0);
  if (!std::isfinite(a.request_rate)) return arrival;
  std::exponential_distribution<double> gap(a.request_rate);
  double t = 0;
  for (double& at : arrival) {
    at = t;
    t += a.fixed_rate ? 1.0 / a.request_rate : gap(rng);
  }
  return arrival;
}

// Sends every request at its arrival time, streamed, from a thread per request in flight (at
// most 4096: the most a client here keeps open); returns each one's result and the seconds it all
// took.
std::vector<Result> run_requests(const ServeBenchArgs& a, const std::string& base,
                                 const std::vector<json>& prompts,
                                 const std::vector<double>& arrival, double& duration) {
  const int n = a.num_prompts;
  const int workers = std::min(a.max_concurrency > 0 ? std::min(a.max_concurrency, n) : n, 4096);
  std::vector<Result> results(static_cast<size_t>(n));
  std::atomic<int> next{0}, finished{0};
  std::mutex progress_mu;
  ProgressBar bar("requests", n);
  const auto start = Clock::now();
  const std::string url = base + "/v1/completions";
  auto worker = [&] {
    for (int i; (i = next++) < n;) {
      const auto due = start + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(arrival[static_cast<size_t>(i)]));
      std::this_thread::sleep_until(due);
      json body = {{"model", a.model},
                   {"prompt", prompts[static_cast<size_t>(i)]},
                   {"max_tokens", a.output_len},
                   {"temperature", 0},
                   {"ignore_eos", true},
                   {"stream", true},
                   {"stream_options", {{"include_usage", true}}}};
      const double sent = seconds_since(start);
      results[static_cast<size_t>(i)] = send(url, a.api_key, body);
      results[static_cast<size_t>(i)].sent = sent;
      const int done = ++finished;
      std::lock_guard lk(progress_mu);
      bar.update(done);
    }
  };
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  bar.finish();
  duration = seconds_since(start);
  return results;
}

// --plot: the distributions of time to first token and inter-token latency, and the output
// tokens per second over the run (in windows of a fortieth of it).
std::vector<Chart> plots(const std::vector<Result>& results, double duration) {
  std::vector<double> ttft, itl, token_at;
  for (const Result& r : results) {
    if (!r.ok) continue;
    ttft.push_back(r.ttft * 1e3);
    double t = r.sent + r.ttft;
    token_at.push_back(t);
    for (double d : r.itl) {
      itl.push_back(d * 1e3);
      token_at.push_back(t += d);
    }
  }
  const double window = std::max(duration / 40, 1e-6);
  const auto n = static_cast<size_t>(std::ceil(std::max(duration, window) / window));
  std::vector<double> per(n, 0);
  for (double t : token_at) ++per[std::min(static_cast<size_t>(t / window), n - 1)];
  PlotSeries rate{"output tokens/s", {}};
  for (size_t k = 0; k < n; ++k)
    rate.points.emplace_back((static_cast<double>(k) + 0.5) * window, per[k] / window);
  return {
      {"Time to first token", "milliseconds", "requests", {{"TTFT", histogram(ttft, 30)}}, true},
      {"Inter-token latency", "milliseconds", "tokens", {{"ITL", histogram(itl, 30)}}, true},
      {"Output throughput over time", "seconds since the start", "tokens/s", {rate}, false}};
}

// What vLLM's benchmark_serving reports, over the successful requests.
struct Summary {
  int ok = 0;
  int64_t in_tokens = 0, out_tokens = 0;
  Stats ttft, tpot, itl, e2e;
  std::string first_error;
};

Summary summarize(const std::vector<Result>& results) {
  Summary s;
  std::vector<double> ttft, tpot, itl, e2e;
  for (const Result& r : results) {
    if (!r.ok) {
      if (s.first_error.empty()) s.first_error = r.error;
      continue;
    }
    ++s.ok;
    s.in_tokens += r.prompt_tokens;
    s.out_tokens += r.output_tokens;
    ttft.push_back(r.ttft);
    e2e.push_back(r.e2e);
    if (r.output_tokens > 1)
      tpot.push_back((r.e2e - r.ttft) / static_cast<double>(r.output_tokens - 1));
    itl.insert(itl.end(), r.itl.begin(), r.itl.end());
  }
  s.ttft = stats_of(ttft), s.tpot = stats_of(tpot), s.itl = stats_of(itl), s.e2e = stats_of(e2e);
  return s;
}

void print_summary(const ServeBenchArgs& a, const Summary& s, double duration) {
  auto line = [](const char* k, const std::string& v) {
    std::printf("%-40s %14s\n", k, v.c_str());
  };
  auto num = [](double v, int prec = 2) { return fmt::format("{:.{}f}", v, prec); };
  std::printf("============ Serving Benchmark Result ============\n");
  line("Successful requests:", std::to_string(s.ok));
  line("Failed requests:", std::to_string(a.num_prompts - s.ok));
  line("Maximum request concurrency:",
       a.max_concurrency > 0 ? std::to_string(a.max_concurrency) : std::string("none"));
  line("Benchmark duration (s):", num(duration));
  line("Total input tokens:", std::to_string(s.in_tokens));
  line("Total generated tokens:", std::to_string(s.out_tokens));
  line("Request throughput (req/s):", num(s.ok / duration));
  line("Output token throughput (tok/s):", num(static_cast<double>(s.out_tokens) / duration));
  line("Total token throughput (tok/s):",
       num(static_cast<double>(s.in_tokens + s.out_tokens) / duration));
  auto block = [&](const char* title, const char* key, const Stats& st) {
    std::printf("%s\n", title);
    line(fmt::format("Mean {} (ms):", key).c_str(), num(st.mean * 1e3));
    line(fmt::format("Median {} (ms):", key).c_str(), num(st.median * 1e3));
    line(fmt::format("P99 {} (ms):", key).c_str(), num(st.p99 * 1e3));
  };
  block("---------------Time to First Token----------------", "TTFT", s.ttft);
  block("-----Time per Output Token (excl. 1st token)------", "TPOT", s.tpot);
  block("---------------Inter-token Latency----------------", "ITL", s.itl);
  block("----------------End-to-end Latency----------------", "E2EL", s.e2e);
  std::printf("==================================================\n");
  if (!s.first_error.empty()) std::fprintf(stderr, "first failure: %s\n", s.first_error.c_str());
}

void write_result_file(const ServeBenchArgs& a, const std::string& base, const Summary& s,
                       double duration) {
  auto ms = [](const Stats& st) {
    return json{{"mean", st.mean * 1e3}, {"median", st.median * 1e3}, {"p99", st.p99 * 1e3}};
  };
  const int n = a.num_prompts;
  const json out = {
      {"base_url", base},
      {"model", a.model},
      {"num_prompts", n},
      {"completed", s.ok},
      {"failed", n - s.ok},
      {"request_rate", std::isfinite(a.request_rate) ? json(a.request_rate) : json("inf")},
      {"max_concurrency", a.max_concurrency},
      {"duration", duration},
      {"total_input_tokens", s.in_tokens},
      {"total_output_tokens", s.out_tokens},
      {"request_throughput", s.ok / duration},
      {"output_throughput", static_cast<double>(s.out_tokens) / duration},
      {"total_token_throughput", static_cast<double>(s.in_tokens + s.out_tokens) / duration},
      {"ttft_ms", ms(s.ttft)},
      {"tpot_ms", ms(s.tpot)},
      {"itl_ms", ms(s.itl)},
      {"e2el_ms", ms(s.e2e)}};
  std::ofstream f(a.result_file);
  if (!(f << out.dump(2) << "\n")) fail("{}: cannot write the results", a.result_file);
}

int bench_serve(ServeBenchArgs& a) {
  curl_global_init(CURL_GLOBAL_DEFAULT);  // before any thread uses curl
  const std::string base = server_root(a);
  std::mt19937_64 rng(a.seed);
  const std::vector<json> prompts = make_prompts(a, rng);
  const std::vector<double> arrival = arrival_times(a, rng);
  std::fprintf(
      stderr,
      "bench serve: %s, model %s, %d requests, rate %s, max concurrency %s, %s prompts, "
      "%d output tokens each\n",
      base.c_str(), a.model.c_str(), a.num_prompts,
      std::isfinite(a.request_rate) ? fmt::format("{}/s", a.request_rate).c_str() : "inf",
      a.max_concurrency > 0 ? std::to_string(a.max_concurrency).c_str() : "none",
      a.dataset.empty() ? fmt::format("{}-token random", a.input_len).c_str() : a.dataset.c_str(),
      a.output_len);
  double duration = 0;
  const std::vector<Result> results = run_requests(a, base, prompts, arrival, duration);
  const Summary s = summarize(results);
  print_summary(a, s, duration);
  if (!a.result_file.empty()) write_result_file(a, base, s, duration);
  if (!a.plot.empty()) write_svg(a.plot, plots(results, duration));
  return s.ok == a.num_prompts ? 0 : 1;
}

}  // namespace

void register_bench_serve(CLI::App& bench, Commands& c) {
  auto a = std::make_shared<ServeBenchArgs>();
  CLI::App* s = bench.add_subcommand(
      "serve",
      "Online serving benchmark against any OpenAI-compatible server (streamed completions)");
  s->option_defaults()->always_capture_default();
  s->add_option("--base-url", a->base_url, "The server, e.g. http://127.0.0.1:8080");
  s->add_option("--model", a->model, "Model name to request (default: the first of /v1/models)");
  s->add_option("--api-key", a->api_key, "Sent as 'Authorization: Bearer KEY'");
  s->add_option("--num-prompts", a->num_prompts, "Requests to send")->check(CLI::Range(1, 1000000));
  s->add_option("--request-rate", a->request_rate,
                "Requests per second arriving (Poisson process); inf: all at once")
      ->check(CLI::PositiveNumber);
  s->add_flag("--fixed-rate", a->fixed_rate,
              "Arrivals exactly 1/rate apart instead of a Poisson process");
  s->add_option("--max-concurrency", a->max_concurrency,
                "Requests in flight at most (0: no limit beyond the arrival rate)")
      ->check(CLI::Range(0, 100000));
  s->add_option("--input-len", a->input_len, "Random prompt length in tokens")
      ->check(CLI::Range(1, 1 << 20));
  s->add_option("--output-len", a->output_len, "Tokens generated per request (EOS ignored)")
      ->check(CLI::Range(1, 1 << 20));
  s->add_option("--random-vocab", a->random_vocab,
                "Random prompt ids are drawn from [3, this): small enough for any vocabulary")
      ->check(CLI::Range(4, 1 << 24));
  s->add_option("--dataset", a->dataset,
                "Prompts instead of random ones: one per line, plain text or a JSON object with "
                "\"prompt\" (used in turn)");
  s->add_option("-s,--seed", a->seed, "Seed of the random prompts and arrival times");
  s->add_option("--result-file", a->result_file, "Also write the results as JSON here");
  s->add_option("--plot", a->plot,
                "Also draw the TTFT and ITL distributions and the throughput over time as an SVG "
                "file here");
  s->callback([a, &c] { c.selected = [a] { return bench_serve(*a); }; });
}

}  // namespace brisk::cli
