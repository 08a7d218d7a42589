// The real trained model must reproduce llama2.c's greedy reference text exactly, from every
// format.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "formats/loader.h"
#include "support/hf_export.h"
#include "support/test_util.h"

namespace brisk {
namespace {

// llama2.c's convention (see ../shared/models/stories260K/SOURCE.md): `steps` positions including
// BOS and the prompt, the prompt echoed, a newline at the end.
std::string greedy_text(const Model& m, const std::string& prompt, int steps, int threads = 2) {
  ThreadPool pool(threads);
  EngineConfig c;
  c.max_seqs = 1;
  c.max_model_len = 512;
  Engine e(m, pool, c);
  Request r;
  r.prompt = m.tokenizer->encode(prompt, true);
  r.sampling.temperature = 0;
  r.max_tokens = steps - static_cast<int64_t>(r.prompt.size()) + 1;
  StreamDecoder dec(*m.tokenizer);
  std::string out;
  for (int32_t t : r.prompt) out += dec.push(t);
  out += dec.flush();
  e.submit(std::move(r), [&](const Output& o) { out += o.text; });
  e.run_until_idle();
  return out + "\n";
}

void expect_reference_texts(const Model& m) {
  EXPECT_EQ(
      greedy_text(m, "", 256),
      test::read_file(test::shared("models/stories260K/expected_greedy_empty_prompt_n256.txt")));
  EXPECT_EQ(
      greedy_text(m, "Once upon a time", 64),
      test::read_file(test::shared("models/stories260K/expected_greedy_once_upon_a_time_n64.txt")));
}

class StoriesGreedy : public ::testing::TestWithParam<const char*> {};

TEST_P(StoriesGreedy, ReproducesReferenceText) {
  auto m = Model::load(test::shared(std::string("models/stories260K/") + GetParam()));
  expect_reference_texts(*m);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, StoriesGreedy,
                         ::testing::Values("stories260K.gguf", "stories260K.v1.gguf",
                                           "stories260K.bin", "stories260K_v1.bin"));

TEST(StoriesGreedy, ReproducesReferenceTextFromSafetensorsExport) {
  auto src = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  test::TempDir dir;
  test::export_hf(*src, dir.path(), DType::F32);
  auto m = Model::load(dir.path());
  EXPECT_EQ(m->file.format, "safetensors");
  expect_reference_texts(*m);
  // The tokenizer rebuilt from tokenizer.json's merges tokenizes like the original vocabulary.
  for (const char* text :
       {"Once upon a time", "Lily's mom said, \"Hi!\"", "  two  spaces", "café ☕ 日本"})
    EXPECT_EQ(m->tokenizer->encode(text, true), src->tokenizer->encode(text, true)) << text;
}

TEST(StoriesGreedy, SameTextWithOneThread) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  EXPECT_EQ(
      greedy_text(*m, "Once upon a time", 64, 1),
      test::read_file(test::shared("models/stories260K/expected_greedy_once_upon_a_time_n64.txt")));
}

}  // namespace
}  // namespace brisk
