// Micro-benchmarks of the matmul kernels on TinyLlama-sized matrices: decode (one token,
// memory-bound) reports bytes/s, prefill (many tokens, compute-bound) reports FLOP/s. Compare with
// the machine's bandwidth and peaks from `brisk bench`. Also attention over a TinyLlama-shaped KV
// cache: a causal prompt (FLOP/s) and one decode token (bytes of K/V read per second).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/dtype.h"
#include "engine/sampler.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/matmul.h"
#include "ops/repack.h"

namespace brisk {
namespace {

struct Mat {
  Tensor t;
  std::vector<uint8_t> data;
};
// Offset of the matrix data from a 64-byte boundary (GGUF aligns tensors to 32 bytes only).
int64_t g_misalign = 0;

Mat make(DType type, int64_t rows, int64_t cols) {
  Mat m;
  m.data.resize(*dtype_row_bytes(type, static_cast<uint64_t>(cols)) * static_cast<size_t>(rows) +
                128);
  for (size_t i = 0; i < m.data.size(); ++i)
    m.data[i] = static_cast<uint8_t>((i * 2654435761u) >> 24) & 0x3b;
  // Float weights get real values in [-1, 1): bytes like the above would make denormals, which
  // cost microcode assists on some CPUs and so time something no model file holds.
  auto value = [](size_t i) {
    return static_cast<float>(static_cast<int>((i * 2654435761u) >> 16 & 0xffff) - 32768) / 32768;
  };
  if (type == DType::F32)
    for (size_t i = 0; i + 4 <= m.data.size(); i += 4) {
      const float v = value(i / 4);
      std::memcpy(&m.data[i], &v, 4);
    }
  if (type == DType::F16 || type == DType::BF16)
    for (size_t i = 0; i + 2 <= m.data.size(); i += 2) {
      const uint16_t v = type == DType::F16 ? f32_to_f16(value(i / 2)) : f32_to_bf16(value(i / 2));
      std::memcpy(&m.data[i], &v, 2);
    }
  m.t.type = type;
  m.t.n_dims = 2;
  m.t.ne = {cols, rows, 1, 1};
  const uintptr_t base = reinterpret_cast<uintptr_t>(m.data.data());
  m.t.data = m.data.data() + ((64 - base % 64) % 64) + g_misalign;
  m.t.nbytes = m.data.size() - 128;
  return m;
}

// The same matrix with its rows interleaved as the loader does for the int8 kernels (ops/repack.h).
Mat interleaved(const Mat& src) {
  Mat m = src;
  const uint64_t rb = src.t.row_bytes();
  const auto* from = static_cast<const uint8_t*>(src.t.data);
  uint8_t* dst = m.data.data() + (from - src.data.data());
  for (int64_t g = 0; g < src.t.rows() / kInterleave; ++g)
    repack_group(src.t.type, from + g * kInterleave * rb, rb, dst + g * kInterleave * rb,
                 src.t.cols());
  m.t.data = dst;
  m.t.interleaved = true;
  return m;
}

void BM_Matmul(benchmark::State& st, DType type, Isa isa, bool interleave = false) {
  const int64_t rows = st.range(0), cols = st.range(1), n = st.range(2), threads = st.range(3);
  if (!isa_available(isa)) {
    st.SkipWithError("ISA not available");
    return;
  }
  // Several matrices so decode (a few tokens) streams from memory, not cache.
  std::vector<Mat> ms;
  const int copies = n <= 4 && rows > 128 ? 8 : 1;
  for (int i = 0; i < copies; ++i)
    ms.push_back(interleave ? interleaved(make(type, rows, cols)) : make(type, rows, cols));
  std::vector<float> x(static_cast<size_t>(n * cols), 0.01f), y(static_cast<size_t>(n * rows));
  ThreadPool pool(static_cast<int>(threads));
  int i = 0;
  for (auto _ : st) {
    matmul_isa(isa, ms[i].t, x.data(), cols, n, y.data(), rows, pool);
    i = (i + 1) % copies;
    benchmark::ClobberMemory();
  }
  st.counters["bytes/s"] = benchmark::Counter(static_cast<double>(ms[0].t.nbytes),
                                              benchmark::Counter::kIsIterationInvariantRate);
  st.counters["FLOP/s"] =
      benchmark::Counter(2.0 * rows * cols * n, benchmark::Counter::kIsIterationInvariantRate);
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2}) {
    b->Args({5632, 2048, 1, threads});    // decode, ffn_up
    b->Args({2048, 5632, 1, threads});    // decode, ffn_down
    b->Args({2048, 2048, 1, threads});    // decode, attn_q
    b->Args({128, 2048, 1, threads});     // decode from cache: the kernel's compute speed
    b->Args({5632, 2048, 4, threads});    // 4 sequences decoding, or a verification pass
    b->Args({5632, 2048, 128, threads});  // prefill chunk
    b->Args({5632, 2048, 512, threads});  // a 512-token prompt: ffn_up
    b->Args({2048, 5632, 512, threads});  // a 512-token prompt: ffn_down
  }
  b->UseRealTime();
}

