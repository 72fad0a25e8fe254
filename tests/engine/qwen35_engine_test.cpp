// The engine over a real qwen35 model (a small `nexttok synth` file: Gated DeltaNet layers with a
// recurrent state per sequence between gated attention layers). Requests batched with others, in
// chunks, preempted and recomputed, return what each returns alone; every state is released when
// its request finishes or is cancelled; a prompt sharing a prefix with an earlier one resumes at the
// latest recurrent-state snapshot inside it (prompt ends, every N tokens) and returns bit for bit
// what it returns computed from its start; evicted snapshots or KV blocks fall back.
#include <gtest/gtest.h>

#include <vector>

#include "engine_harness.h"
#include "model/model.h"
#include "support/test_support.h"

namespace nt {
namespace {

using test::Outcome;
using test::prompt_of;
using test::request;

constexpr int kVocab = 32000;

const std::string& model_path() { return test::qwen35_f32_model(); }

struct Qwen35Harness {
  explicit Qwen35Harness(const EngineOptions& o) {
    auto m = Model::load(model_path());
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
    if (!m) return;
    auto e = Engine::create(std::move(*m), o);
    EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
    if (e) eng = std::move(*e);
  }
  RequestId submit(RequestParams p) {
    auto id = eng->submit(std::move(p), [this](const TokenEvent& e) { test::record(out[e.id], e); });
    EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error().message);
    return id.ok() ? *id : 0;
  }
  void run() {
    for (int guard = 0; eng->step(); ++guard) ASSERT_LT(guard, 100000) << "the engine never went idle";
  }
  std::unique_ptr<Engine> eng;
  std::map<RequestId, Outcome> out;
};

Outcome alone(const RequestParams& p) {
  Qwen35Harness h(test::opts(512, 1, 1024, 32));
  const RequestId id = h.submit(p);
  h.run();
  EXPECT_EQ(h.out[id].reason, FinishReason::Length) << h.out[id].error.message;
  return h.out[id];
}

// Each request finished by length with the tokens and log-probs it gets alone, and the pool forced
// at least one preemption among them.
void expect_each_as_alone_with_preemption(Qwen35Harness& h, const std::vector<RequestParams>& ps,
                                          const std::vector<RequestId>& ids) {
  int preempted = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const Outcome& got = h.out[ids[i]];
    ASSERT_EQ(got.reason, FinishReason::Length) << got.error.message;
    preempted += got.stats.preemptions;
    const Outcome ref = alone(ps[i]);
    EXPECT_EQ(got.tokens, ref.tokens) << "request " << i;
    EXPECT_EQ(got.logprobs, ref.logprobs) << "request " << i;
  }
  EXPECT_GT(preempted, 0) << "the pool was meant to force preemption";
}

TEST(EngineQwen35, TheCacheHoldsOnlyAttentionLayersAndAStatePerSequence) {
  NT_REQUIRE_SHARED();
  Qwen35Harness h(test::opts(512, 4, 1024, 32));
  ASSERT_TRUE(h.eng);
  const KvLayout& lay = h.eng->kv().layout();
  EXPECT_EQ(lay.n_layer, 2);  // layers 1 and 3 attend; 0 and 2 are Gated DeltaNet
  // Per DeltaNet layer: conv state 3 x (2*2*16 + 4*16) floats, delta state 4 x 16 x 16 floats.
  EXPECT_EQ(lay.recurrent_floats, 2 * (3 * 128 + 4 * 16 * 16));
  EXPECT_EQ(h.eng->recurrent_bytes_per_seq(), size_t(lay.recurrent_floats) * 4);
}

TEST(EngineQwen35, RequestsBatchedWithOthersReturnWhatEachReturnsAlone) {
  NT_REQUIRE_SHARED();
  // Chunks of 7 tokens, 3 running at once, a pool of 8 blocks of 8: preemption and recompute.
  Qwen35Harness h(test::opts(7, 3, 64, 8));
  ASSERT_TRUE(h.eng);
  std::vector<RequestParams> ps;
  std::vector<RequestId> ids;
  for (uint32_t i = 0; i < 6; ++i) {
    ps.push_back(request(prompt_of(5 + 9 * int(i), 70 + i, kVocab), 10, 3 + i));
    ids.push_back(h.submit(ps.back()));
  }
  h.run();
  expect_each_as_alone_with_preemption(h, ps, ids);
  const EngineStats st = h.eng->stats();
  EXPECT_EQ(st.recurrent_states, 0);
  EXPECT_EQ(st.recurrent_bytes, 0);
}

