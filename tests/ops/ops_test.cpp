// Norms, rope, activations and FlashAttention against their scalar references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/norm.h"
#include "ops/ref/ref_ops.h"
#include "ops/rope.h"
#include "support/test_util.h"

namespace brisk {
namespace {

TEST(RmsNorm, MatchesReference) {
  for (int64_t n : {1, 7, 8, 9, 64, 100, 2049}) {
    const auto x = test::random_floats(static_cast<size_t>(n), static_cast<uint64_t>(n));
    const auto w = test::random_floats(static_cast<size_t>(n), static_cast<uint64_t>(n) + 1);
    std::vector<float> a(static_cast<size_t>(n)), b(a.size());
    rmsnorm(x.data(), w.data(), a.data(), n, 1e-5f);
    ref::rmsnorm(x.data(), w.data(), b.data(), n, 1e-5f);
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(a[i], b[i], 1e-5f * (1 + std::fabs(b[i]))) << n;
  }
}

TEST(Rope, MatchesReferenceForBothLayoutsAndPartialRotation) {
  for (RopeType type : {RopeType::Norm, RopeType::Neox}) {
    for (auto [head_dim, rope_dim] : {std::pair{8, 8}, {64, 64}, {40, 40}, {128, 64}, {24, 24}}) {
      for (auto kind :
           {RopeScaling::Kind::None, RopeScaling::Kind::Linear, RopeScaling::Kind::Llama3}) {
        RopeScaling s;
        s.kind = kind;
        s.factor = 8;
        const auto inv = rope_inv_freq(rope_dim, 500000.0f, s);
        for (int64_t pos : {0, 1, 17, 4095, 100000}) {
          auto a = test::random_floats(static_cast<size_t>(3 * head_dim),
                                       static_cast<uint64_t>(pos + head_dim));
          auto b = a;
          const auto orig = a;
          rope(a.data(), 3, head_dim, rope_dim, pos, type, inv.data());
          ref::rope(b.data(), 3, head_dim, rope_dim, pos, type, inv.data());
          for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5f);
          // Dimensions past rope_dim are untouched.
          for (int h = 0; h < 3; ++h)
            for (int d = rope_dim; d < head_dim; ++d)
              ASSERT_EQ(a[h * head_dim + d], orig[h * head_dim + d]);
        }
      }
    }
  }
}

TEST(Rope, Llama3ScalingKeepsHighFrequenciesAndSlowsLowOnes) {
  RopeScaling s;
  s.kind = RopeScaling::Kind::Llama3;
  s.factor = 32;
  const auto plain = rope_inv_freq(64, 500000.0f, RopeScaling{});
  const auto scaled = rope_inv_freq(64, 500000.0f, s);
  EXPECT_FLOAT_EQ(scaled[0], plain[0]);         // wavelength 2π: kept
  EXPECT_FLOAT_EQ(scaled[31], plain[31] / 32);  // longest wavelength: divided by the factor
}

TEST(SiluMul, MatchesReferenceIncludingLargeInputsOnEveryTier) {
  for (Isa isa : test::available_isas())
    for (float scale : {1.0f, 10.0f, 120.0f}) {
      for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 1000}) {
        auto g = test::random_floats(static_cast<size_t>(n), static_cast<uint64_t>(n));
        const auto u = test::random_floats(static_cast<size_t>(n), static_cast<uint64_t>(n) + 1);
        for (auto& v : g) v *= scale;
        std::vector<float> a(static_cast<size_t>(n)), b(a.size());
        silu_mul_isa(isa, g.data(), u.data(), a.data(), n);
        ref::silu_mul(g.data(), u.data(), b.data(), n);
        for (size_t i = 0; i < a.size(); ++i)
          ASSERT_NEAR(a[i], b[i], 1e-6f * (1 + std::fabs(b[i]))) << isa_name(isa) << " " << g[i];
      }
    }
}

