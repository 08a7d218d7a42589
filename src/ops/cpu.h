// Instruction-set selection, in one place. Kernels are compiled for each tier they support with
// function target attributes (the features of each tier: ops/isa_target.h) and chosen at run time
// in one way, pick_tier below: a tier without a kernel of its own in a family takes the next tier
// down that this CPU runs. matmul resolves every weight type's kernel that way once per tier
// (ops/matmul.cpp); attention, the activations and the roofline loops pick from a TierTable.
// BRISK_ISA=generic|avx2|avx2vnni|avx512|avx512bf16 caps the choice.
#pragma once

#include <array>
#include <cstddef>

namespace brisk {

// The tiers, lowest first. Avx2: AVX2 + FMA + F16C (AMD Zen 2/3, Intel Haswell on). Avx2Vnni: plus
// VEX-encoded VPDPBUSD (Intel Core 12th gen on, Zen 5). Avx512: F/BW/VL/DQ + VNNI (Cascade Lake,
// Ice Lake). Avx512Bf16: plus BF16 dot products (Sapphire Rapids, Zen 4/5). A CPU may run a tier
// without the one below it (Ice Lake has no AVX-VNNI), so a fallback skips tiers it cannot run.
// AVX-512 without VNNI (Skylake-SP) runs the Avx2 tier.
enum class Isa { Generic = 0, Avx2 = 1, Avx2Vnni = 2, Avx512 = 3, Avx512Bf16 = 4 };
inline constexpr int kIsaCount = 5;

struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false, avx512bf16 = false,
       avx512vnni = false;
  bool avxvnni = false;
};

const CpuFeatures& cpu_features();
// The best tier this CPU runs, capped by BRISK_ISA (an unknown name is reported once on stderr and
// ignored).
Isa best_isa();
const char* isa_name(Isa isa);
bool isa_available(Isa isa);
// Whether `isa`'s kernels may run where `runs` was chosen: `isa` is at or below it and available.
inline bool isa_serves(Isa isa, Isa runs) {
  return static_cast<int>(isa) <= static_cast<int>(runs) && isa_available(isa);
}

// The kernel a family gives `isa`: of(tier) for the widest tier that serves it (isa itself or one
// below that this CPU runs) whose kernel is there (non-null, or a kernel that tests true); a
// default-constructed (empty) one if none is.
template <class F>
auto first_tier(Isa isa, F&& of) -> decltype(of(isa)) {
  for (int j = static_cast<int>(isa); j >= 0; --j)
    if (isa_serves(static_cast<Isa>(j), isa))
      if (auto k = of(static_cast<Isa>(j))) return k;
  return {};
}

// A family's kernels by tier, indexed by Isa; null for a tier without one of its own.
template <class Fn>
using TierTable = std::array<Fn, kIsaCount>;
template <class Fn>
Fn pick_tier(Isa isa, const TierTable<Fn>& table) {
  return first_tier(isa, [&](Isa t) { return table[static_cast<size_t>(t)]; });
}

}  // namespace brisk
