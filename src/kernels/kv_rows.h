// kernels/kv_rows.h — the walk over cached K / V rows shared by the ISA attention units
// (attention_avx2.cpp, attention_avx512.cpp). Plain code in an anonymous namespace: each unit gets
// its own copy, compiled with its own ISA flags.
// Must not know: the row types or what is computed per row.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"

namespace nt::detail {
namespace {

// Calls fn(pos, row) for the first n_kv positions in span order; row = the K (kV = false) or V row
// of that position, `off` bytes in. pf_bytes > 0: first prefetches that many bytes of the row
// kPrefetchAhead positions on (a head's slice of a cached row is a few lines every row_bytes, a
// stride the hardware prefetchers do not follow across pages and blocks).
inline constexpr int32_t kPrefetchAhead = 8;
template <bool kV, class F>
inline void for_each_row(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, F&& fn,
                         size_t pf_bytes = 0) {
  int32_t pos = 0;
  for (int s = 0; s < n_spans && pos < n_kv; ++s) {
    const int32_t n = spans[s].n < n_kv - pos ? spans[s].n : n_kv - pos;
    const uint8_t* base = (kV ? spans[s].v : spans[s].k) + off;
    // The row kPrefetchAhead on: in this span, or early in the next (none past a shorter next span).
    const uint8_t* next = s + 1 < n_spans ? (kV ? spans[s + 1].v : spans[s + 1].k) + off : nullptr;
    const int32_t next_n = s + 1 < n_spans ? spans[s + 1].n : 0;
    for (int32_t i = 0; i < n; ++i, ++pos) {
      if (pf_bytes > 0) {
        const int32_t a = i + kPrefetchAhead;
        const uint8_t* ahead = a < spans[s].n ? base + static_cast<size_t>(a) * row_bytes
                               : a - spans[s].n < next_n ? next + static_cast<size_t>(a - spans[s].n) * row_bytes
                                                         : nullptr;
        if (ahead) {
          for (size_t b = 0; b < pf_bytes; b += 64) __builtin_prefetch(ahead + b, 0, 3);
          __builtin_prefetch(ahead + pf_bytes - 1, 0, 3);  // a slice need not start on a line
        }
      }
      fn(pos, base + static_cast<size_t>(i) * row_bytes);
    }
  }
}

}  // namespace
}  // namespace nt::detail