// Weights against std::exp in double, and a sum that does not depend on what lies past n.
TEST(SoftmaxWeights, MatchExpAndSumOnEveryTier) {
  for (Isa isa : test::available_isas())
    for (int64_t n : {1, 5, 8, 16, 17, 1023, 1024, 1025, 3000}) {
      for (float scale : {1.0f, 1.0f / 0.7f, 5.0f}) {
        auto x = test::random_floats(static_cast<size_t>(n), static_cast<uint64_t>(n) * 7);
        for (auto& v : x) v *= 20;
        const float mx = max_value(x.data(), n);
        ASSERT_EQ(mx, *std::max_element(x.begin(), x.end()));
        std::vector<float> w(static_cast<size_t>(n) + 16, -7.0f);
        const double sum = softmax_weights_isa(isa, x.data(), n, mx, scale, w.data());
        double want = 0;
        for (int64_t i = 0; i < n; ++i) {
          const double arg = (static_cast<double>(x[i]) - mx) * scale;
          const double e = std::exp(arg);
          want += e;
          // The float argument's rounding (relative 6e-8) moves exp by |arg| times that.
          ASSERT_NEAR(w[i], e, (2e-6 + 1.2e-7 * std::fabs(arg)) * e + 1e-30)
              << isa_name(isa) << " n=" << n << " i=" << i;
        }
        EXPECT_NEAR(sum, want, 1e-5 * want) << isa_name(isa) << " n=" << n;
        for (size_t i = static_cast<size_t>(n); i < w.size(); ++i) ASSERT_EQ(w[i], -7.0f);
      }
    }
}

TEST(Softmax, SumsToOne) {
  for (int64_t n : {1, 77, 5000}) {
    auto x = test::random_floats(static_cast<size_t>(n), 3);
    for (auto& v : x) v *= 30;
    softmax(x.data(), n);
    double s = 0;
    for (float v : x) s += v;
    EXPECT_NEAR(s, 1.0, 1e-5) << n;
  }
}

// FlashAttention over random span layouts against a naive attention over a contiguous cache, on
// every tier this CPU has.
TEST(FlashAttention, MatchesNaiveAttentionForAnySpanLayout) {
  for (Isa isa : test::available_isas())
    for (auto [n_head, n_kv, hd] : {std::tuple{4, 4, 8},
                                    {8, 2, 64},
                                    {6, 3, 40},
                                    {5, 1, 24},
                                    {4, 2, 16},
                                    {4, 1, 128},
                                    {8, 4, 8},
                                    {4, 2, 112},
                                    {2, 1, 4}}) {
      for (int64_t n_keys : {1, 15, 16, 17, 100, 333}) {
        const int64_t kvd = static_cast<int64_t>(n_kv) * hd;
        const auto k =
            test::random_floats(static_cast<size_t>(n_keys * kvd), static_cast<uint64_t>(n_keys));
        const auto v = test::random_floats(static_cast<size_t>(n_keys * kvd),
                                           static_cast<uint64_t>(n_keys + 1));
        auto q = test::random_floats(static_cast<size_t>(n_head * hd), 9);
        for (auto& x : q) x *= 4;  // sharper softmax
        const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
        std::vector<float> expect(static_cast<size_t>(n_head * hd));
        const int g = n_head / n_kv;
        for (int h = 0; h < n_head; ++h)
          ref::attention_head(&q[h * hd], k.data() + (h / g) * hd, v.data() + (h / g) * hd, kvd,
                              n_keys, hd, scale, &expect[h * hd]);
        const AttnShape shape{n_head, n_kv, hd, kvd, scale};
        std::vector<float> first;
        // Span layouts: one span; blocks of 16; blocks of 5 (not chunk-aligned), scattered in
        // memory.
        for (int64_t block : {int64_t{0}, int64_t{16}, int64_t{5}}) {
          std::vector<float> kc, vc;
          std::vector<KvSpan> spans;
          if (block == 0) {
            spans.push_back({k.data(), v.data(), 0, n_keys});
          } else {
            // Copy blocks into a buffer in reverse order so spans are not contiguous.
            const int64_t nb = (n_keys + block - 1) / block;
            kc.resize(static_cast<size_t>(nb * block * kvd));
            vc.resize(kc.size());
            for (int64_t b = 0; b < nb; ++b) {
              const int64_t slot = nb - 1 - b, p0 = b * block, cnt = std::min(block, n_keys - p0);
              std::memcpy(&kc[slot * block * kvd], &k[p0 * kvd],
                          static_cast<size_t>(cnt * kvd) * 4);
              std::memcpy(&vc[slot * block * kvd], &v[p0 * kvd],
                          static_cast<size_t>(cnt * kvd) * 4);
              spans.push_back({&kc[slot * block * kvd], &vc[slot * block * kvd], p0, cnt});
            }
          }
          std::vector<float> out(static_cast<size_t>(n_head * hd));
          for (int kvh = 0; kvh < n_kv; ++kvh) {
            const AttnQuery one{q.data(), out.data(), n_keys};
            attention_group_isa(isa, shape, kvh, &one, 1, spans.data(), spans.size());
          }
          for (size_t i = 0; i < out.size(); ++i)
            ASSERT_NEAR(out[i], expect[i], 1e-5f)
                << isa_name(isa) << " head_dim " << hd << " keys " << n_keys << " block " << block;
          if (first.empty())
            first = out;
          else
            ASSERT_EQ(std::memcmp(first.data(), out.data(), out.size() * 4), 0)
                << "layout changed the bits";
        }
      }
    }
}

