#include "ops/matmul.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "ops/matmul_q8.h"
#include "quant/quant.h"

namespace brisk {

using namespace matmul_detail;

namespace {

// The kernel a family defines for exactly this tier ({nullptr} if none).
Kernel own_kernel(Isa isa, DType t, bool interleaved) {
  if (interleaved)
    return t == DType::BF16  ? kernel_bf16_interleaved(isa)
           : t == DType::F16 ? kernel_f16_interleaved(isa)
           : t == DType::F32 ? kernel_f32_interleaved(isa)
                             : kernel_interleaved(isa, t);
  switch (t) {
    case DType::F32:
      return kernel_f32(isa);
    case DType::F16:
      return kernel_f16(isa);
    case DType::BF16:
      return kernel_bf16(isa);
    default:
      return dtype_is_quantized(t) ? kernel_quant(isa, t) : Kernel{};
  }
}

// Every (tier, weight type, layout) resolved once: the tier's own kernel, else the next tier down
// that this CPU runs.
class Dispatch {
 public:
  static const Dispatch& get() {
    static const Dispatch d;
    return d;
  }
  const Kernel& at(Isa isa, DType t, bool interleaved) const {
    const auto ti = static_cast<size_t>(t);
    if (ti >= kTypes) fail("matmul: weight type {} has no kernel", dtype_name(t));
    const Kernel& k = table_[static_cast<size_t>(isa)][ti][interleaved ? 1 : 0];
    if (!k.tile)
      fail("matmul: no kernel for weight type {}{} on {}", dtype_name(t),
           interleaved ? " (interleaved rows)" : "", isa_name(isa));
    return k;
  }

 private:
  static constexpr size_t kTypes = static_cast<size_t>(DType::MXFP4) + 1;  // the last type id
  Dispatch() {
    for (int i = 0; i < kIsaCount; ++i)
      for (size_t t = 0; t < kTypes; ++t)
        for (int il = 0; il < 2; ++il)
          table_[i][t][il] = first_tier(static_cast<Isa>(i), [&](Isa j) {
            return own_kernel(j, static_cast<DType>(t), il == 1);
          });
  }
  Kernel table_[kIsaCount][kTypes][2] = {};
};

}  // namespace

namespace {

// Activations as a kernel reads them (XFormat), in this thread's buffers.
struct Prepared {
  XFormat format = XFormat::F32;
  int q8_offset = 0;
  int64_t k = 0, x_tile = 1;
  const uint8_t* x = nullptr;
  uint64_t x_stride = 0;
  bool serves(const Kernel& kern, int64_t k_, int64_t n) const {
    if (x == nullptr || kern.x_format != format || k_ != k) return false;
    if (format == XFormat::Q8 || format == XFormat::Q8Tiles) return kern.q8_offset == q8_offset;
    if (format == XFormat::F32Tiles || format == XFormat::BF16Tiles ||
        format == XFormat::F32PairTiles)
      return std::min<int64_t>(kern.tile_t, n) == x_tile;
    return true;
  }
};

Prepared prepare(Isa isa, const Kernel& kern, int64_t k, const float* x, int64_t ldx, int64_t n,
                 ThreadPool& pool) {
  thread_local std::vector<uint16_t> xb;
  thread_local std::vector<uint8_t> xq;
  Prepared p;
  p.format = kern.x_format;
  p.q8_offset = kern.q8_offset;
  p.k = k;
  if (kern.x_format == XFormat::BF16) {
    // Padded so kernels may read whole 32-element steps, plus one cache line so rows do not all map
    // to the same L1 set when k is a power of two.
    const int64_t kp = (k + 31) / 32 * 32 + 32;
    xb.resize(static_cast<size_t>(n * kp));
    uint16_t* dst = xb.data();  // (the workers have thread_locals of their own)
    pool.parallel_for(n, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        for (int64_t j = 0; j < k; ++j) dst[t * kp + j] = f32_to_bf16(x[t * ldx + j]);
        std::fill(dst + t * kp + k, dst + (t + 1) * kp, 0);
      }
    });
    p.x = reinterpret_cast<const uint8_t*>(xb.data());
    p.x_stride = static_cast<uint64_t>(kp) * 2;
  } else if (kern.x_format == XFormat::F32Tiles || kern.x_format == XFormat::BF16Tiles ||
             kern.x_format == XFormat::F32PairTiles) {
    const TileUnits units = tile_units(kern.x_format, k);
    p.x_tile = std::min<int64_t>(kern.tile_t, n);
    p.x_stride = static_cast<uint64_t>(units.count * p.x_tile * units.bytes);
    xq.resize(static_cast<size_t>((n + p.x_tile - 1) / p.x_tile) * p.x_stride);
    pack_tiles(isa, kern.x_format, x, ldx, k, n, p.x_tile, xq.data(), pool);
    p.x = xq.data();
  } else if (kern.x_format == XFormat::Q8 || kern.x_format == XFormat::Q8K) {
    const bool q8k = kern.x_format == XFormat::Q8K;  // blocks of 256, else of 32
    const uint64_t stride = q8k ? Q8KLayout(k).stride : Q8Layout(k).stride;
    xq.resize(static_cast<size_t>(n) * stride);
    uint8_t* dst = xq.data();
    pool.parallel_for(n, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        uint8_t* row = dst + static_cast<size_t>(t) * stride;
        if (q8k)
          quantize_activation_q8k(isa, x + t * ldx, k, row);
        else
          quantize_activation_row(isa, x + t * ldx, k, row, kern.q8_offset);
      }
    });
    p.x = xq.data();
    p.x_stride = stride;
  } else if (kern.x_format == XFormat::Q8Tiles) {
    const int64_t tiles = (n + Q8Tiles::kTile - 1) / Q8Tiles::kTile;
    xq.resize(static_cast<size_t>(tiles) * Q8Tiles::tile_bytes(k));
    uint8_t* dst = xq.data();
    pool.parallel_for(tiles, 1, [&](int64_t b0, int64_t b1) {
      quantize_activation_tiles(isa, x, ldx, k, n, b0 * Q8Tiles::kTile,
                                std::min(n, b1 * Q8Tiles::kTile), kern.q8_offset, dst);
    });
    p.x = xq.data();
    p.x_stride = Q8Tiles::tile_bytes(k);
    p.x_tile = Q8Tiles::kTile;
  } else {
    p.x = reinterpret_cast<const uint8_t*>(x);
    p.x_stride = static_cast<uint64_t>(ldx) * 4;
  }
  return p;
}

