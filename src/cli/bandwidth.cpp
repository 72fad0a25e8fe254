#include "cli/bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace nt::cli {

double measure_read_bandwidth(ThreadPool& pool, size_t bytes, int reps) {
  const size_t n = bytes / sizeof(uint64_t);
  std::unique_ptr<uint64_t[]> buf(new uint64_t[n]);
  const int n_threads = pool.n_threads();
  // First touch from the workers that will read each part.
  pool.run(n_threads, [&](int t, int) {
    const size_t a = n * size_t(t) / size_t(n_threads), b = n * size_t(t + 1) / size_t(n_threads);
    for (size_t i = a; i < b; ++i) buf[i] = i;
  });
  std::vector<uint64_t> sums(static_cast<size_t>(n_threads));
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    pool.run(n_threads, [&](int t, int) {
      const size_t a = n * size_t(t) / size_t(n_threads), b = n * size_t(t + 1) / size_t(n_threads);
      // Eight independent accumulators so the loop is limited by memory, not by the add chain.
      uint64_t s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      size_t i = a;
      for (; i + 8 <= b; i += 8)
        for (int k = 0; k < 8; ++k) s[k] ^= buf[i + size_t(k)];
      for (; i < b; ++i) s[0] ^= buf[i];
      sums[static_cast<size_t>(t)] = s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4] ^ s[5] ^ s[6] ^ s[7];
    });
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, static_cast<double>(n * sizeof(uint64_t)) / dt);
  }
  volatile uint64_t sink = 0;
  for (uint64_t s : sums) sink = sink ^ s;
  (void)sink;
  return best;
}

}  // namespace nt::cli
