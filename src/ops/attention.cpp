#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "ops/attention_chunk.h"
#include "ops/cpu.h"
#include "ops/isa_target.h"

namespace brisk {
namespace {

using namespace attention_detail;

#define BRISK_ATTN_NS portable
#include "ops/attention_generic-inl.h"
#undef BRISK_ATTN_NS
#if defined(__x86_64__)
BRISK_PUSH_TARGET(BRISK_ISA_AVX2)
#define BRISK_ATTN_NS avx2
#include "ops/attention_generic-inl.h"
#undef BRISK_ATTN_NS
BRISK_POP_TARGET
#endif

using GenericFn = void (*)(const AttnShape&, int, const AttnQuery&, const KvSpan*, size_t);
// The portable kernel for one KV type, in its AVX2 + F16C build where `wide` and x86.
template <KvType T>
GenericFn generic_kernel([[maybe_unused]] bool wide) {
#if defined(__x86_64__)
  if (wide) return avx2::attend<T>;
#endif
  return portable::attend<T>;
}

}  // namespace

void attention_group_isa(Isa isa, const AttnShape& s, int kv_head, const AttnQuery* qs,
                         int n_queries, const KvSpan* spans, size_t n_spans) {
  // The widest tier with a kernel for this KV type and head size, else the portable kernel (in
  // its AVX2 + F16C build where that tier serves).
  using Picker = AttendFn (*)(KvType, int);
  static constexpr TierTable<Picker> kAttend = {nullptr, attend_avx2, nullptr, attend_avx512,
                                                nullptr};
  const AttendFn f = first_tier(isa, [&](Isa t) {
    const Picker p = kAttend[static_cast<size_t>(t)];
    return p ? p(s.kv_type, s.head_dim) : AttendFn{};
  });
  if (f) return f(s, kv_head, qs, n_queries, spans, n_spans);
  const bool wide = isa_serves(Isa::Avx2, isa);
  const GenericFn generic = s.kv_type == KvType::F32    ? generic_kernel<KvType::F32>(wide)
                            : s.kv_type == KvType::F16  ? generic_kernel<KvType::F16>(wide)
                            : s.kv_type == KvType::BF16 ? generic_kernel<KvType::BF16>(wide)
                                                        : generic_kernel<KvType::Q8>(wide);
  for (int i = 0; i < n_queries; ++i) generic(s, kv_head, qs[i], spans, n_spans);
}

void attention_group(const AttnShape& s, int kv_head, const AttnQuery* qs, int n_queries,
                     const KvSpan* spans, size_t n_spans) {
  attention_group_isa(best_isa(), s, kv_head, qs, n_queries, spans, n_spans);
}

}  // namespace brisk
