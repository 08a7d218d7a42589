// Quantizers for the grid i-quants and the ternary types.
//
// A grid type rounds groups of values to grid points under a shared scale. For a trial scale each
// group's target (values / scale) is rounded coordinate by coordinate to the grid's levels; that
// lattice point's few nearest grid points (precomputed once per grid) are scored with the actual
// weighted error, and the best kept. The scale is then refitted by least squares for the points
// chosen. Over a range of trial scales the pair with the least error wins; the super-block scale
// is set from the groups' scales, which are stored in a few bits, and every group is rounded once
// more under the scale it will actually be read with.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "quant/quant_iq.h"

namespace brisk {
namespace {

// A grid of `dim`-value points whose coordinates take `levels` (sorted).
class GridSearch {
 public:
  GridSearch(const void* points, int n_points, int dim, int point_bytes, bool signed_bytes)
      : dim_(dim), n_(n_points) {
    const auto* p = static_cast<const uint8_t*>(points);
    coords_.resize(static_cast<size_t>(n_points * dim));
    for (int i = 0; i < n_points; ++i)
      for (int j = 0; j < dim; ++j) {
        const uint8_t byte = p[static_cast<size_t>(i) * point_bytes + j];
        const float v = signed_bytes ? static_cast<float>(static_cast<int8_t>(byte)) : byte;
        coords_[static_cast<size_t>(i * dim + j)] = v;
        if (std::find(levels_.begin(), levels_.end(), v) == levels_.end()) levels_.push_back(v);
      }
    std::sort(levels_.begin(), levels_.end());
    build_neighbours();
  }

  const float* point(int i) const { return &coords_[static_cast<size_t>(i * dim_)]; }
  int dim() const { return dim_; }
  float top() const { return levels_.back(); }

  // The grid point with the least sum of w * (t - point)^2 among those near t.
  int nearest(const float* t, const float* w) const {
    const int k = key(t);
    int best = 0;
    float best_err = INFINITY;
    for (uint32_t c = start_[static_cast<size_t>(k)]; c < start_[static_cast<size_t>(k) + 1]; ++c) {
      const int i = cand_[c];
      const float* g = point(i);
      float err = 0;
      for (int j = 0; j < dim_; ++j) err += w[j] * (t[j] - g[j]) * (t[j] - g[j]);
      if (err < best_err) best_err = err, best = i;
    }
    return best;
  }

 private:
  static constexpr int kNeighbours = 12;

  int level_index(float v) const {
    int best = 0;
    for (size_t l = 1; l < levels_.size(); ++l)
      if (std::fabs(v - levels_[l]) < std::fabs(v - levels_[static_cast<size_t>(best)]))
        best = static_cast<int>(l);
    return best;
  }
  int key(const float* t) const {
    int k = 0;
    for (int j = 0; j < dim_; ++j) k = k * static_cast<int>(levels_.size()) + level_index(t[j]);
    return k;
  }
  // For every lattice point, the grid points nearest it (the point itself first when on the grid).
  void build_neighbours() {
    const int nl = static_cast<int>(levels_.size());
    int n_keys = 1;
    for (int j = 0; j < dim_; ++j) n_keys *= nl;
    start_.assign(static_cast<size_t>(n_keys) + 1, 0);
    std::vector<std::pair<float, int>> d(static_cast<size_t>(n_));
    std::vector<float> v(static_cast<size_t>(dim_));
    for (int k = 0; k < n_keys; ++k) {
      for (int j = dim_ - 1, r = k; j >= 0; --j, r /= nl)
        v[static_cast<size_t>(j)] = levels_[static_cast<size_t>(r % nl)];
      for (int i = 0; i < n_; ++i) {
        float s = 0;
        for (int j = 0; j < dim_; ++j)
          s +=
              (v[static_cast<size_t>(j)] - point(i)[j]) * (v[static_cast<size_t>(j)] - point(i)[j]);
        d[static_cast<size_t>(i)] = {s, i};
      }
      std::partial_sort(d.begin(), d.begin() + kNeighbours, d.end());
      for (int c = 0; c < kNeighbours; ++c)
        cand_.push_back(static_cast<uint16_t>(d[static_cast<size_t>(c)].second));
      start_[static_cast<size_t>(k) + 1] = static_cast<uint32_t>(cand_.size());
    }
  }

