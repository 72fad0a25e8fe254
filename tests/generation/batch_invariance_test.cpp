// Batch invariance with the real stories15M model: 16 requests submitted together, each with its
// own seed and prompt, return exactly the tokens and log-probabilities each returns alone, with
// the prompts chunked differently (step budgets) and with and without prefix-cache hits. This
// extends the guarantee `run` gives across -t and -b to the engine's continuous batching.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "model/model.h"
#include "support/test_support.h"
#include "tokenizer/tokenizer.h"

namespace nt {
namespace {

struct Out {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
  std::vector<std::vector<TokenLogprob>> top;
  std::string text;
  bool finished = false;
  FinishReason reason = FinishReason::Error;
  RequestStats stats;
};

struct Loaded {
  std::unique_ptr<Tokenizer> tok;
  std::unique_ptr<Engine> eng;
};

Loaded load(int n_batch, int n_parallel, int n_threads) {
  Loaded l;
  auto model = Model::load(test::shared_path("models/stories15M-q8_0.gguf"));
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
  if (!model) return l;
  auto tok = Tokenizer::from_gguf((*model)->gguf());
  EXPECT_TRUE(tok.ok());
  if (!tok) return l;
  l.tok = std::move(*tok);
  EngineOptions o;
  o.n_threads = n_threads;
  o.n_ctx = 4096;
  o.n_batch = n_batch;
  o.n_parallel = n_parallel;
  o.block_size = 16;  // the prompts (~60 tokens) fill whole blocks the prefix cache can share
  auto eng = Engine::create(std::move(*model), o, l.tok.get());
  EXPECT_TRUE(eng.ok()) << (eng.ok() ? "" : eng.error().message);
  if (eng) l.eng = std::move(*eng);
  return l;
}

// 16 prompts sharing a long common start (so later requests can hit the prefix cache), each with
// its own ending, sampled at temperature 0.9 with its own seed.
std::vector<RequestParams> requests(const Tokenizer& tok) {
  const std::string common =
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her "
      "friends. One day, she saw a big red ball under a tree. She wanted to play with it, so she ran to the tree.";
  const char* endings[16] = {"The ball", "Her mom", "A dog", "The sun", "Lily said", "Then", "Suddenly", "They",
                             "The bird", "A boy named Tim", "It was", "She felt", "The tree", "After that",
                             "Her friend", "At night"};
  std::vector<RequestParams> out;
  for (int i = 0; i < 16; ++i) {
    RequestParams p;
    p.prompt = tok.encode(common + " " + endings[i], true, false);
    p.sampling.temp = 0.9f;
    p.sampling.seed = 1000 + static_cast<uint64_t>(i);
    p.max_tokens = 24 + 3 * (i % 4);
    p.n_logprobs = 3;
    out.push_back(std::move(p));
  }
  return out;
}

void collect(Out& o, const TokenEvent& e) {
  if (e.token >= 0) {
    o.tokens.push_back(e.token);
    o.logprobs.push_back(e.logprob);
    o.top.push_back(e.top_logprobs);
  }
  o.text += e.text;
  if (e.finished) {
    o.finished = true;
    o.reason = e.finish_reason;
    o.stats = e.stats;
  }
}

// Runs `reqs` through `eng`: all submitted at once, or one at a time (each run to the end).
std::vector<Out> run_all(Engine& eng, const std::vector<RequestParams>& reqs, bool together) {
  std::vector<Out> outs(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    auto id = eng.submit(reqs[i], [&outs, i](const TokenEvent& e) { collect(outs[i], e); });
    EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error().message);
    if (!together) eng.run_until_idle();
  }
  eng.run_until_idle();
  return outs;
}

void expect_same(const std::vector<Out>& a, const std::vector<Out>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(a[i].finished && b[i].finished) << what << " request " << i;
    EXPECT_EQ(a[i].tokens, b[i].tokens) << what << " request " << i;
    EXPECT_EQ(a[i].logprobs, b[i].logprobs) << what << " request " << i;  // bit for bit
    ASSERT_EQ(a[i].top.size(), b[i].top.size());
    for (size_t t = 0; t < a[i].top.size(); ++t) {
      ASSERT_EQ(a[i].top[t].size(), b[i].top[t].size());
      for (size_t k = 0; k < a[i].top[t].size(); ++k) {
        EXPECT_EQ(a[i].top[t][k].token, b[i].top[t][k].token) << what << " request " << i << " step " << t;
        EXPECT_EQ(a[i].top[t][k].logprob, b[i].top[t][k].logprob) << what << " request " << i << " step " << t;
      }
    }
    EXPECT_EQ(a[i].text, b[i].text) << what << " request " << i;
  }
}

TEST(BatchInvariance, SixteenTogetherEqualEachAloneAcrossChunkingAndPrefixHits) {
  NT_REQUIRE_SHARED();
  // Reference: each request alone on a fresh engine, whole prompts in one step, no cache hits.
  std::vector<Out> alone;
  {
    Loaded ref = load(512, 16, 2);
    ASSERT_TRUE(ref.eng);
    const std::vector<RequestParams> reqs = requests(*ref.tok);
    for (const RequestParams& r : reqs) {
      Loaded fresh = load(512, 16, 2);  // a fresh engine per request: nothing cached
      ASSERT_TRUE(fresh.eng);
      alone.push_back(run_all(*fresh.eng, {r}, true)[0]);
      EXPECT_EQ(alone.back().stats.cached_tokens, 0);
    }
  }
  struct Setup {
    int n_batch, n_parallel, n_threads;
    const char* what;
  };
  for (const Setup& s : {Setup{512, 16, 2, "16 together, budget 512"}, Setup{37, 16, 1, "16 together, budget 37"},
                         Setup{64, 5, 2, "16 together, 5 running at a time, budget 64"}}) {
    Loaded l = load(s.n_batch, s.n_parallel, s.n_threads);
    ASSERT_TRUE(l.eng);
    const std::vector<RequestParams> reqs = requests(*l.tok);
    std::vector<Out> together = run_all(*l.eng, reqs, true);
    expect_same(alone, together, s.what);
    // Again on the same engine: now the shared start (and each whole earlier prompt) is cached.
    std::vector<Out> cached = run_all(*l.eng, reqs, true);
    expect_same(alone, cached, s.what);
    int64_t hits = 0;
    for (const Out& o : cached) hits += o.stats.cached_tokens;
    EXPECT_GT(hits, 0) << s.what << ": the second round should hit the prefix cache";
    const EngineStats st = l.eng->stats();
    EXPECT_EQ(st.blocks_used, 0) << s.what << ": every finished request released its blocks";
  }
}

}  // namespace
}  // namespace nt
