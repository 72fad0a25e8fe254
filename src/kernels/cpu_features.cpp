#include "kernels/cpu_features.h"
#include "kernels/kernels.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define NT_X86 1
#endif

namespace nt {

namespace {

#ifdef NT_X86
uint64_t xgetbv0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}
#endif

SimdLevel detect() {
#ifdef NT_X86
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return SimdLevel::Scalar;
  const bool osxsave = c & (1u << 27), fma = c & (1u << 12), f16c = c & (1u << 29);
  if (!osxsave) return SimdLevel::Scalar;
  const uint64_t xcr0 = xgetbv0();
  const bool ymm_os = (xcr0 & 0x6) == 0x6, zmm_os = (xcr0 & 0xe6) == 0xe6;
  if (__get_cpuid_max(0, nullptr) < 7) return SimdLevel::Scalar;
  __cpuid_count(7, 0, a, b, c, d);
  const bool avx2 = b & (1u << 5), bmi2 = b & (1u << 8);
  const bool f = b & (1u << 16), dq = b & (1u << 17), bw = b & (1u << 30), vl = b & (1u << 31);
  const bool vnni = c & (1u << 11), vbmi = c & (1u << 1), gfni = c & (1u << 8);
  if (!(ymm_os && avx2 && fma && f16c && bmi2)) return SimdLevel::Scalar;
  // GFNI: every CPU with the rest (Ice Lake, Sapphire Rapids, Zen 4 and later) has it. No kernel
  // uses AVX512-BF16, so Ice Lake (without it) runs the AVX-512 kernels too.
  if (zmm_os && f && dq && bw && vl && vnni && vbmi && gfni) return SimdLevel::Avx512;
  return SimdLevel::Avx2;
#else
  return SimdLevel::Scalar;
#endif
}

SimdLevel env_cap() {
  const char* e = std::getenv("NEXTTOK_SIMD");
  if (!e || !*e) return SimdLevel::Avx512;
  if (std::strcmp(e, "scalar") == 0) return SimdLevel::Scalar;
  if (std::strcmp(e, "avx2") == 0) return SimdLevel::Avx2;
  return SimdLevel::Avx512;
}

SimdLevel min_level(SimdLevel a, SimdLevel b) { return static_cast<int>(a) < static_cast<int>(b) ? a : b; }

std::atomic<int> g_level{-1};

}  // namespace

SimdLevel cpu_max_simd_level() {
  static const SimdLevel max = detect();
  return max;
}

SimdLevel simd_level() {
  int l = g_level.load(std::memory_order_relaxed);
  if (l < 0) {
    l = static_cast<int>(min_level(cpu_max_simd_level(), env_cap()));
    g_level.store(l, std::memory_order_relaxed);
  }
  return static_cast<SimdLevel>(l);
}

SimdLevel set_simd_level(SimdLevel level) {
  const SimdLevel l = min_level(level, cpu_max_simd_level());
  g_level.store(static_cast<int>(l), std::memory_order_relaxed);
  return l;
}

const char* simd_level_name(SimdLevel level) {
  switch (level) {
    case SimdLevel::Avx512: return "avx512";
    case SimdLevel::Avx2: return "avx2";
    default: return "scalar";
  }
}

const char* kernels_simd_level() { return simd_level_name(simd_level()); }

}  // namespace nt
