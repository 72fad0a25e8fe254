// A gemma3 model (from `nexttok synth`) over a cache whose sliding-window layers keep only their
// window (the engine's) gives bit-identical logits to the same model over a cache that keeps every
// position (a layout without sliding layers): the rows the cache drops are never read.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/engine.h"
#include "kv/kv_cache_manager.h"
#include "kv/prefix_hash.h"
#include "support/test_support.h"

namespace nt {
namespace {

// Logits after a prefill of `prefill` tokens, then after each later token (fed one by one).
std::vector<float> full_cache_logits(const Model& m, const std::vector<int32_t>& toks, int prefill, int block) {
  const ModelConfig& c = m.config();
  KvLayout lay;
  lay.n_layer = c.n_layer;
  lay.n_head_kv = c.n_head_kv;
  lay.head_dim = c.head_dim;
  lay.k_type = lay.v_type = DType::F32;
  lay.block_size = block;  // n_swa stays 0: every layer keeps every position
  auto kv = KvCacheManager::create(lay, 1024, 1);
  EXPECT_TRUE(kv.ok());
  if (!kv) return {};
  ThreadPool pool(2);
  ForwardScratch s;
  std::vector<float> logits(size_t(c.n_vocab)), out;
  const int seq = (*kv)->new_seq();
  for (int at = 0; at < int(toks.size());) {
    const int n = at == 0 ? prefill : 1;
    Batch b;
    for (int i = 0; i < n; ++i) b.add(toks[size_t(at + i)], at + i, seq, i == n - 1);
    EXPECT_TRUE((*kv)->reserve(seq, n).ok());
    EXPECT_TRUE(m.forward(b, **kv, pool, s, logits.data()).ok());
    (*kv)->commit(seq, toks, n);
    out.insert(out.end(), logits.begin(), logits.end());
    at += n;
  }
  return out;
}

TEST(SlidingCache, WindowOnlyCacheGivesTheLogitsOfAFullCache) {
  NT_REQUIRE_SHARED();
  const std::string gguf = test::temp_dir() + "/sliding-cache-gemma3.gguf";
  // 4 layers, pattern 2: layers 0 and 2 slide over 8 positions.
  auto r = test::run_nexttok({"synth", "--arch", "gemma3", "--n-embd", "64", "--n-layer", "4", "--n-head", "2",
                              "--n-head-kv", "1", "--head-dim", "32", "--n-ff", "64", "-c", "256", "--swa", "8",
                              "--swa-pattern", "2", "--vocab", test::shared_path("vocab/ggml-vocab-llama-spm.gguf"),
                              "-o", gguf});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::vector<int32_t> toks;
  for (int i = 0; i < 40; ++i) toks.push_back(int32_t(3 + (i * 37) % 200));
  const int prefill = 13, block = 4;

  auto ref_model = Model::load(gguf);
  ASSERT_TRUE(ref_model.ok()) << ref_model.error().message;
  ASSERT_EQ((*ref_model)->config().n_swa, 8);
  const std::vector<float> want = full_cache_logits(**ref_model, toks, prefill, block);

  auto m = Model::load(gguf);
  ASSERT_TRUE(m.ok());
  EngineOptions o;
  o.n_threads = 2;
  o.n_ctx = 1024;
  o.n_parallel = 1;
  o.block_size = block;
  o.cache_k = o.cache_v = DType::F32;
  auto e = Engine::create(std::move(*m), o);
  ASSERT_TRUE(e.ok()) << e.error().message;
  Engine& eng = **e;
  ASSERT_EQ(eng.kv().groups().size(), 2u);
  const int n_vocab = eng.config().n_vocab;
  std::vector<float> got;
  const int seq = eng.new_seq();
  for (int at = 0; at < int(toks.size());) {
    const int n = at == 0 ? prefill : 1;
    auto l = eng.eval(seq, &toks[size_t(at)], n);
    ASSERT_TRUE(l.ok()) << l.error().message;
    got.insert(got.end(), *l, *l + n_vocab);
    at += n;
    // Sliding layers hold at most the blocks their last 7 positions straddle.
    ASSERT_LE(eng.kv().group_stats(1).blocks_used, 3) << "at " << at;
  }
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
  EXPECT_LT(eng.kv_bytes_for(40), size_t(40) * eng.kv().layout().bytes_per_token());
}

}  // namespace
}  // namespace nt
