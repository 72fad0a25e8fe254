// bench/bandwidth_probe_bench.cpp — memory read bandwidth, as `nexttok bench --bandwidth` probes it
// (kernels/read_probe.h: huge pages, the widest loads, 2 / 4 / 8 streams per thread, software
// prefetch on AVX2), next to a plain loop of 8-byte loads over 4 KiB pages, at 1 and 2 threads.
// Decode reads every weight byte once per token, so (weight bytes per token) / (the best GB/s
// here) is the decode time floor.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/read_probe.h"

namespace {

constexpr size_t kBytes = size_t(1) << 30;

// args: threads, streams per thread
void bm_probe(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0)), streams = static_cast<int>(state.range(1));
  nt::ThreadPool pool(threads);
  nt::ReadProbe probe(pool, kBytes);
  double best = 0;
  for (auto _ : state) best = std::max(best, probe.pass(streams));
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * kBytes,
                                              benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
  state.counters["best_GB/s"] = best / 1e9;
}

// The plain loop: what a first probe read (it under-reported the ceiling by a quarter or more).
void bm_plain(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  static std::vector<uint64_t> buf;
  if (buf.empty()) {
    buf.resize(kBytes / 8);
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = i;  // touch every page
  }
  nt::ThreadPool pool(threads);
  std::vector<uint64_t> sums(static_cast<size_t>(threads) * 8);
  for (auto _ : state) {
    pool.run(threads, [&](int task, int) {
      const size_t n = buf.size(), b = n * task / threads, e = n * (task + 1) / threads;
      uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
      const uint64_t* p = buf.data();
      for (size_t i = b; i + 8 <= e; i += 8) {
        s0 += p[i]; s1 += p[i + 1]; s2 += p[i + 2]; s3 += p[i + 3];
        s4 += p[i + 4]; s5 += p[i + 5]; s6 += p[i + 6]; s7 += p[i + 7];
      }
      sums[task * 8] = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;
    });
    benchmark::DoNotOptimize(sums.data());
  }
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * kBytes,
                                              benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

}  // namespace

BENCHMARK(bm_probe)->ArgsProduct({{1, 2}, {1, 2, 4, 8}})->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(bm_plain)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_MAIN();