// A long prompt prefilled next to decoding requests: its chunks end at multiples of the
// DeltaNet chunk (64), so its aligned windows take the chunked form as when it runs alone, and
// its tokens and log-probs do not depend on how many others decode beside it.
TEST(EngineQwen35, ALongPromptBatchedWithDecodingRequestsReturnsWhatItReturnsAlone) {
  NT_REQUIRE_SHARED();
  const RequestParams long_p = request(prompt_of(200, 90, kVocab), 6, 12);
  const Outcome ref = alone(long_p);
  for (int n_decoding : {1, 3}) {
    Qwen35Harness h(test::opts(96, 4, 1024, 8));
    ASSERT_TRUE(h.eng);
    std::vector<RequestParams> ps;
    std::vector<RequestId> ids;
    for (int i = 0; i < n_decoding; ++i) {
      ps.push_back(request(prompt_of(4 + 3 * i, 91 + uint32_t(i), kVocab), 30, 13 + uint32_t(i)));
      ids.push_back(h.submit(ps.back()));
    }
    h.eng->step();  // the short prompts; they decode from the next step on
    const RequestId id = h.submit(long_p);
    h.run();
    const Outcome& got = h.out[id];
    ASSERT_EQ(got.reason, FinishReason::Length) << got.error.message;
    EXPECT_EQ(got.tokens, ref.tokens) << n_decoding << " decoding";
    EXPECT_EQ(got.logprobs, ref.logprobs) << n_decoding << " decoding";
    for (size_t i = 0; i < ids.size(); ++i) {
      const Outcome r = alone(ps[i]);
      EXPECT_EQ(h.out[ids[i]].tokens, r.tokens) << "decoding request " << i;
      EXPECT_EQ(h.out[ids[i]].logprobs, r.logprobs) << "decoding request " << i;
    }
  }
}

// Preempted requests recompute their prompts and generated tokens in chunks of up to 96: the
// tokens they had decoded one by one stay token by token (never a chunked window), so each still
// returns what it returns alone.
TEST(EngineQwen35, RequestsPreemptedAfterLongGenerationsReturnWhatEachReturnsAlone) {
  NT_REQUIRE_SHARED();
  // 3 running at once, a pool of 40 blocks of 8 (320 tokens) for requests of up to 220.
  Qwen35Harness h(test::opts(96, 3, 320, 8));
  ASSERT_TRUE(h.eng);
  std::vector<RequestParams> ps;
  std::vector<RequestId> ids;
  for (uint32_t i = 0; i < 4; ++i) {
    ps.push_back(request(prompt_of(60 + 30 * int(i), 100 + i, kVocab), 130, 20 + i));
    ids.push_back(h.submit(ps.back()));
  }
  h.run();
  expect_each_as_alone_with_preemption(h, ps, ids);
}

TEST(EngineQwen35, StatesAreHeldWhileRunningAndFreedOnCancelAndFinish) {
  NT_REQUIRE_SHARED();
  Qwen35Harness h(test::opts(512, 4, 1024, 32));
  ASSERT_TRUE(h.eng);
  const RequestId a = h.submit(request(prompt_of(20, 1, kVocab), 50, 1));
  const RequestId b = h.submit(request(prompt_of(30, 2, kVocab), 20, 2));
  h.eng->step();
  EngineStats st = h.eng->stats();
  EXPECT_EQ(st.recurrent_states, 2);
  EXPECT_EQ(st.recurrent_bytes, int64_t(2 * h.eng->recurrent_bytes_per_seq()));
  for (int i = 0; i < 4; ++i) h.eng->step();
  EXPECT_EQ(h.eng->stats().recurrent_states, 2);  // constant in context
  ASSERT_TRUE(h.eng->cancel(a));
  h.eng->step();
  EXPECT_EQ(h.out[a].reason, FinishReason::Cancelled);
  EXPECT_EQ(h.eng->stats().recurrent_states, 1);
  h.run();
  EXPECT_EQ(h.out[b].reason, FinishReason::Length);
  EXPECT_EQ(h.eng->stats().recurrent_states, 0);
}

