#include "model/awq.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/progress.h"
#include "kv/kv_cache.h"
#include "model/forward.h"
#include "ops/matmul.h"
#include "quant/quant.h"

namespace brisk {
namespace {

// What the calibration pass keeps per layer and site: the mean |x| of each channel, and a sample
// of activation rows.
struct SiteStats {
  std::vector<double> abs_sum, sq_sum;
  int64_t count = 0;
  std::vector<float> sample;  // rows of dim floats
  int64_t dim = 0;
};

std::vector<float> to_f32(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.elements()));
  for (int64_t r = 0; r < t.rows(); ++r)
    dequantize_row(t.type, t.row(r), &v[r * t.cols()], t.cols());
  return v;
}

// A weight matrix being searched: its original values and its quantized type.
struct Linear {
  std::string name;
  const Tensor* t;
  std::vector<float> w;  // rows x cols, f32 (already carrying earlier folds)
  DType qtype;
  std::vector<float> msq;  // mean square of each input channel (unscaled)
};

// Output error of the group's layers quantized with input scales s, on sample activations x.
double group_error(const std::vector<Linear*>& ls, const std::vector<float>& x, int64_t n,
                   int64_t cols, const std::vector<float>& s,
                   const std::vector<std::vector<float>>& ref, ThreadPool& pool) {
  std::vector<float> xs(x.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < cols; ++c) xs[i * cols + c] = x[i * cols + c] / s[c];
  double err = 0;
  for (size_t li = 0; li < ls.size(); ++li) {
    const Linear& L = *ls[li];
    const int64_t rows = L.t->rows();
    const uint64_t rb = *dtype_row_bytes(L.qtype, static_cast<uint64_t>(cols));
    std::vector<uint8_t> q(rb * static_cast<uint64_t>(rows));
    // Rounding weighs each channel by its (scaled) activation energy, as the final quantization
    // will.
    std::vector<float> imp(static_cast<size_t>(cols));
    for (int64_t c = 0; c < cols; ++c) imp[c] = L.msq[c] / (s[c] * s[c]);
    pool.parallel_chunks(rows, 16, [&](int64_t r0, int64_t r1) {
      std::vector<float> row(static_cast<size_t>(cols));
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t c = 0; c < cols; ++c) row[c] = L.w[r * cols + c] * s[c];
        quantize_row(L.qtype, row.data(), q.data() + r * rb, cols, imp.data());
      }
    });
    Tensor qt = *L.t;
    qt.type = L.qtype;
    qt.data = q.data();
    qt.nbytes = q.size();
    std::vector<float> y(static_cast<size_t>(n * rows));
    matmul(qt, xs.data(), cols, n, y.data(), rows, pool);
    for (size_t i = 0; i < y.size(); ++i) {
      const double d = static_cast<double>(y[i]) - ref[li][i];
      err += d * d;
    }
  }
  return err;
}

// Searches α for one group; returns the chosen per-channel scales (all 1 when α = 0 wins).
std::vector<float> search(const std::string& label, const std::vector<Linear*>& ls,
                          const SiteStats& st, const std::vector<float>& mean_abs, int grid,
                          ThreadPool& pool, std::vector<AwqGroupReport>& report) {
  const int64_t cols = st.dim, n = static_cast<int64_t>(st.sample.size()) / cols;
  std::vector<std::vector<float>> ref;
  for (Linear* L : ls) {
    const int64_t rows = L->t->rows();
    Tensor ft = *L->t;
    ft.type = DType::F32;
    ft.data = L->w.data();
    ft.nbytes = L->w.size() * 4;
    ref.emplace_back(static_cast<size_t>(n * rows));
    matmul(ft, st.sample.data(), cols, n, ref.back().data(), rows, pool);
  }
  std::vector<float> best(static_cast<size_t>(cols), 1.0f), s(best.size());
  double best_err = INFINITY, plain = 0, best_alpha = 0;
  for (int g = 0; g <= grid; ++g) {
    const double alpha = static_cast<double>(g) / grid;
    float lo = INFINITY, hi = 0;
    for (int64_t c = 0; c < cols; ++c) {
      s[c] = static_cast<float>(std::pow(std::max(mean_abs[c], 1e-6f), alpha));
      lo = std::min(lo, s[c]), hi = std::max(hi, s[c]);
    }
    // Centre the scales around 1 so the weights' range stays where it was.
    const float norm = std::sqrt(lo * hi);
    for (auto& v : s) v /= norm;
    const double err = group_error(ls, st.sample, n, cols, s, ref, pool);
    if (g == 0) plain = err;
    if (err < best_err) best_err = err, best = s, best_alpha = alpha;
  }
  report.push_back({label, best_alpha, plain, best_err});
  return best;
}

std::vector<float> mean_square(const SiteStats& st) {
  std::vector<float> v(st.sq_sum.size());
  for (size_t c = 0; c < v.size(); ++c) v[c] = static_cast<float>(st.sq_sum[c] / st.count) + 1e-12f;
  return v;
}