// Several tokens' queries computed together (as the forward pass groups a prompt's tokens) give
// each token the same bits as computing it alone, for every KV type, head size and tier.
TEST(FlashAttention, QueriesTogetherGiveEachTheBitsItGetsAlone) {
  const std::vector<int64_t> n_keys = {70, 1, 16, 17, 33, 5, 64, 48, 2, 69, 31, 15, 50};
  const int nq = static_cast<int>(n_keys.size());
  const int64_t max_keys = 70;
  for (Isa isa : test::available_isas())
    for (KvType type : {KvType::F32, KvType::F16, KvType::BF16, KvType::Q8}) {
      for (auto [n_head, n_kv, hd] : {std::tuple{8, 2, 64},
                                      {6, 3, 128},
                                      {4, 1, 256},
                                      {10, 2, 80},
                                      {4, 2, 40},
                                      {7, 1, 64},
                                      {8, 4, 8},
                                      {6, 2, 24}}) {
        const int64_t kvd = static_cast<int64_t>(n_kv) * hd, qd = static_cast<int64_t>(n_head) * hd;
        const auto k = test::random_floats(static_cast<size_t>(max_keys * kvd), 31);
        const auto v = test::random_floats(static_cast<size_t>(max_keys * kvd), 32);
        auto q = test::random_floats(static_cast<size_t>(nq * qd), 33);
        for (auto& x : q) x *= 3;
        const size_t eb = kv_elem_bytes(type);
        std::vector<uint8_t> kc(static_cast<size_t>(max_keys * kvd) * eb), vc(kc.size());
        std::vector<float> ks(static_cast<size_t>(max_keys * n_kv)), vs(ks.size());
        for (int64_t p = 0; p < max_keys; ++p) {
          store_kv_row(type, &k[static_cast<size_t>(p * kvd)],
                       &kc[static_cast<size_t>(p * kvd) * eb], n_kv, hd,
                       &ks[static_cast<size_t>(p * n_kv)]);
          store_kv_row(type, &v[static_cast<size_t>(p * kvd)],
                       &vc[static_cast<size_t>(p * kvd) * eb], n_kv, hd,
                       &vs[static_cast<size_t>(p * n_kv)]);
        }
        const bool q8 = type == KvType::Q8;
        const KvSpan span{
            kc.data(), vc.data(), 0, max_keys, q8 ? ks.data() : nullptr, q8 ? vs.data() : nullptr};
        const AttnShape shape{n_head, n_kv, hd, kvd, 1.0f / std::sqrt(static_cast<float>(hd)),
                              type};
        std::vector<float> alone(static_cast<size_t>(nq * qd)), together(alone.size());
        for (int i = 0; i < nq; ++i)
          for (int g = 0; g < n_kv; ++g) {
            const AttnQuery one{&q[static_cast<size_t>(i * qd)],
                                &alone[static_cast<size_t>(i * qd)],
                                n_keys[static_cast<size_t>(i)]};
            attention_group_isa(isa, shape, g, &one, 1, &span, 1);
          }
        for (int group : {nq, 3}) {
          std::fill(together.begin(), together.end(), -1.0f);
          std::vector<AttnQuery> qs;
          for (int i = 0; i < nq; ++i)
            qs.push_back({&q[static_cast<size_t>(i * qd)], &together[static_cast<size_t>(i * qd)],
                          n_keys[static_cast<size_t>(i)]});
          for (int i0 = 0; i0 < nq; i0 += group)
            for (int g = 0; g < n_kv; ++g)
              attention_group_isa(isa, shape, g, &qs[static_cast<size_t>(i0)],
                                  std::min(group, nq - i0), &span, 1);
          ASSERT_EQ(std::memcmp(alone.data(), together.data(), alone.size() * 4), 0)
              << isa_name(isa) << " " << kv_type_name(type) << " head_dim " << hd << " groups of "
              << group;
        }
      }
    }
}

