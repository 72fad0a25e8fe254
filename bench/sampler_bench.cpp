// Cost of one sampling step over a 151,936-token vocabulary (Qwen2's): the default chain
// (top-k 40 -> top-p 0.95 -> min-p 0.05 -> temp 0.8), greedy, and top-p over the whole vocabulary
// (no top-k), where a regression to full sorts would show.
// Run: build/bench/sampler_bench
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "sampling/rng.h"
#include "sampling/sampler.h"

namespace {

constexpr int32_t kVocab = 151936;

const std::vector<float>& logits() {
  static const std::vector<float> l = [] {
    std::vector<float> v(kVocab);
    nt::Rng gen(3);
    for (float& x : v) x = static_cast<float>(gen.uniform() * 20.0 - 10.0);
    return v;
  }();
  return l;
}

void run(benchmark::State& state, const nt::SamplerParams& p) {
  nt::Sampler s(p, kVocab, 0);
  for (auto _ : state) benchmark::DoNotOptimize(s.sample(logits()));
  state.SetItemsProcessed(state.iterations());
}

void bm_default_chain(benchmark::State& state) {
  nt::SamplerParams p;
  p.seed = 1;
  run(state, p);
}

void bm_greedy(benchmark::State& state) {
  nt::SamplerParams p;
  p.temp = 0.0f;
  p.seed = 1;
  run(state, p);
}

void bm_top_p_only(benchmark::State& state) {
  nt::SamplerParams p;
  p.top_k = 0;
  p.top_p = 0.95f;
  p.min_p = 0.0f;
  p.seed = 1;
  run(state, p);
}

BENCHMARK(bm_default_chain)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_greedy)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_top_p_only)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