std::vector<float> mean_abs(const SiteStats& st) {
  std::vector<float> v(st.abs_sum.size());
  for (size_t c = 0; c < v.size(); ++c) v[c] = static_cast<float>(st.abs_sum[c] / st.count);
  return v;
}

void scale_cols(Linear& L, const std::vector<float>& s) {
  const int64_t cols = L.t->cols();
  for (int64_t r = 0; r < L.t->rows(); ++r)
    for (int64_t c = 0; c < cols; ++c) L.w[r * cols + c] *= s[c];
}

void scale_rows(Linear& L, const std::vector<float>& inv) {
  const int64_t cols = L.t->cols();
  for (int64_t r = 0; r < L.t->rows(); ++r)
    for (int64_t c = 0; c < cols; ++c) L.w[r * cols + c] /= inv[r];
}

// Importance of each input channel after scaling, for the final rounding.
std::vector<float> importance(const Linear& L, const std::vector<float>& sc) {
  std::vector<float> imp(L.msq.size());
  for (size_t c = 0; c < imp.size(); ++c) imp[c] = L.msq[c] / (sc[c] * sc[c]);
  return imp;
}

// Calibration pass: statistics of every linear layer's input (per layer: q/k/v, o, gate/up,
// down), over the first n_tok calibration tokens in windows of n_ctx.
std::vector<std::array<SiteStats, 4>> calibrate(const Model& m, ThreadPool& pool,
                                                const std::vector<int32_t>& calib, int64_t n_tok,
                                                int64_t n_ctx, const AwqOptions& opt) {
  const auto& h = m.hp;
  std::vector<std::array<SiteStats, 4>> stats(static_cast<size_t>(h.n_layer));
  const int64_t stride = std::max<int64_t>(1, n_tok / opt.sample_tokens);
  int64_t seen = 0;  // tokens observed so far (for sampling)
  Forward fwd(m, pool);
  fwd.set_observer([&](int layer, Forward::Site site, const float* x, int64_t n, int64_t dim) {
    if (site == Forward::Site::Output) return;  // the classifier is quantized as it is
    SiteStats& st = stats[static_cast<size_t>(layer)][static_cast<size_t>(site)];
    if (st.abs_sum.empty()) {
      st.abs_sum.assign(static_cast<size_t>(dim), 0.0);
      st.sq_sum.assign(static_cast<size_t>(dim), 0.0);
      st.dim = dim;
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t c = 0; c < dim; ++c) {
        const double v = x[i * dim + c];
        st.abs_sum[c] += std::fabs(v);
        st.sq_sum[c] += v * v;
      }
      if ((seen + i) % stride == 0 &&
          static_cast<int64_t>(st.sample.size()) / dim < opt.sample_tokens)
        st.sample.insert(st.sample.end(), x + i * dim, x + (i + 1) * dim);
    }
    st.count += n;
  });
  ContiguousKvCache cache(static_cast<int>(h.n_layer), h.n_head_kv, h.head_dim, n_ctx);
  Batch b;
  ProgressBar bar("AWQ calibration", static_cast<double>(n_tok), opt.progress);
  for (int64_t p0 = 0; p0 < n_tok; p0 += n_ctx) {
    b.clear();
    const int64_t p1 = std::min(n_tok, p0 + n_ctx);
    for (int64_t p = p0; p < p1; ++p) b.add(calib[static_cast<size_t>(p)], p - p0, 0, false);
    b.logits.back() = 1;  // one row of logits, so the classifier runs (and is cheap)
    fwd.run(b, cache);
    seen += p1 - p0;
    bar.update(static_cast<double>(p1));
  }
  bar.finish();
  return stats;
}

