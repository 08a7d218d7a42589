// Every matmul kernel (each weight type on each ISA this CPU runs) against the scalar reference,
// with odd sizes, plus the determinism promise: a (row, token) result is the same bits for any
// batch size and thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "ops/matmul.h"
#include "ops/matmul_q8.h"
#include "ops/ref/ref_ops.h"
#include "ops/repack.h"
#include "quant/quant.h"
#include "support/test_util.h"

namespace brisk {
namespace {

struct Weights {
  Tensor t;
  std::vector<uint8_t> data;
};

// Where a type's super-block keeps its f16 scale (IQ1_M has none: its scale is spread over the top
// nibbles of the four scale words at byte 48).
int grid_scale_offset(DType t) {
  switch (t) {
    case DType::IQ2_XXS:
    case DType::IQ2_XS:
    case DType::IQ2_S:
    case DType::IQ3_XXS:
    case DType::IQ3_S:
    case DType::IQ1_S:
      return 0;
    case DType::TQ1_0:
      return 52;
    case DType::TQ2_0:
      return 64;
    default:
      return -1;
  }
}

// The grid i-quants and the ternary types get random blocks rather than quantized ones: every grid
// point, sign pattern and scale code turns up, and no quantizer builds its grid tables (seconds
// under an emulator).
bool random_blocks(DType t) {
  return grid_scale_offset(t) >= 0 || t == DType::IQ1_M;
}

void fill_random_blocks(DType type, uint8_t* data, size_t n_blocks, uint64_t seed) {
  const size_t bb = dtype_info(type).block_bytes;
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n_blocks * bb; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    data[i] = static_cast<uint8_t>(x >> 24);
  }
  for (size_t b = 0; b < n_blocks; ++b) {
    uint8_t* blk = data + b * bb;
    const uint16_t h = f32_to_f16(0.002f + 0.001f * static_cast<float>(b % 7));
    if (type == DType::IQ1_M) {
      for (int k = 0; k < 4; ++k) {
        uint16_t sc;
        std::memcpy(&sc, blk + 48 + 2 * k, 2);
        sc = static_cast<uint16_t>((sc & 0x0FFF) | ((h >> (4 * k)) & 0xF) << 12);
        std::memcpy(blk + 48 + 2 * k, &sc, 2);
      }
    } else {
      std::memcpy(blk + grid_scale_offset(type), &h, 2);
    }
  }
}

// Every quantized weight type with a kernel.
constexpr DType kQuantTypes[] = {
    DType::Q4_0,    DType::Q4_1,   DType::Q5_0,  DType::Q5_1,    DType::Q8_0,   DType::Q2_K,
    DType::Q3_K,    DType::Q4_K,   DType::Q5_K,  DType::Q6_K,    DType::IQ4_NL, DType::IQ4_XS,
    DType::IQ2_XXS, DType::IQ2_XS, DType::IQ2_S, DType::IQ3_XXS, DType::IQ3_S,  DType::IQ1_S,
    DType::IQ1_M,   DType::TQ1_0,  DType::TQ2_0, DType::MXFP4};

Weights make_weights(DType type, int64_t rows, int64_t cols, uint64_t seed) {
  Weights w;
  const auto v = test::random_floats(static_cast<size_t>(rows * cols), seed);
  const size_t es = dtype_info(type).block_bytes;
  if (random_blocks(type)) {
    w.data.resize(*dtype_row_bytes(type, static_cast<uint64_t>(cols)) * static_cast<size_t>(rows));
    fill_random_blocks(type, w.data.data(), w.data.size() / es, seed);
  } else if (dtype_is_quantized(type)) {
    w.data.resize(*dtype_row_bytes(type, static_cast<uint64_t>(cols)) * static_cast<size_t>(rows));
    quantize_row(type, v.data(), w.data.data(), rows * cols);
  } else {
    w.data.resize(v.size() * es);
  }
  for (size_t i = 0; i < v.size() && !dtype_is_quantized(type); ++i) {
    if (type == DType::F32)
      std::memcpy(&w.data[i * 4], &v[i], 4);
    else {
      const uint16_t h = type == DType::F16 ? f32_to_f16(v[i]) : f32_to_bf16(v[i]);
      std::memcpy(&w.data[i * 2], &h, 2);
    }
  }
  w.t.name = "w";
  w.t.type = type;
  w.t.n_dims = 2;
  w.t.ne = {cols, rows, 1, 1};
  w.t.data = w.data.data();
  w.t.nbytes = w.data.size();
  return w;
}

struct Param {
  DType type;
  Isa isa;
};

class MatmulKernels : public ::testing::TestWithParam<Param> {};

TEST_P(MatmulKernels, MatchReferenceOnOddShapes) {
  const auto [type, isa] = GetParam();
  ThreadPool pool(2);
  // BF16 with AVX512-BF16 rounds activations to bf16: about 3 significant digits.
  const double rel = (type == DType::BF16 && isa == Isa::Avx512Bf16) ? 1e-2 : 1e-5;
  for (int64_t rows : {1, 3, 4, 7, 16, 33}) {
    for (int64_t cols : {1, 5, 16, 31, 32, 33, 100, 257}) {
      for (int64_t n : {1, 2, 5, 6, 7, 13}) {
        auto w = make_weights(type, rows, cols, static_cast<uint64_t>(rows * 1000 + cols));
        const auto x =
            test::random_floats(static_cast<size_t>(n * cols), static_cast<uint64_t>(n + 7));
        std::vector<float> y(static_cast<size_t>(n * rows)), yr(y.size());
        matmul_isa(isa, w.t, x.data(), cols, n, y.data(), rows, pool);
        ref::matmul(w.t, x.data(), n, yr.data());
        for (size_t i = 0; i < y.size(); ++i) {
          // Error bound scales with the sum of |products| (at most cols here).
          ASSERT_NEAR(y[i], yr[i], rel * static_cast<double>(cols) + 1e-6)
              << dtype_name(type) << " " << isa_name(isa) << " rows=" << rows << " cols=" << cols
              << " n=" << n;
        }
      }
    }
  }
}

TEST_P(MatmulKernels, ResultIndependentOfBatchSizeAndThreads) {
  const auto [type, isa] = GetParam();
  const int64_t rows = 37, cols = 75, n = 17;
  auto w = make_weights(type, rows, cols, 99);
  const auto x = test::random_floats(static_cast<size_t>(n * cols), 5);
  ThreadPool p1(1), p2(2), p3(3);
  std::vector<float> all(static_cast<size_t>(n * rows));
  matmul_isa(isa, w.t, x.data(), cols, n, all.data(), rows, p2);
  for (ThreadPool* p : {&p1, &p2, &p3}) {
    std::vector<float> y(all.size());
    matmul_isa(isa, w.t, x.data(), cols, n, y.data(), rows, *p);
    ASSERT_EQ(std::memcmp(y.data(), all.data(), y.size() * 4), 0) << "threads=" << p->size();
    // Each token alone.
    for (int64_t t = 0; t < n; ++t) {
      std::vector<float> one(static_cast<size_t>(rows));
      matmul_isa(isa, w.t, x.data() + t * cols, cols, 1, one.data(), rows, *p);
      ASSERT_EQ(std::memcmp(one.data(), all.data() + t * rows, rows * 4), 0) << "token " << t;
    }
  }
}

std::vector<Param> params() {
  std::vector<Param> v;
  for (DType t : {DType::F32, DType::F16, DType::BF16})
    for (Isa i : test::available_isas()) v.push_back({t, i});
  return v;
}

INSTANTIATE_TEST_SUITE_P(TypesAndIsas, MatmulKernels, ::testing::ValuesIn(params()),
                         [](const auto& pinfo) {
                           return std::string(dtype_name(pinfo.param.type)) + "_" +
                                  isa_name(pinfo.param.isa);
                         });

// The integer kernels of every GGUF quantized type against the reference (dequantized weights
// times int8-rounded activations in double), with odd row counts, ragged batches and rows of one or
// several blocks (an odd number of 32-blocks included).
// Each token's outputs computed alone (1 or 3 threads) are the same bits as in a batch of n.
void expect_each_token_alone_equals_batch(Isa isa, const Tensor& w, int64_t n, uint64_t seed) {
  const int64_t rows = w.rows(), cols = w.cols();
  const auto x = test::random_floats(static_cast<size_t>(n * cols), seed);
  ThreadPool p1(1), p3(3);
  std::vector<float> all(static_cast<size_t>(n * rows));
  matmul_isa(isa, w, x.data(), cols, n, all.data(), rows, p3);
  for (ThreadPool* p : {&p1, &p3})
    for (int64_t t = 0; t < n; ++t) {
      std::vector<float> one(static_cast<size_t>(rows));
      matmul_isa(isa, w, x.data() + t * cols, cols, 1, one.data(), rows, *p);
      ASSERT_EQ(std::memcmp(one.data(), all.data() + t * rows, rows * 4), 0) << "token " << t;
    }
}

class QuantMatmul : public ::testing::TestWithParam<Param> {};

TEST_P(QuantMatmul, MatchesReference) {
  const auto [type, isa] = GetParam();
  ThreadPool pool(2);
  const bool k_quant = dtype_info(type).block_elems == 256;
  const std::vector<int64_t> widths =
      k_quant ? std::vector<int64_t>{256, 512, 768} : std::vector<int64_t>{32, 96, 160, 512};
  for (int64_t rows : {1, 3, 4, 7, 33}) {
    for (int64_t cols : widths) {
      for (int64_t n : {1, 2, 5, 6, 13}) {
        auto w = make_weights(type, rows, cols, static_cast<uint64_t>(rows * 1000 + cols));
        const auto x =
            test::random_floats(static_cast<size_t>(n * cols), static_cast<uint64_t>(n + 7));
        std::vector<float> y(static_cast<size_t>(n * rows)), yr(y.size());
        matmul_isa(isa, w.t, x.data(), cols, n, y.data(), rows, pool);
        ref::matmul(w.t, x.data(), n, yr.data());
        for (size_t i = 0; i < y.size(); ++i)
          ASSERT_NEAR(y[i], yr[i], 2e-5 * static_cast<double>(cols) + 1e-5)
              << dtype_name(type) << " " << isa_name(isa) << " rows=" << rows << " cols=" << cols
              << " n=" << n;
      }
    }
  }
}

TEST_P(QuantMatmul, ResultIndependentOfBatchSizeAndThreads) {
  const auto [type, isa] = GetParam();
  const int64_t rows = 37, cols = dtype_info(type).block_elems == 256 ? 512 : 96, n = 11;
  auto w = make_weights(type, rows, cols, 99);
  expect_each_token_alone_equals_batch(isa, w.t, n, 5);
}

// The 256-bit kernels (AVX2 with VPMADDUBSW, AVX-VNNI with VPDPBUSD) take the portable kernel's
// steps lane for lane: each tier this CPU runs gives its bits exactly.
TEST(QuantMatmul, TheAvx2TiersGiveThePortableBits) {
  ThreadPool pool(2);
  for (DType type : kQuantTypes) {
    const int64_t rows = 19, cols = dtype_info(type).block_elems == 256 ? 512 : 160, n = 7;
    auto w = make_weights(type, rows, cols, 31);
    const auto x = test::random_floats(static_cast<size_t>(n * cols), 3);
    std::vector<float> yg(static_cast<size_t>(n * rows)), y(yg.size());
    matmul_isa(Isa::Generic, w.t, x.data(), cols, n, yg.data(), rows, pool);
    for (Isa isa : {Isa::Avx2, Isa::Avx2Vnni}) {
      if (!isa_available(isa)) continue;
      matmul_isa(isa, w.t, x.data(), cols, n, y.data(), rows, pool);
      for (size_t i = 0; i < y.size(); ++i)
        ASSERT_EQ(yg[i], y[i]) << dtype_name(type) << " " << isa_name(isa) << " at " << i;
    }
  }
}

// The grid i-quants and the ternary types sum each super-block in integers (XFormat::Q8K), so
// every tier, the 512-bit one included, gives the portable kernel's bits, with one token and many.
TEST(QuantMatmul, GridTypesGiveThePortableBitsOnEveryTier) {
  ThreadPool pool(2);
  for (DType type : kQuantTypes) {
    if (!grid_activations(type)) continue;
    for (int64_t n : {1, 6}) {
      const int64_t rows = 9, cols = 768;
      auto w = make_weights(type, rows, cols, 41);
      const auto x = test::random_floats(static_cast<size_t>(n * cols), 8);
      std::vector<float> yg(static_cast<size_t>(n * rows)), y(yg.size());
      matmul_isa(Isa::Generic, w.t, x.data(), cols, n, yg.data(), rows, pool);
      for (Isa isa : test::available_isas()) {
        matmul_isa(isa, w.t, x.data(), cols, n, y.data(), rows, pool);
        for (size_t i = 0; i < y.size(); ++i)
          ASSERT_EQ(yg[i], y[i]) << dtype_name(type) << " " << isa_name(isa) << " at " << i;
      }
    }
  }
}

std::vector<Param> quant_params() {
  std::vector<Param> v;
  for (DType t : kQuantTypes)
    for (Isa i : test::available_isas()) v.push_back({t, i});
  return v;
}

INSTANTIATE_TEST_SUITE_P(TypesAndIsas, QuantMatmul, ::testing::ValuesIn(quant_params()),
                         [](const auto& pinfo) {
                           return std::string(dtype_name(pinfo.param.type)) + "_" +
                                  isa_name(pinfo.param.isa);
                         });

// Q4_0 and Q8_0 rows repacked at load time (ops/repack.h): the layout round-trips, and the kernels
// for it match the reference on the original rows, with bits independent of batch and threads.
Weights repacked(const Weights& src) {
  Weights w = src;
  const uint64_t rb = src.t.row_bytes();
  for (int64_t g = 0; g < src.t.rows() / kInterleave; ++g)
    repack_group(src.t.type, src.data.data() + g * kInterleave * rb, rb,
                 w.data.data() + g * kInterleave * rb, src.t.cols());
  w.t.data = w.data.data();
  w.t.interleaved = true;
  return w;
}

class RepackedMatmul : public ::testing::TestWithParam<Param> {};

TEST_P(RepackedMatmul, RoundTripsAndMatchesReference) {
  const auto [type, isa] = GetParam();
  ThreadPool pool(2);
  const bool k_quant = dtype_info(type).block_elems == 256;
  for (int64_t rows : {16, 32, 80}) {
    for (int64_t cols :
         k_quant ? std::vector<int64_t>{256, 768} : std::vector<int64_t>{32, 96, 640}) {
      const auto w0 = make_weights(type, rows, cols, static_cast<uint64_t>(rows * 31 + cols));
      ASSERT_TRUE(repackable(w0.t));
      const auto w = repacked(w0);
      std::vector<uint8_t> back(w0.t.row_bytes());
      for (int64_t r = 0; r < rows; ++r) {
        unpack_group_row(type, w.t.row(r / kInterleave * kInterleave),
                         static_cast<int>(r % kInterleave), back.data(), cols);
        ASSERT_EQ(std::memcmp(back.data(), w0.t.row(r), back.size()), 0) << "row " << r;
      }
      for (int64_t n : {1, 2, 5, 8, 13, 17}) {
        const auto x = test::random_floats(static_cast<size_t>(n * cols), static_cast<uint64_t>(n));
        std::vector<float> y(static_cast<size_t>(n * rows)), yr(y.size()), yp(y.size());
        matmul_isa(isa, w.t, x.data(), cols, n, y.data(), rows, pool);
        ref::matmul(w0.t, x.data(), n, yr.data());
        ref::matmul(w.t, x.data(), n, yp.data());  // the reference reads repacked rows too
        for (size_t i = 0; i < y.size(); ++i) {
          // BF16 with AVX512-BF16 rounds activations to bf16: about 3 significant digits.
          const double rel = type == DType::BF16 && isa == Isa::Avx512Bf16 ? 1e-2 : 2e-5;
          ASSERT_NEAR(y[i], yr[i], rel * static_cast<double>(cols) + 1e-5)
              << dtype_name(type) << " " << isa_name(isa) << " rows=" << rows << " cols=" << cols
              << " n=" << n;
          ASSERT_EQ(yp[i], yr[i]);
        }
      }
    }
  }
}

TEST_P(RepackedMatmul, RoundTripsEveryBit) {
  const DType type = GetParam().type;
  const int64_t cols = 512, rows = 32;
  const uint64_t rb = *dtype_row_bytes(type, cols);
  std::vector<uint8_t> src(rb * rows), packed(src.size()), back(rb);
  uint64_t x = 88172645463325252ull;
  for (auto& b : src) x ^= x << 13, x ^= x >> 7, x ^= x << 17, b = static_cast<uint8_t>(x);
  for (int64_t g = 0; g < rows / kInterleave; ++g)
    repack_group(type, src.data() + g * kInterleave * rb, rb, packed.data() + g * kInterleave * rb,
                 cols);
  for (int64_t r = 0; r < rows; ++r) {
    unpack_group_row(type, packed.data() + r / kInterleave * kInterleave * rb,
                     static_cast<int>(r % kInterleave), back.data(), cols);
    ASSERT_EQ(std::memcmp(back.data(), src.data() + r * rb, rb), 0) << "row " << r;
  }
}

TEST_P(RepackedMatmul, ResultIndependentOfBatchSizeAndThreads) {
  const auto [type, isa] = GetParam();
  const int64_t rows = 48, cols = 768, n = 11;
  const auto w = repacked(make_weights(type, rows, cols, 77));
  expect_each_token_alone_equals_batch(isa, w.t, n, 3);
}

// Rows of odd length (F16 repacks at any length): a prompt batch's last value, on weights widened
// per group beforehand, gives what each token alone gives.
TEST(RepackedMatmul, OddLengthRowsIndependentOfBatchSize) {
  for (int64_t cols : {75, 1023}) {
    const auto w0 = make_weights(DType::F16, 32, cols, 78);
    ASSERT_TRUE(repackable(w0.t));
    const auto w = repacked(w0);
    for (Isa isa : test::available_isas()) expect_each_token_alone_equals_batch(isa, w.t, 13, 3);
  }
}

// The kernels for repacked rows take the same float steps (fused multiply-adds) on every tier, and
// their byte dot products (VPMADDUBSW, or VPDPBUSD in its VEX or EVEX form) give the same integers:
// each tier's output equals the portable one bit for bit.
TEST(RepackedMatmul, EveryTierGivesThePortableBits) {
  ThreadPool pool(2);
  for (DType type : {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_NL,
                     DType::IQ4_XS, DType::MXFP4})
    for (int64_t n : {1, 7, 37}) {  // decode; a partial tile of tokens; two whole and a partial one
      const int64_t rows = 48, cols = 768;
      const auto w = repacked(make_weights(type, rows, cols, 5));
      const auto x = test::random_floats(static_cast<size_t>(n * cols), 9);
      std::vector<float> y(static_cast<size_t>(n * rows)), other(y.size());
      matmul_isa(Isa::Generic, w.t, x.data(), cols, n, y.data(), rows, pool);
      auto expect_same = [&](const char* what) {
        for (size_t i = 0; i < y.size(); ++i)
          ASSERT_EQ(y[i], other[i]) << dtype_name(type) << " " << what << " at " << i;
      };
      for (Isa isa : test::available_isas()) {
        matmul_isa(isa, w.t, x.data(), cols, n, other.data(), rows, pool);
        expect_same(isa_name(isa));
      }
    }
}

// Decode takes a thread's groups several at a time (kDecodeGroups) where its chunk of rows allows:
// here 37 groups, in chunks of 5 on one thread. Each token alone gives the batch's bits.
TEST_P(RepackedMatmul, DecodeOverManyGroupsGivesTheBatchBits) {
  const auto [type, isa] = GetParam();
  const auto w = repacked(make_weights(type, 592, 256, 78));
  expect_each_token_alone_equals_batch(isa, w.t, 4, 5);
}

std::vector<Param> repacked_params() {
  std::vector<Param> v;
  for (DType t : {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_NL,
                  DType::IQ4_XS, DType::MXFP4, DType::BF16, DType::F16, DType::F32})
    for (Isa i : test::available_isas()) v.push_back({t, i});
  return v;
}

INSTANTIATE_TEST_SUITE_P(TypesAndIsas, RepackedMatmul, ::testing::ValuesIn(repacked_params()),
                         [](const auto& pinfo) {
                           return std::string(dtype_name(pinfo.param.type)) + "_" +
                                  isa_name(pinfo.param.isa);
                         });

// Matrices sharing their activations (q/k/v, gate/up) give each matmul's bits, whatever mix of
// types and layouts they are (activations prepared once per run of matrices that read them alike:
// here Q4_K and Q4_0 differ in their offsets, F32 reads the rows as given).
TEST(Matmul, SharedActivationsGiveEachMatmulsBits) {
  ThreadPool pool(2);
  const int64_t cols = 512;
  std::vector<Weights> ws;
  ws.push_back(make_weights(DType::Q4_K, 48, cols, 1));
  ws.push_back(repacked(make_weights(DType::Q4_K, 32, cols, 2)));
  ws.push_back(make_weights(DType::Q6_K, 16, cols, 3));
  ws.push_back(make_weights(DType::Q4_0, 32, cols, 4));
  ws.push_back(make_weights(DType::F32, 16, cols, 5));
  ws.push_back(make_weights(DType::Q4_0, 32, cols, 6));
  for (Isa isa : test::available_isas())
    for (int64_t n : {1, 3, 17}) {
      const auto x = test::random_floats(static_cast<size_t>(n * cols), static_cast<uint64_t>(n));
      std::vector<std::vector<float>> alone, shared;
      std::vector<MatmulOut> outs;
      for (const Weights& w : ws) {
        alone.emplace_back(static_cast<size_t>(n * w.t.rows()));
        shared.emplace_back(alone.back().size());
        matmul_isa(isa, w.t, x.data(), cols, n, alone.back().data(), w.t.rows(), pool);
      }
      for (size_t i = 0; i < ws.size(); ++i)
        outs.push_back({&ws[i].t, shared[i].data(), ws[i].t.rows()});
      matmul_shared_isa(isa, outs, x.data(), cols, n, pool);
      for (size_t i = 0; i < ws.size(); ++i)
        ASSERT_EQ(std::memcmp(alone[i].data(), shared[i].data(), alone[i].size() * 4), 0)
            << dtype_name(ws[i].t.type) << " " << isa_name(isa) << " n=" << n;
    }
}

// Tiled activations hold each float as given, or (BF16Tiles) exactly f32_to_bf16 of each value
// (round to nearest even, NaN kept quiet), at the documented place, for any tile size and row
// length, on every ISA's packer; F32PairTiles pads an odd row's last pair with +0.
TEST(Matmul, PackedTilesHoldEachValueWhereDocumented) {
  using matmul_detail::XFormat;
  ThreadPool pool(2);
  for (Isa isa : test::available_isas())
    for (XFormat f : {XFormat::F32Tiles, XFormat::BF16Tiles, XFormat::F32PairTiles})
      for (int64_t k : {1, 2, 17, 18, 34, 64, 2048})
        for (int64_t n : {1, 5, 12, 13, 29})
          for (int64_t tile : {int64_t{1}, int64_t{5}, int64_t{12}}) {
            const bool bf16 = f == XFormat::BF16Tiles;
            if (tile > n || (bf16 && k % 2 != 0)) continue;
            auto x =
                test::random_floats(static_cast<size_t>(n * (k + 3)), static_cast<uint64_t>(k + n));
            const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                                      -std::numeric_limits<float>::infinity(),
                                      std::numeric_limits<float>::denorm_min(),
                                      -0.0f,
                                      1.00390625f,  // a tie: rounds to even
                                      1.01171875f,  // a tie: rounds up
                                      3.4e38f};
            for (size_t i = 0; i < x.size(); i += 7) x[i] = specials[(i / 7) % 7];
            const matmul_detail::TileUnits units = matmul_detail::tile_units(f, k);
            const int64_t tiles = (n + tile - 1) / tile;
            std::vector<uint8_t> packed(
                static_cast<size_t>(tiles * tile * units.count * units.bytes), 0xee);
            matmul_detail::pack_tiles(isa, f, x.data(), k + 3, k, n, tile, packed.data(), pool);
            const int64_t per_unit = f == XFormat::F32Tiles ? 1 : 2;  // values
            for (int64_t t = 0; t < n; ++t)
              for (int64_t i = 0; i < units.count * per_unit; ++i) {
                const float v = i < k ? x[static_cast<size_t>(t * (k + 3) + i)] : 0.0f;
                const int64_t u = i / per_unit;
                const size_t at = static_cast<size_t>(
                    ((t / tile * units.count + u) * tile + t % tile) * units.bytes +
                    i % per_unit * units.bytes / 2);
                if (bf16) {
                  uint16_t got;
                  std::memcpy(&got, &packed[at], 2);
                  ASSERT_EQ(got, f32_to_bf16(v))
                      << isa_name(isa) << " k " << k << " n " << n << " tile " << tile;
                } else {
                  ASSERT_EQ(std::memcmp(&packed[at], &v, 4), 0)
                      << isa_name(isa) << " format " << static_cast<int>(f) << " k " << k << " n "
                      << n << " tile " << tile << " value " << i;
                }
              }
          }
}

