#include "cli/common.h"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/download.h"
#include "core/error.h"

namespace brisk::cli {
namespace fs = std::filesystem;

void add_model_options(CLI::App& app, ModelArgs& a, bool required) {
  auto* m = app.add_option(
      "-m,--model", a.path,
      "Model to load: a GGUF file, a llama2.c checkpoint, or a Hugging Face directory "
      "(config.json + *.safetensors + tokenizer.json)" +
          std::string(required ? "" : ". Default: stories260K"));
  if (required) m->required();
  app.add_option(
      "-z,--tokenizer", a.tokenizer,
      "llama2.c tokenizer file (default: tokenizer.bin or tok<vocab>.bin beside the checkpoint)");
  app.add_option("--hf-repo", a.hf,
                 "Download a model from the Hugging Face hub: OWNER/REPO[:FILE-OR-QUANT] (also "
                 "-hf); cached in "
                 "$BRISK_CACHE, $XDG_CACHE_HOME/brisk or ~/.cache/brisk");
  app.add_flag(
      "--no-repack", a.no_repack,
      "Use the weights as the file stores them, mapped from it: faster loading and no "
      "copy in memory, but slower kernels (by default Q4_0, Q8_0, Q4_K, Q6_K, BF16 and F16 "
      "matrices are interleaved 16 rows at a time on CPUs with AVX2, F32 ones on CPUs with "
      "AVX-512)");
}

std::string resolve_model(ModelArgs& a) {
  if (!a.path.empty()) return a.path;
  if (!a.hf.empty()) return hub_fetch(a.hf);
  // ../shared beside the checkout: look in the ancestors of the binary's and the working directory.
  std::error_code ec;
  for (fs::path dir :
       {fs::read_symlink("/proc/self/exe", ec).parent_path(), fs::current_path(ec)}) {
    for (int up = 0; up < 6 && !dir.empty(); ++up, dir = dir.parent_path()) {
      const fs::path p = dir / "shared" / "models" / "stories260K" / "stories260K.gguf";
      if (fs::exists(p, ec)) return p.string();
      if (dir == dir.parent_path()) break;
    }
  }
  // Karpathy's tinyllamas repository holds the llama2.c checkpoint and its tokenizer.
  const std::string dir =
      (fs::path(cache_dir()) / "hub" / "karpathy" / "tinyllamas" / "stories260K").string();
  const std::string base = hub_endpoint() + "/karpathy/tinyllamas/resolve/main/stories260K/";
  download_file(base + "tok512.bin", dir + "/tok512.bin");
  download_file(base + "stories260K.bin", dir + "/stories260K.bin");
  if (a.tokenizer.empty()) a.tokenizer = dir + "/tok512.bin";
  return dir + "/stories260K.bin";
}

std::unique_ptr<Model> load_model(ModelArgs& a, double* seconds) {
  const std::string path = resolve_model(a);
  const auto t0 = std::chrono::steady_clock::now();
  auto m = Model::load(path, a.tokenizer, !a.no_repack);
  if (seconds)
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return m;
}

void add_sampling_options(CLI::App& app, SamplingParams& sp, int64_t& seed) {
  app.add_option("--temp", sp.temperature,
                 "Sampling temperature; 0 picks the most likely token (greedy)")
      ->check(CLI::Range(0.0f, 100.0f));
  app.add_option("--top-k", sp.top_k, "Keep only the k most likely tokens (0: off)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--top-p", sp.top_p,
                 "Keep the most likely tokens whose probabilities sum to p (1: off)")
      ->check(CLI::Range(0.0f, 1.0f));
  app.add_option("--min-p", sp.min_p,
                 "Drop tokens less likely than min-p times the most likely one (0: off)")
      ->check(CLI::Range(0.0f, 1.0f));
  app.add_option("--repeat-penalty", sp.repeat_penalty,
                 "Penalize tokens seen in the last --repeat-last-n tokens (1: off)")
      ->check(CLI::Range(0.0f, 100.0f));
  app.add_option("--repeat-last-n", sp.penalty_last_n,
                 "Tokens the penalties look back over (-1: whole context)")
      ->check(CLI::Range(-1, 1 << 24));
  app.add_option("--presence-penalty", sp.presence_penalty,
                 "Subtract this from tokens already present (0: off)");
  app.add_option("--frequency-penalty", sp.frequency_penalty,
                 "Subtract this times a token's count (0: off)");
  app.add_option("-s,--seed", seed, "Random seed (-1: random, printed to stderr)");
}

std::string read_text_file(const std::string& path, const char* what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail("{}: cannot open the {}", path, what);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::atomic<bool> g_interrupted{false};

namespace {
std::atomic<bool> g_graceful{false};
void on_sigint(int) {
  if (!g_graceful.load() || g_interrupted.exchange(true)) std::_Exit(130);
}
}  // namespace

void install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
}

void catch_interrupts(bool graceful) {
  g_graceful = graceful;
}

}  // namespace brisk::cli
