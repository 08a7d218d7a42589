// GGUF reading and writing, and the loader's defences against malformed files: every case must end
// in an Error naming the file and the problem — never a crash, hang or huge allocation.
#include <gtest/gtest.h>

#include <cstring>

#include "core/error.h"
#include "formats/gguf.h"
#include "model/model.h"
#include "model_gen.h"
#include "support/test_util.h"

namespace brisk {
namespace {

// Builds GGUF bytes by hand, for any version.
struct Bytes {
  uint32_t version = 3;
  std::string s;
  template <typename T>
  Bytes& put(T v) {
    s.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  Bytes& count(uint64_t n) {
    return version == 1 ? put<uint32_t>(static_cast<uint32_t>(n)) : put<uint64_t>(n);
  }
  Bytes& str(const std::string& x) {
    count(x.size());
    s += x;
    return *this;
  }
  Bytes& header(uint64_t n_tensors, uint64_t n_kv) {
    put<uint32_t>(0x46554747).put<uint32_t>(version);
    return count(n_tensors).count(n_kv);
  }
  Bytes& kv_u32(const std::string& k, uint32_t v) {
    return str(k).put<uint32_t>(4).put<uint32_t>(v);
  }
  Bytes& tensor(const std::string& name, std::vector<uint64_t> dims, uint32_t type, uint64_t off) {
    str(name).put<uint32_t>(static_cast<uint32_t>(dims.size()));
    for (auto d : dims) version == 1 ? put<uint32_t>(static_cast<uint32_t>(d)) : put<uint64_t>(d);
    return put<uint32_t>(type).put<uint64_t>(off);
  }
  Bytes& align(size_t a = 32) {
    while (s.size() % a) s += '\0';
    return *this;
  }
  Bytes& zeros(size_t n) {
    s.append(n, '\0');
    return *this;
  }
};

class GgufFiles : public ::testing::Test {
 protected:
  // Loads bytes from a file and returns the error message ("" if it loaded).
  std::string load_error(const std::string& bytes) {
    const std::string p = dir_.file("x.gguf");
    test::write_file(p, bytes);
    try {
      load_gguf(p);
      return "";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(p), std::string::npos) << "error does not name the file: " << msg;
      return msg;
    }
  }
  void expect_error(const std::string& bytes, const std::string& fragment) {
    const std::string msg = load_error(bytes);
    EXPECT_NE(msg.find(fragment), std::string::npos)
        << "got: '" << msg << "', expected it to mention '" << fragment << "'";
  }
  test::TempDir dir_;
};

TEST_F(GgufFiles, RoundTripsEveryMetadataTypeAndNestedArrays) {
  std::map<std::string, Value> m;
  Value v;
  auto scalar = [&](const char* k, GgufType t, uint64_t u, int64_t i, double f) {
    Value x;
    x.type = t;
    x.u = u;
    x.i = i;
    x.f = f;
    m[k] = x;
  };
  scalar("a.u8", GgufType::U8, 200, 0, 0);
  scalar("a.i8", GgufType::I8, 0, -100, 0);
  scalar("a.u16", GgufType::U16, 60000, 0, 0);
  scalar("a.i16", GgufType::I16, 0, -30000, 0);
  scalar("a.u32", GgufType::U32, 4000000000u, 0, 0);
  scalar("a.i32", GgufType::I32, 0, -2000000000, 0);
  scalar("a.u64", GgufType::U64, 1ull << 60, 0, 0);
  scalar("a.i64", GgufType::I64, 0, -(1ll << 60), 0);
  scalar("a.f32", GgufType::F32, 0, 0, 1.5);
  scalar("a.f64", GgufType::F64, 0, 0, 3.141592653589793);
  m["a.bool"] = Value::of_bool(true);
  m["a.str"] = Value::of_str("héllo");
  m["a.nested"] = Value::of_array(
      GgufType::ARRAY, {Value::of_array(GgufType::I32, {Value::of_i32(1), Value::of_i32(-2)}),
                        Value::of_array(GgufType::STRING, {Value::of_str("x")})});
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  Tensor t;
  t.name = "t";
  t.type = DType::F32;
  t.n_dims = 2;
  t.ne = {3, 2, 1, 1};
  t.data = data.data();
  t.nbytes = 24;
  const std::string p = dir_.file("rt.gguf");
  write_gguf(p, m, {t, [&] {
                      Tensor u = t;
                      u.name = "u";
                      return u;
                    }()});
  ModelFile f = load_gguf(p);
  EXPECT_EQ(f.format, "GGUF v3");
  EXPECT_EQ(f.find("a.u8")->u, 200u);
  EXPECT_EQ(f.find("a.i8")->i, -100);
  EXPECT_EQ(f.find("a.u16")->u, 60000u);
  EXPECT_EQ(f.find("a.i16")->i, -30000);
  EXPECT_EQ(f.find("a.u32")->u, 4000000000u);
  EXPECT_EQ(f.find("a.i32")->i, -2000000000);
  EXPECT_EQ(f.find("a.u64")->u, 1ull << 60);
  EXPECT_EQ(f.find("a.i64")->i, -(1ll << 60));
  EXPECT_EQ(f.find("a.f32")->f, 1.5);
  EXPECT_EQ(f.find("a.f64")->f, 3.141592653589793);
  EXPECT_EQ(f.find("a.bool")->u, 1u);
  EXPECT_EQ(f.find("a.str")->s, "héllo");
  const Value* n = f.find("a.nested");
  ASSERT_EQ(n->arr.size(), 2u);
  EXPECT_EQ(n->arr[0].arr[1].i, -2);
  EXPECT_EQ(n->arr[1].arr[0].s, "x");
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_EQ(std::memcmp(f.tensor("u")->data, data.data(), 24), 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(f.tensor("u")->data) % 32, 0u);  // aligned, zero-copy
}

TEST_F(GgufFiles, ReadsVersion1And2) {
  for (uint32_t ver : {1u, 2u}) {
    Bytes b;
    b.version = ver;
    b.header(1, 2).kv_u32("general.alignment", 32).str("k").put<uint32_t>(8).str("value");
    b.tensor("w", {4, 2}, 0, 0).align().zeros(32);
    const std::string p = dir_.file("v.gguf");
    test::write_file(p, b.s);
    ModelFile f = load_gguf(p);
    EXPECT_EQ(f.format, "GGUF v" + std::to_string(ver));
    EXPECT_EQ(f.find("k")->s, "value");
    EXPECT_EQ(f.tensor("w")->ne[1], 2);
  }
}

TEST_F(GgufFiles, RejectsMalformedHeaders) {
  expect_error("GGUF", "not a GGUF file");
  expect_error(Bytes{}.put<uint32_t>(0x12345678).put<uint32_t>(3).s + std::string(16, '\0'),
               "bad magic");
  expect_error(Bytes{}.put<uint32_t>(0x46554747).put<uint32_t>(7).s + std::string(16, '\0'),
               "unsupported GGUF version 7");
  expect_error(Bytes{}.header(1ull << 60, 0).s, "tensor count");
  expect_error(Bytes{}.header(0, 1ull << 60).s, "metadata count");
  expect_error(Bytes{}.header(0, 1).str("k").put<uint32_t>(8).put<uint64_t>(1ull << 62).s,
               "runs past the end");
  expect_error(
      Bytes{}.header(0, 1).str("k").put<uint32_t>(9).put<uint32_t>(4).put<uint64_t>(1ull << 40).s,
      "cannot fit");
  {
    Bytes b;
    b.header(0, 1).str("deep").put<uint32_t>(9);
    for (int i = 0; i < 10; ++i) b.put<uint32_t>(9).put<uint64_t>(1);
    expect_error(b.s + std::string(64, '\0'), "nested too deeply");
  }
  expect_error(Bytes{}.header(0, 1).str("k").put<uint32_t>(13).put<uint32_t>(0).s,
               "unknown value type 13");
  expect_error(Bytes{}.header(0, 1).str("bad\xff").put<uint32_t>(4).put<uint32_t>(1).s,
               "not valid UTF-8");
  expect_error(Bytes{}.header(0, 2).kv_u32("k", 1).kv_u32("k", 2).s, "duplicate metadata key 'k'");
  expect_error(Bytes{}.header(0, 1).str("k").put<uint32_t>(7).put<uint8_t>(2).s, "neither 0 nor 1");
  expect_error(Bytes{}.header(0, 1).kv_u32("general.alignment", 24).s, "power of two");
  expect_error(Bytes{}.header(0, 1).str("").put<uint32_t>(4).put<uint32_t>(1).s, "empty key");
}

TEST_F(GgufFiles, RejectsMalformedTensors) {
  auto one = [](const std::string& name, std::vector<uint64_t> dims, uint32_t type, uint64_t off,
                size_t data) {
    return Bytes{}.header(1, 0).tensor(name, dims, type, off).align().zeros(data).s;
  };
  expect_error(one("t", {1, 1, 1, 1, 1}, 0, 0, 32), "5 dimensions");
  expect_error(one("t", {4, 0}, 0, 0, 32), "invalid dimension 0");
  expect_error(one("t", {1ull << 39, 1ull << 39}, 0, 0, 32), "overflow");
  expect_error(one("t", {4}, 99, 0, 32), "unknown type id 99");
  expect_error(one("t", {8}, 0, 64, 32), "extends past the end");
  expect_error(one("t", {8}, 0, 8, 64), "not aligned");
  expect_error(one("t", {33}, 2, 0, 64), "not a multiple of the Q4_0 block size 32");
  expect_error(one("t", {1ull << 20, 1ull << 20}, 0, 0, 32), "extends past the end");
  {
    Bytes b;
    b.header(2, 0).tensor("a", {16}, 0, 0).tensor("b", {16}, 0, 32).align().zeros(96);
    expect_error(b.s, "overlap");
  }
  {
    Bytes b;
    b.header(2, 0).tensor("a", {8}, 0, 0).tensor("a", {8}, 0, 32).align().zeros(64);
    expect_error(b.s, "duplicate tensor name 'a'");
  }
  {
    Bytes b;
    b.header(1, 0).tensor("\xc3", {8}, 0, 0).align().zeros(32);
    expect_error(b.s, "invalid name");
  }
}

TEST_F(GgufFiles, EveryTruncationOfAValidFileIsAnError) {
  tools::GenConfig c;
  c.n_vocab = 270, c.n_embd = 32, c.n_layer = 1, c.n_ff = 48, c.n_head = 2, c.n_head_kv = 1;
  c.type = DType::F32;
  const std::string p = dir_.file("small.gguf");
  tools::write_random_model(c, p);
  const std::string full = test::read_file(p);
  ASSERT_TRUE(load_error(full).empty());
  // Every prefix through the header and tensor table, then a sample of the data section, up to the
  // end of the last tensor (the writer's trailing alignment padding is not needed by the reader).
  size_t end = full.size();
  while (end > 0 && full[end - 1] == '\0') --end;
  size_t step = 1;
  for (size_t n = 0; n < end; n += step) {
    if (n > 20000) step = 997;
    ASSERT_FALSE(load_error(full.substr(0, n)).empty()) << "prefix of " << n << " bytes loaded";
  }
}

// Model-level checks: a structurally valid GGUF that does not describe a usable model.
class ModelFiles : public GgufFiles {
 protected:
  std::string model_error(
      const std::function<void(std::map<std::string, Value>&, std::vector<Tensor>&)>& edit) {
    tools::GenConfig c;
    c.n_vocab = 270, c.n_embd = 32, c.n_layer = 1, c.n_ff = 48, c.n_head = 2, c.n_head_kv = 1;
    c.type = DType::F32;
    const std::string src = dir_.file("src.gguf");
    tools::write_random_model(c, src);
    ModelFile f = load_gguf(src);
    std::vector<Tensor> ts = f.tensors;
    edit(f.meta, ts);
    const std::string p = dir_.file("edited.gguf");
    write_gguf(p, f.meta, ts);
    try {
      Model::load(p);
      return "";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
      return e.what();
    }
  }
};

TEST_F(ModelFiles, ValidModelLoads) {
  EXPECT_EQ(model_error([](auto&, auto&) {}), "");
}

TEST_F(ModelFiles, MissingRequiredKey) {
  EXPECT_NE(
      model_error([](auto& m, auto&) { m.erase("llama.block_count"); }).find("'llama.block_count'"),
      std::string::npos);
}

TEST_F(ModelFiles, WrongKeyType) {
  EXPECT_NE(model_error([](auto& m, auto&) {
              m["llama.block_count"] = Value::of_str("two");
            }).find("should be an integer"),
            std::string::npos);
}

TEST_F(ModelFiles, AbsurdHyperParameters) {
  EXPECT_NE(model_error([](auto& m, auto&) {
              m["llama.block_count"] = Value::of_u64(1ull << 40);
            }).find("out of range"),
            std::string::npos);
  EXPECT_NE(model_error([](auto& m, auto&) {
              m["llama.attention.head_count_kv"] = Value::of_u32(3);
            }).find("multiple"),
            std::string::npos);
}

TEST_F(ModelFiles, UnsupportedArchitectureNamed) {
  EXPECT_NE(model_error([](auto& m, auto&) {
              m["general.architecture"] = Value::of_str("gpt2");
            }).find("architecture 'gpt2' is not supported"),
            std::string::npos);
}

// IQ4_NL has the byte size of Q4_0 but no kernel: refused by name, not misread.
TEST_F(ModelFiles, QuantTypeWithoutKernelRefusedByTypeName) {
  std::vector<uint8_t> q(36 * 48);  // Q8_1: a GGUF type brisk has no weight kernel for
  const std::string msg = model_error([&](auto&, auto& ts) {
    for (auto& t : ts)
      if (t.name == "blk.0.ffn_up.weight") {
        t.type = DType::Q8_1;
        t.nbytes = q.size();
        t.data = q.data();
      }
  });
  EXPECT_NE(msg.find("Q8_1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("blk.0.ffn_up.weight"), std::string::npos) << msg;
}

TEST_F(ModelFiles, MissingOrMisshapenTensor) {
  EXPECT_NE(model_error([](auto&, auto& ts) {
              std::erase_if(ts, [](const Tensor& t) { return t.name == "blk.0.attn_k.weight"; });
            }).find("'blk.0.attn_k.weight' is missing"),
            std::string::npos);
  EXPECT_NE(model_error([](auto&, auto& ts) {
              for (auto& t : ts)
                if (t.name == "blk.0.attn_v.weight") t.ne = {16, 32, 1, 1};
            }).find("has shape"),
            std::string::npos);
}

TEST_F(ModelFiles, TokenizerProblemsNamed) {
  EXPECT_NE(model_error([](auto& m, auto&) {
              m["tokenizer.ggml.bos_token_id"] = Value::of_u32(99999);
            }).find("outside the vocabulary"),
            std::string::npos);
  EXPECT_NE(model_error([](auto& m, auto&) {
              m.erase("tokenizer.ggml.tokens");
            }).find("tokenizer.ggml.tokens"),
            std::string::npos);
  EXPECT_NE(model_error([](auto& m, auto&) {
              m["tokenizer.ggml.scores"] = Value::of_array(GgufType::F32, {});
            }).find("tokenizer.ggml.scores"),
            std::string::npos);
}

}  // namespace
}  // namespace brisk

namespace brisk {
namespace {

// Random byte mutations of a valid model: loading must either succeed or end in an Error, never a
// crash, hang or runaway allocation (the sanitizer build checks the memory side).
TEST(GgufFuzz, MutatedModelsLoadOrFailCleanly) {
  tools::GenConfig c;
  c.n_vocab = 270, c.n_embd = 32, c.n_layer = 1, c.n_ff = 48, c.n_head = 2, c.n_head_kv = 1;
  c.type = DType::F16;
  test::TempDir dir;
  tools::write_random_model(c, dir.file("src.gguf"));
  const std::string good = test::read_file(dir.file("src.gguf"));
  uint64_t s = 12345;
  auto next = [&] {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return s;
  };
  // Most of the file is tensor data; aim most mutations at the header and tables.
  const size_t header = std::min<size_t>(good.size(), 12000);
  int loaded = 0, refused = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string bad = good;
    const int edits = 1 + static_cast<int>(next() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = next() % header;
      switch (next() % 3) {
        case 0:
          bad[at] = static_cast<char>(next());
          break;  // random byte
        case 1:
          bad[at] = static_cast<char>(0xff);
          break;  // large values
        default:
          bad[at] = static_cast<char>(bad[at] ^ (1 << (next() % 8)));  // bit flip
      }
    }
    const std::string p = dir.file("bad.gguf");
    test::write_file(p, bad);
    try {
      auto m = Model::load(p);
      ++loaded;
    } catch (const Error&) {
      ++refused;
    }
  }
  EXPECT_EQ(loaded + refused, 3000);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace brisk
