// Micro-benchmarks of the matmul kernels on TinyLlama-sized matrices: decode (one token,
// memory-bound) reports bytes/s, prefill (many tokens, compute-bound) reports FLOP/s. Compare with
// the machine's bandwidth and peaks from `brisk bench`.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <vector>

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
  // Several matrices so decode streams from memory, not cache.
  std::vector<Mat> ms;
  const int copies = n == 1 && rows > 128 ? 8 : 1;
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
    b->Args({5632, 2048, 128, threads});  // prefill chunk
  }
  b->UseRealTime();
}

BENCHMARK_CAPTURE(BM_Matmul, f32_avx512, DType::F32, Isa::Avx512)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, f16_avx512, DType::F16, Isa::Avx512)->Apply(Shapes);
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
BENCHMARK_CAPTURE(BM_Matmul, bf16_interleaved_avx512, DType::BF16, Isa::Avx512, true)
    ->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q4_k_interleaved_avx512, DType::Q4_K, Isa::Avx512, true)
    ->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Matmul, q6_k_interleaved_avx512, DType::Q6_K, Isa::Avx512, true)
    ->Apply(Shapes);

}  // namespace
}  // namespace brisk

int main(int argc, char** argv) {
  if (const char* e = std::getenv("MISALIGN")) brisk::g_misalign = std::atoi(e);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
}
