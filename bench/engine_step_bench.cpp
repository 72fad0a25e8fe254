// What one engine step costs when it mixes a prefill chunk with decode tokens, against the two run
// as separate steps (continuous batching must not make the mix dearer than its parts), and how a
// 16-token decode step compares with one token: forward passes only (Engine::eval_batch), on
// sequences that already hold `depth` cached tokens.
// Run: NT_BENCH_MODEL=model.gguf build-bench/bench/engine_step_bench [--benchmark_repetitions=5]
//   (e.g. a synthetic Qwen3-0.6B shape: nexttok synth --arch qwen3 --n-embd 1024 --n-layer 28
//    --n-head 16 --n-head-kv 8 --head-dim 128 --n-ff 3072 --ctx 4096 --tie-embeddings
//    --vocab ../shared/vocab/ggml-vocab-qwen2.gguf --type q4_0 -o q06b-q4_0.gguf)
// NT_BENCH_THREADS sets the threads (default: physical cores).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "engine/engine.h"
#include "model/model.h"

namespace {

constexpr int kDecodeSeqs = 16;  // decode tokens of the mixed step
constexpr int kChunk = 64;       // prefill chunk of the mixed step
constexpr int kDepth = 64;       // tokens each sequence holds before the timed step

nt::Engine* engine() {
  static std::unique_ptr<nt::Engine> e = [] {
    std::unique_ptr<nt::Engine> out;
    const char* path = std::getenv("NT_BENCH_MODEL");
    if (!path) return out;
    auto m = nt::Model::load(path);
    if (!m) return out;
    nt::EngineOptions o;
    const char* t = std::getenv("NT_BENCH_THREADS");
    o.n_threads = t ? std::atoi(t) : 0;
    o.n_ctx = (kDecodeSeqs + 1) * (kDepth + kChunk + 64) + kDecodeSeqs * 64 * 8;
    o.n_batch = 4096;
    auto eng = nt::Engine::create(std::move(*m), o);
    if (eng) out = std::move(*eng);
    return out;
  }();
  return e.get();
}

int32_t token(uint32_t i) { return static_cast<int32_t>((i * 2654435761u) % 1000u + 10u); }

// One timed forward pass per iteration: `decode` sequences adding one token each and, when
// `chunk` > 0, one more sequence adding `chunk` prompt tokens; every sequence first holds kDepth
// distinct tokens (untimed, as are creating and freeing them).
void run(benchmark::State& state, int decode, int chunk) {
  nt::Engine* e = engine();
  if (!e) {
    state.SkipWithError("set NT_BENCH_MODEL to a GGUF model");
    return;
  }
  uint32_t salt = 1;
  std::vector<int32_t> toks(static_cast<size_t>(kDepth + kChunk));
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<int> seqs;
    std::vector<std::vector<int32_t>> next;
    const int n_seqs = decode + (chunk > 0 ? 1 : 0);
    for (int s = 0; s < n_seqs; ++s) {
      for (auto& t : toks) t = token(salt++);
      const int seq = e->new_seq();
      if (!e->eval(seq, toks.data(), kDepth)) state.SkipWithError("prefill failed");
      seqs.push_back(seq);
      next.emplace_back(toks.begin() + kDepth, toks.end());
    }
    std::vector<nt::Engine::SeqInput> in;
    for (int s = 0; s < n_seqs; ++s) {
      const bool is_chunk = chunk > 0 && s == n_seqs - 1;
      in.push_back({seqs[size_t(s)], next[size_t(s)].data(), is_chunk ? chunk : 1, true});
    }
    state.ResumeTiming();
    auto r = e->eval_batch(in);
    benchmark::DoNotOptimize(r.ok());
    state.PauseTiming();
    for (int seq : seqs) e->free_seq(seq);
    state.ResumeTiming();
  }
  state.counters["tokens"] = decode + chunk;
}

// Decode steps on sequences set up once (a profile of this one shows the step, not the set-up):
// each iteration adds one token to each of `decode` sequences, so their depth grows from kDepth.
void run_decode(benchmark::State& state, int decode) {
  nt::Engine* e = engine();
  if (!e) {
    state.SkipWithError("set NT_BENCH_MODEL to a GGUF model");
    return;
  }
  uint32_t salt = 7;
  std::vector<int32_t> toks(static_cast<size_t>(kDepth));
  std::vector<int> seqs;
  for (int s = 0; s < decode; ++s) {
    for (auto& t : toks) t = token(salt++);
    const int seq = e->new_seq();
    if (!e->eval(seq, toks.data(), kDepth)) state.SkipWithError("prefill failed");
    seqs.push_back(seq);
  }
  std::vector<int32_t> next(static_cast<size_t>(decode));
  for (auto _ : state) {
    std::vector<nt::Engine::SeqInput> in;
    for (int s = 0; s < decode; ++s) {
      next[size_t(s)] = token(salt++);
      in.push_back({seqs[size_t(s)], &next[size_t(s)], 1, true});
    }
    auto r = e->eval_batch(in);
    if (!r) state.SkipWithError(r.error().message.c_str());
  }
  for (int seq : seqs) e->free_seq(seq);
  state.counters["tokens"] = decode;
}

void bm_decode_1(benchmark::State& s) { run_decode(s, 1); }
void bm_decode_16(benchmark::State& s) { run_decode(s, kDecodeSeqs); }
void bm_prefill_chunk_64(benchmark::State& s) { run(s, 0, kChunk); }
void bm_mixed_16_decode_plus_64_chunk(benchmark::State& s) { run(s, kDecodeSeqs, kChunk); }

}  // namespace

// A fixed count keeps the sequences inside the pool (they grow a token per iteration).
BENCHMARK(bm_decode_1)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(64);
BENCHMARK(bm_decode_16)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(64);
BENCHMARK(bm_prefill_chunk_64)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(bm_mixed_16_decode_plus_64_chunk)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
