// bench/kernels_bench.cpp — matmul throughput per weight type at the decode shape (1 token) and
// a batched decode step (16 tokens) and prefill (512 tokens) for a 0.6B llama layer (n_embd 1536, n_ff 4096), at 1 and 2 threads.
// Counters: weight GB/s (decode: the memory-bound figure) and GFLOP/s (prefill: compute-bound).
//   build-*/bench/kernels_bench --benchmark_filter='Q8_0'      NEXTTOK_SIMD=avx2 to compare levels
#include <benchmark/benchmark.h>

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "../tests/kernels/kernel_test_util.h"

namespace {

using nt::DType;

// Decode streams weights from memory: the benchmark cycles through copies of the matrix that
// together exceed any cache (256 MB), as a model's layers do.
constexpr size_t kStreamBytes = size_t(256) << 20;
constexpr size_t kHuge = size_t(2) << 20;

// stream: cycle through copies (weights come from memory); otherwise one copy (cache-hot: the
// kernel's compute ceiling).
void bm_matmul(benchmark::State& state, DType type, int64_t n_rows, int64_t n_cols, bool stream) {
  const int64_t n_tokens = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  nt::test::RandomWeights w(type, n_rows, n_cols, 42);
  const size_t n_copies = stream ? (kStreamBytes + w.bytes.size() - 1) / w.bytes.size() : 1;
  // Huge pages, as the engine asks for on its mapped weights (a 4 KiB page per TLB miss would
  // measure the page walker, not the kernel).
  const size_t total = (w.bytes.size() * n_copies + kHuge - 1) / kHuge * kHuge;
  std::unique_ptr<uint8_t, decltype(&std::free)> copies(static_cast<uint8_t*>(std::aligned_alloc(kHuge, total)), &std::free);
  (void)madvise(copies.get(), total, MADV_HUGEPAGE);
  for (size_t c = 0; c < n_copies; ++c) std::memcpy(copies.get() + c * w.bytes.size(), w.bytes.data(), w.bytes.size());
  const auto x = nt::test::random_activations(n_tokens * n_cols, 7);
  std::vector<float> y(n_tokens * n_rows);
  nt::ThreadPool pool(threads);
  size_t c = 0;
  for (auto _ : state) {
    nt::MatView v = w.view;
    v.data = copies.get() + c * w.bytes.size();
    c = c + 1 == n_copies ? 0 : c + 1;
    nt::matmul(v, x.data(), n_cols, y.data(), n_rows, n_tokens, pool);
    benchmark::DoNotOptimize(y.data());
  }
  const double iters = static_cast<double>(state.iterations());
  state.counters["GB/s"] = benchmark::Counter(iters * static_cast<double>(w.bytes.size()), benchmark::Counter::kIsRate,
                                              benchmark::Counter::kIs1000);
  state.counters["GFLOP/s"] = benchmark::Counter(iters * 2.0 * n_rows * n_cols * n_tokens / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(nt::kernels_simd_level());
}

void register_all() {
  for (DType t : nt::test::all_weight_types()) {
    const std::string name(nt::dtype_name(t));
    // Decode: ffn_down shape (n_cols = n_ff 4096, n_rows = n_embd 1536), one token.
    benchmark::RegisterBenchmark(("decode/" + name).c_str(), bm_matmul, t, 1536, 4096, true)
        ->Args({1, 1})->Args({1, 2})->UseRealTime()->Unit(benchmark::kMicrosecond);
    // Decode on the other common shape (ffn_up / gate, attention, output: n_cols = n_embd).
    benchmark::RegisterBenchmark(("decode_up/" + name).c_str(), bm_matmul, t, 4096, 1536, true)
        ->Args({1, 1})->Args({1, 2})->UseRealTime()->Unit(benchmark::kMicrosecond);
    // The same product with the weights in L2 (a 512 x 1536 slice): compute ceiling of decode.
    benchmark::RegisterBenchmark(("decode_hot/" + name).c_str(), bm_matmul, t, 512, 1536, false)
        ->Args({1, 1})->UseRealTime()->Unit(benchmark::kMicrosecond);
    // A batched decode step (16 requests, one token each), weights streamed from memory: the
    // continuous-batching regime, between memory-bound decode and compute-bound prefill.
    benchmark::RegisterBenchmark(("batch16/" + name).c_str(), bm_matmul, t, 4096, 1536, true)
        ->Args({16, 2})->UseRealTime()->Unit(benchmark::kMicrosecond);
    // Prefill: ffn_up shape (n_cols = 1536, n_rows = 4096), 512 tokens.
    benchmark::RegisterBenchmark(("prefill/" + name).c_str(), bm_matmul, t, 4096, 1536, false)
        ->Args({512, 1})->Args({512, 2})->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
    // Prefill on the ffn_down shape (n_cols = n_ff 4096): a tile's rows no longer fit L1 beside
    // its activations.
    benchmark::RegisterBenchmark(("prefill_down/" + name).c_str(), bm_matmul, t, 1536, 4096, false)
        ->Args({512, 1})->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
