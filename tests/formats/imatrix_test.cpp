// llama.cpp's importance matrix files: the legacy .dat layout read from hand-built bytes, the GGUF
// one round-tripped, and broken or hostile files refused with the file named.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "core/error.h"
#include "formats/gguf.h"
#include "formats/imatrix_file.h"
#include "support/test_util.h"

namespace brisk {
namespace {

void put_i32(std::string& s, int32_t v) {
  s.append(reinterpret_cast<const char*>(&v), 4);
}
void put_f32(std::string& s, float v) {
  s.append(reinterpret_cast<const char*>(&v), 4);
}
void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// One entry as llama-imatrix writes it: each channel's mean square times the call count.
std::string legacy_file() {
  std::string s;
  put_i32(s, 1);
  const std::string name = "blk.0.attn_q.weight";
  put_i32(s, static_cast<int32_t>(name.size()));
  s += name;
  put_i32(s, 4);  // ncall
  put_i32(s, 3);  // nval
  for (float v : {2.0f, 4.0f, 8.0f}) put_f32(s, v);
  put_i32(s, 10);  // chunks
  const std::string ds = "calibration.txt";
  put_i32(s, static_cast<int32_t>(ds.size()));
  s += ds;
  return s;
}

TEST(Imatrix, ReadsTheLegacyLayout) {
  test::TempDir dir;
  write_file(dir.file("im.dat"), legacy_file());
  const Imatrix m = read_imatrix(dir.file("im.dat"));
  EXPECT_EQ(m.chunk_count, 10u);
  EXPECT_EQ(m.datasets, std::vector<std::string>{"calibration.txt"});
  const auto imp = m.importance();
  EXPECT_EQ(imp.at("blk.0.attn_q.weight"), (std::vector<float>{0.5f, 1.0f, 2.0f}));
}

TEST(Imatrix, GgufRoundTripAndImportance) {
  test::TempDir dir;
  Imatrix m;
  m.entries["blk.3.ffn_down.weight"] = {{1, 9, 25, 0}, 4};
  m.entries["output.weight"] = {{8, 8}, 2};
  m.datasets = {"a.txt", "b.txt"};
  m.chunk_count = 7, m.chunk_size = 512;
  write_imatrix(dir.file("im.gguf"), m);
  const Imatrix r = read_imatrix(dir.file("im.gguf"));
  EXPECT_EQ(r.datasets, m.datasets);
  EXPECT_EQ(r.chunk_count, 7u);
  EXPECT_EQ(r.chunk_size, 512u);
  EXPECT_EQ(r.entries.at("blk.3.ffn_down.weight").sum_sq, (std::vector<float>{1, 9, 25, 0}));
  EXPECT_EQ(r.importance().at("blk.3.ffn_down.weight"),
            (std::vector<float>{0.25f, 2.25f, 6.25f, 0}));
  EXPECT_EQ(r.importance().at("output.weight"), (std::vector<float>{4, 4}));
}

TEST(Imatrix, RefusesBrokenFiles) {
  test::TempDir dir;
  const std::string good = legacy_file();
  // Cut anywhere inside the entry: an error, never a crash or a partial result.
  for (size_t n = 0; n < good.size() - 23; n += 3) {
    write_file(dir.file("cut.dat"), good.substr(0, n));
    EXPECT_THROW(read_imatrix(dir.file("cut.dat")), Error) << n;
  }
  std::string absurd;
  put_i32(absurd, 1 << 30);
  write_file(dir.file("absurd.dat"), absurd);
  EXPECT_THROW(read_imatrix(dir.file("absurd.dat")), Error);
  std::string nan = good;
  const float bad = -1.0f;
  std::memcpy(&nan[4 + 4 + 19 + 8], &bad, 4);  // first value negative
  write_file(dir.file("neg.dat"), nan);
  EXPECT_THROW(read_imatrix(dir.file("neg.dat")), Error);
  // A count below one token would turn a finite sum into an infinite importance (found by fuzzing).
  Imatrix tiny;
  tiny.entries["output.weight"] = {{3e38f}, 1e-30f};
  write_imatrix(dir.file("tiny.gguf"), tiny);
  EXPECT_THROW(read_imatrix(dir.file("tiny.gguf")), Error);
  // A GGUF that is not an importance matrix.
  write_gguf(dir.file("model.gguf"), {{"general.type", Value::of_str("model")}}, {});
  try {
    read_imatrix(dir.file("model.gguf"));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.gguf"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace brisk
