// kernels/read_probe_avx2.cpp — the read probe's loop with 256-bit loads (read_probe.h).
#include <immintrin.h>

#include "kernels/kernels_internal.h"

namespace nt::detail {

uint64_t read_streams_avx2(const uint8_t* p, size_t n_lines, size_t stride, int n_streams) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 2 <= n_lines; i += 2)  // 2 lines of each stream: independent XOR chains
    for (int s = 0; s < n_streams; ++s) {
      const uint8_t* q = p + size_t(s) * stride + i * 64;
      // 512 bytes ahead, as the AVX2 one-token kernels prefetch their streams: without it the
      // probe read less than the Q8_0 decode, no ceiling (docs/kernels.md).
      _mm_prefetch(reinterpret_cast<const char*>(q + 512), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(q + 576), _MM_HINT_T0);
      a0 = _mm256_xor_si256(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(q)));
      a1 = _mm256_xor_si256(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(q + 32)));
      a2 = _mm256_xor_si256(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(q + 64)));
      a3 = _mm256_xor_si256(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(q + 96)));
    }
  for (; i < n_lines; ++i)
    for (int s = 0; s < n_streams; ++s) {
      const uint8_t* q = p + size_t(s) * stride + i * 64;
      a0 = _mm256_xor_si256(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(q)));
      a1 = _mm256_xor_si256(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(q + 32)));
    }
  const __m256i h = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
  const __m128i q = _mm_xor_si128(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  return static_cast<uint64_t>(_mm_cvtsi128_si64(q) ^ _mm_extract_epi64(q, 1));
}

}  // namespace nt::detail