// A prompt that continues `first` (its prompt then its generated tokens) with `extra` more tokens.
std::vector<int32_t> continuation(const RequestParams& first, const Outcome& got, int extra, uint32_t salt) {
  std::vector<int32_t> p = first.prompt;
  p.insert(p.end(), got.tokens.begin(), got.tokens.end());
  for (int32_t t : prompt_of(extra, salt, kVocab)) p.push_back(t);
  return p;
}

TEST(EngineQwen35, APromptSharingAFinishedOnesPrefixResumesFromItsSnapshot) {
  NT_REQUIRE_SHARED();
  Qwen35Harness h(test::opts(512, 4, 1024, 8));
  ASSERT_TRUE(h.eng);
  const RequestParams p = request(prompt_of(100, 9, kVocab), 8, 4);
  const RequestId first = h.submit(p);
  h.run();
  ASSERT_EQ(h.out[first].reason, FinishReason::Length) << h.out[first].error.message;
  EXPECT_EQ(h.out[first].stats.cached_tokens, 0);
  // At 96 (the prompt's end rounded down to a block) and 64 (the window boundary below it).
  EXPECT_EQ(h.eng->stats().state_snapshots, 2);
  EXPECT_EQ(h.eng->stats().state_snapshot_bytes, 2 * int64_t(h.eng->recurrent_bytes_per_seq()));

  // The same prompt again: resumed at 96, the last 4 tokens computed; the same tokens and log-probs.
  const RequestId again = h.submit(p);
  h.run();
  EXPECT_EQ(h.out[again].stats.cached_tokens, 96);
  EXPECT_EQ(h.out[again].tokens, h.out[first].tokens);
  EXPECT_EQ(h.out[again].logprobs, h.out[first].logprobs);

  // A longer prompt with the same start (a chat's next turn): resumed at 96, as computed cold.
  const RequestParams next = request(continuation(p, h.out[first], 13, 77), 12, 5);
  const RequestId turn2 = h.submit(next);
  h.run();
  EXPECT_EQ(h.out[turn2].stats.cached_tokens, 96);
  const Outcome cold = alone(next);
  EXPECT_EQ(cold.stats.cached_tokens, 0);
  EXPECT_EQ(h.out[turn2].tokens, cold.tokens);
  EXPECT_EQ(h.out[turn2].logprobs, cold.logprobs);
  const EngineStats st = h.eng->stats();
  EXPECT_EQ(st.state_snapshot_hits, 2);
  EXPECT_EQ(st.recurrent_states, 0);
}

TEST(EngineQwen35, SnapshotsEveryNTokensLetALongerSharedPrefixResume) {
  NT_REQUIRE_SHARED();
  // Snapshots at every 16 tokens, prompt or generated, besides the prompt's end (16 here).
  EngineOptions o = test::opts(512, 2, 1024, 8);
  o.state_snapshot_every = 16;
  Qwen35Harness h(o);
  ASSERT_TRUE(h.eng);
  const RequestParams p = request(prompt_of(20, 31, kVocab), 30, 6);
  const RequestId first = h.submit(p);
  h.run();
  ASSERT_EQ(h.out[first].reason, FinishReason::Length) << h.out[first].error.message;
  // 49 tokens were computed (the last generated one never is): snapshots at 16, 32 and 48.
  EXPECT_EQ(h.eng->stats().state_snapshots, 3);
  const RequestParams next = request(continuation(p, h.out[first], 7, 78), 10, 7);
  const RequestId turn2 = h.submit(next);
  h.run();
  EXPECT_EQ(h.out[turn2].stats.cached_tokens, 48);
  const Outcome cold = alone(next);
  EXPECT_EQ(h.out[turn2].tokens, cold.tokens);
  EXPECT_EQ(h.out[turn2].logprobs, cold.logprobs);

  // Prompt ends only (0): the same continuation resumes at the first prompt's end.
  o.state_snapshot_every = 0;
  Qwen35Harness ends_only(o);
  ASSERT_TRUE(ends_only.eng);
  ends_only.submit(p);
  ends_only.run();
  const RequestId t2 = ends_only.submit(next);
  ends_only.run();
  EXPECT_EQ(ends_only.out[t2].stats.cached_tokens, 16);
  EXPECT_EQ(ends_only.out[t2].tokens, cold.tokens);
  EXPECT_EQ(ends_only.out[t2].logprobs, cold.logprobs);
}