// Each tier's row quantizer writes the scalar reference's bytes: values, scales, sums, the
// zero-padded last pair of blocks, and the offset sums when asked for.
TEST(Matmul, Q8RowsAreTheScalarBitsOnEveryTier) {
  using matmul_detail::Q8Layout;
  for (Isa isa : test::available_isas())
    for (int64_t k : {32, 96, 2048, 5632})
      for (int offset : {0, 8, 128}) {
        auto x = test::random_floats(static_cast<size_t>(k), static_cast<uint64_t>(k + offset));
        for (int64_t i = 0; i < std::min<int64_t>(k, 32); ++i) x[static_cast<size_t>(i)] = 0;
        // Values that land on .5 after scaling: rounding to nearest even is part of the bits.
        if (k >= 64) {
          x[32] = 127, x[33] = 0.5f, x[34] = 1.5f, x[35] = -2.5f, x[36] = -127;
        }
        const Q8Layout L(k);
        std::vector<uint8_t> want(L.stride, 0xee), got(L.stride, 0xee);
        matmul_detail::quantize_activation_row(x.data(), k, want.data(), offset);
        matmul_detail::quantize_activation_row(isa, x.data(), k, got.data(), offset);
        EXPECT_EQ(want, got) << isa_name(isa) << " k " << k << " offset " << offset;
      }
}

