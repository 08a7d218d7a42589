// The instruction sets kernels are compiled for, spelled in one place. One binary holds each
// kernel compiled for several ISAs (GCC's target attribute, or a pushed target pragma around code
// included once per ISA); ops/cpu.h chooses among them at run time from the CPU's features, capped
// by BRISK_ISA. Every kernel names its ISA through these macros only. Included by ops/ sources.
#pragma once

// The tiers' features. F16C and FMA come with every AVX2 CPU, DQ with every AVX-512 one that has
// BW and VL; VNNI and BF16 are what separate the AVX-512 generations.
#define BRISK_ISA_AVX2 "avx2,fma,f16c"
#define BRISK_ISA_AVXVNNI "avx2,fma,f16c,avxvnni"
#define BRISK_ISA_AVX512 "avx512f,avx512bw,avx512vl,avx512dq,fma,f16c"
#define BRISK_ISA_AVX512VNNI "avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,fma,f16c"
#define BRISK_ISA_AVX512BF16 "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma,f16c"

// A kernel compiled for `isa`; a helper inlined into kernels of that ISA (or a superset).
#define BRISK_TARGET(isa) __attribute__((target(isa)))
#define BRISK_INLINE(isa) __attribute__((target(isa), always_inline)) inline
// Everything between the two compiled for `isa` (for code included once per ISA).
#define BRISK_PRAGMA_(x) _Pragma(#x)
#define BRISK_PUSH_TARGET(isa) _Pragma("GCC push_options") BRISK_PRAGMA_(GCC target(isa))
#define BRISK_POP_TARGET _Pragma("GCC pop_options")
// A kernel that only x86 builds have, as a TierTable entry (ops/cpu.h): null elsewhere.
#if defined(__x86_64__)
#define BRISK_X86(fn) fn
#else
#define BRISK_X86(fn) nullptr
#endif

// GCC 12 reports its own AVX-512 intrinsic headers as using uninitialized values; the warnings
// are off for the rest of each kernel source.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#if defined(__x86_64__)
#include <immintrin.h>
#endif
