// The portable attention kernel: any head size and KV type, one query at a time, FlashAttention's
// online softmax over chunks of keys (the AVX2 and AVX-512 tiers have kernels of their own for
// head sizes that are multiples of 8, in attention_avx2.cpp and attention_avx512.cpp). No include
// guard: attention.cpp compiles it twice, as is and for AVX2 + F16C (where GCC vectorizes the loops
// and F16 rows widen with VCVTPH2PS), each copy in its own namespace, BRISK_ATTN_NS. Both compute
// the same bits: the operations and their order are the same, and -ffp-contract=off keeps them
// unfused.
namespace BRISK_ATTN_NS {

inline float dot(const float* a, const float* b, int n) {
  float part[8] = {};
  int i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) part[l] += a[i + l] * b[i + l];
  for (; i < n; ++i) part[0] += a[i] * b[i];
  return ((part[0] + part[4]) + (part[2] + part[6])) + ((part[1] + part[5]) + (part[3] + part[7]));
}

// One K or V row of a head, widened to floats.
template <KvType T>
inline void widen_row(const void* src, float* dst, int n) {
  if constexpr (T == KvType::F32) {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
  } else {
#if defined(__F16C__)
    if constexpr (T == KvType::F16) {
      const auto* h = static_cast<const uint16_t*>(src);
      int d = 0;
      for (; d + 8 <= n; d += 8)
        _mm256_storeu_ps(dst + d,
                         _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + d))));
      for (; d < n; ++d) dst[d] = f16_to_f32_fast(h[d]);
      return;
    }
#endif
    for (int d = 0; d < n; ++d) {
      if constexpr (T == KvType::F16)
        dst[d] = f16_to_f32_fast(static_cast<const uint16_t*>(src)[d]);
      else if constexpr (T == KvType::BF16)
        dst[d] = bf16_to_f32(static_cast<const uint16_t*>(src)[d]);
      else
        dst[d] = static_cast<float>(static_cast<const int8_t*>(src)[d]);
    }
  }
}

// Portable version: any head size.
template <KvType T>
void attend(const AttnShape& s, int kv_head, const AttnQuery& query, const KvSpan* spans,
            size_t n_spans) {
  const float* q = query.q;
  const int64_t n_keys = query.n_keys;
  const int gq = s.n_head / s.n_head_kv, hd = s.head_dim;
  thread_local std::vector<float> acc;
  acc.assign(static_cast<size_t>(gq) * hd, 0.0f);
  float m[64], l[64];
  for (int h = 0; h < gq; ++h) m[h] = -std::numeric_limits<float>::infinity(), l[h] = 0;
  thread_local std::vector<float> kf, vf;
  kf.resize(static_cast<size_t>(kAttnChunk) * hd);
  vf.resize(kf.size());
  ChunkRows c;
  size_t span = 0;
  for (int64_t p0 = first_chunk(&query, 1); p0 < n_keys; p0 += kAttnChunk) {
    const int n = static_cast<int>(std::min<int64_t>(kAttnChunk, n_keys - p0));
    const int lo = skipped_keys(query, p0);  // keys before a sliding window's start
    gather<T>(s, kv_head, spans, n_spans, span, p0, n, c);
    // f32 rows are read in place; other types are widened into a buffer first.
    const float* kr[kAttnChunk];
    const float* vr[kAttnChunk];
    for (int j = lo; j < n; ++j) {
      if constexpr (T == KvType::F32) {
        kr[j] = static_cast<const float*>(c.k[j]);
        vr[j] = static_cast<const float*>(c.v[j]);
      } else {
        widen_row<T>(c.k[j], &kf[static_cast<size_t>(j * hd)], hd);
        widen_row<T>(c.v[j], &vf[static_cast<size_t>(j * hd)], hd);
        kr[j] = &kf[static_cast<size_t>(j * hd)];
        vr[j] = &vf[static_cast<size_t>(j * hd)];
      }
    }
    for (int h = 0; h < gq; ++h) {
      const float* qh = q + static_cast<int64_t>(kv_head * gq + h) * hd;
      float sc[kAttnChunk];
      float mx = m[h];
      for (int j = lo; j < n; ++j) {
        sc[j] =
            T == KvType::Q8 ? dot(qh, kr[j], hd) * c.ks[j] * s.scale : dot(qh, kr[j], hd) * s.scale;
        if (s.softcap > 0) sc[j] = s.softcap * std::tanh(sc[j] * (1.0f / s.softcap));
        mx = sc[j] > mx ? sc[j] : mx;
      }
      const float corr = std::exp(m[h] - mx);  // exp(-inf) = 0 on the first chunk
      float* a = acc.data() + static_cast<int64_t>(h) * hd;
      float sum = l[h] * corr;
      for (int d = 0; d < hd; ++d) a[d] *= corr;
      for (int j = lo; j < n; ++j) {
        const float pj = std::exp(sc[j] - mx);
        sum += pj;
        const float w = T == KvType::Q8 ? pj * c.vs[j] : pj;
        for (int d = 0; d < hd; ++d) a[d] += w * vr[j][d];
      }
      l[h] = sum;
      m[h] = mx;
    }
  }
  for (int h = 0; h < gq; ++h) {
    float* o = query.out + static_cast<int64_t>(kv_head * gq + h) * hd;
    const float inv = output_scale(m[h], l[h], s.sinks, kv_head * gq + h);
    for (int d = 0; d < hd; ++d) o[d] = acc[static_cast<size_t>(h * hd + d)] * inv;
  }
}

}  // namespace BRISK_ATTN_NS
