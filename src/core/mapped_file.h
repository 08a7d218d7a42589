// A read-only memory mapping of a whole file; weights are used in place from it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace brisk {

class MappedFile {
 public:
  // populate: read the whole file in and map every page now (for data read whole soon after, where
  // a fault per page would cost more than the reading).
  static std::shared_ptr<MappedFile> open(const std::string& path, bool populate = false);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  std::string path_;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

// Drops this process's resident copies of the whole pages of [p, p + n) where the range lies in a
// file this class mapped: the page cache keeps them and a later read maps them in again, so the
// bytes never change. Used once a matrix has been copied into its interleaved layout, so that
// resident memory holds the weights once. Other memory is left alone (anonymous pages would read
// back as zeros).
void release_file_pages(const void* p, uint64_t n);

// Anonymous memory for weights made at load time (repacked matrices), in 2 MiB pages where the
// kernel allows: streaming reads of it run measurably faster than over 4 KiB pages. Fails with an
// error naming `what` when the memory cannot be had.
std::shared_ptr<uint8_t> allocate_large(uint64_t bytes, const std::string& what);

// Reads bytes [offset, offset + n) of a file into dst with plain reads (no mapping, so no fault per
// 4 KiB page of the source: a page-cache copy at memory speed). Returns false on any error.
bool read_file_range(const std::string& path, uint64_t offset, uint8_t* dst, uint64_t n);

}  // namespace brisk
