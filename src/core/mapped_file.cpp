#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/error.h"

namespace brisk {
namespace {

// The live file mappings, [start, start + size).
std::mutex g_maps_mutex;
std::vector<std::pair<uintptr_t, uint64_t>> g_maps;

}  // namespace

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path, bool populate) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open: {}", path, std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("{}: not a regular file", path);
  }
  std::shared_ptr<MappedFile> f(new MappedFile());
  f->path_ = path;
  f->size_ = static_cast<uint64_t>(st.st_size);
  if (f->size_ > 0) {
    void* p =
        mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      fail("{}: cannot map: {}", path, std::strerror(errno));
    }
    f->data_ = static_cast<const uint8_t*>(p);
    const std::lock_guard lock(g_maps_mutex);
    g_maps.emplace_back(reinterpret_cast<uintptr_t>(p), f->size_);
  }
  ::close(fd);
  return f;
}

MappedFile::~MappedFile() {
  if (!data_) return;
  {
    const std::lock_guard lock(g_maps_mutex);
    std::erase(g_maps, std::pair{reinterpret_cast<uintptr_t>(data_), size_});
  }
  munmap(const_cast<uint8_t*>(data_), size_);
}

void release_file_pages(const void* p, uint64_t n) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto a = reinterpret_cast<uintptr_t>(p);
  const uintptr_t lo = (a + page - 1) / page * page, hi = (a + n) / page * page;
  if (hi <= lo) return;
  const std::lock_guard lock(g_maps_mutex);
  for (const auto& [start, size] : g_maps)
    if (lo >= start && hi <= start + size) {
      madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
      return;
    }
}

std::shared_ptr<uint8_t> allocate_large(uint64_t bytes, const std::string& what) {
  constexpr uint64_t kHuge = uint64_t{1} << 21;
  const uint64_t len = (std::max<uint64_t>(bytes, 1) + kHuge - 1) / kHuge * kHuge;
  // Mapped 2 MiB too long, then trimmed to a 2 MiB-aligned start so that every page can be huge.
  void* m = mmap(nullptr, len + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    fail("{}: cannot allocate {} MiB: {}", what, len >> 20, std::strerror(errno));
  const auto base = reinterpret_cast<uintptr_t>(m), start = (base + kHuge - 1) / kHuge * kHuge;
  if (start > base) munmap(m, start - base);
  if (base + kHuge > start) munmap(reinterpret_cast<void*>(start + len), base + kHuge - start);
  void* p = reinterpret_cast<void*>(start);
  madvise(p, len, MADV_HUGEPAGE);  // advice only: 4 KiB pages where it is refused
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [len](uint8_t* q) { munmap(q, len); });
}

bool read_file_range(const std::string& path, uint64_t offset, uint8_t* dst, uint64_t n) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  uint64_t done = 0;
  while (done < n) {
    const ssize_t r = pread(fd, dst + done, std::min<uint64_t>(n - done, uint64_t{1} << 30),
                            static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    done += static_cast<uint64_t>(r);
  }
  ::close(fd);
  return done == n;
}

}  // namespace brisk
