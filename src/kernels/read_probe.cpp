#include "kernels/read_probe.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/check.h"
#include "kernels/cpu_features.h"
#include "kernels/kernels_internal.h"

namespace nt {

namespace {
constexpr size_t kHuge = size_t(2) << 20;
constexpr int kStreamCounts[] = {2, 4, 8};  // 1 stream was never the best pass
}  // namespace

uint64_t read_streams_ref(const uint8_t* p, size_t n_lines, size_t stride, int n_streams) {
  uint64_t x = 0;
  for (int s = 0; s < n_streams; ++s)
    for (size_t i = 0; i < n_lines * 8; ++i) {
      uint64_t w;
      std::memcpy(&w, p + size_t(s) * stride + i * 8, 8);
      x ^= w;
    }
  return x;
}

uint64_t read_streams(const uint8_t* p, size_t n_lines, size_t stride, int n_streams) {
  NT_CHECK(n_streams >= 1 && n_streams <= 8);
  const SimdLevel level = simd_level();
  if (level >= SimdLevel::Avx512) return detail::read_streams_avx512(p, n_lines, stride, n_streams);
  if (level >= SimdLevel::Avx2) return detail::read_streams_avx2(p, n_lines, stride, n_streams);
  return read_streams_ref(p, n_lines, stride, n_streams);
}

ReadProbe::ReadProbe(ThreadPool& pool, size_t bytes) : pool_(pool) {
  // Every thread's part and every stream in it: whole 64-byte lines, 2 MiB apart at least.
  const size_t unit = kHuge * 8 * size_t(pool_.n_threads());
  bytes_ = std::max(unit, bytes / unit * unit);
  buf_ = static_cast<uint8_t*>(std::aligned_alloc(kHuge, bytes_));
  NT_CHECK(buf_ != nullptr);
  (void)madvise(buf_, bytes_, MADV_HUGEPAGE);  // advisory, as for the mapped weights
  const int n_threads = pool_.n_threads();
  // First touch from the workers that will read each part.
  pool_.run(n_threads, [&](int t, int) {
    const size_t part = bytes_ / size_t(n_threads);
    for (size_t i = 0; i < part; i += 8) {
      const uint64_t v = i * 0x9E3779B97F4A7C15ull + size_t(t);
      std::memcpy(buf_ + size_t(t) * part + i, &v, 8);
    }
  });
}

ReadProbe::~ReadProbe() { std::free(buf_); }

double ReadProbe::pass(int n_streams) {
  const int n_threads = pool_.n_threads();
  const size_t part = bytes_ / size_t(n_threads), stride = part / size_t(n_streams);
  std::vector<uint64_t> sums(static_cast<size_t>(n_threads));
  const auto t0 = std::chrono::steady_clock::now();
  pool_.run(n_threads, [&](int t, int) {
    sums[static_cast<size_t>(t)] = read_streams(buf_ + size_t(t) * part, stride / 64, stride, n_streams);
  });
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  volatile uint64_t sink = 0;
  for (uint64_t s : sums) sink = sink ^ s;
  (void)sink;
  return static_cast<double>(bytes_) / dt;
}

double ReadProbe::measure(int passes) {
  double best = 0;
  for (int r = 0; r < passes; ++r) best = std::max(best, pass(kStreamCounts[r % 3]));
  return best;
}

}  // namespace nt
