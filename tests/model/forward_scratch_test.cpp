// The forward pass's scratch for one engine step at the shape of a 0.6B qwen3 (n_embd 1024, 16/8
// heads of 128, n_ff 3072; one layer, Q4_0 matrices): the activations (ForwardScratch) and the
// quantized activations the matmuls keep (matmul_scratch_bytes) stay under a bound, and a long
// step, run over sub-chunks of its tokens, gives the logits of one-token steps bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <thread>

#include "kernels/xquant.h"
#include "kv/kv_cache_manager.h"
#include "model/model.h"
#include "model/tiny_model.h"
#include "support/test_support.h"

namespace nt {
namespace {

test::TinySpec qwen3_0_6b_layer() {
  test::TinySpec s;
  s.arch = "qwen3";
  s.n_vocab = 256;
  s.n_embd = 1024;
  s.n_layer = 1;
  s.n_head = 16;
  s.n_head_kv = 8;
  s.head_dim = 128;
  s.n_ff = 3072;
  s.seed = 25;
  return s;
}

std::unique_ptr<Model> load_qwen3_0_6b_layer() {
  static const std::string path = [] {
    const test::TinySpec s = qwen3_0_6b_layer();
    const std::string p = test::temp_dir() + "/scratch-qwen3-0.6b-layer-q4_0.gguf";
    std::string err;
    EXPECT_TRUE(test::write_tiny_gguf(s, test::make_weights(s), p, &err, DType::Q4_0)) << err;
    return p;
  }();
  auto m = Model::load(path);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m ? std::move(*m) : nullptr;
}

std::unique_ptr<KvCacheManager> cache_for(const Model& m, int64_t n_ctx) {
  const ModelConfig& c = m.config();
  KvLayout lay;
  lay.n_layer = c.n_layer;
  lay.n_head_kv = c.n_head_kv;
  lay.head_dim = c.head_dim;
  auto kv = KvCacheManager::create(lay, n_ctx, 1);
  EXPECT_TRUE(kv.ok());
  return kv ? std::move(*kv) : nullptr;
}

std::vector<int32_t> prompt(int n) {
  std::vector<int32_t> toks;
  for (int i = 0; i < n; ++i) toks.push_back(int32_t((i * 37 + 11) % 256));
  return toks;
}

// Runs toks through a fresh cache in steps of `step` tokens; the last token's logits.
std::vector<float> last_logits(const Model& m, const std::vector<int32_t>& toks, int step, ThreadPool& pool,
                               ForwardScratch& s) {
  auto kv = cache_for(m, 512);
  if (!kv) return {};
  std::vector<float> logits(size_t(m.config().n_vocab));
  const int seq = kv->new_seq();
  for (int at = 0; at < int(toks.size()); at += step) {
    const int n = std::min(step, int(toks.size()) - at);
    Batch b;
    for (int i = 0; i < n; ++i) b.add(toks[size_t(at + i)], at + i, seq, i == n - 1);
    EXPECT_TRUE(kv->reserve(seq, n).ok());
    const Status st = m.forward(b, *kv, pool, s, logits.data());
    EXPECT_TRUE(st.ok()) << st.error().message;
    kv->commit(seq, std::span<const int32_t>(toks.data(), size_t(at + n)), n);
  }
  return logits;
}

// A 256-token step (serve's default -b): the residual stream, queries and attention outputs of
// every token (5 MiB here: attention needs all of them at once) and sub-chunks of the rest. The
// whole-step buffers of every array took 16 MiB (64 KiB a token).
TEST(ForwardScratch, StepOf256TokensAtThe0_6BShapeTakesAtMost9MiB) {
  auto m = load_qwen3_0_6b_layer();
  ASSERT_TRUE(m);
  const int64_t n_tokens = 256;
  size_t scratch = 0, matmul = 0;
  // On a thread of its own: the matmul scratch is per thread, kept from earlier calls.
  std::thread([&] {
    ThreadPool pool(2);
    ForwardScratch s;
    last_logits(*m, prompt(int(n_tokens)), int(n_tokens), pool, s);
    scratch = s.bytes();
    matmul = detail::matmul_scratch_bytes();
  }).join();
  const double mib = 1024.0 * 1024.0;
  EXPECT_LE(scratch + matmul, size_t(9 * mib))
      << "forward scratch of a " << n_tokens << "-token step: " << (scratch + matmul) / mib << " MiB ("
      << (scratch + matmul) / 1024.0 / double(n_tokens) << " KiB a token): activations " << scratch / mib
      << " MiB, quantized activations " << matmul / mib << " MiB";
}

// 150 tokens in one step, in steps of 70 and in one-token steps (the decode path) give the same
// bits: a step's result does not depend on how its tokens are split for the matmuls.
TEST(ForwardScratch, LongStepGivesTheLogitsOfOneTokenSteps) {
  auto m = load_qwen3_0_6b_layer();
  ASSERT_TRUE(m);
  ThreadPool pool(2);
  ForwardScratch s;
  const std::vector<int32_t> toks = prompt(150);
  const std::vector<float> one_step = last_logits(*m, toks, 150, pool, s);
  const std::vector<float> by_token = last_logits(*m, toks, 1, pool, s);
  const std::vector<float> by_70 = last_logits(*m, toks, 70, pool, s);
  ASSERT_EQ(one_step.size(), size_t(m->config().n_vocab));
  ASSERT_EQ(by_token.size(), one_step.size());
  EXPECT_EQ(0, std::memcmp(one_step.data(), by_token.data(), one_step.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(one_step.data(), by_70.data(), one_step.size() * sizeof(float)));
}

}  // namespace
}  // namespace nt
