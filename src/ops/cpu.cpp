#include "ops/cpu.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace brisk {

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = [] {
    CpuFeatures c;
#if defined(__x86_64__)
    __builtin_cpu_init();
    c.avx2 = __builtin_cpu_supports("avx2");
    c.fma = __builtin_cpu_supports("fma");
    c.f16c = c.avx2;  // every AVX2 CPU has F16C; GCC 12 cannot query it by name
    c.avx512f = __builtin_cpu_supports("avx512f");
    c.avx512bw = __builtin_cpu_supports("avx512bw");
    c.avx512vl = __builtin_cpu_supports("avx512vl");
    c.avx512dq = __builtin_cpu_supports("avx512dq");
    c.avx512bf16 = __builtin_cpu_supports("avx512bf16");
    c.avx512vnni = __builtin_cpu_supports("avx512vnni");
#if defined(__clang__)
    // clang 14 has no name for AVX-VNNI: CPUID leaf 7, sub-leaf 1, EAX bit 4.
    unsigned a = 0, b = 0, cx = 0, d = 0;
    c.avxvnni = __get_cpuid_count(7, 1, &a, &b, &cx, &d) && (a >> 4 & 1);
#else
    c.avxvnni = __builtin_cpu_supports("avxvnni");
#endif
#endif
    return c;
  }();
  return f;
}

bool isa_available(Isa isa) {
  const auto& f = cpu_features();
  const bool avx2 = f.avx2 && f.fma && f.f16c;
  const bool avx512 = avx2 && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512vnni;
  switch (isa) {
    case Isa::Generic:
      return true;
    case Isa::Avx2:
      return avx2;
    case Isa::Avx2Vnni:
      return avx2 && f.avxvnni;
    case Isa::Avx512:
      return avx512;
    case Isa::Avx512Bf16:
      return avx512 && f.avx512bf16;
  }
  return false;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Generic:
      return "generic";
    case Isa::Avx2:
      return "avx2";
    case Isa::Avx2Vnni:
      return "avx2vnni";
    case Isa::Avx512:
      return "avx512";
    case Isa::Avx512Bf16:
      return "avx512bf16";
  }
  return "?";
}

Isa best_isa() {
  static const Isa isa = [] {
    int cap = kIsaCount - 1;
    if (const char* e = std::getenv("BRISK_ISA"); e && *e) {
      int named = -1;
      for (int i = 0; i < kIsaCount; ++i)
        if (!std::strcmp(e, isa_name(static_cast<Isa>(i)))) named = i;
      if (named >= 0)
        cap = named;
      else
        std::fprintf(stderr,
                     "warning: BRISK_ISA=%s is not one of generic, avx2, avx2vnni, avx512, "
                     "avx512bf16; ignored\n",
                     e);
    }
    for (int i = cap; i > 0; --i)
      if (isa_available(static_cast<Isa>(i))) return static_cast<Isa>(i);
    return Isa::Generic;
  }();
  return isa;
}

}  // namespace brisk