BENCHMARK_CAPTURE(BM_Matmul, f32_avx512, DType::F32, Isa::Avx512)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, f16_avx512, DType::F16, Isa::Avx512)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, bf16_avx512bf16, DType::BF16, Isa::Avx512Bf16)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, bf16_avx512, DType::BF16, Isa::Avx512)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, f16_avx2, DType::F16, Isa::Avx2)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q8_0_avx512, DType::Q8_0, Isa::Avx512)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q4_0_avx512, DType::Q4_0, Isa::Avx512)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q8_0_interleaved_avx512, DType::Q8_0, Isa::Avx512, true)
    ->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q4_0_interleaved_avx512, DType::Q4_0, Isa::Avx512, true)
    ->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q4_k_avx512, DType::Q4_K, Isa::Avx512)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q6_k_avx512, DType::Q6_K, Isa::Avx512)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, f16_interleaved_avx512, DType::F16, Isa::Avx512, true)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, bf16_interleaved_avx512bf16, DType::BF16, Isa::Avx512Bf16, true)
    ->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q4_k_interleaved_avx512, DType::Q4_K, Isa::Avx512, true)
    ->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q6_k_interleaved_avx512, DType::Q6_K, Isa::Avx512, true)
    ->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, f16_interleaved_avx2, DType::F16, Isa::Avx2, true)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q4_0_interleaved_avx2, DType::Q4_0, Isa::Avx2, true)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q8_0_interleaved_avx2, DType::Q8_0, Isa::Avx2, true)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q4_k_interleaved_avx2, DType::Q4_K, Isa::Avx2, true)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q6_k_interleaved_avx2, DType::Q6_K, Isa::Avx2, true)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, iq4_xs_interleaved_avx2, DType::IQ4_XS, Isa::Avx2, true)
    ->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q5_k_interleaved_avx2, DType::Q5_K, Isa::Avx2, true)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q4_0_interleaved_avx2vnni, DType::Q4_0, Isa::Avx2Vnni, true)
    ->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q4_0_avx2, DType::Q4_0, Isa::Avx2)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, bf16_interleaved_avx2, DType::BF16, Isa::Avx2, true)->Apply(Shapes);
// The grid i-quants (compute-bound in decode: table lookups per 8 values).
BENCHMARK_CAPTURE(BM_Matmul, iq2_xxs_avx512, DType::IQ2_XXS, Isa::Avx512)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, iq2_xs_avx512, DType::IQ2_XS, Isa::Avx512)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, iq2_s_avx512, DType::IQ2_S, Isa::Avx512)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, iq3_xxs_avx512, DType::IQ3_XXS, Isa::Avx512)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, iq3_s_avx512, DType::IQ3_S, Isa::Avx512)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, iq1_s_avx512, DType::IQ1_S, Isa::Avx512)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, iq1_m_avx512, DType::IQ1_M, Isa::Avx512)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, iq2_xxs_avx2, DType::IQ2_XXS, Isa::Avx2)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, iq2_xs_avx2, DType::IQ2_XS, Isa::Avx2)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, iq2_s_avx2, DType::IQ2_S, Isa::Avx2)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, iq3_xxs_avx2, DType::IQ3_XXS, Isa::Avx2)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, iq3_s_avx2, DType::IQ3_S, Isa::Avx2)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, iq1_s_avx2, DType::IQ1_S, Isa::Avx2)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, iq1_m_avx2, DType::IQ1_M, Isa::Avx2)->Apply(Shapes);

