// Robustness of the llama2.c and Hugging Face loaders on crafted files: each problem is a one-line
// error naming the file and what is wrong.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "formats/llama2c.h"
#include "formats/loader.h"
#include "formats/safetensors.h"
#include "model/model.h"
#include "support/hf_export.h"
#include "support/test_util.h"

namespace brisk {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_ERROR(expr, fragment)                              \
  do {                                                            \
    const std::string msg_ = error_of([&] { expr; });             \
    EXPECT_NE(msg_.find(fragment), std::string::npos)             \
        << "got '" << msg_ << "', wanted '" << (fragment) << "'"; \
  } while (0)

TEST(Llama2c, RejectsBadCheckpoints) {
  test::TempDir d;
  const std::string full = test::read_file(test::shared("models/stories260K/stories260K.bin"));
  const std::string tok = test::shared("models/stories260K/tok512.bin");
  test::write_file(d.file("t.bin"), full.substr(0, full.size() / 2));
  EXPECT_ERROR(load_llama2c(d.file("t.bin"), tok), "truncated llama2.c checkpoint");
  std::string bad = full;
  const int32_t heads = 7;  // does not divide dim 64
  std::memcpy(bad.data() + 12, &heads, 4);
  test::write_file(d.file("h.bin"), bad);
  EXPECT_ERROR(load_llama2c(d.file("h.bin"), tok), "invalid n_heads");
  EXPECT_ERROR(load_model_file(d.file("h.bin")), "unrecognized model format");
  std::string v1 = test::read_file(test::shared("models/stories260K/stories260K_v1.bin"));
  const int32_t version = 2;
  std::memcpy(v1.data() + 4, &version, 4);
  test::write_file(d.file("v2.bin"), v1);
  EXPECT_ERROR(load_llama2c(d.file("v2.bin"), tok), "version 2 is not supported");
  test::write_file(d.file("m.bin"), full);
  EXPECT_ERROR(load_llama2c(d.file("m.bin"), ""), "need a tokenizer file");
  // Found by fuzz_llama2c: the smallest int32 as the legacy format's negated vocabulary size.
  std::string minv = full;
  const int32_t vmin = INT32_MIN;
  std::memcpy(minv.data() + 20, &vmin, 4);
  test::write_file(d.file("v.bin"), minv);
  EXPECT_ERROR(load_llama2c(d.file("v.bin"), tok), "invalid vocab_size (-2147483648)");
  EXPECT_ERROR(load_model_file(d.file("v.bin")), "unrecognized model format");
}

// The legacy format with an unshared classifier (negative vocab_size, classifier after freq_cis).
TEST(Llama2c, LegacyUnsharedClassifier) {
  test::TempDir d;
  std::string bin = test::read_file(test::shared("models/stories260K/stories260K.bin"));
  int32_t vocab;
  std::memcpy(&vocab, bin.data() + 20, 4);
  const int32_t neg = -vocab;
  std::memcpy(bin.data() + 20, &neg, 4);
  // Classifier = the embedding table scaled by 2, so using it (and not the embedding) is visible.
  std::vector<float> emb(static_cast<size_t>(vocab) * 64);
  std::memcpy(emb.data(), bin.data() + 28, emb.size() * 4);
  for (auto& v : emb) v *= 2;
  bin.append(reinterpret_cast<const char*>(emb.data()), emb.size() * 4);
  test::write_file(d.file("unshared.bin"), bin);
  ModelFile mf =
      load_llama2c(d.file("unshared.bin"), test::shared("models/stories260K/tok512.bin"));
  const Tensor* out = mf.tensor("output.weight");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(static_cast<const float*>(out->data)[5],
            2 * static_cast<const float*>(mf.tensor("token_embd.weight")->data)[5]);
  EXPECT_FALSE(Model::from_file(std::move(mf))->hp.tied_output);
  // The shared original binds the embedding as the classifier.
  EXPECT_TRUE(Model::load(test::shared("models/stories260K/stories260K.bin"))->hp.tied_output);
}

TEST(Llama2c, RejectsBadTokenizerFiles) {
  test::TempDir d;
  const std::string model = test::shared("models/stories260K/stories260K.bin");
  const std::string tok = test::read_file(test::shared("models/stories260K/tok512.bin"));
  test::write_file(d.file("t.bin"), tok.substr(0, tok.size() - 10));
  EXPECT_ERROR(load_llama2c(model, d.file("t.bin")), "truncated llama2.c tokenizer");
  std::string bad = tok;
  const int32_t len = 100000;  // token length beyond max_token_length
  std::memcpy(bad.data() + 8, &len, 4);
  test::write_file(d.file("l.bin"), bad);
  EXPECT_ERROR(load_llama2c(model, d.file("l.bin")), "has length 100000");
}

class HfDir : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = Model::load(test::shared("models/stories260K/stories260K.gguf"), "",
                       LoadOptions::as_stored());
    test::export_hf(*src_, dir_.path(), DType::BF16);
  }
  std::unique_ptr<Model> src_;
  test::TempDir dir_;
};