// Sliding windows (keys [first_key, n_keys)), attention sinks and soft-capped scores (Gemma 2)
// against the naive attention, on every tier; and queries with different windows computed together
// keep the bits each gets alone.
TEST(FlashAttention, SlidingWindowsAndSinksMatchNaiveAttention) {
  for (Isa isa : test::available_isas())
    for (auto [n_head, n_kv, hd] :
         {std::tuple{8, 2, 64}, {4, 2, 16}, {4, 4, 8}, {6, 3, 40}, {2, 1, 4}, {4, 1, 128}}) {
      const int64_t max_keys = 100, kvd = static_cast<int64_t>(n_kv) * hd;
      const int64_t qd = static_cast<int64_t>(n_head) * hd;
      const auto k = test::random_floats(static_cast<size_t>(max_keys * kvd), 41);
      const auto v = test::random_floats(static_cast<size_t>(max_keys * kvd), 42);
      auto sinks = test::random_floats(static_cast<size_t>(n_head), 43);
      for (auto& x : sinks) x *= 3;
      const std::vector<std::pair<int64_t, int64_t>> windows = {
          {0, 1}, {0, 17}, {5, 17}, {16, 17}, {16, 100}, {15, 100}, {99, 100}, {37, 90}, {2, 3}};
      const int nq = static_cast<int>(windows.size());
      auto q = test::random_floats(static_cast<size_t>(nq * qd), 44);
      for (auto& x : q) x *= 3;
      const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
      const KvSpan span{k.data(), v.data(), 0, max_keys};
      const int g = n_head / n_kv;
      for (auto [with_sinks, cap] : {std::pair{false, 0.0f}, {true, 0.0f}, {false, 1.5f}}) {
        const AttnShape shape{
            n_head, n_kv, hd, kvd, scale, KvType::F32, with_sinks ? sinks.data() : nullptr, cap};
        std::vector<float> alone(static_cast<size_t>(nq * qd)), together(alone.size());
        for (int i = 0; i < nq; ++i) {
          const auto [first, n_keys] = windows[static_cast<size_t>(i)];
          const float* qi = &q[static_cast<size_t>(i * qd)];
          float* oi = &alone[static_cast<size_t>(i * qd)];
          for (int kvh = 0; kvh < n_kv; ++kvh) {
            const AttnQuery one{qi, oi, n_keys, first};
            attention_group_isa(isa, shape, kvh, &one, 1, &span, 1);
          }
          for (int h = 0; h < n_head; ++h) {
            std::vector<float> expect(static_cast<size_t>(hd));
            ref::attention_head(qi + h * hd, k.data() + (h / g) * hd, v.data() + (h / g) * hd, kvd,
                                first, n_keys, hd, scale,
                                with_sinks ? sinks[static_cast<size_t>(h)]
                                           : -std::numeric_limits<float>::infinity(),
                                expect.data(), cap);
            for (int d = 0; d < hd; ++d)
              ASSERT_NEAR(oi[h * hd + d], expect[static_cast<size_t>(d)], 1e-5f)
                  << isa_name(isa) << " head_dim " << hd << " keys [" << first << ", " << n_keys
                  << ") sinks " << with_sinks << " soft-cap " << cap;
          }
        }
        std::vector<AttnQuery> qs;
        for (int i = 0; i < nq; ++i)
          qs.push_back({&q[static_cast<size_t>(i * qd)], &together[static_cast<size_t>(i * qd)],
                        windows[static_cast<size_t>(i)].second,
                        windows[static_cast<size_t>(i)].first});
        for (int kvh = 0; kvh < n_kv; ++kvh)
          attention_group_isa(isa, shape, kvh, qs.data(), nq, &span, 1);
        ASSERT_EQ(std::memcmp(alone.data(), together.data(), alone.size() * 4), 0)
            << isa_name(isa) << " head_dim " << hd << " sinks " << with_sinks;
      }
    }
}

