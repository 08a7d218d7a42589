#include "ops/cpu.h"

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
    c.avxvnni = __builtin_cpu_supports("avxvnni");
#endif
    return c;
  }();
  return f;
}

bool isa_available(Isa isa) {
  const auto& f = cpu_features();
  switch (isa) {
    case Isa::Generic:
      return true;
    case Isa::Avx2:
      return f.avx2 && f.fma && f.f16c;
    case Isa::Avx512:
      return f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512bf16 && f.fma;
  }
  return false;
}

Dot256 dot256() {
  const auto& f = cpu_features();
  const char* e = std::getenv("BRISK_NO_VNNI256");
  if (e && *e && std::strcmp(e, "0") != 0) return Dot256::Maddubs;
  if (f.avxvnni) return Dot256::AvxVnni;
  if (f.avx512vnni && f.avx512vl) return Dot256::Avx512Vl;
  return Dot256::Maddubs;
}

Isa best_isa() {
  static const Isa isa = [] {
    Isa cap = Isa::Avx512;
    if (const char* e = std::getenv("BRISK_ISA")) {
      if (!std::strcmp(e, "generic"))
        cap = Isa::Generic;
      else if (!std::strcmp(e, "avx2"))
        cap = Isa::Avx2;
    }
    for (int i = static_cast<int>(cap); i > 0; --i)
      if (isa_available(static_cast<Isa>(i))) return static_cast<Isa>(i);
    return Isa::Generic;
  }();
  return isa;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Generic:
      return "generic";
    case Isa::Avx2:
      return "avx2";
    case Isa::Avx512:
      return "avx512";
  }
  return "?";
}

}  // namespace brisk
