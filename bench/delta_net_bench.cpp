// bench/delta_net_bench.cpp — the Gated DeltaNet kernels of one qwen35 linear-attention layer at
// the 0.8B shape (docs/qwen35.md: 16 q/k and 16 v heads of 128, conv kernel 4 over 6144 channels):
// a decode step (convolution, L2 norms, gates, delta rule, gated norm) and a 512-token prefill of
// the delta rule token by token or chunked, at 1 and 2 threads. The projections (matmuls) are not
// included. Counter "state GB/s": recurrent state bytes read and written per second.
//   build-*/bench/delta_net_bench --benchmark_filter=decode      NEXTTOK_SIMD=avx2 to compare levels
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "kernels/delta_net.h"
#include "kernels/kernels.h"

namespace {

constexpr nt::DeltaNetShape kShape{16, 16, 128, 128};
constexpr int kConv = 4;
constexpr float kEps = 1e-6f;

struct Layer {
  int64_t key_dim = int64_t{kShape.n_k_heads} * kShape.head_k_dim;
  int64_t value_dim = int64_t{kShape.n_v_heads} * kShape.head_v_dim;
  int64_t channels = 2 * key_dim + value_dim;
  std::vector<float> conv_w, dt_bias, ssm_a, norm_w;
  std::vector<float> conv_state, state;
  Layer() {
    std::mt19937 rng(1);
    std::normal_distribution<float> d(0.0f, 0.3f);
    auto fill = [&](std::vector<float>& v, size_t n) {
      v.resize(n);
      for (auto& x : v) x = d(rng);
    };
    fill(conv_w, kConv * channels);
    fill(dt_bias, kShape.n_v_heads);
    fill(ssm_a, kShape.n_v_heads);
    for (auto& a : ssm_a) a = -std::abs(a);
    fill(norm_w, kShape.head_v_dim);
    fill(conv_state, (kConv - 1) * channels);
    fill(state, nt::delta_net_state_floats(kShape));
  }
};

struct Tokens {  // per-token projections, as the layer's matmuls would leave them
  int64_t n;
  std::vector<float> qkv, conv_out, z, alpha, b, g, beta, o, y;
  Tokens(const Layer& l, int64_t n_tokens) : n(n_tokens) {
    std::mt19937 rng(2);
    std::normal_distribution<float> d(0.0f, 1.0f);
    auto fill = [&](std::vector<float>& v, size_t m) {
      v.resize(m);
      for (auto& x : v) x = d(rng);
    };
    fill(qkv, n * l.channels);
    fill(z, n * l.value_dim);
    fill(alpha, n * kShape.n_v_heads);
    fill(b, n * kShape.n_v_heads);
    conv_out.resize(n * l.channels);
    g.resize(n * kShape.n_v_heads);
    beta.resize(n * kShape.n_v_heads);
    o.resize(n * l.value_dim);
    y.resize(n * l.value_dim);
  }
  nt::DeltaNetIo io(const Layer& l) {
    nt::DeltaNetIo r;
    r.q = conv_out.data(), r.ldq = l.channels;
    r.k = conv_out.data() + l.key_dim, r.ldk = l.channels;
    r.v = conv_out.data() + 2 * l.key_dim, r.ldv = l.channels;
    r.g = g.data(), r.beta = beta.data(), r.ldg = kShape.n_v_heads;
    r.out = o.data(), r.ldo = l.value_dim;
    return r;
  }
  // Convolution, q/k L2 norms and gates for all tokens (what precedes the recurrence).
  void prepare(Layer& l, nt::ThreadPool& pool) {
    nt::short_conv_silu(qkv.data(), l.channels, n, l.conv_w.data(), kConv, l.channels, l.conv_state.data(),
                        conv_out.data(), l.channels, pool);
    for (int64_t t = 0; t < n; ++t)
      for (int h = 0; h < 2 * kShape.n_k_heads; ++h) {
        float* x = conv_out.data() + t * l.channels + int64_t{h} * kShape.head_k_dim;
        nt::l2_norm(x, x, kShape.head_k_dim, kEps);
      }
    nt::delta_net_gates(alpha.data(), b.data(), l.dt_bias.data(), l.ssm_a.data(), kShape.n_v_heads, n,
                        kShape.n_v_heads, g.data(), beta.data());
  }
};

void set_counters(benchmark::State& st, int64_t tokens_per_iter, double state_bytes_per_iter) {
  const double it = static_cast<double>(st.iterations());
  st.counters["tok/s"] = benchmark::Counter(it * tokens_per_iter, benchmark::Counter::kIsRate);
  st.counters["state GB/s"] = benchmark::Counter(it * state_bytes_per_iter, benchmark::Counter::kIsRate,
                                                 benchmark::Counter::kIs1000);
  st.SetLabel(nt::kernels_simd_level());
}

void bm_decode(benchmark::State& st) {
  nt::ThreadPool pool(static_cast<int>(st.range(0)));
  Layer l;
  Tokens tk(l, 1);
  float* states[1] = {l.state.data()};
  for (auto _ : st) {
    tk.prepare(l, pool);
    nt::delta_net_decode(kShape, tk.io(l), 1, states, pool);
    nt::gated_rms_norm(tk.o.data(), tk.z.data(), l.norm_w.data(), tk.y.data(), kShape.n_v_heads, kShape.head_v_dim, kEps);
    benchmark::DoNotOptimize(tk.y.data());
  }
  set_counters(st, 1, 2.0 * 4 * static_cast<double>(l.state.size()));
}

void bm_prefill(benchmark::State& st, bool chunked) {
  nt::ThreadPool pool(static_cast<int>(st.range(0)));
  Layer l;
  Tokens tk(l, 512);
  tk.prepare(l, pool);
  for (auto _ : st) {
    if (chunked) nt::delta_net_chunked(kShape, tk.io(l), tk.n, l.state.data(), pool);
    else nt::delta_net_scan(kShape, tk.io(l), tk.n, l.state.data(), pool);
    benchmark::DoNotOptimize(tk.o.data());
  }
  const double passes = chunked ? 2.0 * (512 / nt::kDeltaNetChunk) : 2.0 * 512;
  set_counters(st, 512, passes * 4 * static_cast<double>(l.state.size()));
}

BENCHMARK(bm_decode)->Name("delta_net/decode_layer")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(bm_prefill, scan, false)->Name("delta_net/prefill512_scan")->Arg(1)->Arg(2)->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_prefill, chunked, true)->Name("delta_net/prefill512_chunked")->Arg(1)->Arg(2)->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
