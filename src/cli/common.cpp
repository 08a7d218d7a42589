#include "cli/common.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cli/hub_download.h"
#include "core/error.h"
#include "model/follower.h"
#include "parallel/communicator.h"

namespace brisk::cli {
namespace fs = std::filesystem;

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
  Communicator& comm = world();
  LoadOptions opt;
  opt.repack = !a.no_repack;
  opt.context = a.context;
  if (!a.no_repack_cache) opt.repack_cache.dir = (fs::path(cache_dir()) / "repacked").string();
  // A cache that cannot be written costs the next start time, not this one's output: a note.
  opt.repack_cache.on_error = [](const std::string& why) {
    std::fprintf(stderr, "note: interleaved weights not kept for the next start: %s\n",
                 why.c_str());
  };
  auto m = Model::load(path, a.tokenizer, opt, comm.size() > 1 ? &comm : nullptr);
  check_same_model(*m);
  if (comm.rank() != 0) {
    follow_plans(*m);
    end_plans(comm);
    finish_world();
    std::exit(0);
  }
  if (seconds)
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return m;
}

std::string repack_summary(const Model& m) {
  if (m.repack_seconds <= 0) return "";
  if (m.repack_mapped)
    return fmt::format(" (of which {:.0f} ms reading the interleaved rows kept in {})",
                       m.repack_seconds * 1e3, m.repack_cache);
  return fmt::format(" (of which {:.0f} ms interleaving rows for the kernels{})",
                     m.repack_seconds * 1e3,
                     m.repack_cache.empty() ? "" : ", and keeping them in " + m.repack_cache);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::min(v.size(), std::max<size_t>(rank, 1)) - 1];
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

void quiet_follower() {
  if (!std::freopen("/dev/null", "w", stdout)) std::fclose(stdout);
  signal(SIGINT, SIG_IGN);
}

void catch_interrupts(bool graceful) {
  g_graceful = graceful;
}

}  // namespace brisk::cli