// Each tier's Q8K row quantizer (blocks of 256) writes the scalar reference's bytes, whose sums of
// 8 are their values' sums.
TEST(Matmul, Q8KRowsAreTheScalarBitsOnEveryTier) {
  using matmul_detail::Q8KLayout;
  for (Isa isa : test::available_isas())
    for (int64_t k : {256, 2048, 5632}) {
      auto x = test::random_floats(static_cast<size_t>(k), static_cast<uint64_t>(k));
      for (int64_t i = 0; i < 256; ++i) x[static_cast<size_t>(i)] = 0;  // a block of zeros
      if (k >= 512) x[300] = 127, x[301] = 0.5f, x[302] = 1.5f, x[303] = -2.5f, x[304] = -127;
      const Q8KLayout L(k);
      std::vector<uint8_t> want(L.stride, 0xee), got(L.stride, 0xee);
      matmul_detail::quantize_activation_q8k(x.data(), k, want.data());
      matmul_detail::quantize_activation_q8k(isa, x.data(), k, got.data());
      EXPECT_EQ(want, got) << isa_name(isa) << " k " << k;
      for (int64_t g = 0; g < k / 8; ++g) {
        int sum = 0;
        for (int i = 0; i < 8; ++i)
          sum += static_cast<int8_t>(want[static_cast<size_t>(8 * g + i)]);
        int16_t s8;
        std::memcpy(&s8, want.data() + L.s8_off + 2 * g, 2);
        ASSERT_EQ(sum, s8) << "k " << k << " sum " << g;
      }
    }
}

