// tensor/nearest_int.h — internal: the float-to-int rounding every quantizer uses, so all block
// formats round a value to the same level. Must not know: any block format.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace nt {

// Round to nearest (ties to even) without a libm call: adding 1.5 * 2^23 leaves the integer in the
// low mantissa bits. Inputs are clamped to +-2^22 first, far beyond any level a block uses.
inline int nearest_int(float x) {
  x = std::clamp(x, -4194304.0f, 4194304.0f) + 12582912.0f;
  int32_t i;
  std::memcpy(&i, &x, 4);
  return (i & 0x007fffff) - 0x00400000;
}

}  // namespace nt