// gpt-oss's clamped SwiGLU on every tier against the reference, across the clamps.
TEST(Activation, ClampedSwiGluMatchesReference) {
  for (Isa isa : test::available_isas())
    for (int64_t n : {1, 7, 8, 15, 16, 17, 100}) {
      auto gate = test::random_floats(static_cast<size_t>(n), 51);
      auto up = test::random_floats(static_cast<size_t>(n), 52);
      for (auto& x : gate) x *= 12;  // past the limit of 7 both ways
      for (auto& x : up) x *= 12;
      const GatedUnit u{GatedUnit::Kind::SwiGluClamped, 1.702f, 7.0f};
      std::vector<float> out(static_cast<size_t>(n)), expect(out.size());
      gated_unit_isa(isa, u, gate.data(), up.data(), out.data(), n);
      ref::swiglu_clamped(gate.data(), up.data(), expect.data(), n, u.alpha, u.limit);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(out[i], expect[i], 1e-5f * (1 + std::fabs(expect[i])))
            << isa_name(isa) << " n " << n << " i " << i << " gate " << gate[i] << " up " << up[i];
    }
}

// Gemma's GeGLU (GELU's tanh form) on every tier against the reference, from deep in the negative
// tail (where GELU is all but 0) to large positive gates.
TEST(Activation, GeGluTanhMatchesReference) {
  for (Isa isa : test::available_isas())
    for (int64_t n : {1, 7, 8, 15, 16, 17, 100}) {
      auto gate = test::random_floats(static_cast<size_t>(n), 53);
      auto up = test::random_floats(static_cast<size_t>(n), 54);
      for (auto& x : gate) x *= 12;
      if (n > 2) gate[0] = -40, gate[1] = 40;
      const GatedUnit u{GatedUnit::Kind::GeGluTanh};
      std::vector<float> out(static_cast<size_t>(n)), expect(out.size());
      gated_unit_isa(isa, u, gate.data(), up.data(), out.data(), n);
      ref::geglu_tanh(gate.data(), up.data(), expect.data(), n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(out[i], expect[i], 1e-5f * (1 + std::fabs(expect[i])))
            << isa_name(isa) << " n " << n << " i " << i << " gate " << gate[i];
    }
}

// Soft-capping on every tier: cap tanh(x / cap), within float rounding, saturating at +-cap.
TEST(Activation, SoftCapMatchesTanh) {
  for (Isa isa : test::available_isas())
    for (int64_t n : {1, 8, 17, 100}) {
      auto x = test::random_floats(static_cast<size_t>(n), 55);
      for (auto& v : x) v *= 200;
      if (n > 2) x[0] = 1e30f, x[1] = -1e30f;
      std::vector<float> y = x;
      soft_cap_isa(isa, y.data(), n, 30.0f);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(y[i], 30.0 * std::tanh(static_cast<double>(x[i]) / 30.0), 1e-5f * 30)
            << isa_name(isa) << " x " << x[i];
    }
}

// YaRN: pairs below the band keep their frequency, pairs above it are slowed by the factor, and
// the magnitude is llama.cpp's (1 + 0.1 ln factor, times the file's attention factor).
TEST(Rope, YarnBlendsFrequenciesAndScalesMagnitude) {
  RopeScaling s;
  s.kind = RopeScaling::Kind::Yarn;
  s.factor = 32, s.original_context = 4096;
  const auto plain = rope_inv_freq(64, 150000.0f, RopeScaling{});
  const auto yarn = rope_inv_freq(64, 150000.0f, s);
  EXPECT_FLOAT_EQ(yarn[0], plain[0]);
  EXPECT_FLOAT_EQ(yarn[31], plain[31] / 32);
  for (size_t i = 1; i < yarn.size(); ++i) {
    EXPECT_LE(yarn[i], plain[i]);
    EXPECT_GE(yarn[i], plain[i] / 32 * (1 - 1e-6f));
  }
  EXPECT_NEAR(rope_magnitude(s), 1 + 0.1 * std::log(32.0), 1e-6);
  s.attn_factor = 0.5f;
  EXPECT_NEAR(rope_magnitude(s), 0.5 * (1 + 0.1 * std::log(32.0)), 1e-6);
  EXPECT_EQ(rope_magnitude(RopeScaling{}), 1.0f);
}

}  // namespace
}  // namespace brisk