// One matrix's part of a dispatch: its rows, in chunks the threads claim in order.
struct Job {
  const Kernel* kern;
  Args a;
  int64_t rows, chunk, tb;
};

Job plan(const Kernel& kern, const Tensor& w, const Prepared& p, float* y, int64_t ldy,
         int threads) {
  const int64_t k = w.cols(), rows = w.rows();
  Args a{static_cast<const uint8_t*>(w.data), w.row_bytes(), k, p.x, p.x_stride, y, ldy, p.x_tile};
  // Token blocks keep the activations a thread streams over in L2 (about 256 KiB). Rows go to the
  // threads in chunks of about 1 MiB of weights, claimed in order, whole 16-row grains, at least
  // eight chunks per thread so the work stays balanced.
  const int64_t x_bytes = kern.x_bytes_per_value > 0 ? k * kern.x_bytes_per_value + k / 4
                                                     : static_cast<int64_t>(a.x_stride);
  const int64_t tb =
      std::max<int64_t>(kern.tile_t, (256 * 1024 / x_bytes) / kern.tile_t * kern.tile_t);
  const int64_t row_bytes = static_cast<int64_t>(a.w_stride);
  int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 20) / row_bytes);
  chunk = std::min(chunk, rows / (8 * threads));
  const int64_t grain = kern.row_grain;
  chunk = std::max<int64_t>(grain, (chunk + grain - 1) / grain * grain);
  return {&kern, a, rows, chunk, tb};
}

// The jobs' chunks in one hand-off to the pool (q, k and v are one dispatch, not three: a small
// batch's matmul is short enough that each hand-off and each thread's wait for the slowest
// counts).
constexpr size_t kMaxJobs = 8;
void run(std::span<const Job> jobs, int64_t n, ThreadPool& pool) {
  int64_t first[kMaxJobs + 1] = {};
  for (size_t j = 0; j < jobs.size(); ++j)
    first[j + 1] = first[j] + (jobs[j].rows + jobs[j].chunk - 1) / jobs[j].chunk;
  pool.parallel_chunks(first[jobs.size()], 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      size_t j = 0;
      while (c >= first[j + 1]) ++j;
      const Job& jb = jobs[j];
      const int64_t r0 = (c - first[j]) * jb.chunk, r1 = std::min(jb.rows, r0 + jb.chunk);
      for (int64_t t0 = 0; t0 < n; t0 += jb.tb)
        jb.kern->tile(jb.a, r0, r1, t0, std::min(n, t0 + jb.tb));
    }
  });
}

}  // namespace

void matmul_isa(Isa isa, const Tensor& w, const float* x, int64_t ldx, int64_t n, float* y,
                int64_t ldy, ThreadPool& pool) {
  if (n <= 0) return;
  const Kernel& kern = Dispatch::get().at(isa, w.type, w.interleaved);
  const Job job = plan(kern, w, prepare(isa, kern, w.cols(), x, ldx, n, pool), y, ldy, pool.size());
  run({&job, 1}, n, pool);
}

void matmul_shared_isa(Isa isa, std::span<const MatmulOut> outs, const float* x, int64_t ldx,
                       int64_t n, ThreadPool& pool) {
  if (n <= 0) return;
  Prepared p;
  Job jobs[kMaxJobs];
  size_t nj = 0;
  for (const MatmulOut& o : outs) {
    const Kernel& kern = Dispatch::get().at(isa, o.w->type, o.w->interleaved);
    const bool same = p.serves(kern, o.w->cols(), n);
    // Preparing overwrites the buffers the jobs so far read: they run first.
    if (nj > 0 && (!same || nj == kMaxJobs)) {
      run({jobs, nj}, n, pool);
      nj = 0;
    }
    if (!same) p = prepare(isa, kern, o.w->cols(), x, ldx, n, pool);
    jobs[nj++] = plan(kern, *o.w, p, o.y, o.ldy, pool.size());
  }
  if (nj > 0) run({jobs, nj}, n, pool);
}

void matmul_shared(std::span<const MatmulOut> outs, const float* x, int64_t ldx, int64_t n,
                   ThreadPool& pool) {
  matmul_shared_isa(best_isa(), outs, x, ldx, n, pool);
}

void matmul(const Tensor& w, const float* x, int64_t ldx, int64_t n, float* y, int64_t ldy,
            ThreadPool& pool) {
  matmul_isa(best_isa(), w, x, ldx, n, y, ldy, pool);
}

}  // namespace brisk
