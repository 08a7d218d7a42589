#include "cli/hub_download.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.h"
#include "core/progress.h"

namespace brisk {
namespace fs = std::filesystem;

std::string hub_endpoint() {
  const char* e = std::getenv("HF_ENDPOINT");
  std::string s = e && *e ? e : "https://huggingface.co";
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

std::string cache_dir() {
  if (const char* b = std::getenv("BRISK_CACHE"); b && *b) return b;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return (fs::path(x) / "brisk").string();
  if (const char* h = std::getenv("HOME"); h && *h)
    return (fs::path(h) / ".cache" / "brisk").string();
  return ".brisk-cache";
}

namespace {

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  ~CurlGlobal() { curl_global_cleanup(); }
};
void curl_init() {
  static CurlGlobal g;
}

struct Transfer {
  std::FILE* out = nullptr;
  std::string* body = nullptr;
  uint64_t offset = 0;
  bool progress = false;
  std::string name;
  std::optional<ProgressBar> bar;  // created once the size is known
};

size_t write_body(char* p, size_t sz, size_t n, void* ud) {
  auto* t = static_cast<Transfer*>(ud);
  if (t->body) {
    t->body->append(p, sz * n);
    return sz * n;
  }
  return std::fwrite(p, sz, n, t->out) * sz;
}

int on_progress(void* ud, curl_off_t total, curl_off_t now, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(ud);
  if (!t->progress || total <= 0) return 0;
  const double done = static_cast<double>(t->offset + static_cast<uint64_t>(now));
  const double all = static_cast<double>(t->offset + static_cast<uint64_t>(total));
  if (!t->bar) t->bar.emplace(t->name, all);
  t->bar->update(done, fmt::format("{:.1f}/{:.1f} MiB", done / 1048576.0, all / 1048576.0));
  return 0;
}

// Runs one GET; returns the HTTP status. Network failures throw.
long perform(const std::string& url, Transfer& t, uint64_t resume_from) {
  curl_init();
  CURL* c = curl_easy_init();
  if (!c) fail("cannot initialize libcurl");
  char err[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_FAILONERROR, 0L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
  // Abort a stalled transfer (under 1 byte/s for 60 s) instead of hanging forever.
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "brisk/0.1");
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  struct curl_slist* headers = nullptr;
  if (const char* tok = std::getenv("HF_TOKEN"); tok && *tok)
    headers = curl_slist_append(headers, (std::string("Authorization: Bearer ") + tok).c_str());
  if (headers) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  if (resume_from > 0)
    curl_easy_setopt(c, CURLOPT_RESUME_FROM_LARGE, static_cast<curl_off_t>(resume_from));
  const CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK &&
      !(rc == CURLE_HTTP_RETURNED_ERROR || (status >= 400 && rc == CURLE_WRITE_ERROR)))
    fail("cannot download {}: {} (are you offline?)", url, err[0] ? err : curl_easy_strerror(rc));
  return status;
}

}  // namespace

namespace {
void fetch(const std::string& url, const std::string& dest, bool progress);
}  // namespace

void download_file(const std::string& url, const std::string& dest, bool progress) {
  if (fs::exists(dest)) return;
  std::error_code ec;
  fs::create_directories(fs::path(dest).parent_path(), ec);
  if (ec)
    fail("{}: cannot create directory: {}", fs::path(dest).parent_path().string(), ec.message());
  // One downloader per file at a time (the ranks of an mpirun job on one machine, two commands
  // started together): the others wait, then find the file there.
  const std::string lock_path = dest + ".lock";
  const int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0) fail("{}: cannot create the download lock", lock_path);
  struct Unlock {
    int fd;
    ~Unlock() { ::close(fd); }  // closing releases the lock
  } unlock{lock};
  while (::flock(lock, LOCK_EX) != 0)
    if (errno != EINTR) fail("{}: cannot lock", lock_path);
  if (!fs::exists(dest)) fetch(url, dest, progress);
}