// With chunked prefill (whole aligned windows of 64), a snapshot resumes a longer prompt only where
// that gives what the prompt gives computed from its start: not inside a window the prompt fills
// (which the snapshot's request cut there), nor after a window that request decoded.
TEST(EngineQwen35, SnapshotsResumeLongerPromptsOnlyWhereTheResultStaysBitForBit) {
  NT_REQUIRE_SHARED();
  struct Case {
    int first_prompt, first_gen, every, extra, cached;
  };
  // 100: the snapshot at 96 cuts the window 64..127 the 200-token continuation fills: not used,
  // the one at 64 is. 130: the one at 128 is a window boundary: used. 70 + 80 generated, snapshots every 64: the
  // one at 128 follows the decoded 70..127, which the continuation prefills: it resumes at 64.
  for (const Case& k : {Case{100, 8, 0, 92, 64}, Case{130, 8, 0, 62, 128}, Case{70, 80, 64, 40, 64}}) {
    EngineOptions o = test::opts(512, 4, 1024, 8);
    o.state_snapshot_every = k.every;
    Qwen35Harness h(o);
    ASSERT_TRUE(h.eng);
    const RequestParams p = request(prompt_of(k.first_prompt, 11, kVocab), k.first_gen, 4);
    const RequestId first = h.submit(p);
    h.run();
    ASSERT_EQ(h.out[first].reason, FinishReason::Length) << h.out[first].error.message;
    const RequestParams next = request(continuation(p, h.out[first], k.extra, 81), 8, 5);
    const RequestId turn2 = h.submit(next);
    h.run();
    EXPECT_EQ(h.out[turn2].stats.cached_tokens, k.cached) << "first prompt " << k.first_prompt;
    const Outcome cold = alone(next);
    EXPECT_EQ(h.out[turn2].tokens, cold.tokens) << "first prompt " << k.first_prompt;
    EXPECT_EQ(h.out[turn2].logprobs, cold.logprobs) << "first prompt " << k.first_prompt;
  }
}

// A chat's next turn continues the previous prompt past the window of 64 its end falls in: the
// snapshot at that end (144) cuts a window the new prompt fills, so the prompt keeps one at the
// window boundary below its end (128) too, and the next turn resumes there, as computed cold.
TEST(EngineQwen35, AChatsNextTurnResumesAtTheWindowBoundaryBelowThePreviousPromptsEnd) {
  NT_REQUIRE_SHARED();
  Qwen35Harness h(test::opts(512, 4, 1024, 8));
  ASSERT_TRUE(h.eng);
  const RequestParams p = request(prompt_of(150, 12, kVocab), 8, 4);
  const RequestId first = h.submit(p);
  h.run();
  ASSERT_EQ(h.out[first].reason, FinishReason::Length) << h.out[first].error.message;
  EXPECT_EQ(h.eng->stats().state_snapshots, 2);  // at 128 and at 144
  // The same prompt again resumes at its end's block (144): the last 6 tokens computed.
  const RequestId again = h.submit(p);
  h.run();
  EXPECT_EQ(h.out[again].stats.cached_tokens, 144);
  EXPECT_EQ(h.out[again].tokens, h.out[first].tokens);
  EXPECT_EQ(h.out[again].logprobs, h.out[first].logprobs);
  // The next turn: 150 + 8 generated + 40 = 198 tokens, so 144 would cut its window 128..191.
  const RequestParams next = request(continuation(p, h.out[first], 40, 82), 8, 5);
  ASSERT_EQ(next.prompt.size(), 198u);
  const RequestId turn2 = h.submit(next);
  h.run();
  EXPECT_EQ(h.out[turn2].stats.cached_tokens, 128);
  const Outcome cold = alone(next);
  EXPECT_EQ(cold.stats.cached_tokens, 0);
  EXPECT_EQ(h.out[turn2].tokens, cold.tokens);
  EXPECT_EQ(h.out[turn2].logprobs, cold.logprobs);
}

