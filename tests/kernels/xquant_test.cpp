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

// The F16 layout (AVX2 and AVX-512 only): every element is the documented rounding
// (f16_activations_of), the padding is zero and xscale undoes the scale; 300 columns leave a
// tail of 4 after the last 8- and 16-element step. Rows of magnitudes 1e-30 .. 1e30 (subnormal
// and overflowing fp16 unscaled), an all-zero row (scale 1).
TEST(XQuant, F16LayoutIsTheDocumentedRoundingAtEachLevel) {
  LevelGuard guard;
  ThreadPool pool(2);
  const int64_t n = 300;
  const float mags[] = {1e-30f, 1e-9f, 1.0f, 1e5f, 1e30f, 0.0f};
  const int64_t n_tokens = 6;
  std::vector<float> x(static_cast<size_t>(n_tokens * n));
  for (int64_t t = 0; t < n_tokens; ++t) {
    const auto row = random_activations(n, 300 + static_cast<int>(t), mags[t]);
    std::memcpy(x.data() + t * n, row.data(), static_cast<size_t>(n) * sizeof(float));
  }
  int checked = 0;
  for (SimdLevel level : supported_levels()) {
    if (level < SimdLevel::Avx2) continue;
    set_simd_level(level);
    detail::XQuant got;
    detail::quantize_x(x.data(), n, n, n_tokens, 0, detail::XLayout::F16, got, pool);
    for (int64_t t = 0; t < n_tokens; ++t) {
      const auto want = f16_activations_of(x.data() + t * n, n);
      const uint16_t* h = got.h16(t);
      const float sc = got.xscale(t);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(fp16_to_fp32(h[i]) * sc, want[static_cast<size_t>(i)])
            << "token " << t << " element " << i << " at " << simd_level_name(level);
      for (int64_t i = n; i < got.npad; ++i) ASSERT_EQ(h[i], 0) << "padding " << i;
      if (mags[t] == 0.0f) EXPECT_EQ(sc, 1.0f);
      ++checked;
    }
  }
  if (checked == 0) GTEST_SKIP() << "no AVX2 on this CPU: the F16 layout is not used";
}

}  // namespace
}  // namespace nt::test
