// A read-only memory mapping of a whole file; weights are used in place from it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace brisk {

class MappedFile {
 public:
  static std::shared_ptr<MappedFile> open(const std::string& path);
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

// Anonymous memory for weights made at load time (repacked matrices), in 2 MiB pages where the
// kernel allows: streaming reads of it run measurably faster than over 4 KiB pages. Fails with an
// error naming `what` when the memory cannot be had.
std::shared_ptr<uint8_t> allocate_large(uint64_t bytes, const std::string& what);

}  // namespace brisk