TEST(EngineQwen35, EvictedSnapshotsOrKvBlocksFallBackToComputing) {
  NT_REQUIRE_SHARED();
  const RequestParams a = request(prompt_of(30, 41, kVocab), 4, 8);
  const RequestParams b = request(prompt_of(50, 42, kVocab), 4, 9);
  {
    // One snapshot kept: b's replaces a's, so a's continuation starts from nothing.
    EngineOptions o = test::opts(512, 1, 1024, 8);
    o.state_snapshots = 1;
    Qwen35Harness h(o);
    ASSERT_TRUE(h.eng);
    const RequestId ia = h.submit(a);
    h.run();
    const RequestId ib = h.submit(b);
    h.run();
    const RequestParams a2 = request(continuation(a, h.out[ia], 9, 79), 6, 10);
    const RequestId ia2 = h.submit(a2);
    h.run();
    EXPECT_EQ(h.out[ia2].stats.cached_tokens, 0);
    const Outcome cold = alone(a2);
    EXPECT_EQ(h.out[ia2].tokens, cold.tokens);
    EXPECT_EQ(h.out[ia2].logprobs, cold.logprobs);
    // a2's own snapshot (at 40) replaced b's: b's continuation starts from nothing too.
    const RequestId ib2 = h.submit(request(continuation(b, h.out[ib], 3, 80), 2, 11));
    h.run();
    EXPECT_EQ(h.out[ib2].stats.cached_tokens, 0);
    EXPECT_EQ(h.eng->stats().state_snapshots, 1);
  }
  {
    // A pool of 8 blocks of 8: b's blocks evict a's, whose snapshot (at 24) stays but is not used.
    Qwen35Harness h(test::opts(512, 1, 64, 8));
    ASSERT_TRUE(h.eng);
    const RequestId ia = h.submit(a);
    h.run();
    h.submit(b);
    h.run();
    EXPECT_EQ(h.eng->stats().state_snapshots, 2);
    const RequestParams a2 = request(continuation(a, h.out[ia], 9, 79), 6, 10);
    const RequestId ia2 = h.submit(a2);
    h.run();
    EXPECT_EQ(h.out[ia2].stats.cached_tokens, 0);
    const Outcome cold = alone(a2);
    EXPECT_EQ(h.out[ia2].tokens, cold.tokens);
    EXPECT_EQ(h.out[ia2].logprobs, cold.logprobs);
  }
}

TEST(EngineQwen35, NoSnapshotsMeansNoPrefixReuse) {
  NT_REQUIRE_SHARED();
  EngineOptions o = test::opts(512, 4, 1024, 8);
  o.state_snapshots = 0;
  Qwen35Harness h(o);
  ASSERT_TRUE(h.eng);
  const RequestParams p = request(prompt_of(100, 9, kVocab), 8, 4);
  const RequestId first = h.submit(p);
  h.run();
  const RequestId again = h.submit(p);
  h.run();
  EXPECT_EQ(h.out[again].stats.cached_tokens, 0);
  EXPECT_EQ(h.out[again].tokens, h.out[first].tokens);
  EXPECT_EQ(h.out[again].logprobs, h.out[first].logprobs);
  EXPECT_EQ(h.eng->stats().state_snapshots, 0);
}

TEST(EngineQwen35, ASnapshotIntervalOffTheBlockSizeIsRefused) {
  NT_REQUIRE_SHARED();
  auto m = Model::load(model_path());
  ASSERT_TRUE(m.ok()) << m.error().message;
  EngineOptions o = test::opts(512, 4, 1024, 8);
  o.state_snapshot_every = 20;
  auto e = Engine::create(std::move(*m), o);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("multiple of the KV block size 8"), std::string::npos) << e.error().message;
}

}  // namespace
}  // namespace nt