  int dim_, n_;
  std::vector<float> coords_, levels_;
  std::vector<uint32_t> start_;
  std::vector<uint16_t> cand_;
};

const GridSearch& grid_iq2xxs() {
  static const GridSearch g(kIQ2XXSGrid, 256, 8, 8, false);
  return g;
}
const GridSearch& grid_iq2xs() {
  static const GridSearch g(kIQ2XSGrid, 512, 8, 8, false);
  return g;
}
const GridSearch& grid_iq2s() {
  static const GridSearch g(kIQ2SGrid, 1024, 8, 8, false);
  return g;
}
const GridSearch& grid_iq3xxs() {
  static const GridSearch g(kIQ3XXSGrid, 256, 4, 4, false);
  return g;
}
const GridSearch& grid_iq3s() {
  static const GridSearch g(kIQ3SGrid, 512, 4, 4, false);
  return g;
}
const GridSearch& grid_iq1s() {
  static const GridSearch g(kIQ1SGrid, 2048, 8, 8, true);
  return g;
}

// The error weights of a super-block: the importance (or 1) times a term that grows with the
// value's magnitude, as llama.cpp weighs its i-quants, so large weights are kept more exactly.
void block_weights(const float* x, const float* imp, float* w) {
  float sumx2 = 0;
  for (int i = 0; i < 256; ++i) sumx2 += x[i] * x[i];
  const float sigma2 = sumx2 / 256;
  for (int i = 0; i < 256; ++i) w[i] = (imp ? imp[i] : 1.0f) * std::sqrt(sigma2 + x[i] * x[i]);
}

// ---------------------------------------------------------------------------------------------
// Sign + magnitude grids (IQ2, IQ3): a group of `n` values under one scale, rounded as `n / dim`
// grid points; signs are the values' own, except that where the type keeps an even count of minus
// signs per 8 values the least important value of an odd 8 takes the other sign.

struct MagnitudeGroup {
  int n;  // values under one scale (16 or 32)
  const GridSearch* grid;
  bool even_signs;
};

struct GroupResult {
  float scale = 0;
  int idx[8] = {};        // grid points, n / dim of them
  uint8_t signs[4] = {};  // per 8 values, bit j = value j negative
  double err = 0;
};

// The targets' magnitudes (negative where the stored sign disagrees with the value's) and signs.
void magnitudes(const MagnitudeGroup& G, const float* x, const float* w, float* a, uint8_t* signs) {
  for (int o = 0; o < G.n; o += 8) {
    uint8_t s = 0;
    for (int j = 0; j < 8; ++j) {
      a[o + j] = std::fabs(x[o + j]);
      if (x[o + j] < 0) s = static_cast<uint8_t>(s | 1 << j);
    }
    if (G.even_signs && __builtin_popcount(s) % 2 == 1) {
      int least = 0;
      for (int j = 1; j < 8; ++j)
        if (w[o + j] * x[o + j] * x[o + j] < w[o + least] * x[o + least] * x[o + least]) least = j;
      s = static_cast<uint8_t>(s ^ 1 << least);
      a[o + least] = -a[o + least];
    }
    signs[o / 8] = s;
  }
}

// Rounds the group under `scale` and returns the weighted error; refits the scale if asked.
double round_group(const MagnitudeGroup& G, const float* a, const float* w, float& scale, int* idx,
                   bool refit) {
  const int dim = G.grid->dim();
  float t[8];
  double sag = 0, sgg = 0;
  for (int o = 0, p = 0; o < G.n; o += dim, ++p) {
    for (int j = 0; j < dim; ++j) t[j] = scale > 0 ? a[o + j] / scale : 0;
    idx[p] = G.grid->nearest(t, w + o);
    const float* g = G.grid->point(idx[p]);
    for (int j = 0; j < dim; ++j) sag += w[o + j] * a[o + j] * g[j], sgg += w[o + j] * g[j] * g[j];
  }
  if (refit && sgg > 0) scale = static_cast<float>(std::max(0.0, sag / sgg));
  double err = 0;
  for (int o = 0, p = 0; o < G.n; o += dim, ++p) {
    const float* g = G.grid->point(idx[p]);
    for (int j = 0; j < dim; ++j) {
      const float e = a[o + j] - scale * g[j];
      err += w[o + j] * e * e;
    }
  }
  return err;
}

GroupResult fit_magnitude_group(const MagnitudeGroup& G, const float* x, const float* w) {
  GroupResult r;
  float a[32];
  magnitudes(G, x, w, a, r.signs);
  float amax = 0;
  for (int i = 0; i < G.n; ++i) amax = std::max(amax, std::fabs(a[i]));
  if (amax == 0) return r;
  r.err = INFINITY;
  for (int k = 0; k <= 20; ++k) {
    float s = amax / (G.grid->top() * (0.7f + 0.025f * static_cast<float>(k)));
    int idx[8];
    const double err = round_group(G, a, w, s, idx, true);
    if (err < r.err) {
      r.err = err, r.scale = s;
      std::copy(idx, idx + 8, r.idx);
    }
  }
  return r;
}

// Rounds the group once more under its stored scale.
void reround(const MagnitudeGroup& G, const float* x, const float* w, float scale, GroupResult& r) {
  float a[32];
  magnitudes(G, x, w, a, r.signs);
  r.scale = scale;
  r.err = round_group(G, a, w, r.scale, r.idx, false);
}

// Chooses the super-block scale d for group scales stored as codes 0..max_code read back as
// scale_of(d, code): tries a few d around the one that fits the largest group scale, rounds every
// group again under each (reround(g, scale, group) rounds group g and returns its error), and keeps
// the least total error. Shared by the grid types' groups and IQ1's.
template <class Group, class ScaleOf, class Reround>
float choose_super_scale(Group* groups, int n_groups, int max_code, ScaleOf scale_of,
                         Reround reround, int* codes) {
  // The fitted scales, kept apart: a better trial overwrites groups[] with stored scales.
  std::vector<float> fitted(static_cast<size_t>(n_groups));
  for (int g = 0; g < n_groups; ++g) fitted[static_cast<size_t>(g)] = groups[g].scale;
  const float smax = *std::max_element(fitted.begin(), fitted.end());
  if (smax <= 0) {
    std::fill(codes, codes + n_groups, 0);
    return 0;
  }
  const float d0 = smax / scale_of(1.0f, max_code);
  float best_d = d0;
  double best_err = INFINITY;
  std::vector<Group> trial(groups, groups + n_groups);
  std::vector<int> trial_codes(static_cast<size_t>(n_groups));
  for (int k = -3; k <= 3; ++k) {
    const float d = f16_to_f32(f32_to_f16(d0 * (1.0f + 0.04f * static_cast<float>(k))));
    double total = 0;
    for (int g = 0; g < n_groups; ++g) {
      // The code whose scale is nearest the group's fitted one.
      const float want = fitted[static_cast<size_t>(g)];
      int code = 0;
      for (int c = 1; c <= max_code; ++c)
        if (std::fabs(scale_of(d, c) - want) < std::fabs(scale_of(d, code) - want)) code = c;
      trial_codes[static_cast<size_t>(g)] = code;
      total += reround(g, scale_of(d, code), trial[static_cast<size_t>(g)]);
    }
    if (total < best_err) {
      best_err = total, best_d = d;
      std::copy(trial_codes.begin(), trial_codes.end(), codes);
      std::copy(trial.begin(), trial.end(), groups);
    }
  }
  return best_d;
}

// Fits all groups of a super-block and its scale; groups[] and codes[] get the result.
template <class ScaleOf>
float fit_magnitude_block(const MagnitudeGroup& G, const float* x, const float* imp,
                          GroupResult* groups, int max_code, ScaleOf scale_of, int* codes) {
  float w[256];
  block_weights(x, imp, w);
  const int n_groups = 256 / G.n;
  for (int g = 0; g < n_groups; ++g) groups[g] = fit_magnitude_group(G, x + g * G.n, w + g * G.n);
  auto again = [&](int g, float scale, GroupResult& r) {
    reround(G, x + g * G.n, w + g * G.n, scale, r);
    return r.err;
  };
  return choose_super_scale(groups, n_groups, max_code, scale_of, again, codes);
}

}  // namespace

void quantize_iq2_xxs(const float* x, BlockIQ2_XXS* b, const float* imp) {
  const MagnitudeGroup G{32, &grid_iq2xxs(), true};
  GroupResult groups[8];
  int codes[8];
  const float d = fit_magnitude_block(G, x, imp, groups, 15, iq2_scale, codes);
  b->d = f32_to_f16(d);
  for (int ib = 0; ib < 8; ++ib) {
    uint32_t idx = 0, aux = static_cast<uint32_t>(codes[ib]) << 28;
    for (int l = 0; l < 4; ++l) {
      idx |= static_cast<uint32_t>(groups[ib].idx[l]) << (8 * l);
      aux |= static_cast<uint32_t>(groups[ib].signs[l] & 127) << (7 * l);
    }
    std::memcpy(b->qs + 4 * ib, &idx, 4);
    std::memcpy(b->qs + 4 * ib + 2, &aux, 4);
  }
}

void quantize_iq2_xs(const float* x, BlockIQ2_XS* b, const float* imp) {
  const MagnitudeGroup G{16, &grid_iq2xs(), true};
  GroupResult groups[16];
  int codes[16];
  const float d = fit_magnitude_block(G, x, imp, groups, 15, iq2_scale, codes);
  b->d = f32_to_f16(d);
  for (int g = 0; g < 16; ++g)
    for (int l = 0; l < 2; ++l)
      b->qs[2 * g + l] = static_cast<uint16_t>(groups[g].idx[l] | (groups[g].signs[l] & 127) << 9);
  for (int ib = 0; ib < 8; ++ib)
    b->scales[ib] = static_cast<uint8_t>(codes[2 * ib] | codes[2 * ib + 1] << 4);
}

void quantize_iq2_s(const float* x, BlockIQ2_S* b, const float* imp) {
  const MagnitudeGroup G{16, &grid_iq2s(), false};
  GroupResult groups[16];
  int codes[16];
  const float d = fit_magnitude_block(G, x, imp, groups, 15, iq2_scale, codes);
  b->d = f32_to_f16(d);
  std::fill(std::begin(b->qh), std::end(b->qh), 0);
  for (int g = 0; g < 16; ++g)
    for (int l = 0; l < 2; ++l) {
      const int k = 2 * g + l, ib = k / 4;  // grid point k of the super-block
      b->qs[k] = static_cast<uint8_t>(groups[g].idx[l] & 255);
      b->qh[ib] = static_cast<uint8_t>(b->qh[ib] | (groups[g].idx[l] >> 8) << (2 * (k % 4)));
      b->qs[32 + k] = groups[g].signs[l];
    }
  for (int ib = 0; ib < 8; ++ib)
    b->scales[ib] = static_cast<uint8_t>(codes[2 * ib] | codes[2 * ib + 1] << 4);
}

void quantize_iq3_xxs(const float* x, BlockIQ3_XXS* b, const float* imp) {
  const MagnitudeGroup G{32, &grid_iq3xxs(), true};
  GroupResult groups[8];
  int codes[8];
  const float d = fit_magnitude_block(
      G, x, imp, groups, 15,
      [](float dd, int c) { return dd * (0.5f + static_cast<float>(c)) * 0.5f; }, codes);
  b->d = f32_to_f16(d);
  for (int ib = 0; ib < 8; ++ib) {
    uint32_t aux = static_cast<uint32_t>(codes[ib]) << 28;
    for (int l = 0; l < 4; ++l) aux |= static_cast<uint32_t>(groups[ib].signs[l] & 127) << (7 * l);
    for (int k = 0; k < 8; ++k) b->qs[8 * ib + k] = static_cast<uint8_t>(groups[ib].idx[k]);
    std::memcpy(b->qs + 64 + 4 * ib, &aux, 4);
  }
}

void quantize_iq3_s(const float* x, BlockIQ3_S* b, const float* imp) {
  const MagnitudeGroup G{32, &grid_iq3s(), false};
  GroupResult groups[8];
  int codes[8];
  const float d = fit_magnitude_block(
      G, x, imp, groups, 15, [](float dd, int c) { return dd * static_cast<float>(1 + 2 * c); },
      codes);
  b->d = f32_to_f16(d);
  std::fill(std::begin(b->qh), std::end(b->qh), 0);
  std::fill(std::begin(b->scales), std::end(b->scales), 0);
  for (int ib = 0; ib < 8; ++ib) {
    for (int k = 0; k < 8; ++k) {
      b->qs[8 * ib + k] = static_cast<uint8_t>(groups[ib].idx[k] & 255);
      b->qh[ib] = static_cast<uint8_t>(b->qh[ib] | (groups[ib].idx[k] >> 8) << k);
    }
    for (int l = 0; l < 4; ++l) b->signs[4 * ib + l] = groups[ib].signs[l];
    b->scales[ib / 2] = static_cast<uint8_t>(b->scales[ib / 2] | codes[ib] << (4 * (ib % 2)));
  }
}

// ---------------------------------------------------------------------------------------------
// IQ1: grid points of -1, 0, +1 shifted by +-1/8 under a scale (2k + 1) * d, k of 3 bits. IQ1_S
// has one scale and one shift per 32 values; IQ1_M a scale per 16 and a shift per 8.

namespace {

struct Iq1Group {
  float scale = 0;
  int idx[4] = {};
  bool minus[4] = {};  // per 8 values: the shift is -1/8
  double err = 0;
};

// Rounds values x (n of them, 8 per point) under `scale`; the shift per `shift_n` values is
// chosen freely (shift_n = n: one for all). Refits the scale if asked.
double round_iq1(const float* x, const float* w, int n, int shift_n, float& scale, Iq1Group& r,
                 bool refit) {
  const GridSearch& grid = grid_iq1s();
  double sxg = 0, sgg = 0, err = 0;
  for (int o = 0; o < n; o += shift_n) {
    double best = INFINITY;
    int best_idx[4] = {};
    bool best_minus = false;
    for (bool minus : {false, true}) {
      const float delta = minus ? -0.125f : 0.125f;
      double e = 0;
      int idx[4];
      for (int p = 0; p < shift_n / 8; ++p) {
        float t[8];
        for (int j = 0; j < 8; ++j) t[j] = scale > 0 ? x[o + 8 * p + j] / scale - delta : 0;
        idx[p] = grid.nearest(t, w + o + 8 * p);
        const float* g = grid.point(idx[p]);
        for (int j = 0; j < 8; ++j) {
          const float d = x[o + 8 * p + j] - scale * (g[j] + delta);
          e += w[o + 8 * p + j] * d * d;
        }
      }
      if (e < best) best = e, best_minus = minus, std::copy(idx, idx + shift_n / 8, best_idx);
    }
    for (int p = 0; p < shift_n / 8; ++p) {
      const int k = o / 8 + p;
      r.idx[k] = best_idx[p], r.minus[k] = best_minus;
      const float* g = grid.point(best_idx[p]);
      const float delta = best_minus ? -0.125f : 0.125f;
      for (int j = 0; j < 8; ++j) {
        const float v = g[j] + delta;
        sxg += w[o + 8 * p + j] * x[o + 8 * p + j] * v, sgg += w[o + 8 * p + j] * v * v;
      }
    }
    err += best;
  }
  if (refit && sgg > 0) {
    scale = static_cast<float>(std::max(0.0, sxg / sgg));
    err = 0;
    for (int k = 0; k < n / 8; ++k) {
      const float* g = grid.point(r.idx[k]);
      for (int j = 0; j < 8; ++j) {
        const float d = x[8 * k + j] - scale * (g[j] + (r.minus[k] ? -0.125f : 0.125f));
        err += w[8 * k + j] * d * d;
      }
    }
  }
  return err;
}

Iq1Group fit_iq1_group(const float* x, const float* w, int n, int shift_n) {
  Iq1Group r;
  float amax = 0;
  for (int i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  if (amax == 0) return r;
  r.err = INFINITY;
  for (int k = 0; k <= 20; ++k) {
    float s = amax / (0.6f + 0.05f * static_cast<float>(k));
    Iq1Group t;
    const double err = round_iq1(x, w, n, shift_n, s, t, true);
    if (err < r.err) r = t, r.err = err, r.scale = s;
  }
  return r;
}

// The IQ1 groups' super-block scale: group scales (2 code + 1) * d, code 0..7.
float iq1_super_scale(const float* x, const float* w, int n, int shift_n, Iq1Group* groups,
                      int* codes) {
  auto scale_of = [](float d, int code) { return d * static_cast<float>(2 * code + 1); };
  auto again = [&](int g, float scale, Iq1Group& r) {
    return round_iq1(x + g * n, w + g * n, n, shift_n, scale, r, false);
  };
  return choose_super_scale(groups, 256 / n, 7, scale_of, again, codes);
}

}  // namespace

void quantize_iq1_s(const float* x, BlockIQ1_S* b, const float* imp) {
  float w[256];
  block_weights(x, imp, w);
  Iq1Group groups[8];
  for (int ib = 0; ib < 8; ++ib) groups[ib] = fit_iq1_group(x + 32 * ib, w + 32 * ib, 32, 32);
  int codes[8];
  const float d = iq1_super_scale(x, w, 32, 32, groups, codes);
  b->d = f32_to_f16(d);
  for (int ib = 0; ib < 8; ++ib) {
    uint32_t qh = static_cast<uint32_t>(codes[ib]) << 12 | (groups[ib].minus[0] ? 0x8000u : 0u);
    for (int l = 0; l < 4; ++l) {
      b->qs[4 * ib + l] = static_cast<uint8_t>(groups[ib].idx[l] & 255);
      qh |= static_cast<uint32_t>(groups[ib].idx[l] >> 8) << (3 * l);
    }
    b->qh[ib] = static_cast<uint16_t>(qh);
  }
}

void quantize_iq1_m(const float* x, BlockIQ1_M* b, const float* imp) {
  float w[256];
  block_weights(x, imp, w);
  Iq1Group groups[16];
  for (int g = 0; g < 16; ++g) groups[g] = fit_iq1_group(x + 16 * g, w + 16 * g, 16, 8);
  int codes[16];
  const float d = iq1_super_scale(x, w, 16, 8, groups, codes);
  uint16_t sc[4] = {};
  std::fill(std::begin(b->qh), std::end(b->qh), 0);
  for (int g = 0; g < 16; ++g) {
    const int ib = g / 2, h = g % 2;
    sc[ib / 2] = static_cast<uint16_t>(sc[ib / 2] | codes[g] << (6 * (ib % 2) + 3 * h));
    for (int p = 0; p < 2; ++p) {
      const int l = 2 * h + p;  // point l of group ib
      b->qs[4 * ib + l] = static_cast<uint8_t>(groups[g].idx[p] & 255);
      const int nib = (groups[g].idx[p] >> 8) | (groups[g].minus[p] ? 8 : 0);
      b->qh[2 * ib + l / 2] = static_cast<uint8_t>(b->qh[2 * ib + l / 2] | nib << (4 * (l % 2)));
    }
  }
  const uint16_t h = f32_to_f16(d);
  for (int k = 0; k < 4; ++k) sc[k] = static_cast<uint16_t>(sc[k] | ((h >> (4 * k)) & 0xF) << 12);
  std::memcpy(b->scales, sc, 8);
}

// ---------------------------------------------------------------------------------------------
// Ternary: the scale is the largest magnitude and each value rounds to -1, 0 or +1 of it, as
// ternary-trained models store their weights.

namespace {

float ternary(const float* x, int8_t* q) {
  float amax = 0;
  for (int i = 0; i < 256; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float id = amax > 0 ? 1.0f / amax : 0.0f;
  for (int i = 0; i < 256; ++i)
    q[i] = static_cast<int8_t>(std::clamp(static_cast<int>(std::lrintf(x[i] * id)), -1, 1));
  return amax;
}

// Base-3 digits (most significant first, `n` of them, padded with zeros to 5) to a byte whose
// digit k is read back as ((byte * 3^k) mod 256 * 3) >> 8.
uint8_t pack_trits(const int8_t* digits, int n, int stride) {
  int v = 0;
  for (int k = 0; k < 5; ++k) v = v * 3 + (k < n ? digits[k * stride] + 1 : 0);
  return static_cast<uint8_t>((v * 256 + 242) / 243);
}

}  // namespace

void quantize_tq1_0(const float* x, BlockTQ1_0* b, const float* /*imp*/) {
  int8_t q[256];
  b->d = f32_to_f16(ternary(x, q));
  for (int m = 0; m < 32; ++m) b->qs[m] = pack_trits(q + m, 5, 32);
  for (int m = 0; m < 16; ++m) b->qs[32 + m] = pack_trits(q + 160 + m, 5, 16);
  for (int m = 0; m < 4; ++m) b->qh[m] = pack_trits(q + 240 + m, 4, 4);
}

void quantize_tq2_0(const float* x, BlockTQ2_0* b, const float* /*imp*/) {
  int8_t q[256];
  b->d = f32_to_f16(ternary(x, q));
  std::fill(std::begin(b->qs), std::end(b->qs), 0);
  for (int e = 0; e < 256; ++e) {
    const int ib = e / 32, j = e % 32;
    b->qs[32 * (ib / 4) + j] |= static_cast<uint8_t>((q[e] + 1) << (2 * (ib % 4)));
  }
}

}  // namespace brisk