// Attention over an f32 cache of `keys` positions: `n` tokens at the last positions (n == keys: a
// causal prompt), in groups of 8 tokens per KV head as the forward pass runs them. Heads:
// TinyLlama's (32 query heads, 4 KV heads of 64) unless the last three arguments give query heads,
// KV heads and head size (stories260K: 8, 4, 8).
void BM_Attention(benchmark::State& st) {
  const int64_t keys = st.range(0), n = st.range(1), threads = st.range(2);
  const bool custom = st.range(3) > 0;
  const int n_head = custom ? static_cast<int>(st.range(3)) : 32;
  const int n_kv = custom ? static_cast<int>(st.range(4)) : 4;
  const int hd = custom ? static_cast<int>(st.range(5)) : 64;
  const int q_dim = n_head * hd, kv_dim = n_kv * hd;
  std::vector<float> k(static_cast<size_t>(keys * kv_dim)), v(k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    k[i] = static_cast<float>((i * 2654435761u) >> 20 & 255) / 256.0f - 0.5f;
    v[i] = static_cast<float>((i * 40503u) >> 6 & 255) / 256.0f - 0.5f;
  }
  std::vector<float> q(static_cast<size_t>(n * q_dim)), out(q.size());
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = static_cast<float>((i * 2246822519u) >> 22 & 255) / 64.0f - 2.0f;
  const KvSpan span{k.data(), v.data(), 0, keys};
  const AttnShape shape{n_head, n_kv, hd, kv_dim, 1.0f / std::sqrt(static_cast<float>(hd))};
  std::vector<AttnQuery> qs;
  for (int64_t i = 0; i < n; ++i)
    qs.push_back({&q[static_cast<size_t>(i * q_dim)], &out[static_cast<size_t>(i * q_dim)],
                  keys - n + i + 1});
  ThreadPool pool(static_cast<int>(threads));
  const int64_t groups = (n + 7) / 8;
  for (auto _ : st) {
    pool.parallel_chunks(groups * n_kv, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t it = i0; it < i1; ++it) {
        const int64_t g = groups - 1 - it / n_kv;  // latest tokens first
        attention_group(shape, static_cast<int>(it % n_kv), &qs[static_cast<size_t>(g * 8)],
                        static_cast<int>(std::min<int64_t>(8, n - g * 8)), &span, 1);
      }
    });
    benchmark::ClobberMemory();
  }
  double flop = 0;
  for (const auto& a : qs) flop += 4.0 * static_cast<double>(a.n_keys) * hd * n_head;
  st.counters["FLOP/s"] = benchmark::Counter(flop, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["bytes/s"] = benchmark::Counter(static_cast<double>(k.size() + v.size()) * 4,
                                              benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Attention)
    ->Args({512, 512, 1, 0, 0, 0})
    ->Args({512, 512, 2, 0, 0, 0})
    ->Args({4096, 1, 1, 0, 0, 0})
    ->Args({4096, 1, 2, 0, 0, 0})
    ->Args({256, 1, 1, 8, 4, 8})
    ->UseRealTime();

// SwiGLU's gate over 512 tokens of TinyLlama's FFN width (5632): once per layer in a prompt.
void BM_SiluMul(benchmark::State& st, Isa isa) {
  if (!isa_available(isa)) {
    st.SkipWithError("ISA not available");
    return;
  }
  const int64_t n = 512 * 5632;
  std::vector<float> g(static_cast<size_t>(n)), u(g.size()), o(g.size());
  for (size_t i = 0; i < g.size(); ++i)
    g[i] = std::sin(0.001f * i) * 8, u[i] = std::cos(0.002f * i);
  for (auto _ : st) {
    silu_mul_isa(isa, g.data(), u.data(), o.data(), n);
    benchmark::DoNotOptimize(o.data());
  }
  st.SetItemsProcessed(st.iterations() * n);
}
BENCHMARK_CAPTURE(BM_SiluMul, generic, Isa::Generic);
BENCHMARK_CAPTURE(BM_SiluMul, avx2, Isa::Avx2);
BENCHMARK_CAPTURE(BM_SiluMul, avx512, Isa::Avx512);

// One sampled token from a vocabulary of `vocab` logits (one sequence's share of a decode step,
// on the engine's thread). Settings: 0 = the OpenAI API's defaults (temperature 1, no top-k,
// top-p or min-p), 1 = the CLI's (0.8, top-k 40, top-p 0.95, min-p 0.05), 2 = temperature 0.7
// with top-p 0.9. Logits: 0 = as a trained model gives them (a bell of standard deviation 3 and
// a few strong candidates 10-14 above its centre), 1 = flat (4 apart at most: top-p 0.9 keeps most
// of the vocabulary, the worst case for a sampler that sorts only what it keeps).
void BM_Sample(benchmark::State& st) {
  const int64_t vocab = st.range(0);
  SamplingParams p;
  if (st.range(1) == 0) p.temperature = 1.0f, p.top_k = 0, p.top_p = 1.0f, p.min_p = 0.0f;
  if (st.range(1) == 2) p.temperature = 0.7f, p.top_k = 0, p.top_p = 0.9f, p.min_p = 0.0f;
  p.seed = 1;
  std::vector<float> logits(static_cast<size_t>(vocab));
  uint32_t h = 12345;
  auto uniform = [&] {
    h = h * 1664525u + 1013904223u;
    return static_cast<float>(h >> 8) / 16777216.0f;
  };
  for (auto& l : logits) {
    if (st.range(2) == 1) {
      const float u = uniform();
      l = 4.0f * u * u * u - 2.0f;
    } else {  // four uniforms' sum: near-normal, variance 1/3 each
      l = 3.0f * (uniform() + uniform() + uniform() + uniform() - 2.0f) * 1.7320508f;
    }
  }
  if (st.range(2) == 0)
    for (int i = 0; i < 8; ++i) logits[static_cast<size_t>((i * 7919) % vocab)] = 14.0f - i * 0.5f;
  Sampler s(p);
  for (auto _ : st) benchmark::DoNotOptimize(s.sample(logits.data(), vocab));
}
BENCHMARK(BM_Sample)->ArgsProduct({{32000, 128256}, {0, 1, 2}, {0, 1}});

}  // namespace
}  // namespace brisk

int main(int argc, char** argv) {
  if (const char* e = std::getenv("MISALIGN")) brisk::g_misalign = std::atoi(e);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
}
