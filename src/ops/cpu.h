// Instruction-set selection, in one place. Kernels are compiled for each ISA they support with
// function target attributes (the features of each tier: ops/isa_target.h) and chosen at run
// time; BRISK_ISA=generic|avx2|avx512 caps the choice.
#pragma once

namespace brisk {

enum class Isa { Generic = 0, Avx2 = 1, Avx512 = 2 };

struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false, avx512bf16 = false,
       avx512vnni = false;
  bool avxvnni = false;
};

const CpuFeatures& cpu_features();
// The best ISA this CPU runs (capped by BRISK_ISA).
Isa best_isa();
const char* isa_name(Isa isa);
bool isa_available(Isa isa);

// The byte dot product of the 256-bit integer kernels: VPDPBUSD in its VEX form where the CPU has
// AVX-VNNI, in its EVEX form where it has AVX-512 VNNI and VL, else VPMADDUBSW (forced with
// BRISK_NO_VNNI256=1, read on every call so tests can compare the variants: they agree bit for
// bit).
enum class Dot256 { Maddubs, AvxVnni, Avx512Vl };
Dot256 dot256();

}  // namespace brisk
