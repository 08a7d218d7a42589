// Releasing a mapped file's pages changes no byte: they are read back from the page cache. Memory
// that is not a file this process mapped is left alone.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/mapped_file.h"
#include "core/memory_stats.h"
#include "support/test_util.h"

namespace brisk {
namespace {

TEST(MappedFile, ReleasedPagesReadBackTheSameBytes) {
  test::TempDir dir;
  std::string data(3 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 + i / 4096);
  test::write_file(dir.file("w.bin"), data);
  auto f = MappedFile::open(dir.file("w.bin"));
  ASSERT_EQ(f->size(), data.size());
  uint64_t sum = 0;
  for (size_t i = 0; i < data.size(); i += 64) sum += f->data()[i];  // fault every page in
  release_file_pages(f->data() + 100, f->size() - 200);              // whole pages inside only
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f->data()), f->size()), data);
  EXPECT_GT(sum, 0u);
}

TEST(MappedFile, OtherMemoryIsLeftAlone) {
  std::vector<uint8_t> v(1 << 20, 7);
  release_file_pages(v.data(), v.size());
  for (uint8_t b : v) ASSERT_EQ(b, 7);
  auto big = allocate_large(4 << 20, "test");
  std::fill(big.get(), big.get() + (4 << 20), uint8_t{9});
  release_file_pages(big.get(), 4 << 20);
  EXPECT_EQ(big.get()[123456], 9);
  // Linux: the /proc readers find their fields. The peak is read second: resident memory may grow
  // between the two reads (the reader's own allocations), and the kernel's peak is never below
  // what is resident when it is read.
  const uint64_t now = resident_bytes();
  EXPECT_GT(now, 0u);
  EXPECT_GE(peak_resident_bytes(), now);
}

}  // namespace
}  // namespace brisk