TEST_F(HfDir, LoadsBf16ShardsWithPermutedQk) {
  auto m = Model::load(dir_.path(), "", LoadOptions::as_stored());  // rows as stored
  EXPECT_EQ(m->w.layers[0].wq.type, DType::BF16);
  // Rows of Q were un-permuted back to the GGUF layout: row r of the export equals row r of the
  // source.
  std::vector<float> a(64), b(64);
  for (int64_t r : {0, 1, 2, 7, 8, 63}) {
    convert_row_to_f32(DType::BF16, m->w.layers[3].wq.row(r), a.data(), 64);
    convert_row_to_f32(DType::F32, src_->w.layers[3].wq.row(r), b.data(), 64);
    for (int j = 0; j < 64; ++j) ASSERT_EQ(a[j], bf16_to_f32(f32_to_bf16(b[j]))) << r;
  }
}

TEST_F(HfDir, RejectsBrokenDirectories) {
  const std::string d = dir_.path();
  const std::string shard = d + "/model-00001-of-00002.safetensors";
  const std::string good = test::read_file(shard);
  // Header length past the end of the file.
  std::string s = good;
  const uint64_t huge = 1ull << 40;
  std::memcpy(s.data(), &huge, 8);
  test::write_file(shard, s);
  EXPECT_ERROR(load_model_file(d), "header length");
  // Not JSON.
  s = good;
  s[8] = '#';
  test::write_file(shard, s);
  EXPECT_ERROR(load_model_file(d), "invalid header JSON");
  // Offsets that do not match the shape.
  s = good;
  const size_t at = s.find("\"data_offsets\":[0,");
  ASSERT_NE(at, std::string::npos);
  s[at + 16] = '8';  // [0,... -> [8,...
  test::write_file(shard, s);
  EXPECT_ERROR(load_model_file(d), "data offsets");
  // A dimension written as a float (found by fuzz_safetensors).
  s = good;
  const size_t dim = s.find("\"shape\":[512");
  ASSERT_NE(dim, std::string::npos);
  s.replace(dim + 9, 3, "9e9");
  test::write_file(shard, s);
  EXPECT_ERROR(load_model_file(d), "dimension: 9000000000.0 is not an integer");
  test::write_file(shard, good);

  const std::string cfg = test::read_file(d + "/config.json");
  std::string c2 = cfg;
  c2.replace(c2.find("\"llama\""), 7, "\"gpt2\"");
  test::write_file(d + "/config.json", c2);
  EXPECT_ERROR(load_model_file(d), "model_type 'gpt2' is not supported");
  test::write_file(d + "/config.json", "{not json");
  EXPECT_ERROR(load_model_file(d), "invalid JSON");
  // Numbers beyond the type they are read as (found by fuzz_safetensors: converting them was
  // undefined behaviour) are errors naming the field.
  auto edit_cfg = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = nlohmann::json::parse(cfg);
    edit(j);
    test::write_file(d + "/config.json", j.dump());
  };
  edit_cfg([](nlohmann::json& j) {
    j["rope_scaling"] = {{"rope_type", "llama3"}, {"original_max_position_embeddings", 3.2e21}};
  });
  EXPECT_ERROR(load_model_file(d), "rope_scaling.original_max_position_embeddings: 3.2e+21 is not");
  edit_cfg([](nlohmann::json& j) { j["rms_norm_eps"] = 1e300; });
  EXPECT_ERROR(load_model_file(d), "rms_norm_eps: 1e+300 is out of range for a float");
  edit_cfg([](nlohmann::json& j) { j["rope_theta"] = "10000"; });
  EXPECT_ERROR(load_model_file(d), "rope_theta: \"10000\" is not a number");
  test::write_file(d + "/config.json", cfg);

  // A vocabulary id far beyond int64 (found by fuzz_hf_tokenizer).
  const std::string tj = test::read_file(d + "/tokenizer.json");
  nlohmann::json t = nlohmann::json::parse(tj);
  t["model"]["vocab"].begin().value() = 1.1e55;
  test::write_file(d + "/tokenizer.json", t.dump());
  EXPECT_ERROR(load_model_file(d), "model.vocab id: 1.1e+55 is not an integer");
  t = nlohmann::json::parse(tj);
  t["model"]["vocab"].begin().value() = 18446744073709551615ull;
  test::write_file(d + "/tokenizer.json", t.dump());
  EXPECT_ERROR(load_model_file(d), "model.vocab id: 18446744073709551615 is out of range");
  test::write_file(d + "/tokenizer.json", tj);

  const std::string idx = test::read_file(d + "/model.safetensors.index.json");
  std::string i2 = idx;
  i2.replace(i2.find("model-00002-of-00002"), 20, "../../../etc/passwd0");
  test::write_file(d + "/model.safetensors.index.json", i2);
  EXPECT_ERROR(load_model_file(d), "not a plain file name");
  test::write_file(d + "/model.safetensors.index.json", idx);

  std::filesystem::remove(d + "/tokenizer.json");
  EXPECT_ERROR(load_model_file(d), "tokenizer.json is missing");
  std::filesystem::remove(d + "/config.json");
  EXPECT_ERROR(load_model_file(d), "config.json is missing");
}

}  // namespace
}  // namespace brisk