namespace {

void fetch(const std::string& url, const std::string& dest, bool progress) {
  std::error_code ec;
  const std::string part = dest + ".part";
  uint64_t have = fs::exists(part) ? fs::file_size(part) : 0;
  std::FILE* f = std::fopen(part.c_str(), have ? "ab" : "wb");
  if (!f) fail("{}: cannot write", part);
  Transfer t;
  t.out = f;
  t.offset = have;
  t.progress = progress;
  t.name = fs::path(dest).filename().string();
  long status;
  try {
    status = perform(url, t, have);
  } catch (...) {
    std::fclose(f);
    throw;
  }
  const bool write_ok = std::fclose(f) == 0;
  if (status == 416 && have > 0) {
    // Range not satisfiable: the partial file is already complete (or stale); start over once.
    fs::remove(part);
    return fetch(url, dest, progress);
  }
  if (status == 200 && have > 0) {
    // The server ignored the range and sent the whole file after our partial bytes: redo cleanly.
    fs::remove(part);
    return fetch(url, dest, progress);
  }
  if (status != 200 && status != 206) {
    fs::remove(part);
    fail("cannot download {}: HTTP {}", url, status);
  }
  if (!write_ok) fail("{}: write failed", part);
  fs::rename(part, dest, ec);
  if (ec) fail("{}: cannot rename to {}: {}", part, dest, ec.message());
}

}  // namespace

std::vector<std::string> hub_list_files(const std::string& repo) {
  std::string body;
  Transfer t;
  t.body = &body;
  const std::string url = hub_endpoint() + "/api/models/" + repo;
  const long status = perform(url, t, 0);
  if (status == 404 || status == 401)
    fail("hub: repository '{}' not found (HTTP {})", repo, status);
  if (status != 200) fail("hub: listing '{}' failed with HTTP {}", repo, status);
  std::vector<std::string> files;
  try {
    const auto j = nlohmann::json::parse(body);
    for (const auto& s : j.at("siblings")) files.push_back(s.at("rfilename").get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    fail("hub: unexpected reply listing '{}': {}", repo, e.what());
  }
  return files;
}

std::string hub_fetch(const std::string& spec, bool progress) {
  const size_t colon = spec.find(':');
  const std::string repo = spec.substr(0, colon);
  std::string tag = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const size_t slash = repo.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == repo.size() ||
      repo.find('/', slash + 1) != std::string::npos || repo.find("..") != std::string::npos)
    fail("-hf: '{}' is not of the form OWNER/REPO[:FILE-OR-QUANT]", spec);
  std::string file;
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  if (tag.find('.') != std::string::npos) {
    file = tag;  // an explicit file name
  } else {
    std::vector<std::string> ggufs;
    for (auto& f : hub_list_files(repo))
      if (lower(f).size() > 5 && lower(f).ends_with(".gguf")) ggufs.push_back(f);
    if (ggufs.empty()) fail("hub: repository '{}' has no .gguf file", repo);
    std::vector<std::string> prefs =
        tag.empty() ? std::vector<std::string>{"q4_k_m", "q8_0", "f16", "bf16", "f32"}
                    : std::vector<std::string>{lower(tag)};
    for (const auto& p : prefs) {
      for (const auto& f : ggufs)
        if (lower(f).find(p) != std::string::npos) {
          file = f;
          break;
        }
      if (!file.empty()) break;
    }
    if (file.empty() && tag.empty()) file = ggufs.front();
    if (file.empty()) fail("hub: repository '{}' has no .gguf file matching '{}'", repo, tag);
  }
  if (file.find("..") != std::string::npos || file.empty() || file[0] == '/')
    fail("-hf: invalid file name '{}'", file);
  const std::string dest = (fs::path(cache_dir()) / "hub" / repo / file).string();
  download_file(hub_endpoint() + "/" + repo + "/resolve/main/" + file, dest, progress);
  return dest;
}

}  // namespace brisk
