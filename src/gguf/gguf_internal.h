// gguf/gguf_internal.h — internal: what the GGUF reader and writer must agree on (the magic and
// the byte size of each fixed-size value type). Must not know: anything outside src/gguf.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/gguf.h"

namespace nt {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian

// Bytes of one value of a fixed-size type; 0 for STRING and ARRAY.
inline size_t scalar_size(GgufType t) {
  switch (t) {
    case GgufType::UINT8: case GgufType::INT8: case GgufType::BOOL: return 1;
    case GgufType::UINT16: case GgufType::INT16: return 2;
    case GgufType::UINT32: case GgufType::INT32: case GgufType::FLOAT32: return 4;
    case GgufType::UINT64: case GgufType::INT64: case GgufType::FLOAT64: return 8;
    default: return 0;
  }
}

}  // namespace nt