// One layer's scales: each group of linears sharing an input gets the scales that minimize its
// output error, with 1/s folded into what produces that input (a norm, or the rows before).
void search_layer(const Model& m, int64_t l, const std::array<SiteStats, 4>& st,
                  const QuantTarget& target, const AwqOptions& opt, ThreadPool& pool,
                  AwqResult& res) {
  const auto& h = m.hp;
  const std::string p = "blk." + std::to_string(l) + ".";
  auto make = [&](const std::string& role) {
    Linear L;
    L.name = p + role;
    L.t = nullptr;
    for (const auto& t : m.file.tensors)
      if (t.name == L.name) L.t = &t;
    if (!L.t) fail("AWQ: tensor '{}' is missing", L.name);
    L.w = to_f32(*L.t);
    MixContext mix;
    mix.n_layer = h.n_layer;
    mix.n_gqa = h.n_head_kv > 0 ? h.n_head / h.n_head_kv : 1;
    L.qtype = choose_quant_type(target, *L.t, mix, nullptr);
    return L;
  };
  Linear q = make("attn_q.weight"), k = make("attn_k.weight"), v = make("attn_v.weight"),
         o = make("attn_output.weight"), gate = make("ffn_gate.weight"), up = make("ffn_up.weight"),
         down = make("ffn_down.weight");
  q.msq = k.msq = v.msq = mean_square(st[0]);
  o.msq = mean_square(st[1]);
  gate.msq = up.msq = mean_square(st[2]);
  down.msq = mean_square(st[3]);
  const LayerWeights& LW = m.w.layers[static_cast<size_t>(l)];

  // q/k/v: 1/s into attn_norm.
  const auto s_qkv =
      search(p + "q/k/v", {&q, &k, &v}, st[0], mean_abs(st[0]), opt.grid, pool, res.groups);
  std::vector<float> attn_norm = LW.attn_norm;
  for (size_t c = 0; c < attn_norm.size(); ++c) attn_norm[c] /= s_qkv[c];
  scale_cols(q, s_qkv), scale_cols(k, s_qkv), scale_cols(v, s_qkv);

  // o: 1/s into v's rows. With GQA a v channel feeds several heads: one scale per v channel,
  // from the mean over the heads that share it.
  const int g = h.n_head / h.n_head_kv, hd = h.head_dim;
  std::vector<float> att_mean = mean_abs(st[1]), v_mean(static_cast<size_t>(h.kv_dim()), 0.0f);
  for (int hh = 0; hh < h.n_head; ++hh)
    for (int d = 0; d < hd; ++d) v_mean[(hh / g) * hd + d] += att_mean[hh * hd + d] / g;
  for (int hh = 0; hh < h.n_head; ++hh)
    for (int d = 0; d < hd; ++d) att_mean[hh * hd + d] = v_mean[(hh / g) * hd + d];
  const auto s_o = search(p + "o", {&o}, st[1], att_mean, opt.grid, pool, res.groups);
  std::vector<float> s_v(static_cast<size_t>(h.kv_dim()));
  for (int hh = 0; hh < h.n_head; ++hh)
    for (int d = 0; d < hd; ++d) s_v[(hh / g) * hd + d] = s_o[hh * hd + d];
  scale_rows(v, s_v);
  scale_cols(o, s_o);
  if (h.qkv_bias) {
    std::vector<float> bv = LW.bv;
    for (size_t c = 0; c < bv.size(); ++c) bv[c] /= s_v[c];
    res.overrides[p + "attn_v.bias"] = bv;
  }

  // gate/up: 1/s into ffn_norm.
  const auto s_gu =
      search(p + "gate/up", {&gate, &up}, st[2], mean_abs(st[2]), opt.grid, pool, res.groups);
  std::vector<float> ffn_norm = LW.ffn_norm;
  for (size_t c = 0; c < ffn_norm.size(); ++c) ffn_norm[c] /= s_gu[c];
  scale_cols(gate, s_gu), scale_cols(up, s_gu);

  // down: 1/s into up's rows (silu(gate) * up is linear in up).
  const auto s_d = search(p + "down", {&down}, st[3], mean_abs(st[3]), opt.grid, pool, res.groups);
  scale_rows(up, s_d);
  scale_cols(down, s_d);

  res.overrides[p + "attn_norm.weight"] = std::move(attn_norm);
  res.overrides[p + "ffn_norm.weight"] = std::move(ffn_norm);
  res.importance[q.name] = res.importance[k.name] = res.importance[v.name] = importance(q, s_qkv);
  res.importance[o.name] = importance(o, s_o);
  res.importance[gate.name] = res.importance[up.name] = importance(gate, s_gu);
  res.importance[down.name] = importance(down, s_d);
  for (Linear* L : {&q, &k, &v, &o, &gate, &up, &down}) res.overrides[L->name] = std::move(L->w);
}

}  // namespace

AwqResult awq_search(const Model& m, ThreadPool& pool, const std::vector<int32_t>& calib,
                     const QuantTarget& target, const AwqOptions& opt) {
  if (!dtype_is_quantized(target.base))
    fail("AWQ needs a quantized target type (got {})", target.name);
  const auto& h = m.hp;
  const int64_t n_ctx = std::min<int64_t>(opt.n_ctx, h.n_ctx_train > 0 ? h.n_ctx_train : opt.n_ctx);
  const int64_t n_tok = std::min<int64_t>(static_cast<int64_t>(calib.size()), opt.max_tokens);
  if (m.hp.has_experts())
    fail("AWQ does not handle mixture-of-experts models (architecture '{}')", m.hp.arch);
  if (n_tok < 16) fail("AWQ calibration text is too short ({} tokens)", calib.size());
  const auto stats = calibrate(m, pool, calib, n_tok, n_ctx, opt);
  AwqResult res;
  ProgressBar bar("AWQ search", static_cast<double>(h.n_layer), opt.progress);
  for (int64_t l = 0; l < h.n_layer; ++l) {
    search_layer(m, l, stats[static_cast<size_t>(l)], target, opt, pool, res);
    bar.update(static_cast<double>(l + 1));
  }
  bar.finish();
  return res;
}

}  // namespace brisk
