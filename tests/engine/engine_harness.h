// tests/engine/engine_harness.h — an Engine over the fake model with every request's events
// collected, and the parameters the engine tests use.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "fake_model.h"

namespace nt::test {

struct Outcome {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
  std::vector<TokenEvent> events;
  std::string text;
  int finals = 0;  // final events seen (must end at exactly 1)
  FinishReason reason = FinishReason::Error;
  RequestStats stats;
  Error error;
};

inline void record(Outcome& o, const TokenEvent& e) {
  EXPECT_EQ(o.finals, 0) << "an event after the final one";
  if (e.token >= 0) {
    o.tokens.push_back(e.token);
    o.logprobs.push_back(e.logprob);
  }
  o.text += e.text;
  o.events.push_back(e);
  if (e.finished) {
    ++o.finals;
    o.reason = e.finish_reason;
    o.stats = e.stats;
    o.error = e.error;
  }
}

inline EngineOptions opts(int n_batch = 512, int n_parallel = 16, int64_t n_ctx = 4096, int block_size = 4) {
  EngineOptions o;
  o.n_threads = 1;
  o.n_batch = n_batch;
  o.n_parallel = n_parallel;
  o.n_ctx = n_ctx;
  o.block_size = block_size;
  o.cache_k = o.cache_v = DType::F32;
  return o;
}

// Sampled (temperature 0.8, the default filters), with the chosen token's log-prob and 2 others.
inline RequestParams request(std::vector<int32_t> prompt, int64_t max_tokens, uint64_t seed) {
  RequestParams p;
  p.prompt = std::move(prompt);
  p.max_tokens = max_tokens;
  p.sampling.seed = seed;
  p.n_logprobs = 2;
  return p;
}

// A deterministic prompt of n tokens below n_vocab; `salt` varies it.
inline std::vector<int32_t> prompt_of(int n, uint32_t salt, int n_vocab = 64) {
  std::vector<int32_t> t;
  uint32_t x = salt * 2654435761u + 12345u;
  for (int i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    t.push_back(static_cast<int32_t>((x >> 8) % uint32_t(n_vocab)));
  }
  return t;
}

struct Harness {
  explicit Harness(const EngineOptions& o, int n_vocab = 64, int n_ctx_train = 4096, const Tokenizer* tok = nullptr) {
    auto m = std::make_unique<FakeModel>(n_vocab, n_ctx_train);
    fake = m.get();
    auto e = Engine::create(std::move(m), o, tok);
    EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
    if (e) eng = std::move(*e);
  }
  RequestId submit(RequestParams p) {
    auto id = eng->submit(std::move(p), [this](const TokenEvent& e) { record(out[e.id], e); });
    EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error().message);
    return id.ok() ? *id : 0;
  }
  // Runs until idle, checking that no step exceeds the budget.
  void run() {
    for (int guard = 0; eng->step(); ++guard) ASSERT_LT(guard, 100000) << "the engine never went idle";
  }
  FakeModel* fake = nullptr;
  std::unique_ptr<Engine> eng;
  std::map<RequestId, Outcome> out;
};

// Each request run alone on a fresh, unconstrained engine: the reference outputs.
inline Outcome run_alone(const RequestParams& p) {
  Harness h(opts());
  const RequestId id = h.submit(p);
  h.run();
  return h.out[id];
}

}  // namespace nt::test
