// The interleaved weights kept between runs (model/repack_cache.h): a later load maps the file and
// computes the same bits; a file that does not match its model (changed model, damaged or cut
// short) is never used, and is replaced; a cache that cannot be written costs nothing but time.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "model/forward.h"
#include "model/model.h"
#include "model_gen.h"
#include "support/test_util.h"

namespace brisk {
namespace {

namespace fs = std::filesystem;

tools::GenConfig small_q8(uint64_t seed) {
  tools::GenConfig c;
  c.n_vocab = 300, c.n_embd = 64, c.n_layer = 2, c.n_ff = 96, c.n_head = 4, c.n_head_kv = 4;
  c.type = DType::Q8_0, c.embd_type = DType::F16;
  c.seed = seed;
  return c;
}

std::vector<float> logits(const Model& m) {
  ThreadPool pool(2);
  Forward fwd(m, pool);
  ContiguousKvCache cache(static_cast<int>(m.hp.n_layer), m.hp.n_head_kv, m.hp.head_dim, 16);
  Batch b;
  int64_t pos = 0;
  for (int32_t t : {1, 17, 260, 5, 42}) b.add(t, pos++, 0, true);
  const float* l = fwd.run(b, cache);
  return std::vector<float>(l, l + 5 * m.hp.n_vocab);
}

std::vector<fs::path> cache_files(const std::string& dir) {
  std::vector<fs::path> v;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) v.push_back(e.path());
  return v;
}

LoadOptions cached(const std::string& dir) {
  LoadOptions o;
  o.repack_cache.dir = dir, o.repack_cache.min_bytes = 0;
  return o;
}

TEST(RepackCache, LaterLoadsMapTheKeptCopyAndComputeTheSameBits) {
  test::TempDir d;
  const std::string model = d.file("m.gguf"), dir = d.file("cache");
  tools::write_random_model(small_q8(1), model);
  const auto plain = Model::load(model);
  if (plain->repack_seconds == 0) GTEST_SKIP() << "this CPU's kernels read the file's rows";
  const auto want = logits(*plain);

  auto first = Model::load(model, "", cached(dir));
  EXPECT_FALSE(first->repack_mapped);
  EXPECT_EQ(logits(*first), want);  // while the copy is being written
  const std::string kept = first->repack_cache;
  first.reset();  // waits for the file
  ASSERT_TRUE(fs::exists(kept)) << kept;

  const auto second = Model::load(model, "", cached(dir));
  EXPECT_TRUE(second->repack_mapped);
  EXPECT_EQ(second->repack_cache, kept);
  EXPECT_EQ(logits(*second), want);
  EXPECT_EQ(cache_files(dir).size(), 1u);

  // Below the size threshold nothing is written or read.
  LoadOptions small = cached(dir);
  small.repack_cache.min_bytes = uint64_t{1} << 40;
  const auto third = Model::load(model, "", small);
  EXPECT_FALSE(third->repack_mapped);
  EXPECT_EQ(third->repack_cache, "");
}

TEST(RepackCache, AFileThatDoesNotMatchIsReplaced) {
  test::TempDir d;
  const std::string model = d.file("m.gguf"), dir = d.file("cache");
  tools::write_random_model(small_q8(1), model);
  auto first = Model::load(model, "", cached(dir));
  if (first->repack_seconds == 0) GTEST_SKIP() << "this CPU's kernels read the file's rows";
  const std::string kept = first->repack_cache;
  first.reset();
  const auto size = fs::file_size(kept);

  fs::resize_file(kept, size - 1);                                   // cut short
  EXPECT_FALSE(Model::load(model, "", cached(dir))->repack_mapped);  // (waits for the rewrite)
  EXPECT_EQ(fs::file_size(kept), size);                              // written again, whole
  {
    std::fstream f(kept, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);  // inside the key
    f.put('\x5a');
  }
  EXPECT_FALSE(Model::load(model, "", cached(dir))->repack_mapped);
  EXPECT_TRUE(Model::load(model, "", cached(dir))->repack_mapped);

  // The model changes under the same name: its copy is made again and the old one removed.
  tools::write_random_model(small_q8(2), model);
  auto changed = Model::load(model, "", cached(dir));
  EXPECT_FALSE(changed->repack_mapped);
  const std::string now = changed->repack_cache;
  EXPECT_NE(now, kept);
  EXPECT_EQ(logits(*changed), logits(*Model::load(model)));
  changed.reset();
  EXPECT_EQ(cache_files(dir), std::vector<fs::path>{fs::path(now)});
}

TEST(RepackCache, AnUnwritableCacheOnlyCostsTime) {
  test::TempDir d;
  const std::string model = d.file("m.gguf");
  tools::write_random_model(small_q8(1), model);
  std::ofstream(d.file("not-a-dir")) << "x";
  LoadOptions o = cached(d.file("not-a-dir"));
  std::string error;
  o.repack_cache.on_error = [&error](const std::string& why) { error = why; };
  auto m = Model::load(model, "", o);
  if (m->repack_seconds == 0) GTEST_SKIP() << "this CPU's kernels read the file's rows";
  EXPECT_FALSE(m->repack_mapped);
  EXPECT_EQ(logits(*m), logits(*Model::load(model)));
  m.reset();  // the writer has given up
  EXPECT_NE(error.find("not-a-dir"), std::string::npos) << error;
}

}  // namespace
}  // namespace brisk
