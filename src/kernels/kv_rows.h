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
// of that position, `off` bytes in.
template <bool kV, class F>
inline void for_each_row(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, F&& fn) {
  int32_t pos = 0;
  for (int s = 0; s < n_spans && pos < n_kv; ++s) {
    const int32_t n = spans[s].n < n_kv - pos ? spans[s].n : n_kv - pos;
    const uint8_t* base = (kV ? spans[s].v : spans[s].k) + off;
    for (int32_t i = 0; i < n; ++i, ++pos) fn(pos, base + static_cast<size_t>(i) * row_bytes);
  }
}

}  // namespace
}  // namespace nt::detail
