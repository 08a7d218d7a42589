// The mixture-of-experts router against a plain reading of llama.cpp's gating: the experts it picks
// and their weights, for each gating, with and without renormalising and scaling; ties and NaN
// scores (a broken file) keep a strict, deterministic order.
#include "ops/moe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace brisk {
namespace {

// Softmax in double, a full sort of the ids, the first n_used taken.
void naive_route(const ExpertRouting& r, const std::vector<float>& s, std::vector<int32_t>& chosen,
                 std::vector<double>& w) {
  std::vector<double> p(s.begin(), s.end());
  auto softmax = [](std::vector<double>& v) {
    const double mx = *std::max_element(v.begin(), v.end());
    double sum = 0;
    for (double& x : v) sum += (x = std::exp(x - mx));
    for (double& x : v) x /= sum;
  };
  if (r.gating == ExpertGating::Softmax) softmax(p);
  std::vector<int32_t> ids(s.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return p[a] > p[b]; });
  chosen.assign(ids.begin(), ids.begin() + r.n_used);
  w.clear();
  for (int32_t e : chosen) w.push_back(p[e]);
  if (r.gating == ExpertGating::SoftmaxChosen) softmax(w);
  if (r.normalize) {
    const double sum = std::accumulate(w.begin(), w.end(), 0.0);
    for (double& x : w) x /= sum;
  }
  for (double& x : w) x *= r.scale;
}

TEST(ExpertRouter, PicksAndWeighsAsThePlainReading) {
  std::mt19937 rng(3);
  std::normal_distribution<float> score(0.0f, 2.0f);
  for (int n = 0; n < 400; ++n) {
    ExpertRouting r;
    r.n_expert = 2 + static_cast<int>(rng() % 130);
    r.n_used = 1 + static_cast<int>(rng() % std::min(r.n_expert, 8));
    r.gating = rng() % 2 ? ExpertGating::Softmax : ExpertGating::SoftmaxChosen;
    r.normalize = rng() % 2 == 0;
    r.scale = rng() % 3 == 0 ? 2.5f : 1.0f;
    std::vector<float> s(static_cast<size_t>(r.n_expert));
    for (float& x : s) x = score(rng);
    std::vector<int32_t> chosen(static_cast<size_t>(r.n_used)), want;
    std::vector<float> w(static_cast<size_t>(r.n_used));
    std::vector<double> want_w;
    route_experts(r, s.data(), chosen.data(), w.data());
    naive_route(r, s, want, want_w);
    ASSERT_EQ(chosen, want) << "case " << n;
    for (int j = 0; j < r.n_used; ++j) ASSERT_NEAR(w[j], want_w[j], 1e-6 * (1 + want_w[j]));
  }
}

TEST(ExpertRouter, EqualScoresGoToTheLowerIdAndNaNGoesLast) {
  ExpertRouting r;
  r.n_expert = 6, r.n_used = 4;
  const std::vector<float> s = {NAN, 1.0f, 3.0f, 1.0f, NAN, 3.0f};
  std::vector<int32_t> chosen(4);
  std::vector<float> w(4);
  r.gating = ExpertGating::SoftmaxChosen;
  route_experts(r, s.data(), chosen.data(), w.data());
  EXPECT_EQ(chosen, (std::vector<int32_t>{2, 5, 1, 3}));
  EXPECT_FLOAT_EQ(w[0], w[1]);
  EXPECT_FLOAT_EQ(w[2], w[3]);
}

TEST(ExpertRouter, RenormalisedWeightsSumToOne) {
  ExpertRouting r;
  r.n_expert = 64, r.n_used = 8, r.normalize = true;
  std::vector<float> s(64);
  for (int i = 0; i < 64; ++i) s[i] = std::sin(static_cast<float>(i)) * 4;
  std::vector<int32_t> chosen(8);
  std::vector<float> w(8);
  route_experts(r, s.data(), chosen.data(), w.data());
  EXPECT_NEAR(std::accumulate(w.begin(), w.end(), 0.0f), 1.0f, 1e-6f);
  EXPECT_TRUE(std::is_sorted(w.rbegin(), w.rend()));
}

}  // namespace
}  // namespace brisk
