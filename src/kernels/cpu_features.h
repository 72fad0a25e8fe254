// kernels/cpu_features.h — which SIMD level the kernels run at: detected once from CPUID, capped
// by NEXTTOK_SIMD=scalar|avx2|avx512, and overridable by tests (set_simd_level).
// Must not know: the kernels themselves.
#pragma once

namespace nt {

enum class SimdLevel { Scalar = 0, Avx2 = 1, Avx512 = 2 };

// What this CPU (and build) supports: Avx2 needs AVX2+FMA+F16C; Avx512 needs F/BW/VL/DQ/VNNI/VBMI/GFNI
// (Ice Lake server, Sapphire Rapids, Zen 4 and later; older AVX-512 CPUs run the AVX2 kernels).
SimdLevel cpu_max_simd_level();
// The level in use: min(cpu_max_simd_level(), NEXTTOK_SIMD cap, override).
SimdLevel simd_level();
// For tests and comparisons: force a level (capped to what the CPU supports); returns the level
// actually set. Not thread-safe against concurrent kernel calls.
SimdLevel set_simd_level(SimdLevel level);
const char* simd_level_name(SimdLevel level);

}  // namespace nt
