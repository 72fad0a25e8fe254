// The engine over a real qwen35 model (a small `nexttok synth` file: Gated DeltaNet layers with a
// recurrent state per sequence between gated attention layers). Requests batched with others, in
// chunks, preempted and recomputed, return what each returns alone; every state is released when
// its request finishes or is cancelled; the prefix cache never skips a prompt (no state to resume).
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

// The model of GoldenSynth.Qwen35_F32 (tests/golden/data/synth_models.txt), written once.
const std::string& model_path() {
  static const std::string path = [] {
    const std::string p = test::temp_dir() + "/qwen35-engine.gguf";
    auto r = test::run_nexttok({"synth", "--arch", "qwen35", "--n-embd", "64", "--n-layer", "4", "--n-head", "2",
                                "--n-head-kv", "1", "--head-dim", "48", "--n-ff", "128", "--rope-dims", "12",
                                "--ssm-state", "16", "--ssm-groups", "2", "--ssm-heads", "4", "--full-attn-interval",
                                "2", "-c", "1024", "--tie-embeddings", "--type", "f32", "--seed", "5", "--vocab",
                                test::shared_path("vocab/ggml-vocab-llama-spm.gguf"), "-o", p});
    EXPECT_EQ(r.rc, 0) << r.err;
    return p;
  }();
  return path;
}

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
  const EngineStats st = h.eng->stats();
  EXPECT_EQ(st.recurrent_states, 0);
  EXPECT_EQ(st.recurrent_bytes, 0);
  EXPECT_EQ(st.prefix_hit_tokens, 0);
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

TEST(EngineQwen35, ARepeatedPromptIsRecomputedNotTakenFromThePrefixCache) {
  NT_REQUIRE_SHARED();
  Qwen35Harness h(test::opts(512, 4, 1024, 32));
  ASSERT_TRUE(h.eng);
  const RequestParams p = request(prompt_of(100, 9, kVocab), 8, 4);
  const RequestId first = h.submit(p);
  h.run();
  const RequestId again = h.submit(p);
  h.run();
  EXPECT_EQ(h.out[again].stats.cached_tokens, 0);
  EXPECT_EQ(h.out[again].tokens, h.out[first].tokens);
  EXPECT_EQ(h.out[again].logprobs, h.out[first].logprobs);
}

}  // namespace
}  // namespace nt
