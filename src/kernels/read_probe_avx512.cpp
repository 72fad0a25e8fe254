// kernels/read_probe_avx512.cpp — the read probe's loop with 512-bit loads (read_probe.h).
#include <immintrin.h>

#include "kernels/kernels_internal.h"

namespace nt::detail {

uint64_t read_streams_avx512(const uint8_t* p, size_t n_lines, size_t stride, int n_streams) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 4 <= n_lines; i += 4)  // 4 lines of each stream: independent XOR chains
    for (int s = 0; s < n_streams; ++s) {
      const uint8_t* q = p + size_t(s) * stride + i * 64;
      a0 = _mm512_xor_si512(a0, _mm512_load_si512(q));
      a1 = _mm512_xor_si512(a1, _mm512_load_si512(q + 64));
      a2 = _mm512_xor_si512(a2, _mm512_load_si512(q + 128));
      a3 = _mm512_xor_si512(a3, _mm512_load_si512(q + 192));
    }
  for (; i < n_lines; ++i)
    for (int s = 0; s < n_streams; ++s) a0 = _mm512_xor_si512(a0, _mm512_load_si512(p + size_t(s) * stride + i * 64));
  const __m512i a = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));
  alignas(64) uint64_t w[8];
  _mm512_store_si512(w, a);
  return w[0] ^ w[1] ^ w[2] ^ w[3] ^ w[4] ^ w[5] ^ w[6] ^ w[7];
}

}  // namespace nt::detail