// Q8 activation tiles (XFormat::Q8Tiles) hold quantize_activation_row's values, scales and sums at
// the documented places, on every tier's quantizer, for whole and partial tiles.
TEST(Matmul, Q8TilesHoldTheRowQuantization) {
  using matmul_detail::Q8Layout;
  using matmul_detail::Q8Tiles;
  for (Isa isa : test::available_isas())
    for (int64_t k : {32, 96, 2048})
      for (int64_t n : {1, 5, 16, 17, 40})
        for (int offset : {0, 8, 128}) {
          auto x = test::random_floats(static_cast<size_t>(n * (k + 3)),
                                       static_cast<uint64_t>(k * 7 + n));
          for (int64_t i = 0; i < k; ++i) x[static_cast<size_t>(i)] = 0;  // a zero row
          const int64_t tiles = (n + Q8Tiles::kTile - 1) / Q8Tiles::kTile;
          std::vector<uint8_t> tiled(tiles * Q8Tiles::tile_bytes(k), 0xee);
          // In two calls, as threads split the tiles.
          matmul_detail::quantize_activation_tiles(isa, x.data(), k + 3, k, n, 0,
                                                   std::min<int64_t>(n, 16), offset, tiled.data());
          matmul_detail::quantize_activation_tiles(
              isa, x.data(), k + 3, k, n, std::min<int64_t>(n, 16), n, offset, tiled.data());
          const Q8Layout L(k);
          std::vector<uint8_t> row(L.stride);
          for (int64_t t = 0; t < n; ++t) {
            matmul_detail::quantize_activation_row(x.data() + t * (k + 3), k, row.data(), offset);
            const int64_t first = t / 16 * 16, j = t - first, w = std::min<int64_t>(16, n - first);
            for (int64_t b = 0; b < k / 32; ++b) {
              const uint8_t* blk =
                  tiled.data() + first / 16 * Q8Tiles::tile_bytes(k) + b * Q8Tiles::block_bytes(w);
              auto field = [&](uint64_t off, int64_t i) {
                int32_t v;
                std::memcpy(&v, blk + off + 4 * i, 4);
                return v;
              };
              auto row_field = [&](uint64_t off, int64_t i) {
                int32_t v;
                std::memcpy(&v, row.data() + off + 4 * i, 4);
                return v;
              };
              const std::string at = std::string(isa_name(isa)) + " k " + std::to_string(k) +
                                     " n " + std::to_string(n) + " t " + std::to_string(t) + " b " +
                                     std::to_string(b);
              ASSERT_EQ(std::memcmp(blk + 32 * j, row.data() + 32 * b, 32), 0) << at;
              ASSERT_EQ(field(Q8Tiles::dx_off(w), j), row_field(L.dxv_off, b / 2 * 16 + b % 2 * 8))
                  << at;
              ASSERT_EQ(field(Q8Tiles::ms_off(w), j), row_field(L.ms_off, b)) << at;
              if (offset != 0) {
                for (int h = 0; h < 2; ++h)
                  ASSERT_EQ(field(Q8Tiles::hs_off(w), 2 * j + h), row_field(L.hs_off, 2 * b + h))
                      << at;
                ASSERT_EQ(field(Q8Tiles::hb_off(w), j),
                          row_field(L.hs_off, 2 * b) + row_field(L.hs_off, 2 * b + 1))
                    << at;
              }
            }
          }
        }
}

TEST(Matmul, RefusesTypesWithoutKernelsByName) {
  Tensor t;
  t.name = "w";
  t.type = DType::Q8_1;
  t.n_dims = 2;
  t.ne = {256, 1, 1, 1};
  std::vector<uint8_t> d(8 * 36);
  t.data = d.data();
  t.nbytes = d.size();
  ThreadPool pool(1);
  std::vector<float> x(256), y(1);
  try {
    matmul(t, x.data(), 256, 1, y.data(), 1, pool);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Q8_1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace brisk
