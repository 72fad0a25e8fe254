// Activation quantization (kernels/xquant.h): the SIMD versions write the same bytes as the
// portable one (the scalar level) for every layout they implement.
#include <gtest/gtest.h>

#include <cstring>

#include "kernel_test_util.h"
#include "kernels/xquant.h"

namespace nt::test {
namespace {

TEST(XQuant, NaturalLayoutBitIdenticalAtEveryLevel) {
  LevelGuard guard;
  ThreadPool pool(2);
  // 288 columns: 9 blocks then 7 zero padding blocks (npad 512); 3 tokens, the middle one all zero
  // (d = 0), the last one with a block of equal magnitudes (ties at the rounding step).
  const int64_t n = 288, n_tokens = 3;
  auto x = random_activations(n_tokens * n, 42);
  for (int64_t i = 0; i < n; ++i) x[n + i] = 0.0f;
  for (int64_t i = 0; i < 32; ++i) x[2 * n + 64 + i] = (i % 2 ? -1.0f : 1.0f) * (0.5f + static_cast<float>(i % 4));
  for (int offset : {0, 4, 8, 16, 32}) {
    set_simd_level(SimdLevel::Scalar);
    detail::XQuant ref;
    detail::quantize_x(x.data(), n, n, n_tokens, offset, detail::XLayout::Natural, ref, pool);
    for (SimdLevel level : supported_levels()) {
      set_simd_level(level);
      detail::XQuant got;
      detail::quantize_x(x.data(), n, n, n_tokens, offset, detail::XLayout::Natural, got, pool);
      ASSERT_EQ(ref.stride, got.stride);
      const size_t bytes = static_cast<size_t>(ref.stride * n_tokens);
      EXPECT_EQ(0, std::memcmp(ref.buf.data(), got.buf.data(), bytes))
          << "offset " << offset << " at " << simd_level_name(level);
      // One token alone takes the single-token path (no pool): the same bytes.
      detail::XQuant one;
      detail::quantize_x(x.data() + 2 * n, n, n, 1, offset, detail::XLayout::Natural, one, pool);
      EXPECT_EQ(0, std::memcmp(ref.buf.data() + 2 * ref.stride, one.buf.data(), static_cast<size_t>(ref.stride)))
          << "offset " << offset << " at " << simd_level_name(level) << ", one token";
    }
  }
}

}  // namespace
}  // namespace nt::test
