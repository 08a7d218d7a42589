#include "model/repack_cache.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>
#include <thread>

#include "core/hash.h"
#include "core/mapped_file.h"
#include "core/thread_pool.h"
#include "ops/repack.h"

namespace brisk {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'B', 'R', 'I', 'S', 'K', 'R', 'P', 'K'};
constexpr uint32_t kVersion = 1;  // of this file's header
constexpr uint64_t kDataAlign = 4096;
constexpr uint64_t kPrefixBytes = uint64_t{4} << 20;  // of each model file, hashed into the key

// The model's files: the one file, or a Hugging Face directory's regular files.
std::vector<fs::path> source_files(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {fs::path(path)};
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(path, ec))
    if (e.is_regular_file(ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Size, modification time and first bytes of a model file. Reading the first bytes is cheap and
// catches a file rewritten within one tick of the clock or given an old time.
void add_identity(Digest& d, const fs::path& p) {
  d.add(std::string_view(p.filename().string()));
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0) ::close(fd);
    d.add(uint64_t{0});
    return;
  }
  d.add(static_cast<uint64_t>(st.st_size));
  d.add(static_cast<int64_t>(st.st_mtim.tv_sec));
  d.add(static_cast<int64_t>(st.st_mtim.tv_nsec));
  std::vector<uint8_t> buf(std::min<uint64_t>(kPrefixBytes, static_cast<uint64_t>(st.st_size)));
  uint64_t got = 0;
  while (got < buf.size()) {
    const ssize_t n = ::pread(fd, buf.data() + got, buf.size() - got, static_cast<off_t>(got));
    if (n <= 0) break;
    got += static_cast<uint64_t>(n);
  }
  ::close(fd);
  d.add(buf.data(), got);
}

// One group of each type, repacked by this program: any change to a layout changes the key.
uint64_t layout_fingerprint(const std::set<DType>& types) {
  Digest d;
  for (DType t : types) {
    Tensor probe;
    probe.type = t;
    probe.ne = {256, kInterleave, 1, 1};  // a multiple of every block size
    const uint64_t rb = probe.row_bytes();
    std::vector<uint8_t> src(rb * kInterleave), dst(src.size());
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (auto& b : src) {  // any bytes: repacking only moves bits
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      b = static_cast<uint8_t>(x);
    }
    repack_group(t, src.data(), rb, dst.data(), 256);
    d.add(t);
    d.add(dst.data(), dst.size());
  }
  return d.h;
}

bool write_all(int fd, const uint8_t* p, uint64_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, std::min<uint64_t>(n, uint64_t{1} << 30));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w, n -= static_cast<uint64_t>(w);
  }
  return true;
}

}  // namespace

RepackCache::RepackCache(const ModelFile& mf, const Split& split, const std::vector<Tensor*>& todo,
                         const std::vector<uint64_t>& offsets, uint64_t total,
                         const RepackCacheOptions& opt)
    : total_(total) {
  if (opt.dir.empty() || todo.empty() || total < opt.min_bytes) return;
  Digest d;
  for (const fs::path& p : source_files(mf.path)) add_identity(d, p);
  d.add(split.rank);
  d.add(split.size);
  std::set<DType> types;
  for (const Tensor* t : todo) {
    d.add(std::string_view(t->name));
    d.add(t->type);
    d.add(t->ne);
    d.add(t->nbytes);
    types.insert(t->type);
  }
  d.add(layout_fingerprint(types));
  for (uint64_t o : offsets) d.add(o);
  d.add(total);
  key_ = d.h;
  // One file per model path and split: a new key (the model changed, or the program's layouts
  // did) replaces the older file instead of piling up beside it.
  std::error_code ec;
  const std::string abs = fs::absolute(mf.path, ec).lexically_normal().string();
  Digest where;
  where.add(std::string_view(abs));
  where.add(split.rank);
  where.add(split.size);
  std::string stem = fs::path(abs).filename().string();
  if (stem.size() > 80) stem.resize(80);
  family_ = fmt::format("{}-{:08x}-", stem, static_cast<uint32_t>(where.h));
  path_ = (fs::path(opt.dir) / fmt::format("{}{:016x}.repacked", family_, key_)).string();
}

