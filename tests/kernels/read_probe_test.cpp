// The read probe's loop reads every byte of every stream at every SIMD level (its XOR fold equals
// the scalar one on odd line counts and each stream count), and a probe pass measures a rate.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "kernel_test_util.h"
#include "kernels/read_probe.h"

namespace nt::test {
namespace {

TEST(ReadProbe, StreamsFoldEveryWordAtEveryLevel) {
  constexpr size_t kStride = 64 * 40;
  std::unique_ptr<uint8_t, decltype(&std::free)> buf(static_cast<uint8_t*>(std::aligned_alloc(64, 8 * kStride)),
                                                    &std::free);
  uint64_t seed = 1;
  for (size_t i = 0; i < 8 * kStride; i += 8) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    std::memcpy(buf.get() + i, &seed, 8);
  }
  LevelGuard guard;
  for (SimdLevel level : supported_levels()) {
    set_simd_level(level);
    for (int streams : {1, 2, 3, 4, 8})
      for (size_t lines : {size_t(0), size_t(1), size_t(3), size_t(5), size_t(37), size_t(40)}) {
        const uint64_t want = read_streams_ref(buf.get(), lines, kStride, streams);
        ASSERT_EQ(read_streams(buf.get(), lines, kStride, streams), want)
            << simd_level_name(level) << " streams=" << streams << " lines=" << lines;
      }
    // A flipped bit in the last word of the last stream changes the fold (nothing is skipped).
    const uint64_t before = read_streams(buf.get(), 37, kStride, 3);
    buf.get()[2 * kStride + 37 * 64 - 1] ^= 0x10;
    EXPECT_NE(read_streams(buf.get(), 37, kStride, 3), before) << simd_level_name(level);
    buf.get()[2 * kStride + 37 * 64 - 1] ^= 0x10;
  }
}

TEST(ReadProbe, PassesMeasureAPositiveRate) {
  ThreadPool pool(2);
  ReadProbe probe(pool, size_t(32) << 20);
  for (int streams : {1, 2, 4, 8}) {
    const double r = probe.pass(streams);
    EXPECT_TRUE(std::isfinite(r) && r > 1e6) << streams << " streams: " << r;
  }
  EXPECT_GT(probe.measure(3), 1e6);
}

}  // namespace
}  // namespace nt::test