std::vector<uint8_t> RepackCache::header() const {
  std::vector<uint8_t> h(kDataAlign, 0);
  uint8_t* p = h.data();
  auto put = [&p](const auto& v) {
    std::memcpy(p, &v, sizeof v);
    p += sizeof v;
  };
  std::memcpy(p, kMagic, 8), p += 8;
  put(kVersion);
  put(uint32_t{0});
  put(key_);
  put(total_);
  return h;
}

bool RepackCache::read(uint8_t* copy, ThreadPool& pool) const {
  if (!enabled()) return false;
  std::error_code ec;
  const auto size = fs::file_size(path_, ec);
  if (ec || size != kDataAlign + total_) return false;
  const std::vector<uint8_t> want = header();
  std::vector<uint8_t> got(want.size());
  if (!read_file_range(path_, 0, got.data(), got.size()) || got != want) return false;
  // Plain reads in 8 MiB pieces across the threads: a copy from the page cache with no fault per
  // 4 KiB page of the source, as reading it through a mapping would take.
  std::atomic<bool> ok = true;
  constexpr int64_t kPiece = int64_t{8} << 20;
  pool.parallel_for((static_cast<int64_t>(total_) + kPiece - 1) / kPiece, 1,
                    [&](int64_t p0, int64_t p1) {
                      for (int64_t piece = p0; piece < p1 && ok; ++piece) {
                        const auto b0 = static_cast<uint64_t>(piece * kPiece);
                        const uint64_t n = std::min<uint64_t>(kPiece, total_ - b0);
                        if (!read_file_range(path_, kDataAlign + b0, copy + b0, n)) ok = false;
                      }
                    });
  return ok;
}

std::string RepackCache::write(const uint8_t* copy) const {
  if (!enabled()) return "";
  const fs::path dir = fs::path(path_).parent_path();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fmt::format("{}: cannot create: {}", dir.string(), ec.message());
  struct statvfs sv {};
  // Room for the file and 1 GiB to spare: a cache must not fill the disk.
  if (statvfs(dir.c_str(), &sv) == 0 &&
      static_cast<double>(sv.f_bavail) * static_cast<double>(sv.f_frsize) <
          static_cast<double>(kDataAlign + total_) + (1 << 30))
    return fmt::format("{}: not enough free space for {} MiB", dir.string(), total_ >> 20);
  const std::string tmp = fmt::format("{}.{}.tmp", path_, ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("{}: cannot create: {}", tmp, std::strerror(errno));
  const std::vector<uint8_t> h = header();
  const bool ok = write_all(fd, h.data(), h.size()) && write_all(fd, copy, total_);
  const int err = errno;
  if (::close(fd) != 0 || !ok) {
    ::unlink(tmp.c_str());
    return fmt::format("{}: cannot write: {}", tmp, std::strerror(ok ? errno : err));
  }
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return fmt::format("{}: cannot rename to {}: {}", tmp, path_, std::strerror(e));
  }
  // Older keys of this model and split (no program reads them again), and what a writer that
  // was killed left.
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with(family_) || e.path() == fs::path(path_)) continue;
    if (name.ends_with(".repacked")) fs::remove(e.path(), ec);
    if (name.ends_with(".tmp")) {
      const auto dot = name.rfind('.', name.size() - 5);
      const long pid = std::strtol(name.c_str() + dot + 1, nullptr, 10);
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
        fs::remove(e.path(), ec);
    }
  }
  return "";
}

std::shared_ptr<const void> RepackCache::write_in_background(
    std::shared_ptr<const uint8_t> copy, std::function<void(const std::string&)> on_error) const {
  if (!enabled()) return nullptr;
  auto writer = std::make_shared<std::jthread>(
      [self = *this, copy = std::move(copy), on_error = std::move(on_error)] {
        const std::string err = self.write(copy.get());
        if (!err.empty() && on_error) on_error(err);
      });
  return writer;
}

}  // namespace brisk
